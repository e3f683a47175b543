"""`advisor worker SWEEP_ID` and `advisor compare WORKLOAD`: fleets of devices and hosts."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from advisor.cli import output, render
from advisor.cli.app import app
from advisor.cli.common import (
    DbOption,
    check_id,
    fail,
    fail_on,
    sweep_argument,
    workload_argument,
)
from advisor.errors import AdvisorError, ConfigError

if TYPE_CHECKING:
    from advisor.rows import SweepRow


@app.command()
def worker(
    sweep_id: int = sweep_argument("The sweep to join (see `advisor list`)."),
    db: str | None = DbOption,
    device: str | None = typer.Option(
        None, "--device", help="cuda, cuda:N or cpu (default: cuda when present, else cpu)."
    ),
    fmt: str = output.format_option(),
    as_json: bool = output.JsonOption,
    out: Path | None = output.OutputOption,
    quiet: bool = typer.Option(
        False, "--quiet", "-q", help="Print no closing line (a sweep's own workers: the sweep "
        "reports their progress)."
    ),
) -> None:
    """Join a sweep: measure its queued configs on this device until none is left."""
    from advisor import settings
    from advisor.db.store import ResultStore
    from advisor.devices import resolve_device
    from advisor.lifetime import die_with_parent
    from advisor.search.fleet import Worker, has_work

    if settings.workload_checked():  # a worker its sweep started: it dies with that sweep
        die_with_parent()
    try:
        fmt = output.resolve(fmt, as_json, out)
        check_id(sweep_id)
        _check_database(db, sweep_id)
        store = ResultStore.from_url(db)
        sweep = store.get_sweep(sweep_id)
        if not has_work(store, sweep):
            refuse_to_join(sweep, db)
        w = Worker(store, sweep_id, resolve_device(device))
        previous = {s: signal.signal(s, lambda *_: w.interrupt())
                    for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            ran = w.run()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    except AdvisorError as e:
        fail_on(e)
    document = {"sweep_id": sweep_id, "trials": ran, "interrupted": w.stop.is_set()}
    if not quiet:
        output.emit(fmt, out, document=document, rows=lambda: [document], table=lambda: typer.echo(
            f"worker: {ran} trial(s) measured for sweep {sweep_id}", err=True))
    if w.stop.is_set():
        raise typer.Exit(130)


def refuse_to_join(sweep: SweepRow, db: str | None) -> None:
    """A worker on a sweep that ended or whose process is gone, with nothing queued, would
    measure nothing: ConfigError (exit 2) saying why and what to run instead."""
    from advisor.cli.sweep import resume_hint

    status, sweep_id = sweep["status"], sweep["id"]
    path = sweep["workload"]["path"] or "FILE"
    if status == "finished":
        raise ConfigError(f"sweep {sweep_id} is finished: nothing is left to measure; its "
                          f"results: `advisor show {sweep_id}`; to measure again, start a new "
                          f"sweep: `advisor sweep {path}`")
    why = {"dead": "dead (its process stopped beating)", "stopped": "stopped (its budget ran "
           "out)"}.get(status, status)
    raise ConfigError(f"sweep {sweep_id} is {why}; a worker joins a running sweep only: "
                      f"continue it with `{resume_hint(path, db)}`, then join it with "
                      f"`advisor worker {sweep_id}`")


def _check_database(db: str | None, sweep_id: int) -> None:
    """A worker joins a sweep that is stored: a database without advisor's tables (a new
    SQLite path, an empty PostgreSQL database) holds none, and is left as it is."""
    from advisor.db.engine import display_url
    from advisor.db.store import database_revision

    if database_revision(db).current is None:
        raise ConfigError(f"no sweep {sweep_id} to join: {display_url(db)} holds no advisor "
                          "results; pass the --db of the sweep (`advisor list --db URL` shows "
                          "its sweeps)")


@app.command()
def compare(
    workload: str = workload_argument(),
    db: str | None = DbOption,
    devices: str | None = typer.Option(
        None, "--devices", help="Comma-separated devices to compare: parts of their short ids "
        "(`H200`, a host name, a hash prefix) or of their model names."
    ),
    fmt: str = output.format_option(),
    as_json: bool = output.JsonOption,
    out: Path | None = output.OutputOption,
    flat: bool = output.FlattenOption,
) -> None:
    """Compare one workload across devices and stacks, the fastest first: each device's
    recommended config, its latency, how much slower than the fastest device, and its speedup
    over eager fp32 there."""
    from advisor.db.store import ResultStore
    from advisor.frames import compare_devices

    try:
        fmt = output.resolve(fmt, as_json, out)
        if devices is not None and not devices.replace(",", "").strip():
            raise ConfigError("--devices names no device: give parts of their short ids or "
                              "model names (`advisor compare WORKLOAD` lists them), or leave "
                              "the flag out for every device")
        store = ResultStore.from_url(db, read_only=True)
        if workload not in store.workloads():
            fail(f"no results for workload {workload!r}; run `advisor sweep FILE` first")
        rows = compare_devices(store, workload, devices.split(",") if devices else None)
    except AdvisorError as e:
        fail_on(e)
    if not rows:
        fail(f"no device matches --devices {devices}")
    configs = {str(r["config"]) for r in rows if r["config"]}
    differs = len(configs) > 1
    output.emit(fmt, out, document={"workload": workload, "devices": rows,
                                    "best_config_differs": differs},
                rows=lambda: rows, table=lambda: _compare_table(workload, rows, configs), flat=flat)


def _delta(vs_best: float | None) -> str:
    """``best``, or how much slower than the fastest device: ``+23%``, ``+272%``."""
    if vs_best is None:
        return "-"
    return "best" if vs_best <= 1.0005 else f"+{vs_best - 1:.0%}"


def _compare_table(workload: str, rows: list[dict[str, Any]], configs: set[str]) -> None:
    """One line per device, the fastest first; columns that do not fit the terminal go (the
    interval, the stack, the trial count), then the config labels are abbreviated (a legend
    below), then cells wrap between words (`render.fitted_table`): a label is never cut."""
    differs = len(configs) > 1
    columns = (("device", 0), ("recommended", 0), ("median", 0), ("vs best", 0),
               ("speedup", 1), ("95% CI", 2), ("torch", 3), ("trials", 4))
    cells = [[str(r["device_id"]), str(r["config_short"]),
              render.figure(r["median_ms"], None, r["noisy"]), _delta(r["vs_best"]),
              render.fmt(r["speedup"], "x", 2), render.interval(r["median_ci_ms"]),
              str(r["torch"] or "-"), str(r["trials"])] for r in rows]
    title = (f"{workload} across devices and stacks, the fastest first (vs best: slower than "
             "the fastest device's pick; speedup: over eager fp32 on the same device)")
    render.console.print(render.fitted_table(title, columns, cells))
    if differs:
        render.console.print(f"the best config differs between devices: {len(configs)} "
                             "different picks")
    else:
        render.console.print("every device agrees on the best config")
