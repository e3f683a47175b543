"""The Python API: what the CLI does, for a notebook or a service. The CLI is a thin layer over it.

    import advisor
    outcome = advisor.sweep("workloads/reranker.py", budget="10m", db="sqlite:///advisor.db")
    print(outcome.recommendation.sentence)
    rec = advisor.recommend("reranker", db="sqlite:///advisor.db")   # on this device and stack

`sweep` plans (`plan_sweeps`: every flag checked, the workload loaded with a time bound, the
space and settings built, the device's probe started; a resumed sweep's stored settings reused)
then runs (`run_sweep`: one process per trial, serial or a pool of jobs, the leaders confirmed
when asked) and returns the `SweepOutcome`. `recommend` answers from the store for this device's
fingerprint (or a given one), with staleness, provenance and the artifact filled in. Mistakes
raise `advisor.errors.ConfigError` (the CLI prints them in one line, exit code 2); what a sweep
says while it runs goes to ``notice`` (the CLI prints it) or the ``advisor`` logger.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from advisor import paths
from advisor.arguments import python_arguments
from advisor.config import parse_shape, shape_name
from advisor.errors import AdvisorError, ConfigError
from advisor.search.request import SweepRequest as SweepRequest  # declared there, light
from advisor.search.request import SweepSettings, check_timeout
from advisor.traffic import HOLDOUT

if TYPE_CHECKING:
    from advisor.db.store import ResultStore
    from advisor.recommendation import Constraints, Recommendation
    from advisor.records import Fingerprint, TrialRecord
    from advisor.search.space import Space
    from advisor.search.sweep import SweepOutcome
    from advisor.workload import DescribedWorkload, WorkloadFacts

log = logging.getLogger(__name__)

MAX_GPU_JOBS = 8
Notice = Callable[[str], None]


def _log_notice(text: str) -> None:
    log.info("%s", text)


# --- a sweep, planned -------------------------------------------------------------------------


@dataclass
class SweepPlan:
    """One workload file's sweep, ready to run."""

    file: Path
    loaded: DescribedWorkload
    space: Space
    settings: SweepSettings
    note: str | None  # said once the whole request is known to be good
    resume_id: int | None


@dataclass
class Planned:
    """The plans of a request, the store they write to, the device's probe (a child process:
    close it), and the jobs per device."""

    plans: list[SweepPlan]
    store: ResultStore
    probe: Any
    jobs: int
    warnings: list[str] = field(default_factory=list)

    def close(self) -> None:
        if self.probe is not None:
            self.probe.close()


