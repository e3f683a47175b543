"""advisor: measure torch.compile configurations, keep the results, recommend one.

Public API (importing this package never imports torch)::

    from advisor import Workload, Quality, CompileConfig
    model = advisor.apply(model, workload="reranker", db=URL)   # the recommendation, applied
"""

from advisor.config import CompileConfig
from advisor.errors import (
    AdvisorError,
    ConfigError,
    SchemaOutdated,
    StoreError,
    TrialFailed,
    WorkloadError,
)
from advisor.runtime import apply
from advisor.workload import Quality, Workload, load_workload

__version__ = "0.1.0"

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
]
