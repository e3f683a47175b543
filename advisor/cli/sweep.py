"""`advisor sweep FILE`: search the compile configs of a workload and recommend one."""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import tempfile
from pathlib import Path
from typing import Any

import typer

from advisor import settings as env_settings
from advisor.cli import render
from advisor.cli.app import app
from advisor.cli.common import DbOption, fail, fail_on
from advisor.config import CompileConfig, parse_shape, shape_name
from advisor.dimensions import BY_NAME as DIM
from advisor.dimensions import OPTIONS_BY_NAME, parse_options
from advisor.errors import AdvisorError, ConfigError
from advisor.serving import DEFAULT_CALLS_PER_PROCESS
from advisor.traffic import HOLDOUT


def _resumed(db: str | None, workload: str, given: dict[str, Any]) -> tuple[Any, Any, int]:
    """`--resume`: the settings and space the sweep to resume was started with, and its id;
    a flag that contradicts them, or nothing to resume, fails before anything is written.
    ``given``: flag -> (settings, space) the flags given on this command line would make."""
    from advisor.db.engine import display_url
    from advisor.db.store import ResultStore, database_revision, sweep_dead_after_s
    from advisor.search.resume import contradiction, resumable, stored_plan
    from advisor.search.sweep import SweepSettings

    found = None
    if database_revision(db).current is not None:
        with ResultStore.from_url(db, read_only=True) as store:
            found = resumable(store.sweeps(workload))
    if found is None:
        raise ConfigError(f"no interrupted sweep of {workload} to resume in {display_url(db)}; "
                          "run it without --resume")
    if found["status"] == "running":  # its heartbeat is fresh: its process is alive
        raise ConfigError(
            f"sweep {found['id']} of {workload} is running (its heartbeat is recent): another "
            f"process is measuring it; resume it once that stops, or once it is reported dead "
            f"(no heartbeat for {sweep_dead_after_s():.0f} s)")
    settings, space = stored_plan(found, SweepSettings)
    refused = contradiction(found["id"], given, settings, space)
    if refused:
        raise ConfigError(refused)
    return settings, space, found["id"]


_RESUME_FLAGS = {
    "modes": "--modes", "dtypes": "--dtypes", "fullgraph": "--fullgraph", "shapes": "--shapes",
    "option": "--option",
    "device": "--device", "trials": "--trials", "budget": "--budget", "shape": "--shape",
    "traffic": "--traffic", "holdout": "--holdout", "timeout_s": "--timeout",
    "screen": "--screen", "sampler": "--sampler", "priors": "--priors",
    "calls_per_process": "--calls-per-process", "warm": "--warm", "warm_all": "--warm-all",
}


def _given_flags(ctx: typer.Context) -> list[str]:
    """The search flags given on the command line or in a sweep file (not their defaults)."""
    given = []
    for name, flag in _RESUME_FLAGS.items():
        source = ctx.get_parameter_source(name)  # typer's own enum: compared by name
        if source is not None and source.name != "DEFAULT":
            given.append(flag)
    return given


def resume_hint(file: Path | str, db: str | None) -> str:
    """The command that continues an interrupted sweep: `--resume` reuses its stored settings
    (modes, dtypes, device, trials, ...), so only the file and the database are needed."""
    import shlex

    from advisor.db.engine import display_url

    where = "" if db is None and env_settings.db_url() else f" --db {shlex.quote(display_url(db))}"
    return f"advisor sweep {shlex.quote(str(file))}{where} --resume"


# Flags a sweep file does not set: how the outcome prints, and the file itself. The sweep's row
# keeps every other flag but the database URL (which may carry a password).
NOT_IN_FILE = ("as_json", "config")
NOT_KEPT = ("db",)


def _file_keys(command: Any) -> dict[str, Any]:
    """A sweep file's keys (each flag's long name without ``--``, e.g. ``calls-per-process``,
    ``warm``; ``files``: the workload files) -> the command's parameters."""
    keys = {}
    for param in command.params:
        if param.name in NOT_IN_FILE:
            continue
        longs = [o for o in param.opts if o.startswith("--")]
        keys[longs[0][2:] if longs else param.name] = param
    return keys


