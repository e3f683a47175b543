"""Optuna's storage at advisor's boundary: a sweep's study, its database errors retried and told
in one line.

A sweep's Optuna study lives in the results database (Optuna's RDBStorage on the same URL).
When that database is busy or away (SQLite locked past its busy timeout; a PostgreSQL server
restarted, or the study's backend terminated), Optuna raises StorageInternalError, or the raw
SQLAlchemy error. `RetryingStorage` tries such a call again with the backoff of advisor's own
trial writes (`advisor.db.retry`: 1 s, doubling, for $ADVISOR_STORE_RETRY_S) and gives up with
a one-line StoreError, its URL masked; an error that is not transient is that StoreError at
once. A trial's heartbeat is told in one line but not retried: the thread that beats tries
again at its next beat. A trial's state written again after a lost acknowledgement (the first
write committed) is taken as written.

`held_trials` says which RUNNING trials of a study a live worker still holds: a resumed sweep
leaves those to their worker (`advisor.search.study.fail_orphans`).
"""

from __future__ import annotations

import functools
import logging
import os
import socket
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import sqlalchemy
from optuna.exceptions import StorageInternalError, UpdateFinishedTrialError
from optuna.storages import RDBStorage
from optuna.trial import TrialState
from sqlalchemy.exc import SQLAlchemyError

from advisor.db.engine import describe, masked_url, parse_url
from advisor.db.retry import Backoff, transient_cause
from advisor.errors import StoreError
from advisor.lifetime import alive_here

log = logging.getLogger(__name__)

# RDBStorage's entry points (those `optuna.storages._CachedStorage` and advisor call) that
# each run in one transaction of their own: retried whole. Those that call another of them
# (create_new_trial, get_all_trials, get_best_trial, set_trial_param) are retried through it.
RETRIED = (
    "create_new_study", "delete_study", "get_all_studies", "get_study_directions",
    "get_study_id_from_name", "get_study_name_from_id", "get_study_system_attrs",
    "get_study_user_attrs", "set_study_system_attr", "set_study_user_attr", "get_trial",
    "get_trial_id_from_study_id_trial_number", "get_trial_param", "get_trial_system_attrs",
    "get_trial_user_attrs", "set_trial_intermediate_value", "set_trial_state_values",
    "set_trial_system_attr", "set_trial_user_attr", "_create_new_trial", "_get_trials",
    "_set_trial_param", "_get_best_trial_id", "_get_stale_trial_ids",
)  # fmt: skip
TOLD = ("record_heartbeat",)  # translated, not retried
WORKER_ATTR = "worker"  # a fleet trial's user attribute: {"host": ..., "pid": ...} of its worker


def _cause(error: BaseException) -> BaseException:
    """The database error behind an Optuna storage error (itself when it is one)."""
    if isinstance(error, StorageInternalError) and error.__cause__ is not None:
        return error.__cause__
    return error


class RetryingStorage(RDBStorage):
    """Optuna's RDBStorage whose calls are retried while the database is busy or away and
    whose errors are one-line StoreErrors (see the module docstring). ``wait``: how a pause
    between tries is spent (a test frees its lock there)."""

    wait: Callable[[float], None] = staticmethod(time.sleep)

    def __init__(self, url: str, **kwargs: Any) -> None:
        self._where = masked_url(url)
        self._parsed = parse_url(url)
        try:
            super().__init__(url, **kwargs)
        except (StorageInternalError, SQLAlchemyError) as e:
            raise self._error("opening the Optuna study's storage", e) from e

    def _error(self, doing: str, error: BaseException, tried_s: float | None = None) -> StoreError:
        reason = describe(_cause(error), self._parsed)
        retried = ("" if tried_s is None else
                   f"; still failing after {tried_s:g} s of retries ($ADVISOR_STORE_RETRY_S)")
        return StoreError(f"Optuna's {doing} failed on {self._where}: {reason}{retried}")

    def _written(self, trial_id: int, state: TrialState) -> bool:
        """Whether a trial is in ``state`` already (a first write committed, its answer lost)."""
        return bool(self.get_trial(trial_id).state == state)


def _retried(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    doing = name.strip("_").replace("_", " ")

    @functools.wraps(method)
    def call(self: RetryingStorage, *args: Any, **kwargs: Any) -> Any:
        backoff = Backoff()
        tries = 0
        while True:
            tries += 1
            try:
                return method(self, *args, **kwargs)
            except UpdateFinishedTrialError:
                if tries > 1 and name == "set_trial_state_values":
                    trial_id = args[0] if args else kwargs["trial_id"]
                    state = args[1] if len(args) > 1 else kwargs["state"]
                    if self._written(trial_id, state):
                        return True
                raise
            except (StorageInternalError, SQLAlchemyError) as e:
                if not transient_cause(_cause(e)):
                    raise self._error(doing, e) from e
                pause = backoff.next()
                if pause is None:
                    raise self._error(doing, e, backoff.retry_s) from e
                log.warning("Optuna's %s failed on %s (%s); retried in %.1f s", doing,
                            self._where, describe(_cause(e), self._parsed), pause)
                self.wait(pause)

    return call


def _told(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    doing = name.strip("_").replace("_", " ")

    @functools.wraps(method)
    def call(self: RetryingStorage, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except (StorageInternalError, SQLAlchemyError) as e:
            raise self._error(doing, e) from e

    return call


for _name in RETRIED:
    setattr(RetryingStorage, _name, _retried(_name, getattr(RDBStorage, _name)))
for _name in TOLD:
    setattr(RetryingStorage, _name, _told(_name, getattr(RDBStorage, _name)))


def worker_identity() -> dict[str, Any]:
    """What a fleet trial's `WORKER_ATTR` holds: this process's host and pid."""
    return {"host": socket.gethostname(), "pid": os.getpid()}


def held_trials(study: Any, grace_s: float) -> set[int]:
    """The ids of the study's RUNNING trials a live worker still holds: its heartbeat is
    younger than ``grace_s`` and, when the worker named itself (`WORKER_ATTR`) on this host,
    its process is alive. A trial without a heartbeat (a sweep's own, one at a time) is
    never held: its process is the sweep's."""
    from optuna.storages._rdb import models

    storage = getattr(study._storage, "_backend", study._storage)
    if not isinstance(storage, RDBStorage):
        return set()
    running = {t._trial_id: t for t in study.get_trials(deepcopy=False,
                                                        states=(TrialState.RUNNING,))}
    if not running:
        return set()
    session = storage.scoped_session()
    try:
        now = session.execute(sqlalchemy.func.now()).scalar()
        beats = session.query(models.TrialHeartbeatModel.trial_id,
                              models.TrialHeartbeatModel.heartbeat).filter(
            models.TrialHeartbeatModel.trial_id.in_(list(running))).all()
    except SQLAlchemyError as e:
        parsed = parse_url(storage.url)
        raise StoreError(f"reading the study's heartbeats failed on {masked_url(parsed)}: "
                         f"{describe(e, parsed)}") from e
    finally:
        session.close()
    if now is None:
        return set()
    now = now.replace(tzinfo=None)
    fresh = {trial_id for trial_id, beat in beats
             if beat is not None and now - beat <= timedelta(seconds=grace_s)}
    return {trial_id for trial_id in fresh
            if _alive(running[trial_id].user_attrs.get(WORKER_ATTR))}


def _alive(worker: Any) -> bool:
    """Whether a trial's worker may still run: on another host (or unnamed) its heartbeat
    decides; on this one, its process (`advisor.lifetime.alive_here`)."""
    alive = alive_here(worker)
    return True if alive is None else alive
