"""advisor: measure torch.compile configurations, keep the results, recommend one.

Public API (importing this package never imports torch)::

    from advisor import Workload, Quality, CompileConfig
    outcome = advisor.sweep("workloads/reranker.py", budget="10m", db=URL)  # measure, recommend
    rec = advisor.recommend("reranker", db=URL)                   # the answer on this device
    rec = advisor.recommend("reranker", db=URL, fingerprint="node-h200-0")  # any id the CLI prints
    df = advisor.trials("reranker", db=URL)            # a DataFrame: `advisor export -f csv`'s rows
    picks = advisor.recommendations(db=URL)            # one row per workload and device
    model = advisor.apply(model, workload="reranker", db=URL)   # the recommendation, applied
"""

from typing import TYPE_CHECKING

from advisor.errors import (
    AdvisorError,
    ConfigError,
    SchemaOutdated,
    StoreError,
    TrialFailed,
    WorkloadError,
)
from advisor.version import __version__

if TYPE_CHECKING:
    from advisor.api import recommend, sweep
    from advisor.config import CompileConfig
    from advisor.frames import recommendations, trials
    from advisor.runtime import apply
    from advisor.workload import Quality, Workload, load_workload


__all__ = [
    "AdvisorError",
    "CompileConfig",
    "ConfigError",
    "Quality",
    "SchemaOutdated",
    "StoreError",
    "TrialFailed",
    "Workload",
    "WorkloadError",
    "__version__",
    "apply",
    "load_workload",
    "recommend",
    "recommendations",
    "sweep",
    "trials",
]


def __getattr__(name: str) -> object:
    # Imported on first use: `apply` (advisor.runtime: the store and the recommendation),
    # `sweep` and `recommend` (advisor.api), `trials` and `recommendations` (advisor.frames:
    # pandas), and the workload and config classes (advisor.workload reads traffic logs, hashes
    # files, ...): `advisor --help` needs none of them.
    if name in ("Quality", "Workload", "load_workload"):
        from advisor import workload

        return getattr(workload, name)
    if name == "CompileConfig":
        from advisor.config import CompileConfig

        return CompileConfig
    if name == "apply":
        from advisor.runtime import apply

        return apply
    if name in ("trials", "recommendations"):  # pandas: imported when called
        from advisor import frames

        return getattr(frames, name)
    if name in ("sweep", "recommend"):
        from advisor import api

        return getattr(api, name)
    raise AttributeError(f"module 'advisor' has no attribute {name!r}")