def _load_config(ctx: typer.Context, param: Any, path: Path | None) -> Path | None:
    """``--config sweep.toml``: its values become the defaults of the other flags (a flag given
    on the command line wins). A bad file, key or value is one line, exit 2."""
    if path is None:
        return None
    import tomllib

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        fail(f"--config {path}: cannot read it ({e.strerror})")
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        fail(f"--config {path} is not valid TOML: {e}")
    if set(data) == {"sweep"} and isinstance(data["sweep"], dict):
        data = data["sweep"]  # a [sweep] table, or the keys at the top level
    keys = _file_keys(ctx.command)
    defaults = {}
    for key, value in data.items():
        target = keys.get(key) or keys.get(key.replace("_", "-"))
        if target is None:
            fail(f"--config {path}: unknown key {key!r}; the keys are the sweep flags: "
                 f"{', '.join(sorted(keys))}")
        several = target.name == "files" or getattr(target, "multiple", False)
        if several and isinstance(value, str):
            value = [value]
        if isinstance(value, list) and not several:
            value = ",".join(str(v) for v in value)  # modes = ["default", "eager"]
        try:  # the flag's own type checks the value, as on the command line
            defaults[target.name] = target.process_value(ctx, value)
        except typer.BadParameter as e:
            fail(f"--config {path}: bad value for {key!r}: {e.message}")
    ctx.default_map = {**(ctx.default_map or {}), **defaults}
    return path


def _flags(ctx: typer.Context) -> dict[str, Any]:
    """The resolved flags as a sweep file's keys (TOML-ready: no None, paths as text)."""
    out: dict[str, Any] = {}
    for key, param in _file_keys(ctx.command).items():
        value = ctx.params.get(param.name)
        if value is None or param.name in NOT_KEPT:
            continue
        if isinstance(value, (list, tuple)):
            value = [str(v) for v in value]
        elif isinstance(value, Path):
            value = str(value)
        out[key] = value
    return out


