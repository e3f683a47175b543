"""The steps after a sweep's trials (`AfterTrials`), each run only when due and within what is
left of the budget (the sweep decides: `advisor.search.sweep.Sweeper.outcome`):

- the paired re-measurement (`AfterTrials.confirm_leaders`): the leader and the configs near it
  (`to_confirm`) re-measured side by side with eager fp32 in one child, compiling from the
  trials' kept caches (advisor.search.confirm), the leader's warm start beside it
  (`WarmStartBeside`);
- the leaders' serving processes again, alone (`AfterTrials.serve_alone`), when trials ran at
  once and the process-life cost decides;
- the recommended config's warm start (`AfterTrials.warm_start`).

They read the sweep through `Sweeping` (its store, workload, settings, launcher, observer and
whether it was interrupted), so that the trial loop and these steps live apart.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from advisor import device_lock
from advisor import settings as env_settings
from advisor.config import EAGER_FP32, CompileConfig
from advisor.errors import ConfigError, TrialFailed
from advisor.recommendation import Recommendation, make_policy
from advisor.records import Confirmation, Fingerprint, TrialRecord
from advisor.search.confirm import confirm
from advisor.search.launcher import Launcher

if TYPE_CHECKING:
    from advisor.db.store import ResultStore
    from advisor.workload import DescribedWorkload

log = logging.getLogger(__name__)
CONFIRMED_LEADERS = 3  # contenders re-measured side by side at most (the leader among them)
ALONE_LEADERS = 3  # ranked configs a pooled sweep serves again alone (advisor.serving.served)


class _Settings(Protocol):
    @property
    def device(self) -> str: ...
    @property
    def traffic(self) -> list[dict[str, Any]] | None: ...
    @property
    def confirm_leaders(self) -> bool: ...
    @property
    def measure_warm(self) -> bool: ...


class _Phases(Protocol):
    def phase(self, name: str) -> None: ...


class Sweeping(Protocol):
    """What the steps read of the sweep (advisor.search.sweep.Sweeper)."""

    store: ResultStore
    loaded: DescribedWorkload
    launcher: Launcher
    interrupted: bool

    @property
    def settings(self) -> _Settings: ...
    @property
    def observer(self) -> _Phases: ...
    def shapes(self) -> list[dict[str, Any]] | None: ...


class WarmStartBeside:
    """A warm start in a thread of its own, on a launcher of its own, started when the child
    it runs beside reports its first phase (`on_phase`): a confirmation child has copied the
    kept caches by then, so the warm start's writes to them cannot meet that copy."""

    def __init__(self, launcher: Launcher, measure: Callable[[Launcher], float | None],
                 trial_uuid: str) -> None:
        self.launcher = launcher
        self.trial_uuid = trial_uuid
        self._measure = measure
        self._thread: threading.Thread | None = None
        self._value: float | None = None
        self._error: BaseException | None = None

    def on_phase(self, name: str) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="warm-start", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._measure(self.launcher)
        except BaseException as e:  # noqa: BLE001 - handed to the caller by result()
            self._error = e

    def result(self) -> float | None:
        """The warm start in seconds (None: not started, or it failed); waits for it."""
        if self._thread is None:
            return None
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value



def to_confirm(rec: Recommendation) -> list[str]:
    """The config keys the closing re-measurement pairs with eager fp32 in one process:
    the leader and the configs that tie with it or come near it
    (`Recommendation.contenders`, the first `CONFIRMED_LEADERS`), or else the pick alone,
    so that the headline's speedup is a paired one. When eager fp32 itself leads, its
    closest rival: "compiling does not pay off" is then a paired answer too (on a loaded
    host a rival's lone trial can be slowed several times over). None when nothing is
    left to pair, a stored confirmation paired the pick already, or the policy does not
    decide on paired figures."""
    if len(rec.contenders) >= 2:
        return rec.contenders[:CONFIRMED_LEADERS]
    pick = rec.best or rec.leader
    if (pick is None or pick.confirmed
            or not make_policy(rec.policy, rec.calls_per_process).paired):
        return []
    if pick.config_key == EAGER_FP32.key:
        rival = next((r for r in rec.ranked if r.config_key != EAGER_FP32.key), None)
        return [] if rival is None else [rival.config_key]
    return [pick.config_key]


