"""advisor: measure torch.compile configurations, keep the results, recommend one.

Public API (importing this package never imports torch)::

    from advisor import Workload, Quality, CompileConfig
    outcome = advisor.sweep("workloads/reranker.py", budget="10m", db=URL)  # measure, recommend
    rec = advisor.recommend("reranker", db=URL)                   # the answer on this device
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
    "sweep",
]


def __getattr__(name: str) -> object:
    # Imported on first use: `apply` (advisor.runtime: the store and the recommendation),
    # `sweep` and `recommend` (advisor.api), and the workload and config classes (advisor.workload
    # reads traffic logs, hashes files, ...): `advisor --help` needs none of them.
    if name in ("Quality", "Workload", "load_workload"):
        from advisor import workload

        return getattr(workload, name)
    if name == "CompileConfig":
        from advisor.config import CompileConfig

        return CompileConfig
    if name == "apply":
        from advisor.runtime import apply

        return apply
    if name in ("sweep", "recommend"):
        from advisor import api

        return getattr(api, name)
    raise AttributeError(f"module 'advisor' has no attribute {name!r}")