@app.command()
def sweep(
    ctx: typer.Context,
    files: list[Path] = typer.Argument(
        ..., help="Workload files (.py) defining `workload`; several run one after another."
    ),
    db: str | None = DbOption,
    config: Path | None = typer.Option(
        None, "--config", is_eager=True, callback=_load_config,
        help="A TOML file of sweep flags (keys: the flags' long names, e.g. modes = "
        '["default", "reduce-overhead"], budget = "20m", files = ["workloads/reranker.py"]); '
        "flags given on the command line win. The resolved flags are stored with the sweep.",
    ),
    trials: int | None = typer.Option(
        None, "--trials", help="Measure at most N configs (TPE picks them when N < the space)."
    ),
    budget: str | None = typer.Option(
        None, "--budget", help="Stop starting trials after e.g. 20m."
    ),
    modes: str | None = typer.Option(
        None, "--modes", help="Comma-separated modes to try; " + DIM["mode"].help + "."),
    dtypes: str | None = typer.Option(
        None, "--dtypes", help="Comma-separated dtypes to try; " + DIM["dtype"].help + "."),
    fullgraph: str = typer.Option("off", "--fullgraph", help="both, on or off: "
                                  + DIM["fullgraph"].help + "."),
    option: list[str] = typer.Option(
        [], "--option", help="Sweep an Inductor option: NAME=V1,V2 (repeatable), e.g. "
        "epilogue_fusion=true,false; the sweepable ones: " + ", ".join(OPTIONS_BY_NAME) + "."
    ),
    device: str | None = typer.Option(
        None, "--device", help="cuda, cuda:N or cpu (default: cuda when present, else cpu)."
    ),
    shape: str | None = typer.Option(
        None, "--shape", help="Shape to measure, e.g. batch=50,seq=128 (default: the workload's)."
    ),
    shapes: str | None = typer.Option(
        None, "--shapes", help="Comma-separated shape strategies to compare, e.g. static,dynamic,"
        "buckets:pow2,buckets:fitted-4 (default static; more than static replays the traffic)."
    ),
    traffic: Path | None = typer.Option(
        None, "--traffic", help="CSV of observed requests (header: the dims, e.g. batch,seq; "
        "one row per request): every config replays it."
    ),
    holdout: float = typer.Option(
        HOLDOUT, "--holdout", help="With --traffic: the share of the log, at its end, that "
        "replays serve; buckets and start-up shapes are fitted on the earlier rest."
    ),
    calls_per_process: int | None = typer.Option(
        None, "--calls-per-process", help="Requests a serving process lives for: under varying "
        f"traffic the pick is the lowest cost per request over such a process (default "
        f"{DEFAULT_CALLS_PER_PROCESS:,})."
    ),
    resume: bool = typer.Option(False, "--resume", help="Continue the last interrupted sweep."),
    workers: int = typer.Option(
        1, "--workers", help="Worker processes, one per GPU, sharing the sweep (needs every "
        "config of the space: no --trials/--budget)."
    ),
    jobs: int | None = typer.Option(
        None, "--jobs", help="Trials at once per device: they compile side by side and take "
        "turns to measure, alone (default on a GPU when every config of the space is measured: "
        "one per two cores, at most 8; else 1)."
    ),
    screen: float = typer.Option(
        1.5, "--screen", help="Cut short a config whose first short measurement is above this "
        "multiple of the best median so far (0: measure every config in full)."
    ),
    sampler: str = typer.Option(
        "tpe", "--sampler", help="Optuna sampler once the queued configs are measured: tpe, "
        "random or grid (every combination once, in random order)."
    ),
    priors: bool = typer.Option(
        True, "--priors/--no-priors", help="With --trials/--budget: try the fleet's best "
        "configs for this workload, the eager baseline, then the priors' picks first "
        "(advisor.search.priors) before the sampler."
    ),
    as_json: bool = typer.Option(
        False, "--json", help="Print the outcome on stdout as JSON Lines: one object per "
        "workload file (docs/cli.md)."
    ),
    timeout_s: float = typer.Option(900.0, "--timeout", help="Per-trial time limit in seconds."),
    warm: bool = typer.Option(
        True, "--warm/--no-warm", help="After the trials, measure the recommended config's warm "
        "start (a second process compiling from its cache)."
    ),
    warm_all: bool = typer.Option(
        False, "--warm-all", help="Measure every compiled config's warm start (one more "
        "process per trial)."
    ),
    keep_caches: Path | None = typer.Option(
        None, "--keep-caches", help="Keep each trial's Inductor cache under DIR/<trial uuid>."
    ),
    confirm: bool = typer.Option(
        False, "--confirm", help="At the end, re-measure the top configs and eager fp32 "
        "interleaved in one process, decide on those paired figures, save a warm-start artifact."
    ),
    confirm_leaders: bool = typer.Option(
        True, "--confirm-leaders/--no-confirm-leaders", help="When configs tie with the "
        "fastest or come within 10% of it, re-measure the first three and eager fp32 "
        "interleaved in one process and decide on those paired figures (--confirm does this "
        "for the top configs anyway; not with --traffic, whose replays are the figures)."
    ),
) -> None:
    """Measure compile configs of workloads (one process per trial) and recommend the best."""
    from advisor.cli.trial import check_shape, replay_options
    from advisor.db.store import ResultStore
    from advisor.devices import cuda_device_count, resolve_device
    from advisor.search.launcher import Probe
    from advisor.search.plan import SAMPLERS
    from advisor.search.space import build_space, parse_budget, parse_list
    from advisor.search.sweep import SweepSettings

    plans = []
    probe = None
    try:
        if trials is not None and trials < 1:
            raise ConfigError("--trials must be at least 1")
        budget_s = parse_budget(budget) if budget is not None else None  # "" is a mistake
        if not timeout_s > 0 or not math.isfinite(timeout_s):
            raise ConfigError(f"--timeout {timeout_s:g} is not a time limit: give the seconds a "
                              "trial may take, e.g. --timeout 900")
        if keep_caches is not None and keep_caches.exists() and not keep_caches.is_dir():
            raise ConfigError(f"--keep-caches {keep_caches} is a file, not a directory: name a "
                              "directory (it is created if missing)")
        device = resolve_device(device)
        _check_workers(workers, trials, budget_s, device, cuda_device_count())
        jobs = _jobs(jobs, trials, budget_s, device, resume)
        if sampler not in SAMPLERS:
            raise ConfigError(f"unknown --sampler {sampler!r}: choose one of "
                              f"{', '.join(SAMPLERS)}")
        if jobs > 1 and device == "cpu":
            typer.echo("advisor: warning: --jobs on the CPU: each measurement is alone, but "
                       "shares the cores with the other jobs' process starts (tails widen); "
                       "it pays off on a GPU", err=True)
        if calls_per_process is not None and calls_per_process < 1:
            raise ConfigError("--calls-per-process must be at least 1, e.g. 10000")
        if screen < 0:
            raise ConfigError("--screen must be 0 (off) or a factor such as 1.5")
        # The device's probe is a child process (imports torch, initializes the device): it
        # starts now and runs while the workloads load here. Bad input below kills it.
        probe = Probe(device, min(timeout_s, 300.0))
        for file in files:
            loaded = load_bounded(file, min(timeout_s, IMPORT_TIMEOUT_S))
            wl = loaded.workload
            dims = parse_shape(shape) if shape else None
            if dims is not None:
                check_shape(dims, wl.shape, file)
            note = None
            if dims is None and device == "cpu":
                # Full-size shapes of real models take seconds per call on a CPU: measure the
                # smallest traffic shape unless told otherwise, and say so.
                dims = min((s for s, _ in wl.traffic), key=lambda s: math.prod(s.values()))
                note = (f"{wl.name}: measuring {shape_name(dims)}, the smallest traffic shape "
                        "(CPU default; choose with --shape)")
            strategies = parse_list(shapes) or ["static"]
            replay = replay_options(file, wl, strategies, traffic, shape is not None, holdout)
            if replay is not None:  # every config replays the traffic instead of one shape
                dims, note = None, None
            space = build_space(wl.dtypes, device, parse_list(modes), parse_list(dtypes),
                                fullgraph, shapes=strategies, options=parse_options(option))
            settings = SweepSettings(device=device, n_trials=trials, budget_s=budget_s,
                                     timeout_s=timeout_s, measure_warm=warm or warm_all,
                                     warm_all=warm_all, shape=dims,
                                     traffic=replay, screen=screen or None,
                                     confirm_leaders=confirm_leaders and not confirm,
                                     sampler=sampler, priors=priors,
                                     calls_per_process=calls_per_process, flags=_flags(ctx))
            resume_id = None
            if resume:  # the sweep's own settings and space; contradicting flags refused
                given = {flag: (settings, space) for flag in _given_flags(ctx)}
                settings, space, resume_id = _resumed(db, wl.name, given)
                note = None
                if settings.device != device:  # the resumed sweep's device, probed instead
                    device = resolve_device(settings.device)
                    probe.close()
                    probe = Probe(device, min(settings.timeout_s, 300.0))
            plans.append((file, loaded, space, settings, note, resume_id))
        store = ResultStore.from_url(db)
    except BaseException as e:  # a mistake, or a signal (SIGTERM): the probe's child ends too
        if probe is not None:
            probe.close()
        if not isinstance(e, AdvisorError):
            raise
        fail_on(e)
    _warn_host_load()
    outcomes = []
    try:
        for file, loaded, space, settings, note, resume_id in plans:
            if note:  # only once every flag is known to be good: a mistake stays one line
                typer.echo(note, err=True)
            try:
                outcome = _run(store, loaded, space, settings, resume_id or resume, workers,
                               jobs, keep_caches, confirm, probe)
            except AdvisorError as e:
                fail_on(e)
            outcomes.append((file, outcome))
            if outcome.status == "interrupted":
                break
    finally:
        if probe is not None:
            probe.close()
    _report(outcomes, store, as_json, db)


