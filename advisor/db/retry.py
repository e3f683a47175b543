"""How a write that meets a busy or absent database is tried again: one backoff for every writer.

A database locked past its busy timeout (SQLite), a lost connection or a terminated backend
(PostgreSQL) is transient: the same write may succeed later. Such a write is tried again after
1 s, then after pauses doubling up to 30 s, for $ADVISOR_STORE_RETRY_S after its first failure;
then the caller gives up in one line (and a trial's record goes to a spill file,
`advisor.db.spill`). The advisor's trial writes and Optuna's study writes
(`advisor.db.studies`) share it.
"""

from __future__ import annotations

import time

from advisor import settings

FIRST_RETRY_S = 1.0
MAX_RETRY_S = 30.0


def transient_cause(error: BaseException | None) -> bool:
    """Whether a database error (SQLAlchemy's) says busy or away, not refused or invalid:
    an OperationalError (locked, disk I/O, connection lost) or any driver error whose
    connection was invalidated (a terminated backend)."""
    from sqlalchemy.exc import DBAPIError, OperationalError

    if isinstance(error, OperationalError):
        return True
    return isinstance(error, DBAPIError) and bool(error.connection_invalidated)


class Backoff:
    """The pauses of one write's tries (see the module docstring)."""

    def __init__(self) -> None:
        self.deadline: float | None = None
        self.pause = FIRST_RETRY_S
        self.retry_s = settings.store_retry_s()

    def next(self) -> float | None:
        """The pause before the next try, or None when the retries are spent."""
        now = time.monotonic()
        if self.deadline is None:
            self.deadline = now + self.retry_s
        if now >= self.deadline:
            return None
        pause = min(self.pause, self.deadline - now)
        self.pause = min(2 * self.pause, MAX_RETRY_S)
        return pause