def plan_sweeps(request: SweepRequest, notice: Notice | None = None) -> Planned:
    """Check every flag, load each workload (bounded: `settings.import_timeout_s`; a long
    import said through ``notice``), build its space and settings; start the device's probe.
    Raises ConfigError/WorkloadError (nothing written, the probe ended)."""
    from advisor import settings as env_settings
    from advisor.db.store import ResultStore
    from advisor.devices import cuda_device_count, resolve_device
    from advisor.search.launcher import Probe, describe
    from advisor.search.space import build_space

    r = request
    probe = None
    warnings: list[str] = []
    try:
        r.check()  # every flag's own check, then those across flags: before any child starts
        budget_s = r.budget_s
        env_settings.check_all()  # read before the sweep's row is stored, not after
        device = resolve_device(r.device)
        check_workers(r.workers, r.trials, budget_s, device, cuda_device_count())
        jobs = default_jobs(r.jobs, r.trials, budget_s, device, r.resume, r.workers)
        check_host_room(jobs, r.workers, len(os.sched_getaffinity(0)))
        if jobs > 1 and device == "cpu":
            warnings.append("--jobs on the CPU: each measurement is alone, but shares the cores "
                            "with the other jobs' process starts (tails widen); it pays off on "
                            "a GPU")
        # The device's probe is a child process (imports torch, initializes the device): it
        # starts now and runs while the workloads are described (`describe`: a child each, so
        # that this process never imports them, nor torch). Bad input below kills it.
        probe = Probe(device, min(r.timeout_s, 300.0))
        plans = []
        for file in r.files:
            loaded = describe(file, env_settings.import_timeout_s(r.timeout_s),
                              _importing(file, notice))
            wl = loaded.workload
            dims = parse_shape(r.shape) if r.shape else None
            if dims is not None:
                check_shape(dims, wl.shape, file)
            note = None
            if dims is None and device == "cpu":
                # Full-size shapes of real models take seconds per call on a CPU: measure the
                # smallest traffic shape unless told otherwise, and say so.
                dims = min((s for s, _ in wl.traffic), key=lambda s: math.prod(s.values()))
                note = (f"{wl.name}: measuring {shape_name(dims)}, the smallest traffic shape "
                        "(CPU default; choose with --shape)")
            strategies = list(r.shapes or ["static"])
            replay = replay_options(file, wl, strategies, r.traffic, r.shape is not None,
                                    r.holdout)
            if replay is not None:  # every config replays the traffic instead of one shape
                dims, note = None, None
            space = build_space(wl.dtypes, device, r.dimension_values())
            settings = SweepSettings(
                device=device, n_trials=r.trials, budget_s=budget_s, timeout_s=r.timeout_s,
                measure_warm=r.warm or r.warm_all, warm_all=r.warm_all, shape=dims,
                traffic=replay, screen=r.screen or None,
                confirm_leaders=r.confirm_leaders and not r.confirm, sampler=r.sampler,
                priors=r.priors, calls_per_process=r.calls_per_process, flags=dict(r.flags))
            resume_id = None
            if r.resume:  # the sweep's own settings and space; contradicting flags refused
                given = {flag: (settings, space) for flag in r.given_flags}
                settings, space, resume_id = resumed(r.db, wl.name, given)
                note = None
                if settings.device != device:  # the resumed sweep's device, probed instead
                    device = resolve_device(settings.device)
                    probe.close()
                    probe = Probe(device, min(settings.timeout_s, 300.0))
            plans.append(SweepPlan(file, loaded, space, settings, note, resume_id))
        store = ResultStore.from_url(r.db)
    except BaseException:  # a mistake, or a signal (SIGTERM): the probe's child ends too
        if probe is not None:
            probe.close()
        raise
    return Planned(plans, store, probe, jobs, warnings)


def _importing(file: Path, notice: Notice | None) -> Callable[[float], None] | None:
    """`describe`'s ``on_wait``: "importing FILE (12 s)" through ``notice``."""
    if notice is None:
        return None
    return lambda seconds: notice(f"importing {file} ({seconds:.0f} s)")


def check_shape(dims: dict[str, int], expected: dict[str, int], path: Path) -> None:
    """``--shape`` names the workload's own dims."""
    if set(dims) != set(expected):
        raise ConfigError(
            f"shape dims {', '.join(dims)} do not match {path.name}'s dims "
            f"{', '.join(expected)}; e.g. --shape "
            + ",".join(f"{k}={v}" for k, v in expected.items())
        )


def replay_options(file: Path, wl: WorkloadFacts, strategies: list[str], traffic_file: Path | None,
                   shape_given: bool, holdout: float = HOLDOUT) -> list[dict[str, Any]] | None:
    """The traffic (trial spec entries) a replay serves, or None when nothing asks for a replay:
    a `--traffic` file, or a shape strategy other than static (docs/shapes.md). A log's
    `holdout` share, at its end, is what the replays serve."""
    from advisor.config import shape_strategy
    from advisor.traffic import Traffic, load_traffic

    kinds = [shape_strategy(s)[0] for s in strategies]  # a ConfigError names the choices
    traffic = load_traffic(traffic_file, list(wl.shape)) if traffic_file is not None else None
    if traffic is not None:
        traffic = traffic.with_holdout(holdout)
    if traffic is None and all(kind == "static" for kind in kinds):
        return None
    if shape_given:
        raise ConfigError("--shape measures one shape, but --traffic and shape strategies replay "
                          "the traffic; drop --shape")
    if "buckets" in kinds and not wl.bucketable:
        raise ConfigError(f"{file.name} has no pad() and cut(), which bucketed shape strategies "
                          "need; add them (see advisor.workload) or choose static, dynamic or "
                          "mark_dynamic")
    return (traffic or Traffic.from_pairs(wl.traffic)).to_spec()