IMPORT_TIMEOUT_S = 300.0  # the parent's import of a workload file (the probe's bound too)


def load_bounded(file: Path, limit_s: float) -> Any:
    """`load_workload` in the parent, bounded: a workload file that hangs at import (a network
    download, a lock, an endless loop) fails in one line after ``limit_s`` instead of hanging
    the sweep. Only the main thread can be interrupted so; elsewhere it is unbounded."""
    import threading

    from advisor.errors import WorkloadError
    from advisor.workload import load_workload

    if threading.current_thread() is not threading.main_thread():
        return load_workload(file)

    def expired(signum: int, frame: Any) -> None:
        raise TimeoutError

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, limit_s)
    try:
        return load_workload(file)
    except WorkloadError as e:
        if isinstance(e.__cause__, TimeoutError):
            raise WorkloadError(f"{file}: importing it took longer than {limit_s:g} s (does "
                                "it download, wait or loop at import?); nothing ran") from None
        raise
    except TimeoutError:
        raise WorkloadError(f"{file}: importing it took longer than {limit_s:g} s; nothing "
                            "ran") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _check_workers(workers: int, trials: int | None, budget_s: float | None, device: str,
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


MAX_GPU_JOBS = 8


def _jobs(jobs: int | None, trials: int | None, budget_s: float | None, device: str,
          resume: bool) -> int:
    """Trials at once per device, the same default with or without --trials/--budget: on a
    GPU only (a CPU measures with the cores a compile needs)."""
    whole_space = trials is None and budget_s is None
    if jobs is None:
        many = device.startswith("cuda") and not resume
        return min(MAX_GPU_JOBS, max(1, len(os.sched_getaffinity(0)) // 2)) if many else 1
    if jobs < 1:
        raise ConfigError("--jobs must be at least 1")
    if jobs > 1 and resume and not whole_space:
        raise ConfigError("--resume continues a --trials/--budget sweep one trial at a time; "
                          "drop --jobs")
    return jobs


def _run(store: Any, loaded: Any, space: Any, settings: Any, resume: bool | int, workers: int,
         jobs: int, keep_caches: Path | None, confirm: bool, probe: Any) -> Any:
    from advisor.cli.progress import ProgressObserver
    from advisor.search.launcher import Launcher
    from advisor.search.sweep import QuietObserver, Sweeper

    class PoolPhases(QuietObserver):
        """What the parent of a pooled sweep does itself (the workers report their trials)."""

        def phase(self, name: str) -> None:
            typer.echo(f"advisor: {name}", err=True)

        def notice(self, text: str) -> None:
            typer.echo(f"advisor: {text}", err=True)

    # Every trial's cache is kept until the sweep ends: the leader's warm start compiles from it.
    _remove_orphaned_roots()
    root = keep_caches or Path(tempfile.mkdtemp(prefix=f"advisor-sweep-{os.getpid()}-"))
    launcher = Launcher(timeout_s=settings.timeout_s, cache_root=root)
    try:
        if workers > 1 or jobs > 1:
            sweeper = Sweeper(store, loaded, space, settings, launcher, PoolPhases(), probe)
            outcome = _run_pool(store, sweeper, resume, workers, jobs, root)
        else:
            with ProgressObserver() as observer:
                outcome = Sweeper(store, loaded, space, settings, launcher, observer,
                                  probe).run(resume)
        if confirm and outcome.status == "finished":
            outcome = _confirm(store, loaded, settings, outcome, launcher)
        return outcome
    finally:
        if keep_caches is None:
            shutil.rmtree(root, ignore_errors=True)


def _remove_orphaned_roots() -> None:
    """The cache directories of sweeps whose process is gone (kill -9 runs no cleanup): named
    advisor-sweep-<pid>-*, removed once no process has that pid."""
    for found in Path(tempfile.gettempdir()).glob("advisor-sweep-*-*"):
        pid = found.name.split("-")[2]
        if not pid.isdigit() or not found.is_dir():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(found, ignore_errors=True)
        except PermissionError:
            pass  # another user's live process


def _confirm(store: Any, loaded: Any, settings: Any, outcome: Any, launcher: Any) -> Any:
    """The sweep's recommendation, decided again on interleaved, paired re-measurements (the
    child compiles from the trials' caches, still kept by ``launcher``)."""
    from advisor.errors import TrialFailed
    from advisor.search.confirm import confirm_and_save

    typer.echo("confirming the leaders against eager fp32, interleaved in one process", err=True)
    try:
        done = confirm_and_save(store, loaded.workload.name, outcome.fingerprint,
                                settings.device, workload_path=loaded.path,
                                launcher=launcher)
    except (ConfigError, TrialFailed) as e:
        typer.echo(f"advisor: confirmation skipped: {str(e).splitlines()[0]}", err=True)
        return outcome
    a = done.artifact
    typer.echo(
        f"advisor: no warm-start artifact saved: {done.artifact_note}" if a is None else
        f"warm-start artifact: {a['size_bytes'] / 2**10:.0f} KiB saved, cold start "
        f"{a['cold_start_s']:.1f} s"
        + ("" if a["warm_start_s"] is None else f", with the artifact {a['warm_start_s']:.1f} s"),
        err=True)
    outcome.recommendation = done.recommendation
    return outcome


def _run_pool(store: Any, sweeper: Any, resume: bool | int, workers: int, jobs: int,
              cache_root: Path) -> Any:
    """The sweep shared by worker processes on this host (advisor.search.fleet): `jobs` per device
    on `workers` devices."""
    from advisor.search.fleet import WorkerPool, queue_pool
    from advisor.search.sweep import open_study

    fingerprint, sweep_id, study_name = sweeper.prepare(resume)
    study = open_study(store.url, study_name, heartbeat=True, sampler=sweeper.settings.sampler)
    if resume:
        from advisor.search.sweep import fail_orphans

        fail_orphans(study)  # the dead run's trials: their configs are queued again
    queued, feeder = queue_pool(store, study, sweeper, fingerprint, sweep_id, bool(resume),
                                workers * jobs)
    typer.echo(f"sweep {sweep_id}: {queued} configs queued for {workers * jobs} workers "
               f"({jobs} per device)", err=True)
    pool = WorkerPool(sweep_id, workers, sweeper.settings.device, store.url, jobs,
                      str(cache_root), fingerprint, sweeper.loaded.source_sha256)
    progress = _pool_progress(store, sweep_id, feeder.plan.cap if feeder else len(sweeper.space))

    def tick() -> None:
        if feeder is not None:
            feeder.tick()
        progress()

    from advisor.search.sweep import Heartbeat

    with Heartbeat(store, sweep_id):
        codes = pool.wait(tick=tick)
    progress()  # the trials stored after the last tick: the closing progress line
    done = store.config_keys_done(sweep_id)
    # a budgeted sweep is complete when its workers found nothing more to start
    complete = set(sweeper.space.keys()) <= done or (feeder is not None and not any(codes))
    status = "finished" if complete and not pool.interrupted else "interrupted"
    store.finish_sweep(sweep_id, status)
    if not complete and not pool.interrupted:
        typer.echo(f"advisor: workers exited with {codes} before the sweep was complete; "
                   f"continue with --resume", err=True)
    outcome = sweeper.outcome(sweep_id, status, fingerprint, study_name)
    outcome.signum = getattr(pool, "signum", None)
    return outcome


def _pool_progress(store: Any, sweep_id: int, planned: int) -> Any:
    """A tick that prints a line whenever a worker stored a trial: done, failed, best so far."""
    seen = [0]

    def tick() -> None:
        records = store.trials(sweep_id=sweep_id)
        if len(records) == seen[0]:
            return
        for r in records[seen[0]:]:
            if r.get("tried_because"):
                label = CompileConfig.from_dict(r["config"]).label
                typer.echo(f"  {label}: tried because {r['tried_because']}", err=True)
        seen[0] = len(records)
        failed = sum(r["status"] != "ok" for r in records)
        passed = [r for r in records if r["status"] == "ok" and r.get("passed")]
        best = min(passed, key=lambda r: r["median_ms"]) if passed else None
        best_text = (f"best {best['config']['dtype']} + {best['config']['mode']} "
                     f"{best['median_ms']:.3f} ms" if best else "no passing config yet")
        typer.echo(f"sweep {sweep_id}: {len(records)}/{planned} trials, {failed} failed, "
                   f"{best_text}", err=True)

    return tick


def _warn_host_load() -> None:
    """Say so before measuring when the host is too busy for timings to order configs."""
    from advisor.noise import current_load, host_load_warning

    warning = host_load_warning(*current_load())
    if warning:
        typer.echo(f"advisor: warning: {warning}", err=True)


def _report(outcomes: list[Any], store: Any, as_json: bool, db: str | None = None) -> None:
    from advisor.cli.trial import print_replays
    from advisor.noise import interval_warning

    if as_json:
        documents = [{
            "sweep_id": o.sweep_id, "status": o.status, "study_name": o.study_name,
            "db": store.masked_url, "fingerprint": o.fingerprint,
            "recommendation": o.recommendation.to_dict(), "trials": o.records,
        } for _, o in outcomes]
        for document in documents:  # JSON Lines: one object per workload file, always
            typer.echo(json.dumps(document, default=str))
    for file, o in outcomes:
        if not as_json:
            render.recommendation(o.recommendation)
            print_replays(o.records, o.recommendation.calls_per_process)
        if o.status == "interrupted":
            typer.echo(f"advisor: sweep {o.sweep_id} interrupted; finished trials are kept. "
                       f"Continue with: {resume_hint(file, db)} (it reuses the sweep's settings)",
                       err=True)
            raise typer.Exit(128 + (o.signum or signal.SIGINT))  # 130 Ctrl-C, 143 SIGTERM
    for _, o in outcomes:  # where the results went, what to run next (stderr: --json stays)
        given = db is not None or bool(env_settings.db_url())
        typer.echo("advisor: " + render.closing_line(o.sweep_id, o.recommendation.workload,
                                                     store.masked_url, given), err=True)
    for _, o in outcomes:
        unsafe = interval_warning(o.recommendation)
        if unsafe:
            typer.echo(f"advisor: warning: {unsafe}", err=True)
    failed = [o for _, o in outcomes if o.recommendation.best is None
              and o.recommendation.decision != "undecided: noise"]
    for o in failed:
        typer.echo(f"advisor: no config of {o.recommendation.workload} ran and passed; "
                   f"see `advisor show {o.sweep_id}`", err=True)
    if failed:
        raise typer.Exit(1)
