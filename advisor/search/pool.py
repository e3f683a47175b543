"""A planned sweep, measured: by the sweep's own process, one trial at a time
(`advisor.search.sweep.Sweeper.run`), or by a pool of worker processes on this host that share
its study (`run_pool`: `jobs` per device on `workers` devices, `advisor.search.fleet.WorkerPool`),
whose trials the parent reads back from the store and says one line each (`pool_progress`).

Every trial's cache is kept until the sweep ends (the leader's warm start compiles from it),
under ``keep_caches`` or a temporary directory; the temporary directories of advisor processes
that are gone are removed first (`remove_orphaned_roots`). With ``confirm`` the sweep's last step
re-measures its top configs paired and saves the pick's warm-start artifact
(`advisor.search.confirm.confirm_and_save`). `advisor.api.run_sweep` calls `measure`.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from advisor import tempdirs
from advisor.config import CompileConfig
from advisor.dimensions import from_params
from advisor.errors import ConfigError, TrialFailed
from advisor.recommendation import steady_ms
from advisor.search.confirm import confirm_and_save
from advisor.search.fleet import PROGRESS_ATTR, WorkerPool, queue_pool
from advisor.search.heartbeat import sweep_heartbeat
from advisor.search.launcher import Launcher
from advisor.search.study import fail_orphans, open_study, trial_state
from advisor.search.sweep import QuietObserver, Sweeper
from advisor.serving import progress_text, pruned_text, stopped_text
from advisor.units import duration_ms, duration_s

if TYPE_CHECKING:
    import optuna

    from advisor.db.store import ResultStore
    from advisor.records import TrialRecord
    from advisor.search.request import SweepSettings
    from advisor.search.space import Space
    from advisor.search.sweep import Observer, SweepOutcome
    from advisor.workload import DescribedWorkload

Notice = Callable[[str], None]
# while no trial is stored, the running trials' progress is said this often (the CLI's aim: a
# line at least every 10 s)
RUNNING_EVERY_S = 8.0


class PoolPhases(QuietObserver):
    """What the parent of a pooled sweep does itself (the workers report their trials)."""

    def __init__(self, notice: Notice) -> None:
        self.say = notice

    def phase(self, name: str) -> None:
        self.say(name)

    def notice(self, text: str) -> None:
        self.say(text)


def measure(store: ResultStore, loaded: DescribedWorkload, space: Space, settings: SweepSettings,
            *, probe: Any, resume: bool | int, workers: int, jobs: int,
            keep_caches: Path | None, confirm: bool, observer: Observer | None,
            notice: Notice) -> SweepOutcome:
    """One planned sweep, measured: serially (``observer`` sees each trial) or, with more than
    one worker or job, by a pool (``notice`` hears its progress lines); the leaders confirmed
    at the end when ``confirm``. ``probe``: the device's probe, started ahead
    (`advisor.search.launcher.Probe`)."""
    remove_orphaned_roots()
    keep = keep_caches
    root = keep or tempdirs.make("sweep")
    launcher = Launcher(timeout_s=settings.timeout_s, cache_root=root)
    finishing = (partial(_confirm_leaders, store, loaded, settings.device, launcher=launcher,
                         notice=notice) if confirm else None)
    try:
        if workers > 1 or jobs > 1:
            sweeper = Sweeper(store, loaded, space, settings, launcher, PoolPhases(notice), probe,
                              finishing)
            return run_pool(store, sweeper, resume, workers, jobs, root, notice)
        return Sweeper(store, loaded, space, settings, launcher, observer or QuietObserver(),
                       probe, finishing).run(resume)
    finally:
        if keep is None:
            shutil.rmtree(root, ignore_errors=True)


def remove_orphaned_roots() -> list[Path]:
    """The temporary directories of advisor processes that are gone (kill -9 runs no cleanup):
    sweeps' cache roots, probes' and trial children's working directories, each named
    advisor-<kind>-<pid>-* (`advisor.tempdirs`) and removed once no process has that pid;
    returns them."""
    return tempdirs.remove_orphaned()


def _confirm_leaders(store: ResultStore, loaded: DescribedWorkload, device: str,
                     outcome: SweepOutcome, *, launcher: Launcher,
                     notice: Notice) -> SweepOutcome:
    """--confirm: the sweep's recommendation, decided again on interleaved, paired
    re-measurements of its top configs, and the pick's warm-start artifact saved (the child
    compiles from the trials' caches, still kept by ``launcher``); the sweep's last step
    (`Sweeper.close`)."""
    notice("confirming the leaders against eager fp32, interleaved in one process")
    try:
        done = confirm_and_save(store, loaded.workload.name, outcome.fingerprint, device,
                                workload_path=loaded.path, launcher=launcher)
    except (ConfigError, TrialFailed) as e:
        notice(f"confirmation skipped: {str(e).splitlines()[0]}")
        return outcome
    a = done.artifact
    if a is None:
        notice(f"no warm-start artifact saved: {done.artifact_note}")
    else:
        warm = ("" if a["warm_start_s"] is None
                else f", with the artifact {duration_s(a['warm_start_s'])}")
        notice(f"warm-start artifact: {a['size_bytes'] / 2**10:.0f} KiB saved, cold start "
               f"{duration_s(a['cold_start_s'])}{warm}")
    outcome.recommendation = done.recommendation
    return outcome


def run_pool(store: ResultStore, sweeper: Sweeper, resume: bool | int, workers: int, jobs: int,
             cache_root: Path, notice: Notice) -> SweepOutcome:
    """The sweep shared by worker processes on this host (advisor.search.fleet): `jobs` per
    device on `workers` devices."""
    fingerprint, sweep_id, study_name = sweeper.prepare(resume)
    sweeper.start_budget()
    study = open_study(store.url, study_name, heartbeat=True, sampler=sweeper.settings.sampler)
    if resume:
        fail_orphans(study)  # the dead run's trials: their configs are queued again
    queued, feeder = queue_pool(store, study, sweeper, fingerprint, sweep_id, bool(resume),
                                workers * jobs)
    notice(f"sweep {sweep_id}: {queued} configs queued for {workers * jobs} workers "
           f"({jobs} per device)")
    pool = WorkerPool(sweep_id, workers, sweeper.settings.device, store.url, jobs,
                      str(cache_root), fingerprint, sweeper.loaded.source_sha256)
    progress = pool_progress(store, sweep_id, feeder.cap if feeder else len(sweeper.space),
                             notice, study)

    def tick() -> None:
        if feeder is not None:
            feeder.tick()
        progress()
        left = sweeper.trials_time_left()
        if left is not None and left <= 0 and not pool.stopping:  # the trials' time is up
            notice("the trials' share of the budget ended: stopping the trials still running "
                   "(not measured); the rest is the paired re-measurement's")
            sweeper.budget_ended = True
            pool.stop()

    with sweep_heartbeat(store, sweep_id):
        codes = pool.wait(tick=tick)
    progress()  # the trials stored after the last tick: the closing progress line
    done = store.config_keys_done(sweep_id)
    # a budgeted sweep is complete when its workers found nothing more to start
    complete = set(sweeper.space.keys()) <= done or (
        feeder is not None and not feeder.full and (not any(codes) or sweeper.budget_ended))
    status = "finished" if complete and not pool.interrupted else "interrupted"
    if not complete and not pool.interrupted:
        notice(f"workers exited with {codes} before the sweep was complete; continue with "
               "--resume")
    outcome: SweepOutcome = sweeper.close(sweep_id, status, fingerprint, study_name,
                                          startups_shared=workers * jobs > 1)
    outcome.signum = getattr(pool, "signum", None)
    return outcome


def pool_progress(store: ResultStore, sweep_id: int, planned: int, notice: Notice,
                  study: optuna.Study | None = None) -> Callable[[], None]:
    """A tick that says a line for each trial a worker stored (its config, its outcome, why it
    was tried), then the sweep's state: done, failed, best so far; and, when nothing was said
    for `RUNNING_EVERY_S`, a line for each trial the workers run (``study``'s RUNNING trials:
    the progress their worker kept, advisor.search.fleet.PROGRESS_ATTR, or their time so
    far)."""
    seen: set[str | None] = set()
    said = [time.monotonic()]

    def say(text: str) -> None:
        notice(text)
        said[0] = time.monotonic()

    def running() -> None:
        if study is None or time.monotonic() - said[0] < RUNNING_EVERY_S:
            return
        for t in study.get_trials(deepcopy=False, states=(trial_state("RUNNING"),)):
            config = from_params(t.params)
            label = config.label if config is not None else "a config"
            info = t.user_attrs.get(PROGRESS_ATTR)
            if info:
                say(f"  {progress_text(info, label)}")
            elif t.datetime_start is not None:
                so_far = (datetime.now() - t.datetime_start).total_seconds()
                say(f"  running {label}, {duration_s(max(0.0, so_far))}")
        said[0] = time.monotonic()  # nothing running: said nothing, looked again later

    def tick() -> None:
        records = store.trials(sweep_id=sweep_id)
        new = [r for r in records if r["trial_uuid"] not in seen]
        if not new:
            running()
            return
        for r in sorted(new, key=lambda r: r.get("finished_at") or ""):
            seen.add(r["trial_uuid"])
            label = CompileConfig.from_dict(r["config"]).label
            say(f"  {label}: {_outcome(r, duration_ms)}"
                + (f"; tried because {r['tried_because']}" if r.get("tried_because") else ""))
        failed = sum(r["status"] == "failed" for r in records)
        passed = [r for r in records if r["status"] == "ok" and r.get("passed")]
        best = min(passed, key=steady_ms) if passed else None
        best_text = (f"best {CompileConfig.from_dict(best['config']).label} "
                     f"{duration_ms(best['median_ms'])}" if best else "no passing config yet")
        say(f"sweep {sweep_id}: {len(records)}/{planned} trials, {failed} failed, {best_text}")

    return tick


def _outcome(record: TrialRecord, ms: Callable[[float | None], str]) -> str:
    """A stored trial's outcome in a few words: its median, or why it has none."""
    if record["status"] == "ok":
        return ms(record["median_ms"]) + ("" if record.get("passed") else " (rejected)")
    if record["status"] == "pruned":
        return pruned_text(record.get("pruned") or {})
    if record["status"] == "stopped":
        return stopped_text(record.get("stopped") or {})
    return f"failed: {record.get('failure_reason')}"