def resumed(db: str | None, workload: str, given: dict[str, tuple[SweepSettings, Space]]
            ) -> tuple[SweepSettings, Space, int]:
    """`--resume`: the settings and space the sweep to resume was started with, and its id;
    a flag that contradicts them, or nothing to resume, fails before anything is written.
    ``given``: flag -> (settings, space) the flags given on this command line would make."""
    from advisor.db.engine import display_url, resolve_url
    from advisor.db.spill import ended
    from advisor.db.store import ResultStore, database_revision, sweep_dead_after_s
    from advisor.lifetime import alive_here
    from advisor.search.resume import contradiction, resumable, stored_plan

    found = None
    if database_revision(db).current is not None:
        with ResultStore.from_url(db, read_only=True) as store:
            found = resumable(store.sweeps(workload))
    if found is None:
        raise ConfigError(f"no interrupted sweep of {workload} to resume in {display_url(db)}; "
                          "run it without --resume")
    # its process runs on this host (its owner), or, on another, its heartbeat is fresh: it is
    # alive, unless it left on a store error (a spill)
    if found["status"] == "running" and not ended(resolve_url(db), found["id"]):
        owner = found["owner"] or {}
        here = alive_here(owner)
        why = (f"its process {owner.get('pid')} runs on this host" if here
               else "its heartbeat is recent")
        raise ConfigError(
            f"sweep {found['id']} of {workload} is running ({why}): another process is "
            f"measuring it; resume it once that stops, or once it is reported dead "
            f"(no heartbeat for {sweep_dead_after_s():.0f} s)")
    settings, space = stored_plan(found)
    refused = contradiction(found["id"], given, settings, space)
    if refused:
        raise ConfigError(refused)
    return settings, space, found["id"]


def check_workers(workers: int, trials: int | None, budget_s: float | None, device: str,
                  gpus: int) -> None:
    if workers < 1:
        raise ConfigError("--workers must be at least 1")
    if workers == 1:
        return
    if trials is not None or budget_s is not None:
        raise ConfigError("--workers measures every config of the space; drop --trials/--budget "
                          "or narrow the space with --modes/--dtypes")
    if device.startswith("cuda") and workers > gpus:
        raise ConfigError(f"--workers {workers} asks for more workers than the {gpus} GPU(s) "
                          "here; one worker per GPU")


TRIALS_PER_CORE = 2  # trials at once per host core, at most (`check_host_room`)
# memory a trial's process may take (torch, the model, Inductor's compile workers), what the
# host's available memory must hold for each trial at once (`check_host_room`)
MEMORY_PER_TRIAL = 1 << 30


def check_host_room(jobs: int, workers: int, cores: int,
                    available_bytes: int | None = None) -> None:
    """Trials at once (``jobs`` on each of ``workers`` devices) are processes of this host, each
    with its compile workers, taking turns to measure: at most `TRIALS_PER_CORE` per core (more
    only wait for the device's lock), and `MEMORY_PER_TRIAL` each of the host's available memory
    (``available_bytes``; default: what the OS says now)."""
    what = f"--jobs {jobs}" + (f" on --workers {workers}" if workers > 1 else "")
    most = TRIALS_PER_CORE * cores
    if jobs * workers > most:
        raise ConfigError(f"{what} asks for {jobs * workers} trials at once, more than this "
                          f"host's {cores} cores can run ({TRIALS_PER_CORE} a core); give "
                          f"--jobs at most {max(1, most // workers)}")
    if jobs * workers == 1:
        return
    if available_bytes is None:
        import psutil

        available_bytes = int(psutil.virtual_memory().available)
    fits = available_bytes // MEMORY_PER_TRIAL
    if jobs * workers > fits:
        raise ConfigError(f"{what} asks for {jobs * workers} trials at once, more than this "
                          f"host's {available_bytes / 2**30:.1f} GiB of available memory holds "
                          f"({MEMORY_PER_TRIAL / 2**30:.0f} GiB a trial); give --jobs at most "
                          f"{max(1, fits // workers)}, or free memory")


def default_jobs(jobs: int | None, trials: int | None, budget_s: float | None, device: str,
                 resume: bool, workers: int = 1) -> int:
    """Trials at once per device, the same default with or without --trials/--budget: on a
    GPU only (a CPU measures with the cores a compile needs), one per two of the host's cores
    shared among the ``workers`` devices, at most `MAX_GPU_JOBS`."""
    whole_space = trials is None and budget_s is None
    if jobs is None:
        many = device.startswith("cuda") and not resume
        share = len(os.sched_getaffinity(0)) // (2 * max(1, workers))
        return min(MAX_GPU_JOBS, max(1, share)) if many else 1
    if jobs < 1:
        raise ConfigError("--jobs must be at least 1")
    if jobs > 1 and resume and not whole_space:
        raise ConfigError("--resume continues a --trials/--budget sweep one trial at a time; "
                          "drop --jobs")
    return jobs