class AfterTrials:
    """The steps after the trials of ``sweep`` (module doc)."""

    def __init__(self, sweep: Sweeping) -> None:
        self.sweep = sweep

    def confirm_leaders(self, rec: Recommendation, records: list[TrialRecord],
                         fingerprint: Fingerprint) -> tuple[Confirmation | None, str]:
        """Re-measure the pick, or the leader and the configs that tie with it or come near it
        (`to_confirm`), and eager fp32 interleaved in one process, compiling from the trials'
        kept caches (`advisor.search.confirm.confirm`): every headline speedup is then a paired
        one. Returns the stored confirmation (None: nothing to pair, or not asked) and, when it
        failed, why (the sweep's figures decide then, labelled unpaired)."""
        keys = to_confirm(rec)
        if not self.sweep.settings.confirm_leaders or self.sweep.interrupted or not keys:
            return None, ""
        if self.sweep.settings.traffic is not None:
            return None, ""  # replays compare strategies over a trace; the child times shapes
        if rec.baseline is None:
            return None, ""  # nothing to pair with
        labels = [r.label for r in rec.ranked if r.config_key in keys]
        self.sweep.observer.phase(f"re-measuring {', '.join(labels)} side by side with eager fp32"
                            if len(keys) > 1 else
                            f"re-measuring {labels[0] if labels else keys[0]} against eager "
                            "fp32, interleaved in one process (the paired speedup)")
        beside = self.warm_start_beside(rec, records)
        own_env = dict(self.sweep.launcher.env)
        if beside is not None:  # one device lock for both children
            self.sweep.launcher.env.update(beside.launcher.env)
        try:
            sweep = self.sweep
            confirmation, _ = confirm(
                sweep.store, sweep.loaded.workload.name, fingerprint, sweep.settings.device,
                workload_path=sweep.loaded.path, launcher=sweep.launcher, records=records,
                keys=keys, on_phase=beside.on_phase if beside else None)
        except (ConfigError, TrialFailed) as e:
            return None, (f"Re-measuring the leaders side by side failed "
                          f"({str(e).splitlines()[0]}): the sweep's separate figures decided.")
        except BaseException:  # stopped (Ctrl-C): the warm start beside stops too
            if beside is not None:
                beside.launcher.kill()
            raise
        finally:
            self.sweep.launcher.env = own_env
            if beside is not None and (value := beside.result()) is not None:
                self.sweep.store.set_warm_start(beside.trial_uuid, value)
        return confirmation, ""

    def serve_alone(self, rec: Recommendation, records: list[TrialRecord]) -> bool:
        """Under varying traffic the start-up and the stream's new shapes are part of the
        deciding figure, and trials run at once paid theirs beside each other's compiles, on a
        share of the host's compile threads, where a lone server has them all (on an H200,
        six trials at once started up in 1.3-1.6x a plain harness's time; docs/shapes.md).
        So the first `ALONE_LEADERS` ranked configs and the baseline, when the process-life
        cost decides them, serve their start-up and stream again, one at a time, cold, in a
        fresh process (`Launcher.serve_alone`); stored as the stream's ``alone``, which that
        cost then uses. True when one was."""
        if self.sweep.interrupted:
            return False
        chosen = [r for r in rec.ranked if r.figure == "process"][:ALONE_LEADERS]
        if rec.baseline is not None and rec.baseline.figure == "process":
            chosen.append(rec.baseline)
        by_uuid = {r["trial_uuid"]: r for r in records}
        measured = False
        for ranked in {r.trial_uuid: r for r in chosen}.values():
            record = by_uuid.get(ranked.trial_uuid)
            replay = record.get("replay") if record is not None else None
            stream = replay.get("stream") if replay is not None else None
            if record is None or not stream or stream.get("alone"):
                continue
            self.sweep.observer.phase(f"serving {ranked.label} again, alone")
            sample = stream.get("sample")
            alone = self.sweep.launcher.serve_alone(self.sweep.loaded.path,
                                              CompileConfig.from_dict(record["config"]),
                                              self.sweep.settings.device, self.sweep.shapes(),
                                              sample["positions"] if sample else None)
            if self.sweep.interrupted:
                return measured
            if alone is None:
                continue  # the trial's own figures stand (the launcher logged why)
            self.sweep.store.set_serving_alone(ranked.trial_uuid, alone)
            measured = True
        return measured

    def warm_start_beside(self, rec: Recommendation, records: list[TrialRecord]
                           ) -> WarmStartBeside | None:
        """The leader's warm start, to run beside the leaders' re-measurement (it is the pick
        unless the re-measurement decides otherwise); None when `warm_start` would not measure
        it. Its launcher carries the device's lock (`advisor.device_lock`; none when the user
        set one, which both children inherit), which the confirmation child takes too: the
        warm start overlaps that child's start and compiles, and the child measures alone once
        the warm start is done."""
        due = self.warm_start_due(rec, records)
        if due is None or not self.sweep.launcher.kept_caches({due[1].key: due[0]}):
            return None
        trial_uuid, config = due
        env = ({} if env_settings.is_set(env_settings.DEVICE_LOCK)
               else env_settings.child_env({}, {
                   env_settings.DEVICE_LOCK: device_lock.lock_path(self.sweep.settings.device)}))
        sweep = self.sweep
        side = Launcher(sweep.launcher.timeout_s, sweep.launcher.cache_root, env)
        return WarmStartBeside(side, lambda launcher: launcher.warm_start(
            sweep.loaded.path, config, sweep.settings.device, sweep.shapes(), trial_uuid),
            trial_uuid)

    def warm_start_due(self, rec: Recommendation, records: list[TrialRecord]
                        ) -> tuple[str, CompileConfig] | None:
        """The leader's trial uuid and config when its warm start is still to be measured: the
        sweep measures warm starts, was not stopped, and the leader is a compiled config with no
        warm start stored yet (eager has nothing to start warm)."""
        best = rec.best or rec.leader  # undecided on noise: the leader, re-measured beside
        if not self.sweep.settings.measure_warm or best is None or self.sweep.interrupted:
            return None
        record = next((r for r in records if r["trial_uuid"] == best.trial_uuid), None)
        if record is None or record.get("warm_compile_s") is not None:
            log.debug("warm start of %s: %s", best.trial_uuid, "not a trial of this sweep"
                      if record is None else "stored already")
            return None
        config = CompileConfig.from_dict(record["config"])
        return (best.trial_uuid, config) if config.compiled else None

    def warm_start(self, rec: Recommendation, records: list[TrialRecord]) -> bool:
        """Measure the leader's warm start from its kept cache; True when one was stored."""
        due = self.warm_start_due(rec, records)
        if due is None:
            return False
        trial_uuid, config = due
        self.sweep.observer.phase("warm start of the recommended config")
        sweep = self.sweep
        value = sweep.launcher.warm_start(sweep.loaded.path, config, sweep.settings.device,
                                          sweep.shapes(), trial_uuid)
        if value is None:
            log.info("warm start of %s: none measured (no kept cache, or its child failed)",
                     trial_uuid)
            return False
        self.sweep.store.set_warm_start(trial_uuid, value)
        return True
