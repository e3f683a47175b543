"""`advisor worker SWEEP_ID` and `advisor compare WORKLOAD`: fleets of devices and hosts."""

from __future__ import annotations

import signal
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from advisor.cli import output, render
from advisor.cli.app import app
from advisor.cli.common import DbOption, fail, fail_on
from advisor.errors import AdvisorError


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


def _groups(records: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for r in records:
        fp = r.get("fingerprint") or {}
        groups.setdefault(fp.get("fingerprint_hash") or "?", []).append(r)
    return groups


@app.command()
def compare(
    workload: str = typer.Argument(..., help="Workload name (see `advisor list`)."),
    db: str | None = DbOption,
    devices: str | None = typer.Option(
        None, "--devices", help="Comma-separated device names (substrings) to compare."
    ),
    fmt: str = output.format_option(),
    as_json: bool = output.JsonOption,
    out: Path | None = output.OutputOption,
    flat: bool = output.FlattenOption,
) -> None:
    """Compare one workload across devices and stacks: recommended config, latency, speedup."""
    from advisor.db.store import ResultStore
    from advisor.recommendation.answers import answer, pick_label

    try:
        fmt = output.resolve(fmt, as_json, out)
        store = ResultStore.from_url(db, read_only=True)
        if workload not in store.workloads():
            fail(f"no results for workload {workload!r}; run `advisor sweep FILE` first")
        records = store.trials(workload=workload)
    except AdvisorError as e:
        fail_on(e)
    wanted = [d.strip().lower() for d in devices.split(",")] if devices else None
    rows = []
    for fp_hash, group in sorted(_groups(records).items()):
        fp = group[0].get("fingerprint") or {}
        name = str(fp.get("device_name"))
        if wanted and not any(w in name.lower() for w in wanted):
            continue
        try:
            rec = answer(store, workload, fp_hash, records=group)
        except AdvisorError as e:
            fail_on(e)
        best = rec.best
        rows.append({
            "fingerprint_hash": fp_hash, "device": name, "host": fp.get("hostname"),
            "torch": fp.get("torch_version"), "driver": fp.get("driver_version"),
            "cuda": fp.get("cuda_driver_version"), "trials": len(group),
            "config": best.label if best else None, "pick": pick_label(rec),
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
    configs = {str(r["config"]) for r in rows if r["config"]}
    differs = len(configs) > 1
    output.emit(fmt, out, document={"workload": workload, "devices": rows,
                                    "best_config_differs": differs},
                rows=lambda: rows, table=lambda: _compare_table(workload, rows, configs), flat=flat)


def _compare_table(workload: str, rows: list[dict[str, Any]], configs: set[str]) -> None:
    differs = len(configs) > 1
    table = Table(title=f"{workload} across devices and stacks")
    for column in ("device", "host", "torch", "driver", "trials", "recommended",
                   "median [95% CI]", "speedup", "vs eager fp32"):
        table.add_column(column)
    for r in rows:
        table.add_row(str(r["device"]), str(r["host"]), str(r["torch"]), str(r["driver"]),
                      str(r["trials"]), str(r["pick"]),
                      render.figure(r["median_ms"], r["median_ci_ms"], r["noisy"]),
                      render.fmt(r["speedup"], "x", 2), str(r["baseline"]))
    render.console.print(table)
    if differs:
        differing = ", ".join(sorted(configs))
        render.console.print(f"the best config differs between devices: {differing}")
    else:
        render.console.print("every device agrees on the best config")