# --- a sweep, run -----------------------------------------------------------------------------


def run_sweep(planned: Planned, plan: SweepPlan, request: SweepRequest, *,
              observer: Any = None, notice: Notice = _log_notice) -> SweepOutcome:
    """One planned sweep, measured (`advisor.search.pool.measure`): serially (``observer`` sees
    each trial) or by a pool of jobs and workers (``notice`` hears its progress lines); the
    leaders confirmed at the end when ``request.confirm``. Every trial's cache is kept until the
    sweep ends (the leader's warm start compiles from it), under ``request.keep_caches`` or a
    temporary directory."""
    from advisor.search.pool import measure

    outcome = measure(planned.store, plan.loaded, plan.space, plan.settings, probe=planned.probe,
                      resume=plan.resume_id or request.resume, workers=request.workers,
                      jobs=planned.jobs, keep_caches=request.keep_caches,
                      confirm=request.confirm, observer=observer, notice=notice)
    _answer_in_study(planned.store.url, outcome)
    return outcome


def _answer_in_study(url: str, outcome: SweepOutcome) -> None:
    """advisor's answer beside Optuna's best trial in the sweep's study, for optuna-dashboard
    (`advisor.search.study.record_answer`). The sweep's results are stored already: a study
    that cannot be written is logged, not raised."""
    from advisor.search.study import open_study, record_answer

    if not outcome.study_name:
        return
    try:
        record_answer(open_study(url, outcome.study_name, seed=None), outcome.recommendation)
    except AdvisorError as e:
        log.warning("the study %s was left without advisor's answer: %s", outcome.study_name, e)


def sweep(workload: str | Path, request: SweepRequest | None = None, *,
          notice: Notice = _log_notice, observer: Any = None, **flags: Any) -> SweepOutcome:
    """Sweep one workload file and return its outcome (status, trials, recommendation).

    What to do is a `SweepRequest` (``db`` and the `advisor sweep` flags, each declared once
    there): given whole, ``sweep(path, SweepRequest(budget="10m", db=url))``, which mypy checks
    field by field; or as keywords, ``sweep(path, budget="10m", modes=["eager", "default"],
    db=url)``, checked by name when called (an unknown one raises ConfigError); or both (the
    keywords replace the request's fields). The keywords are not typed for mypy: that would take
    a second table of the same names and types (a TypedDict) beside the request's own fields.
    ``workload`` is the request's only file. Raises ConfigError/WorkloadError on a mistake."""
    unknown = set(flags) - {f.name for f in fields(SweepRequest)} | ({"files"} & set(flags))
    if unknown:
        raise ConfigError(f"advisor.sweep: unknown argument(s) {', '.join(sorted(unknown))}; "
                          "see advisor.api.SweepRequest")
    request = replace(request or SweepRequest(), files=(Path(workload),), **flags)
    with python_arguments(sweep_arguments()):
        planned = plan_sweeps(request, notice)
    try:
        for text in planned.warnings:
            notice(f"warning: {text}")
        plan = planned.plans[0]
        if plan.note:
            notice(plan.note)
        return run_sweep(planned, plan, request, observer=observer, notice=notice)
    finally:
        planned.close()
        planned.store.close()


# --- a recommendation -------------------------------------------------------------------------


# The Python arguments that the CLI's flags stand for, in errors raised through the Python API
# (`python_arguments`): a notebook user reads ``fingerprint=``, not ``--fingerprint``.
RECOMMEND_ARGUMENTS = {
    "--fingerprint": "fingerprint=", "--device": "device=", "--policy": "policy=",
    "--calls-per-process": "calls_per_process=", "--max-compile-s": "constraints=",
    "--max-memory": "constraints=", "--confirm": "confirm=True", "--top": "top=",
    "--file": "file=", "--timeout": "timeout_s=", "--db": "db=",
}


def sweep_arguments() -> dict[str, str]:
    """Each `advisor sweep` flag -> its `SweepRequest` field as a Python argument
    (``--calls-per-process`` -> ``calls_per_process=``, ``--no-warm`` -> ``warm=False``)."""
    from advisor.search.request import flag_fields

    names = {"--db": "db=", "--config": "a sweep file"}
    for name, (declared, _) in flag_fields().items():
        names[declared.long] = f"{name}="
        names[f"--no-{declared.long[2:]}"] = f"{name}=False"
    return names


