"""`advisor sweep FILE`: search the compile configs of a workload and recommend one."""

from __future__ import annotations

import collections
import json
import signal
from pathlib import Path
from typing import Any

import typer

from advisor import settings as env_settings
from advisor.cli import render
from advisor.cli.app import app
from advisor.cli.common import DEFAULT_CALLS_PER_PROCESS, HOLDOUT, DbOption, fail, fail_on
from advisor.dimensions import BY_NAME as DIM
from advisor.dimensions import OPTIONS_BY_NAME
from advisor.errors import AdvisorError

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
        "turns to measure, alone (default on a GPU: one per two cores, shared among --workers, "
        "at most 8; else 1; never more in all than two a host core)."
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
        True, "--priors/--no-priors", help="Try the eager baseline, the fleet's best configs "
        "for this workload, then the priors' picks first (advisor.search.priors): before the "
        "sampler with --trials/--budget, before the space's own order in a pooled full sweep."
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
    from advisor.api import SweepRequest, plan_sweeps, run_sweep
    from advisor.cli.progress import ProgressObserver

    request = SweepRequest(
        files=tuple(files), db=db, device=device, modes=parse_list(modes),
        dtypes=parse_list(dtypes), fullgraph=fullgraph, shapes=parse_list(shapes),
        options=tuple(option), shape=shape, traffic=traffic, holdout=holdout, trials=trials,
        budget=budget, timeout_s=timeout_s, jobs=jobs, workers=workers, sampler=sampler,
        priors=priors, calls_per_process=calls_per_process, screen=screen, warm=warm,
        warm_all=warm_all, keep_caches=keep_caches, confirm=confirm,
        confirm_leaders=confirm_leaders, resume=resume, given_flags=tuple(_given_flags(ctx)),
        flags=_flags(ctx))
    try:
        planned = plan_sweeps(request)
    except AdvisorError as e:
        fail_on(e)
    for text in planned.warnings:
        typer.echo(f"advisor: warning: {text}", err=True)
    _warn_host_load()
    outcomes = []
    try:
        for plan in planned.plans:
            if plan.note:  # only once every flag is known to be good: a mistake stays one line
                typer.echo(plan.note, err=True)
            try:
                if request.workers > 1 or planned.jobs > 1:
                    outcome = run_sweep(planned, plan, request, notice=_say)
                else:
                    with ProgressObserver() as observer:
                        outcome = run_sweep(planned, plan, request, observer=observer,
                                            notice=_say)
            except AdvisorError as e:
                fail_on(e)
            outcomes.append((plan.file, outcome))
            if outcome.status == "interrupted":
                break
    finally:
        planned.close()
    _report(outcomes, planned.store, as_json, db)


def unmeasured_line(outcome: Any, shown: int = 6) -> str:
    """What the answer rests on without, in one line: the configs not measured and the steps
    after the trials not run, and why ("" when nothing was left out)."""
    why = {"budget": "the budget ended", "interrupt": "the sweep was stopped"}.get(
        outcome.stopped_by, "")
    parts = []
    if outcome.unmeasured:
        names = ", ".join(outcome.unmeasured[:shown])
        more = len(outcome.unmeasured) - shown
        names += f" and {more} more" if more > 0 else ""
        total = len(outcome.unmeasured) + len({r["config_key"] for r in outcome.records})
        parts.append(f"not measured: {len(outcome.unmeasured)} of {total} configs ({names})")
    if outcome.left_out:
        parts.append("not run: " + ", ".join(outcome.left_out))
    if not parts:
        return ""
    head = f"{why}; " if why else ""
    return (head + "; ".join(parts) + ". The answer above is the best the measured configs "
            "support.")


def parse_list(text: str | None) -> list[str] | None:
    from advisor.search.space import parse_list as parse

    try:
        return parse(text)
    except AdvisorError as e:
        fail_on(e)


def _say(text: str) -> None:
    typer.echo(f"advisor: {text}", err=True)


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
            "stopped_by": o.stopped_by, "unmeasured": o.unmeasured, "left_out": o.left_out,
        } for _, o in outcomes]
        for _, o in outcomes:  # before the claim (the table leads with it otherwise)
            unsafe = interval_warning(o.recommendation)
            if unsafe:
                typer.echo(f"advisor: warning: {unsafe}", err=True)
        for document in documents:  # JSON Lines: one object per workload file, always
            typer.echo(json.dumps(document, default=str))
    for file, o in outcomes:
        if not as_json:
            render.recommendation(o.recommendation)
            print_replays(o.records, o.recommendation.calls_per_process)
        left_out = unmeasured_line(o)
        if left_out:
            typer.echo(f"advisor: {left_out}", err=True)
        if o.status == "interrupted":
            typer.echo(f"advisor: sweep {o.sweep_id} interrupted; finished trials are kept. "
                       f"Continue with: {resume_hint(file, db)} (it reuses the sweep's settings)",
                       err=True)
            raise typer.Exit(128 + (o.signum or signal.SIGINT))  # 130 Ctrl-C, 143 SIGTERM
    for _, o in outcomes:  # where the results went, what to run next (stderr: --json stays)
        given = db is not None or bool(env_settings.db_url())
        typer.echo("advisor: " + render.closing_line(o.sweep_id, o.recommendation.workload,
                                                     store.masked_url, given), err=True)
    # A sweep none of whose own trials ran and passed failed, whatever earlier sweeps of the
    # workload left in the database (the answer above may rest on them: said so, exit 1).
    failed = [o for _, o in outcomes if not any(
        r["status"] == "ok" and r.get("passed") for r in o.records)
        and o.recommendation.decision != "undecided: noise"]
    for o in failed:
        statuses = collections.Counter(
            "rejected" if r["status"] == "ok" else r["status"] for r in o.records)
        counted = ", ".join(f"{n} {status}" for status, n in sorted(statuses.items()))
        earlier = (" (the answer above rests on earlier sweeps of it)"
                   if o.recommendation.best is not None else "")
        typer.echo(f"advisor: no config of {o.recommendation.workload} ran and passed in sweep "
                   f"{o.sweep_id} ({counted or 'no trial stored'}){earlier}; see `advisor show "
                   f"{o.sweep_id}`", err=True)
    if failed:
        raise typer.Exit(1)
