"""advisor: measure torch.compile configurations, keep the results, recommend one.

Public API (importing this package never imports torch)::

    from advisor import Workload, Quality, CompileConfig
    outcome = advisor.sweep("workloads/reranker.py", budget="10m", db=URL)  # measure, recommend
    rec = advisor.recommend("reranker", db=URL)                   # the answer on this device
    model = advisor.apply(model, workload="reranker", db=URL)   # the recommendation, applied
"""

from typing import TYPE_CHECKING

from advisor.config import CompileConfig
from advisor.errors import (
    AdvisorError,
    ConfigError,
    SchemaOutdated,
    StoreError,
    TrialFailed,
    WorkloadError,
)
from advisor.version import __version__
from advisor.workload import Quality, Workload, load_workload

if TYPE_CHECKING:
    from advisor.api import recommend, sweep
    from advisor.runtime import apply


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
    # `apply` (advisor.runtime: the store and the recommendation) is imported on first use:
    # `advisor --help` and the trial children need none of it.
    if name == "apply":
        from advisor.runtime import apply

        return apply
    if name in ("sweep", "recommend"):
        from advisor import api

        return getattr(api, name)
    raise AttributeError(f"module 'advisor' has no attribute {name!r}")
