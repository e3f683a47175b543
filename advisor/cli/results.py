"""`advisor list`, `advisor show SWEEP`, `advisor recommend WORKLOAD`: read the results."""

from __future__ import annotations

import typer
from rich.table import Table

from advisor.cli import render
from advisor.cli.app import app
from advisor.cli.common import DbOption, fail, fail_on, print_json
from advisor.errors import AdvisorError


def _store(db: str | None) -> object:
    from advisor.db.store import ResultStore

    return ResultStore.from_url(db)


@app.command("list")
def list_sweeps(
    db: str | None = DbOption,
    workload: str | None = typer.Option(None, "--workload", help="Only this workload."),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """List sweeps, newest first."""
    try:
        sweeps = _store(db).sweeps(workload=workload)  # type: ignore[attr-defined]
    except AdvisorError as e:
        fail_on(e)
    sweeps = sorted(sweeps, key=lambda s: s["id"], reverse=True)
    if as_json:
        print_json(sweeps)
        return
    if not sweeps:
        render.console.print("no sweeps yet: run `advisor sweep workloads/reranker.py`")
        return
    table = Table(title="sweeps")
    for column in ("id", "workload", "device", "status", "trials", "failed", "best median",
                   "started"):
        table.add_column(column)
    for s in sweeps:
        table.add_row(
            str(s["id"]), s["workload"]["name"], str(s.get("device_name") or "-"), s["status"],
            f"{s['n_trials']}/{s.get('planned_trials') or '?'}", str(s["n_failed"]),
            render.fmt(s.get("best_median_ms"), " ms"), str(s.get("started_at") or "-")[:19],
        )
    render.console.print(table)


@app.command()
def show(
    sweep_id: int = typer.Argument(..., help="Sweep id (see `advisor list`)."),
    db: str | None = DbOption,
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """Show one sweep: every trial, failures with their reasons, and its recommendation."""
    from advisor.recommend import recommend

    try:
        store = _store(db)
        sweep = store.get_sweep(sweep_id)  # type: ignore[attr-defined]
        records = store.trials(sweep_id=sweep_id)  # type: ignore[attr-defined]
    except AdvisorError as e:
        fail_on(e)
    rec = recommend(sweep["workload"]["name"], records, sweep.get("fingerprint_hash"))
    if as_json:
        print_json({"sweep": sweep, "trials": records, "recommendation": rec.to_dict()})
        return
    title = f"sweep {sweep_id}: {sweep['workload']['name']} on {sweep['device_name']}"
    table = Table(title=f"{title} ({sweep['status']})")
    for column in ("config", "status", "median", "p99", "cold compile", "passed", "reason"):
        table.add_column(column)
    for r in records:
        from advisor.config import CompileConfig

        label = CompileConfig.from_dict(r["config"]).label
        table.add_row(
            label, r["status"], render.fmt(r["median_ms"], " ms"), render.fmt(r["p99_ms"], " ms"),
            render.fmt(r["cold_compile_s"], " s", 1), render.fmt(r["passed"]),
            r["failure_reason"] or ("" if r["passed"] or r["status"] != "ok" else "rejected"),
        )
    render.console.print(table)
    render.recommendation(rec)


@app.command("recommend")
def recommend_cmd(
    workload: str = typer.Argument(..., help="Workload name (see `advisor list`)."),
    db: str | None = DbOption,
    device: str | None = typer.Option(
        None, "--device", help="Device to recommend for (default: cuda when present, else cpu)."
    ),
    fingerprint: str | None = typer.Option(
        None, "--fingerprint", help="Recommend for this fingerprint hash instead of this device."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """Recommend the best measured config of a workload for this device and software stack."""
    from advisor.devices import resolve_device
    from advisor.launcher import Launcher
    from advisor.recommend import recommend

    try:
        store = _store(db)
        if workload not in store.workloads():  # type: ignore[attr-defined]
            fail(f"no results for workload {workload!r}; run `advisor sweep FILE` first")
        if fingerprint is None:
            fingerprint = Launcher().probe(resolve_device(device))["fingerprint_hash"]
        records = store.trials(workload=workload, fingerprint_hash=fingerprint)  # type: ignore[attr-defined]
    except AdvisorError as e:
        fail_on(e)
    if not records:
        fail(f"no trials of {workload} on this device and stack (fingerprint {fingerprint}); "
             "sweep it here, or pass --fingerprint")
    rec = recommend(workload, records, fingerprint)
    if as_json:
        print_json(rec.to_dict())
    else:
        render.recommendation(rec)