def recommend(workload: str, *, db: str | None = None, device: str | None = None,
              fingerprint: str | None = None, policy: str = "latency",
              calls_per_process: int | None = None, constraints: Constraints | None = None,
              confirm: bool = False, top: int = 3, artifact: bool = True,
              file: Path | None = None, notice: Notice = _log_notice,
              timeout_s: float | None = None) -> Recommendation:
    """The recommendation for ``workload`` on this device's fingerprint (or ``fingerprint``),
    with staleness, provenance and the stored artifact filled in: what `advisor recommend`,
    `report` and `check` show. ``fingerprint`` is any id the CLI prints: the device's short id
    (``H200 @gpu-a · 7f023bc2``), its host (``gpu-a``), its fingerprint hash or a prefix of it
    (4 characters at least). Measured only on another stack: that stack's answer, the
    differences named in ``staleness`` (and said through ``notice``). ``confirm``: re-measure
    the top configs and eager fp32 interleaved on this device first, each child process
    killed after ``timeout_s`` (default: a trial's, `launcher.DEFAULT_TIMEOUT_S`). A mistake
    raises ConfigError naming the argument (``fingerprint=``)."""
    with python_arguments(RECOMMEND_ARGUMENTS):
        return recommendation_for(
            workload, db=db, device=device, fingerprint=fingerprint, policy=policy,
            calls_per_process=calls_per_process, constraints=constraints, confirm=confirm,
            top=top, artifact=artifact, file=file, notice=notice, timeout_s=timeout_s)


def recommendation_for(workload: str, *, db: str | None = None, device: str | None = None,
                       fingerprint: str | None = None, policy: str = "latency",
                       calls_per_process: int | None = None,
                       constraints: Constraints | None = None, confirm: bool = False,
                       top: int = 3, artifact: bool = True, file: Path | None = None,
                       notice: Notice = _log_notice,
                       timeout_s: float | None = None) -> Recommendation:
    """`recommend`, whose errors name the CLI's flags (``--fingerprint``): what `advisor
    recommend`, `report` and `check` call."""
    from advisor.db.store import ResultStore
    from advisor.devices import resolve_device
    from advisor.recommendation import (
        Constraints,
        check_policy,
        cover,
        nearest_fingerprint,
        provenance,
    )
    from advisor.recommendation.answers import answer, planned
    from advisor.search.launcher import Launcher
    from advisor.version import __version__

    check_policy(policy, calls_per_process)
    if top < 1:
        raise ConfigError("--top must be at least 1")
    if timeout_s is not None:
        check_timeout(timeout_s)
    launcher = Launcher() if timeout_s is None else Launcher(timeout_s)
    if file is not None:
        paths.readable_file(file, "--file", missing=f"{file}: no such workload file")
    store = ResultStore.from_url(db, read_only=True)
    try:
        if workload not in store.workloads():
            raise ConfigError(f"no results for workload {workload!r}; run `advisor sweep FILE` "
                              "first")
        here: Fingerprint | None = None
        if fingerprint is None or confirm:
            device = resolve_device(device)
            here = launcher.probe(device)
        staleness = None
        if fingerprint is not None:  # any id the CLI prints: short id, host, hash or prefix
            fingerprint = resolve_fingerprint(store, workload, fingerprint)
        if fingerprint is None:
            assert here is not None
            fingerprint = here["fingerprint_hash"]
            records = store.trials(workload=workload, fingerprint_hash=fingerprint)
            if not records:
                staleness = nearest_fingerprint(here, store.fingerprints(workload))
                if staleness.measured_hash is None:
                    raise ConfigError(f"no trials of {workload} on this device and stack "
                                      f"(fingerprint {fingerprint}) nor on this kind of device; "
                                      "sweep it here, or pass --fingerprint")
                if confirm:
                    raise ConfigError(f"--confirm measures on this device, but {workload} was "
                                      f"never swept on this stack (fingerprint {fingerprint}); "
                                      "sweep it here first")
                notice(f"warning: {staleness.warning}")
                fingerprint = staleness.measured_hash
                records = store.trials(workload=workload, fingerprint_hash=fingerprint)
        else:
            records = store.trials(workload=workload, fingerprint_hash=fingerprint)
        if not records:
            raise ConfigError(f"no trials of {workload} on this device and stack (fingerprint "
                              f"{fingerprint}); sweep it here, or pass --fingerprint")
        kwargs: dict[str, Any] = {"policy": policy, "calls_per_process": calls_per_process,
                                  "constraints": constraints or Constraints()}
        if confirm:
            assert here is not None and device is not None
            rec = _confirm_here(store, workload, here, device, fingerprint, kwargs, top, artifact,
                                file, notice, launcher)
            rec = cover(rec, planned(store, workload, fingerprint), records)
        else:
            rec = answer(store, workload, fingerprint, records=records, **kwargs)
        staleness = provenance(staleness, records, _source_sha256(file, records), __version__)
        return replace(rec, staleness=staleness.to_dict() if staleness else None,
                       artifact=_artifact_of(store, rec),
                       provisional=_provisional(store, workload, fingerprint))
    finally:
        store.close()


