"""Several workers, one sweep: Optuna's distributed optimization over the shared database.

The sweep's creator queues every config of the space as a WAITING Optuna trial. Each worker
(`advisor worker SWEEP_ID --db URL`, or one per GPU from `advisor sweep --workers N`) pops one
queued trial at a time (the storage hands each to exactly one worker), measures it in a child
process, stores the record and tells Optuna. While it holds a trial a worker beats (Optuna's
heartbeat); a worker that dies (kill -9, a lost host) stops beating, and the next worker that
looks fails the stale trial and queues it again (`RetryHeartbeatStaleTrialCallback`), so no config
is lost. A config already stored for the sweep is never measured twice. A worker whose device or
software stack differs from the sweep's refuses to join: its numbers would not be comparable.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from advisor import device_lock
from advisor import settings as env_settings
from advisor.config import CompileConfig
from advisor.dimensions import from_params
from advisor.errors import ConfigError, StoreError, WorkloadError
from advisor.records import Fingerprint
from advisor.rows import SweepRow
from advisor.search.feed import (
    DEADLINE_ATTR,
    PLAN_ATTR,
    QUEUED_AT_ATTR,
    Feeder,
    held_back,
    past_deadline,
    room_for_more,
)
from advisor.search.heartbeat import trial_heartbeat
from advisor.search.launcher import Launcher, describe
from advisor.search.plan import sampler_reason
from advisor.search.request import SweepSettings
from advisor.search.resume import study_of
from advisor.search.space import Space
from advisor.search.study import (
    held_configs,
    open_study,
    suggest_config,
    trial_params,
    trial_state,
)
from advisor.search.sweep import (
    MAX_ASKS_PER_TRIAL,
    Observer,
    QuietObserver,
    prune_bar,
    record_outcome,
    screen_above_ms,
    trial_shapes,
)
from advisor.workload import pin_sha256, workload_sha256

if TYPE_CHECKING:
    import optuna
    from optuna.storages import RDBStorage

    from advisor.db.store import ResultStore

log = logging.getLogger(__name__)
# a held trial's progress (advisor.child.measure.Ticker's), kept as this user attribute at most
# this often for the sweep's parent to say (advisor.search.pool.pool_progress)
PROGRESS_ATTR = "progress"
SHARE_PROGRESS_S = 3.0
IDLE_POLL_S = 1.0  # how often a worker with nothing queued looks for the others' last trials


def has_work(store: ResultStore, sweep: SweepRow) -> bool:
    """Whether a worker can measure anything of ``sweep``: it runs (it may queue more), or its
    study still holds queued configs (a pooled run that died left them). An ended sweep with an
    empty queue has nothing for a worker: the caller says why instead."""
    if sweep["status"] == "running":
        return True
    if not sweep["study_name"]:
        return False
    study = open_study(store.url, sweep["study_name"], seed=None)
    return bool(study.get_trials(deepcopy=False, states=(trial_state("WAITING"),)))


def space_of(sweep: SweepRow) -> Space:
    configs = (sweep["settings"] or {}).get("space")
    if not configs:
        raise ConfigError(f"sweep {sweep['id']} was not created for workers (no stored space)")
    return Space(tuple(CompileConfig.from_dict(c) for c in configs))


def settings_of(sweep: SweepRow) -> SweepSettings:
    """What a sweep was started with (`SweepRow.settings`); ConfigError for a sweep that stored
    none (imported from another database): no worker can join it."""
    if sweep["settings"] is None:
        raise ConfigError(f"sweep {sweep['id']} was not created for workers (no stored settings)")
    return SweepSettings.from_dict(sweep["settings"])


def queue_order(space: Space) -> list[CompileConfig]:
    """The order a resumed budgeted sweep queues what it misses in: the space's own, cheapest
    first (the eager fp32 baseline, then by mode cost; each autotuning config after its twin).
    Other pooled sweeps are fed by `advisor.search.feed.Feeder`."""
    return list(space.configs)


def queue_missing(study: optuna.Study, space: Space, done: set[str]) -> int:
    """Queue every config of the space that is neither stored nor queued nor running."""
    held = {
        _key(t.params)
        for t in study.get_trials(deepcopy=False,
                                  states=(trial_state("WAITING"), trial_state("RUNNING")))
    }
    queued = 0
    for config in queue_order(space):
        if config.key not in done and config.key not in held:
            study.enqueue_trial(trial_params(config, space), user_attrs={"queued": True})
            queued += 1
    return queued


def queue_pool(store: ResultStore, study: optuna.Study, sweeper: Any, fingerprint: Fingerprint,
               sweep_id: int, resume: bool, slots: int) -> tuple[int, Feeder | None]:
    """Queue a pooled sweep through a `Feeder` (whose `tick` the caller calls while the workers
    run): cheap and likely-best first, full or budgeted; a resumed budgeted sweep has every
    config still missing queued at once instead. Returns (configs queued, feeder or None)."""
    settings = sweeper.settings
    # a config a live worker still measures (kept RUNNING by fail_orphans) is not queued again
    done = store.config_keys_done(sweep_id) | (held_configs(study) if resume else set())
    if settings.budgeted and resume:
        return queue_missing(study, sweeper.space, done), None
    feeder = Feeder(store, study, sweeper.make_plan(fingerprint), sweep_id, slots,
                    sweeper.trials_budget_s(), sweeper.observer.notice,
                    full=not settings.budgeted, done=done)
    return feeder.open(), feeder


def _key(params: dict[str, Any]) -> str | None:
    config = from_params(params)
    return config.key if config is not None else None


class Worker:
    """Measures queued configs of one sweep until none is left; see the module docstring."""

    def __init__(self, store: ResultStore, sweep_id: int, device: str,
                 launcher: Launcher | None = None, observer: Observer | None = None) -> None:
        self.store = store
        self.sweep = store.get_sweep(sweep_id)
        self.device = device
        self.settings = settings = settings_of(self.sweep)
        self.launcher = launcher or Launcher(timeout_s=settings.timeout_s,
                                             cache_root=env_settings.keep_caches())
        self.observer = observer or QuietObserver()
        self.space = space_of(self.sweep)
        self.stop = threading.Event()
        self.measured = 0  # trials this worker measured and stored (not those stopped)

    def check(self) -> tuple[Path, Fingerprint]:
        """The workload file (same source as the sweep's) and this device's fingerprint (same
        too). A worker its sweep started ($ADVISOR_WORKLOAD_CHECKED) compares the file's bytes only:
        the sweep imported and checked that file, and every trial child imports it anyway, so
        the worker's trials start without the import (torch and the model's libraries, seconds).
        A worker joining from elsewhere has it imported by a child first
        (`advisor.search.launcher.describe`): a broken file fails here, in one line."""
        wl = self.sweep["workload"]
        if wl["path"] is None:
            raise ConfigError(f"sweep {self.sweep['id']} stored no workload path: no worker can "
                              "join it")
        # The path comes from the database: its bytes are compared BEFORE anything imports it.
        sha256 = workload_sha256(wl["path"])
        if sha256 != wl.get("source_sha256"):
            raise WorkloadError(
                f"{wl['path']} differs from the file sweep {self.sweep['id']} was started with "
                "(its source hash); not imported: use the same workload file on every worker"
            )
        path = Path(wl["path"])
        checked, probed = env_settings.workload_checked(), env_settings.probed_fingerprint()
        if not checked:  # imported by a child (the bytes it hashed: those just compared)
            described = describe(path, env_settings.import_timeout_s())
            if described.source_sha256 != sha256:
                raise WorkloadError(f"{path} changed while this worker checked it; not "
                                    "imported: leave the workload file as it is")
            path = described.path
        pin_sha256(path, sha256)  # what its trial children check before importing the file
        # this device, probed by the sweep that started us
        fingerprint = probed or self.launcher.probe(self.device)
        log.debug("worker on sweep %s: workload %s, fingerprint %s", self.sweep["id"],
                  "bytes checked (its sweep imported it)" if checked else "imported",
                  "from its sweep's probe" if probed else "probed here")
        if fingerprint["fingerprint_hash"] != self.sweep["fingerprint_hash"]:
            fields = [k for k, v in self.sweep["fingerprint"].items()
                      if not k.endswith("hash") and k not in ("hostname", "device_uuid", "os")
                      and fingerprint.get(k) != v]
            raise ConfigError(
                f"this worker's device or stack differs from sweep {self.sweep['id']}'s "
                f"({', '.join(fields) or 'fingerprint'}); it cannot join: start its own sweep"
            )
        return path, fingerprint

    def run(self) -> int:
        """Measure until the queue is empty; returns the number of trials this worker measured
        and stored (a trial stopped by an interrupt is not one)."""
        device_lock.leave_reserved_cores()  # its trials, and their compile workers, too
        path, fingerprint = self.check()
        sweep_id = self.sweep["id"]
        sampler = self.settings.sampler
        study = open_study(self.store.url, study_of(self.sweep), seed=None,
                           heartbeat=True, sampler=sampler)
        while not self.stop.is_set():
            import optuna

            optuna.storages.fail_stale_trials(study)
            if past_deadline(study):
                break  # a budgeted sweep's time is up: start nothing more
            waiting = study.get_trials(deepcopy=False, states=(trial_state("WAITING"),))
            if not waiting:
                plan = study.user_attrs.get(PLAN_ATTR)  # advisor.search.feed: a budgeted sweep's
                if plan == "pending":  # the sweep queues more once the baseline is stored
                    self.stop.wait(IDLE_POLL_S)
                    continue
                if plan == "sampler" and self._propose(study, path, fingerprint, sweep_id,
                                                       sampler):
                    continue
                if not study.get_trials(deepcopy=False, states=(trial_state("RUNNING"),)):
                    break
                # Others hold the last trials; if one of them dies its trial comes back. Look
                # often: the sweep waits for every worker to exit before it recommends.
                self.stop.wait(IDLE_POLL_S)
                continue
            with self._queue_lock():
                trial = study.ask()
                self._hold(study, trial)
            if not trial.user_attrs.get("queued"):
                # The queue emptied between our look and our ask: this is a sampler proposal.
                trial.set_user_attr("skipped", "not a queued config")
                study.tell(trial, state=trial_state("PRUNED"))
                continue
            config = suggest_config(trial, self.space)
            if config.key in self.store.config_keys_done(sweep_id):
                trial.set_user_attr("skipped", "already measured")
                study.tell(trial, state=trial_state("PRUNED"))
                continue
            self._measure(study, trial, config, path, fingerprint, sweep_id)
        self._finish_if_done(study)
        return self.measured

    def _progress(self, study: optuna.Study, trial: optuna.trial.Trial
                  ) -> Callable[[Mapping[str, Any]], None]:
        """The trial child's progress: to this worker's observer, and kept on the held trial
        (`PROGRESS_ATTR`, at most every `SHARE_PROGRESS_S`) for the sweep's parent to say
        (advisor.search.pool.pool_progress): a pooled sweep's workers print nothing."""
        last = [0.0]

        def forward(info: Mapping[str, Any]) -> None:
            self.observer.trial_progress(info)
            now = time.monotonic()
            if now - last[0] < SHARE_PROGRESS_S:
                return
            last[0] = now
            try:
                study._storage.set_trial_user_attr(trial._trial_id, PROGRESS_ATTR, dict(info))
            except Exception as e:  # noqa: BLE001 - progress only: the trial goes on
                log.debug("trial %d: progress not kept: %s", trial._trial_id, e)

        return forward

    def _propose(self, study: optuna.Study, path: Path, fingerprint: Fingerprint, sweep_id: int,
                 sampler: str) -> bool:
        """Ask the sampler for a config nobody measured, runs or holds, and measure it (nor
        one the budget stopped in this sweep: with less time left it would stop again; a
        resumed sweep queues it; nor an autotuning config held back until its twin has
        finished and a slot is free, `held_back`); False when there is no room under the cap
        or nothing new is proposed. The workers propose in turns (`_queue_lock`), each seeing
        the configs the others took: proposing at once, five of eight workers of an H100
        sweep measured the same config side by side
        (bench/results/held_back_sweep_cuda_trials_20261206T052413Z.json)."""
        with self._queue_lock(proposing=True):
            proposed = self._ask_free(study, sweep_id, sampler)
        if proposed is None:
            return False
        self._measure(study, *proposed, path, fingerprint, sweep_id)
        return True

    def _ask_free(self, study: optuna.Study, sweep_id: int, sampler: str,
                  ) -> tuple[optuna.trial.Trial, CompileConfig] | None:
        """The sampler's first proposal that is free now, its trial held by this worker (its
        parameters stored before the lock is let go); None when nothing is free."""
        finished = self.store.config_keys_done(sweep_id)
        done = finished | {
            key for r in self.store.trials(sweep_id=sweep_id, status="stopped")
            if (key := r["config_key"]) is not None}
        held = [t.params for t in study.get_trials(
            deepcopy=False, states=(trial_state("WAITING"), trial_state("RUNNING")))]
        configs = self.space.configs
        holding = [c for c in configs if trial_params(c, self.space) in held]
        free = [c for c in configs
                if c.key not in done and trial_params(c, self.space) not in held
                and held_back(c, configs, finished, holding) is None]
        if not free or not room_for_more(study, done):
            return None
        for _ in range(MAX_ASKS_PER_TRIAL):
            trial = study.ask()
            self._hold(study, trial)
            config = suggest_config(trial, self.space)
            if config in free:
                trial.set_user_attr("reason", sampler_reason(sampler))
                return trial, config
            trial.set_user_attr("skipped", "measured, held, held back or outside the space")
            study.tell(trial, state=trial_state("PRUNED"))
        return None

    @staticmethod
    def _hold(study: optuna.Study, trial: optuna.trial.Trial) -> None:
        """Beat at once (Optuna never calls a trial without any heartbeat stale; a beat that
        fails is tried again by advisor.search.heartbeat) and name this worker, so that a
        resumed sweep leaves the trial to it while it lives (`advisor.db.studies.held_trials`)."""
        from advisor.db.studies import WORKER_ATTR, worker_identity

        try:
            cast("RDBStorage", study._storage).record_heartbeat(trial._trial_id)
        except StoreError as e:
            log.info("trial %d: first heartbeat failed, beaten again when measured: %s",
                     trial._trial_id, e)
        trial.set_user_attr(WORKER_ATTR, worker_identity())

    @contextlib.contextmanager
    def _queue_lock(self, proposing: bool = False) -> Iterator[None]:
        """Workers take turns to pop the queue and to propose. SQLite cannot lock the queued row
        Optuna pops (PostgreSQL does: SELECT ... FOR UPDATE), so workers sharing a SQLite file
        take turns through a lock file beside it; a proposal locks no row, so on PostgreSQL the
        proposing workers take turns through an advisory lock (`ResultStore.advisory_lock`)."""
        url = self.store.url
        if not url.startswith("sqlite"):
            if not proposing:
                yield
                return
            with self.store.advisory_lock(f"advisor-propose:{self.sweep['uuid']}"):
                yield
            return
        from sqlalchemy.engine import make_url

        path = f"{make_url(url).database}.queue-lock"
        with open(path, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _measure(self, study: optuna.Study, trial: optuna.trial.Trial, config: CompileConfig,
                 path: Path, fingerprint: Fingerprint, sweep_id: int) -> None:
        self.observer.trial_started(config)
        taken = time.time()
        settings = self.settings
        shapes = trial_shapes(settings.shape, settings.traffic)
        # a budgeted sweep's trials end with the trials' share of its budget (the study's
        # deadline): each stops itself before it, kept as "stopped" (advisor.child.replay)
        deadline = study.user_attrs.get(DEADLINE_ATTR)
        left = None if deadline is None else max(1.0, float(deadline) - time.time())
        with trial_heartbeat(study._storage, trial._trial_id):
            record = self.launcher.run(
                path, config, self.device, shapes,
                measure_warm=settings.measure_warm and settings.warm_all,
                policy=settings.policy,
                on_phase=self.observer.phase,
                screen_above_ms=screen_above_ms(self.store, sweep_id, config,
                                                settings.screen),
                # others finish meanwhile: the bar as it stands (looked up at the start, then
                # every few seconds), reread by the child
                prune_refresh=(lambda: prune_bar(self.store, sweep_id, config, settings))
                if settings.traffic else None,
                on_progress=self._progress(study, trial), time_budget_s=left, time_limit_s=left,
                calls_per_process=settings.calls_per_process,
            )
        if self.stop.is_set():
            trial.set_user_attr("interrupted", True)
            study.tell(trial, state=trial_state("FAIL"))
            return
        self.measured += 1
        record["fingerprint"] = record.get("fingerprint") or fingerprint
        queued = trial.user_attrs.get(QUEUED_AT_ATTR)
        if queued is not None:  # waiting in the queue for a worker, before the trial's own phases
            record["phases_s"] = {"queue": round(max(0.0, taken - queued), 3),
                                  **record.get("phases_s", {})}
        best = record_outcome(self.store, study, trial, record, config, sweep_id,
                              self.settings.calls_per_process)
        self.observer.trial_finished(record, best)

    def _finish_if_done(self, study: optuna.Study) -> None:
        done = self.store.config_keys_done(self.sweep["id"])
        if not self.stop.is_set() and set(self.space.keys()) <= done:
            self.store.finish_sweep(self.sweep["id"], "finished")

    def interrupt(self) -> None:
        self.stop.set()
        self.launcher.kill()


def worker_env(index: int, device: str, jobs: int = 1, workers: int = 1) -> dict[str, str]:
    """A worker's environment: its GPU (the index-th of those this process may see) and, when
    `jobs` workers share it, the device lock through which their trials take turns to measure
    (advisor.device_lock; named after the GPU itself, so sweeps started on other GPUs of the
    host keep their own) and a fair share of the host's cores (among all `workers` of the host)
    for Inductor's compile workers and, on a GPU, for torch's CPU threads, less one core per GPU
    kept for measurements (`measure_cores`; not when ADVISOR_MEASURE_CORE or
    ADVISOR_RESERVED_CORES is set already)."""
    env = env_settings.child_env()
    here = f"cuda:{index}" if device.startswith("cuda") else "cpu"
    if device.startswith("cuda"):
        env["CUDA_VISIBLE_DEVICES"] = device_lock.gpu_of(here)
    if jobs > 1:
        allowed = sorted(os.sched_getaffinity(0))
        user_set = (env_settings.is_set(env_settings.MEASURE_CORE)
                    or env_settings.is_set(env_settings.RESERVED_CORES))
        kept = ([] if user_set or not device.startswith("cuda")
                else measure_cores(allowed, max(1, workers // jobs)))
        env = env_settings.child_env(env, {
            env_settings.DEVICE_LOCK: device_lock.lock_path(here),
            env_settings.MEASURE_CORE: kept[index % len(kept)] if kept else None,
            env_settings.RESERVED_CORES: set(kept) if kept else None,
        })
        cores = len(allowed) - len(kept)
        env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", str(max(1, cores // workers)))
        if device.startswith("cuda"):
            # a GPU trial's host-side tensor work (building the model, fitting a head,
            # tokenizing) runs on torch's CPU threads, one per core by default: jobs at once
            # would run jobs x cores threads on the cores (the guardrail's build took 33-37 s
            # in each of eight trials at once on a 16-core H200 host, the reranker's 1-2 s;
            # bench/results/time_to_answer_cuda_20261203T153358Z_show_guardrail.txt)
            env.setdefault("OMP_NUM_THREADS", str(max(1, cores // workers)))
    return env


def measure_cores(allowed: list[int], gpus: int) -> list[int]:
    """The cores a sweep keeps for measurements, one per GPU (the last ones), or none when the
    host has fewer than four cores per GPU (compiling would lose too much)."""
    if len(allowed) < 4 * gpus:
        return []
    return sorted(allowed)[-gpus:]


class WorkerPool:
    """Worker processes on this host on one sweep: `jobs` per GPU (CUDA_VISIBLE_DEVICES) for
    `n` GPUs (or `jobs` on the CPU); workers on one device share its lock."""

    def __init__(self, sweep_id: int, n: int, device: str, db_url: str, jobs: int = 1,
                 cache_root: str | None = None,
                 fingerprint: Fingerprint | None = None,
                 workload_sha256: str | None = None) -> None:
        """`fingerprint`: the sweep's probe of the first GPU (or the CPU); the workers on that
        device take it instead of probing again, each a process start. `workload_sha256`: the
        workload file the sweep loaded; the workers check its bytes instead of importing it."""
        self.procs: list[subprocess.Popen[bytes]] = []
        self.interrupted = False
        self.stopping = False  # `stop` was called
        self._t0 = time.monotonic()
        worker_device = "cuda" if device.startswith("cuda") else "cpu"
        for index in range(n):
            for _ in range(jobs):
                cmd = [sys.executable, "-m", "advisor", "worker", str(sweep_id),
                       "--device", worker_device, "--quiet"]  # the sweep reports progress
                env = env_settings.child_env(worker_env(index, device, jobs, n * jobs), {
                    env_settings.DB_URL: db_url,  # not on the command line: `ps` shows it
                    # trials' caches kept for the leader's warm start
                    env_settings.KEEP_CACHES: cache_root,
                    env_settings.PROBED_FINGERPRINT: fingerprint if index == 0 else None,
                    env_settings.WORKLOAD_CHECKED: workload_sha256 or None,
                })
                self.procs.append(subprocess.Popen(cmd, env=env, start_new_session=True))
                log.debug("worker pid %d started on sweep %d (%s, device %d of %d)",
                          self.procs[-1].pid, sweep_id, worker_device, index + 1, n)

    def wait(self, tick: Callable[[], None] | None = None, every_s: float = 0.5) -> list[int]:
        """Wait for every worker; `tick` is called every `every_s` meanwhile (progress)."""
        previous = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            while any(p.poll() is None for p in self.procs):
                if tick is not None:
                    tick()
                time.sleep(every_s)
            codes = [p.wait() for p in self.procs]
            for p, code in zip(self.procs, codes, strict=True):
                log.debug("worker pid %d exited: rc %d after %.1f s", p.pid, code,
                          time.monotonic() - self._t0)
            return codes
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _on_signal(self, signum: int, frame: Any) -> None:
        self.interrupted = True
        self.signum = getattr(self, "signum", None) or signum
        self.stop()

    def stop(self) -> None:
        """Stop every worker (SIGTERM): a trial it runs ends unmeasured, its config queued
        again for a resumed sweep (the budget ended, or the user stopped the sweep)."""
        self.stopping = True
        for p in self.procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
