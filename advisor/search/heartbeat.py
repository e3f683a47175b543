"""One heartbeat: a thread that calls a beat every few seconds while a block runs.

A sweep's parent beats its sweep row (`ResultStore.beat`, every $ADVISOR_SWEEP_HEARTBEAT_S) so
that readers can tell a live sweep from a dead one; a fleet worker beats the Optuna trial it holds
(every $ADVISOR_HEARTBEAT_S) so that the trial is not taken for stale and queued again. Unlike
Optuna's own heartbeat thread, a beat that fails (the database briefly away, a server restart)
is logged and tried again at the next one: the work goes on.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from advisor import settings as env_settings

if TYPE_CHECKING:
    from advisor.db.store import ResultStore

log = logging.getLogger(__name__)


class Heartbeat:
    """Calls ``beat`` every ``interval()`` seconds (read before each wait) from a daemon thread
    of its own, from `start` (``first_now``: at once, then every interval) until `stop`; a
    context manager too. ``what`` names it in the log."""

    def __init__(self, beat: Callable[[], None], what: str, interval: Callable[[], float], *,
                 first_now: bool = False) -> None:
        self.beat, self.what, self.interval = beat, what, interval
        self.first_now = first_now
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"heartbeat {what}", daemon=True)

    def start(self) -> Heartbeat:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def __enter__(self) -> Heartbeat:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        if self.first_now:
            self._once()
        while not self._stop.wait(self.interval()):
            self._once()

    def _once(self) -> None:
        try:
            self.beat()
        except Exception as e:  # noqa: BLE001 - the next beat tries again
            log.info("%s: heartbeat failed, retried in %.0f s: %s", self.what, self.interval(),
                     str(e).splitlines()[0] if str(e) else type(e).__name__)


def sweep_heartbeat(store: ResultStore, sweep_id: int, interval_s: float | None = None
                    ) -> Heartbeat:
    """A running sweep's row refreshed (`ResultStore.beat`) every ``interval_s`` (default
    $ADVISOR_SWEEP_HEARTBEAT_S), the first beat one interval after the start; at most a quarter
    of $ADVISOR_SWEEP_DEAD_AFTER_S apart, so that a reader under the same settings (the sweep's
    own workers) never finds it dead between two beats."""
    return Heartbeat(lambda: store.beat(sweep_id), f"sweep {sweep_id}",
                     lambda: sweep_beat_interval_s(interval_s))


def sweep_beat_interval_s(asked_s: float | None = None) -> float:
    """Seconds between a running sweep's beats: ``asked_s`` or $ADVISOR_SWEEP_HEARTBEAT_S, and
    no more than a quarter of $ADVISOR_SWEEP_DEAD_AFTER_S (a dead-after of 10 s under the
    20 s default would read a live sweep dead for half of each interval)."""
    return min(asked_s or env_settings.sweep_heartbeat_s(),
               env_settings.sweep_dead_after_s() / 4)


def trial_heartbeat(storage: Any, trial_id: int) -> Heartbeat:
    """A held Optuna trial's heartbeat recorded (``storage.record_heartbeat``) at once and then
    every $ADVISOR_HEARTBEAT_S."""
    return Heartbeat(lambda: storage.record_heartbeat(trial_id), f"trial {trial_id}",
                     lambda: float(env_settings.heartbeat_s()), first_now=True)
