"""`advisor worker SWEEP_ID` and `advisor compare WORKLOAD`: fleets of devices and hosts."""

from __future__ import annotations

import signal
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from advisor.cli import output, render
from advisor.cli.app import app
from advisor.cli.common import DbOption, check_id, fail, fail_on
from advisor.errors import AdvisorError, ConfigError

if TYPE_CHECKING:
    from advisor.records import TrialRecord


@app.command()
def worker(
    sweep_id: int = typer.Argument(..., help="The sweep to join (see `advisor list`)."),
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
    from advisor.search.fleet import Worker

    if settings.workload_checked():  # a worker its sweep started: it dies with that sweep
        die_with_parent()
    try:
        fmt = output.resolve(fmt, as_json, out)
        check_id(sweep_id)
        _check_database(db, sweep_id)
        store = ResultStore.from_url(db)
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


def _check_database(db: str | None, sweep_id: int) -> None:
    """A worker joins a sweep that is stored: a database without advisor's tables (a new
    SQLite path, an empty PostgreSQL database) holds none, and is left as it is."""
    from advisor.db.engine import display_url
    from advisor.db.store import database_revision

    if database_revision(db).current is None:
        raise ConfigError(f"no sweep {sweep_id} to join: {display_url(db)} holds no advisor "
                          "results; pass the --db of the sweep (`advisor list --db URL` shows "
                          "its sweeps)")


def _groups(records: Sequence[TrialRecord]) -> dict[str, list[TrialRecord]]:
    groups: dict[str, list[TrialRecord]] = {}
    for r in records:
        fp = r.get("fingerprint")
        groups.setdefault((fp.get("fingerprint_hash") if fp else None) or "?", []).append(r)
    return groups


@app.command()
def compare(
    workload: str = typer.Argument(..., help="Workload name (see `advisor list`)."),
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
    from advisor.devices import DeviceNames
    from advisor.recommendation.answers import answer, pick_label

    try:
        fmt = output.resolve(fmt, as_json, out)
        if devices is not None and not devices.replace(",", "").strip():
            raise ConfigError("--devices names no device: give parts of their short ids or "
                              "model names (`advisor compare WORKLOAD` lists them), or leave "
                              "the flag out for every device")
        store = ResultStore.from_url(db, read_only=True)
        if workload not in store.workloads():
            fail(f"no results for workload {workload!r}; run `advisor sweep FILE` first")
        records = store.trials(workload=workload)
        names = DeviceNames.of_store(store)
    except AdvisorError as e:
        fail_on(e)
    wanted = [d.strip().lower() for d in devices.split(",") if d.strip()] if devices else None
    rows = []
    for fp_hash, group in sorted(_groups(records).items()):
        fp: Mapping[str, Any] = group[0].get("fingerprint") or {}
        name = str(fp.get("device_name") or fp.get("cpu_model"))
        device_id = names.name(fp_hash, fp)
        if wanted and not any(w in name.lower() or w in device_id.lower() for w in wanted):
            continue
        try:
            rec = answer(store, workload, fp_hash, records=group)
        except AdvisorError as e:
            fail_on(e)
        best = rec.best
        rows.append({
            "device_id": device_id, "fingerprint_hash": fp_hash, "device": name,
            "host": fp.get("hostname"),
            "torch": fp.get("torch_version"), "driver": fp.get("driver_version"),
            "cuda": fp.get("cuda_driver_version"), "trials": len(group),
            "config": best.label if best else None, "pick": pick_label(rec),
            "config_short": render.short_label(best.config) if best else pick_label(rec),
            "decision": rec.decision,
            "median_ms": best.median_ms if best else None,
            "median_ci_ms": best.median_ci_ms if best else None,
            "noisy": best.noisy if best else None,
            "speedup": best.speedup if best else None,
            "eager_fp32_ms": rec.baseline.median_ms if rec.baseline else None,
            "baseline": rec.baseline_name,
        })
    if not rows:
        fail(f"no device matches --devices {devices}")
    rows = _fastest_first(rows)
    configs = {str(r["config"]) for r in rows if r["config"]}
    differs = len(configs) > 1
    output.emit(fmt, out, document={"workload": workload, "devices": rows,
                                    "best_config_differs": differs},
                rows=lambda: rows, table=lambda: _compare_table(workload, rows, configs), flat=flat)


def _fastest_first(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` by their pick's median, the fastest first (devices with no pick last), each
    with ``vs_best``: its median over the fastest one's (1.0 for the fastest)."""
    rows = sorted(rows, key=lambda r: (r["median_ms"] is None, r["median_ms"] or 0.0,
                                       r["device_id"]))
    fastest = rows[0]["median_ms"]
    for r in rows:
        r["vs_best"] = r["median_ms"] / fastest if r["median_ms"] and fastest else None
    return rows


def _delta(vs_best: float | None) -> str:
    """``best``, or how much slower than the fastest device: ``+23%``, ``+272%``."""
    if vs_best is None:
        return "-"
    return "best" if vs_best <= 1.0005 else f"+{vs_best - 1:.0%}"


def _compare_table(workload: str, rows: list[dict[str, Any]], configs: set[str]) -> None:
    """One line per device, the fastest first; columns that do not fit the terminal go (the
    interval, the stack, the trial count), a cell never wraps."""
    differs = len(configs) > 1
    columns = (("device", 0), ("recommended", 0), ("median", 0), ("vs best", 0),
               ("speedup", 1), ("95% CI", 2), ("torch", 3), ("trials", 4))
    cells = [[str(r["device_id"]), str(r["config_short"]),
              render.figure(r["median_ms"], None, r["noisy"]), _delta(r["vs_best"]),
              render.fmt(r["speedup"], "x", 2), render.interval(r["median_ci_ms"]),
              str(r["torch"] or "-"), str(r["trials"])] for r in rows]
    # the never-dropped columns fit as they are but the config, which gives way (the full label
    # is in --json): each row stays on one line
    fixed = 1 + sum(3 + max(len(name), *(len(c[i]) for c in cells))
                    for i, (name, _) in enumerate(columns[:4]) if i != 1)
    room = max(render.console.width - fixed - 3, len("recommended"))
    for c in cells:
        c[1] = c[1] if len(c[1]) <= room else c[1][: room - 1] + "…"
    title = (f"{workload} across devices and stacks, the fastest first (vs best: slower than "
             "the fastest device's pick; speedup: over eager fp32 on the same device)")
    table = render.fitted_table(title, columns, cells)
    for column in table.columns:
        column.no_wrap = True
    render.console.print(table)
    if differs:
        render.console.print(f"the best config differs between devices: {len(configs)} "
                             "different picks")
    else:
        render.console.print("every device agrees on the best config")