def resolve_fingerprint(store: ResultStore, workload: str, selector: str,
                        what: str = "--fingerprint") -> str:
    """The fingerprint hash that ``selector`` names among those ``workload`` was measured on:
    a short id (``H200 @gpu-a · 7f023bc2``), a hash or a prefix of it, or a host name
    (`advisor.devices.DeviceNames.resolve`). ConfigError when it names none or several; a
    workload never measured is left to the caller to explain."""
    from advisor.devices import DeviceNames

    measured = [f["fingerprint_hash"] for f in store.fingerprints(workload)]
    if not measured:
        return selector
    names = DeviceNames.of_store(store)
    for fp in store.fingerprints(workload):
        names.learn(fp)
    return names.resolve(selector, measured, what, scope=workload)


def _provisional(store: ResultStore, workload: str, fingerprint: str | None) -> str:
    """Why the answer is provisional: a sweep of ``workload`` on ``fingerprint`` still runs
    (its heartbeat is fresh), and how far it has come; "" when none does."""
    running = [s for s in store.sweeps(workload=workload)
               if s["status"] == "running" and s["fingerprint_hash"] == fingerprint]
    if not running:
        return ""
    s = max(running, key=lambda s: s["id"])
    return (f"sweep {s['id']} is still running ({s['n_trials']} of "
            f"{s['planned_trials'] or '?'} planned trials finished): this answer rests on "
            "the trials finished so far and may change")


def _source_sha256(file: Path | None, records: Sequence[TrialRecord]) -> str | None:
    """The workload file's hash now: ``file``, else the path its newest trial names."""
    from advisor.workload import workload_sha256

    path = file or next((Path(p) for r in reversed(records)
                         if (p := (r.get("workload") or {}).get("path"))), None)
    if path is None or not paths.quietly_exists(path):
        return None
    try:
        return workload_sha256(path)
    except AdvisorError:
        return None


def _confirm_here(store: ResultStore, workload: str, here: Fingerprint, device: str,
                  fingerprint: str, kwargs: dict[str, Any], top: int, artifact: bool,
                  file: Path | None, notice: Notice, launcher: Any) -> Recommendation:
    from advisor.search.confirm import confirm_and_save

    if here["fingerprint_hash"] != fingerprint:
        raise ConfigError(f"--confirm measures on this device (fingerprint "
                          f"{here['fingerprint_hash']}), not on fingerprint {fingerprint}; "
                          "drop --fingerprint or run it there")
    outcome = confirm_and_save(
        store, workload, here, device, save=artifact, top=top, workload_path=file,
        launcher=launcher, on_phase=lambda name: notice(f"confirming: {name}"), **kwargs,
    )
    if artifact and outcome.artifact is None:
        notice(f"no warm-start artifact saved: {outcome.artifact_note}")
    rec: Recommendation = outcome.recommendation
    return rec


def _artifact_of(store: ResultStore, rec: Recommendation) -> dict[str, Any] | None:
    """The newest stored artifact of the recommended config on its fingerprint (no bytes)."""
    best = rec.best
    if best is None:
        return None
    key = best.config_key
    for found in store.artifacts(rec.workload):
        if found["fingerprint_hash"] == rec.fingerprint_hash and found["config_key"] == key:
            return {"uuid": found["uuid"], "created_at": found["created_at"],
                    "size_bytes": found["size_bytes"], "sha256": found["sha256"],
                    "torch_version": found["torch_version"],
                    "cold_start_s": found["cold_start_s"], "warm_start_s": found["warm_start_s"]}
    return None
