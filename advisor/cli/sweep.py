"""`advisor sweep FILE`: search the compile configs of a workload and recommend one."""

from __future__ import annotations

import collections
import collections.abc
import inspect
import json
import signal
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from advisor import settings as env_settings
from advisor.cli import render
from advisor.cli.app import app
from advisor.cli.common import DbOption, fail, fail_on
from advisor.errors import AdvisorError
from advisor.search.request import FIELD_DEFAULT, Flag, SweepRequest, flag_fields


def _given_flags(ctx: typer.Context) -> list[str]:
    """The flags `--resume` checks that were given on the command line or in a sweep file (not
    left at their defaults)."""
    given = []
    for name, (declared, _) in flag_fields().items():
        source = ctx.get_parameter_source(name)  # typer's own enum: compared by name
        if declared.resume is not None and source is not None and source.name != "DEFAULT":
            given.append(declared.long)
    return given


def _cli_type(declared: Flag, hint: Any) -> Any:
    """The command's type of a flag field: comma-separated text for a list the command line
    gives as one value, a list for a repeatable option, else the field's own type."""
    if declared.comma:
        return str | None
    if typing.get_origin(hint) is collections.abc.Sequence:
        return list[typing.get_args(hint)[0]]  # type: ignore[misc]
    return hint


def request_from(ctx: typer.Context) -> SweepRequest:
    """The request of a parsed `advisor sweep` command line: its files, database and flags (a
    flag's comma-separated text a list, a repeated option's values a tuple), the flags given
    that `--resume` checks, and the flags the sweep's row keeps."""
    values = {}
    for name, (declared, _) in flag_fields().items():
        value = ctx.params[name]
        if declared.comma:
            value = parse_list(value)
        elif isinstance(value, list):
            value = tuple(value)
        values[name] = value
    return SweepRequest(files=tuple(ctx.params["files"]), db=ctx.params["db"], **values,
                        given_flags=tuple(_given_flags(ctx)), flags=_flags(ctx))


def with_request_flags(command: Callable[..., None]) -> Callable[..., None]:
    """``command``'s own parameters (its ``**flags`` left out), then one typer option per flag
    field of `SweepRequest`, in the fields' order: the signature typer reads (its
    ``__signature__`` and ``__annotations__``). The command gets the flags in ``**flags``, by
    field name (`request_from` reads them all from the context)."""
    hints = typing.get_type_hints(command)
    params = [p.replace(annotation=hints[p.name])
              for p in inspect.signature(command).parameters.values()
              if p.kind is not inspect.Parameter.VAR_KEYWORD]
    for name, (declared, hint) in flag_fields().items():
        kind = _cli_type(declared, hint)
        default = declared.cli_default
        if default is FIELD_DEFAULT:
            default = SweepRequest.__dataclass_fields__[name].default
        if typing.get_origin(kind) is list:
            default = list(default)
        option = typer.Option(default, declared.option, help=declared.help, readable=False,
                              rich_help_panel=_panel(declared.long))
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option,
                                        annotation=kind))
    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params} | {"return": None}
    return command


# `advisor sweep --help` in panels (typer's rich help panels): what to measure, how the search
# spends its time, what runs after the trials; the database, the sweep file and the output stay
# under "Options".
PANELS = {
    "What to measure": ("--modes", "--dtypes", "--fullgraph", "--dynamic", "--option",
                        "--device", "--shape", "--shapes", "--traffic", "--holdout",
                        "--calls-per-process"),
    "Search and time": ("--trials", "--budget", "--resume", "--workers", "--jobs", "--screen",
                        "--sampler", "--priors", "--timeout"),
    "After the trials": ("--warm", "--warm-all", "--confirm", "--confirm-leaders",
                         "--keep-caches"),
}


