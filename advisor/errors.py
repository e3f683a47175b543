"""The exceptions advisor raises.

    AdvisorError                  base of everything advisor raises on purpose
    ├── WorkloadError             a workload file is missing, does not import or breaks the contract
    ├── ConfigError               a compile configuration or a flag value is invalid
    ├── StoreError                the results database is unreachable, refused or out of date
    │   └── SchemaOutdated        the database is at an older migration revision
    └── TrialFailed               a trial could not produce a result (carries the classified reason)

User mistakes (every class but TrialFailed) are reported by the CLI as one line and exit code 2.
"""

from __future__ import annotations


class AdvisorError(Exception):
    """Base class of every error advisor raises on purpose."""


class WorkloadError(AdvisorError):
    """A workload file is missing, does not import, or does not honour the workload contract."""


class ConfigError(AdvisorError):
    """A compile configuration, a shape or a command-line value is invalid."""


class StoreError(AdvisorError):
    """The results database cannot be used (unreachable, refused, unknown dialect, ...)."""


class SchemaOutdated(StoreError):
    """The results database is at an older schema revision than this advisor needs."""


class Terminated(SystemExit):
    """The process was sent SIGTERM: it leaves through every ``finally`` (children ended,
    temporary directories removed) with exit code 143. Not an AdvisorError: nothing wraps it."""

    def __init__(self, signum: int = 15) -> None:
        super().__init__(128 + signum)


class TrialFailed(AdvisorError):
    """A trial could not produce a measurement; `reason` is a key of FAILURE_REASONS."""

    def __init__(self, reason: str, message: str, error_tail: str = "") -> None:
        super().__init__(message)
        self.reason = reason
        self.error_tail = error_tail