def _panel(long: str) -> str | None:
    return next((name for name, flags in PANELS.items() if long in flags), None)


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

    from advisor import paths

    try:
        text = paths.read_text(path, "--config", paths.SWEEP_FILE_MAX_BYTES,
                               fix="a sweep file holds a few flags")
        data = tomllib.loads(text)
    except AdvisorError as e:
        fail_on(e)
    except tomllib.TOMLDecodeError as e:
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
@with_request_flags
def sweep(
    ctx: typer.Context,
    files: list[Path] = typer.Argument(
        ..., help="Workload files (.py) defining `workload`; several run one after another.",
        readable=False,  # advisor.paths says why a file cannot be read, in one line
    ),
    db: str | None = DbOption,
    config: Path | None = typer.Option(
        None, "--config", is_eager=True, callback=_load_config, readable=False,
        help="A TOML file of sweep flags (keys: the flags' long names, e.g. modes = "
        '["default", "reduce-overhead"], budget = "20m", files = ["workloads/reranker.py"]); '
        "flags given on the command line win. The resolved flags are stored with the sweep.",
    ),
    as_json: bool = typer.Option(
        False, "--json", help="Print the outcome on stdout as JSON Lines: one object per "
        "workload file (docs/cli.md)."
    ),
    **flags: Any,  # the flag fields of SweepRequest (`with_request_flags`)
) -> None:
    """Measure compile configs of workloads (one process per trial) and recommend the best."""
    from advisor.api import plan_sweeps, run_sweep
    from advisor.cli.progress import ProgressObserver

    request = request_from(ctx)
    try:
        planned = plan_sweeps(request, notice=_say)  # "importing FILE (12 s)"
    except AdvisorError as e:
        fail_on(e)
    for text in planned.warnings:
        render.echo(f"advisor: warning: {text}")
    _warn_host_load()
    outcomes = []
    try:
        for plan in planned.plans:
            if plan.note:  # only once every flag is known to be good: a mistake stays one line
                render.echo(plan.note)
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
    from advisor.config import CompileConfig
    from advisor.serving import stopped_text

    stopped = {CompileConfig.from_dict(r["config"]).label: r["stopped"] for r in outcome.records
               if r["status"] == "stopped" and r.get("stopped")}
    parts = []
    if outcome.unmeasured:
        names = ", ".join(f"{label} ({stopped_text(stopped[label])})" if label in stopped
                          else label for label in outcome.unmeasured[:shown])
        more = len(outcome.unmeasured) - shown
        names += f" and {more} more" if more > 0 else ""
        total = len(outcome.unmeasured) + len({r["config_key"] for r in outcome.records
                                                if r["status"] != "stopped"})
        parts.append(f"not measured: {len(outcome.unmeasured)} of {total} configs ({names})")
    if outcome.left_out:
        parts.append("not run: " + ", ".join(outcome.left_out))
    if not parts:
        return ""
    head = f"{why}; " if why else ""
    return (head + "; ".join(parts) + ". The answer above is the best the measured configs "
            "support.")


def no_result_line(outcome: Any) -> str:
    """A sweep its budget stopped before any trial stored a result: said so (its stored status
    is "stopped", not "finished"), with the budget a next run needs, estimated from what ran
    (advisor.sizing.next_budget: the stopped trials' phases and requests served)."""
    import math

    from advisor.sizing import next_budget

    head = f"sweep {outcome.sweep_id} stopped: the budget ended before the first result"
    budget_s = outcome.budget_s
    estimate = next_budget(outcome.records, budget_s) if budget_s else None
    if estimate is None:
        return head + "; give it a longer --budget"
    minutes = max(1, math.ceil(estimate.budget_s / 60))
    need = "more than" if estimate.at_least else "about"
    return f"{head}; a next run needs {need} --budget {minutes}m ({estimate.basis})"


def parse_list(text: str | None) -> list[str] | None:
    from advisor.search.space import parse_list as parse

    try:
        return parse(text)
    except AdvisorError as e:
        fail_on(e)


def _say(text: str) -> None:
    render.echo(f"advisor: {text}")


def _warn_host_load() -> None:
    """Say so before measuring when the host is too busy for timings to order configs."""
    from advisor.presentation.noise import current_load, host_load_warning

    warning = host_load_warning(*current_load())
    if warning:
        render.echo(f"advisor: warning: {warning}")


def _report(outcomes: list[Any], store: Any, as_json: bool, db: str | None = None) -> None:
    from advisor.cli.trial import print_replays
    from advisor.presentation.noise import interval_warning

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
                render.echo(f"advisor: warning: {unsafe}")
        for document in documents:  # JSON Lines: one object per workload file, always
            typer.echo(json.dumps(document, default=str))
    for file, o in outcomes:
        if not as_json:
            render.recommendation(o.recommendation)
            print_replays(o.records, o.recommendation.calls_per_process)
        left_out = unmeasured_line(o)
        if left_out:
            render.echo(f"advisor: {left_out}")
        if o.status == "interrupted":
            render.echo(f"advisor: sweep {o.sweep_id} interrupted; finished trials are kept. "
                        "Continue it with (it reuses the sweep's settings):\n"
                        f"  {resume_hint(file, db)}")
            raise typer.Exit(128 + (o.signum or signal.SIGINT))  # 130 Ctrl-C, 143 SIGTERM
    for _, o in outcomes:  # where the results went, what to run next (stderr: --json stays)
        given = db is not None or bool(env_settings.db_url())
        render.echo("advisor: " + render.closing_line(o.sweep_id, o.recommendation.workload,
                                                      store.masked_url, given))
    # A sweep none of whose own trials ran and passed failed, whatever earlier sweeps of the
    # workload left in the database (the answer above may rest on them: said so, exit 1).
    failed = [o for _, o in outcomes if not any(
        r["status"] == "ok" and r.get("passed") for r in o.records)
        and o.recommendation.decision != "undecided: noise"]
    for o in failed:
        if o.stopped_by == "budget" and not any(r["status"] == "ok" for r in o.records):
            render.echo(f"advisor: {no_result_line(o)}")  # stopped, not failed
            continue
        statuses = collections.Counter(
            "rejected" if r["status"] == "ok" else r["status"] for r in o.records)
        counted = ", ".join(f"{n} {status}" for status, n in sorted(statuses.items()))
        earlier = (" (the answer above rests on earlier sweeps of it)"
                   if o.recommendation.best is not None else "")
        render.echo(f"advisor: no config of {o.recommendation.workload} ran and passed in "
                    f"sweep {o.sweep_id} ({counted or 'no trial stored'}){earlier}; see "
                    f"`advisor show {o.sweep_id}`")
    if failed:
        raise typer.Exit(1)
