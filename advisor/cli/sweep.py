"""`advisor sweep FILE`: search the compile configs of a workload and recommend one."""

from __future__ import annotations

import math
from pathlib import Path

import typer

from advisor.cli import render
from advisor.cli.app import app
from advisor.cli.common import DbOption, fail_on, print_json
from advisor.config import parse_shape, shape_name
from advisor.errors import AdvisorError, ConfigError


def _check_resumable(db: str | None, workload: str) -> None:
    """`--resume` with nothing to resume fails before the database is created or changed."""
    from advisor.db.engine import display_url
    from advisor.db.store import ResultStore, database_revision

    if database_revision(db).current is not None:
        with ResultStore.from_url(db, create=False) as store:
            if any(s["status"] in ("interrupted", "running") for s in store.sweeps(workload)):
                return
    raise ConfigError(f"no interrupted sweep of {workload} to resume in {display_url(db)}; "
                      "run it without --resume")


@app.command()
def sweep(
    file: Path = typer.Argument(..., help="Workload file (.py) defining `workload`."),
    db: str | None = DbOption,
    trials: int | None = typer.Option(
        None, "--trials", help="Measure at most N configs (TPE picks them when N < the space)."
    ),
    budget: str | None = typer.Option(None, "--budget", help="Stop starting trials after e.g. 20m."),
    modes: str | None = typer.Option(None, "--modes", help="Comma-separated modes to try."),
    dtypes: str | None = typer.Option(None, "--dtypes", help="Comma-separated dtypes to try."),
    fullgraph: str = typer.Option("off", "--fullgraph", help="both, on or off."),
    device: str | None = typer.Option(
        None, "--device", help="cuda, cuda:N or cpu (default: cuda when present, else cpu)."
    ),
    shape: str | None = typer.Option(
        None, "--shape", help="Shape to measure, e.g. batch=50,seq=128 (default: the workload's)."
    ),
    resume: bool = typer.Option(False, "--resume", help="Continue the last interrupted sweep."),
    as_json: bool = typer.Option(False, "--json", help="Print the outcome as JSON on stdout."),
    timeout_s: float = typer.Option(900.0, "--timeout", help="Per-trial time limit in seconds."),
    warm: bool = typer.Option(True, "--warm/--no-warm", help="Measure each config's warm start."),
    keep_caches: Path | None = typer.Option(
        None, "--keep-caches", help="Keep each trial's Inductor cache under DIR/<trial uuid>."
    ),
) -> None:
    """Measure compile configs of a workload (one process per trial) and recommend the best."""
    from advisor.cli.progress import ProgressObserver
    from advisor.cli.trial import check_shape
    from advisor.db.store import ResultStore
    from advisor.devices import resolve_device
    from advisor.launcher import Launcher
    from advisor.space import build_space, parse_budget, parse_list
    from advisor.sweep import Sweeper, SweepSettings
    from advisor.workload import load_workload

    try:
        if trials is not None and trials < 1:
            raise ConfigError("--trials must be at least 1")
        budget_s = parse_budget(budget) if budget else None
        loaded = load_workload(file)
        wl = loaded.workload
        dims = parse_shape(shape) if shape else None
        if dims is not None:
            check_shape(dims, wl.shape, file)
        device = resolve_device(device)
        note = None
        if dims is None and device == "cpu":
            # Full-size shapes of real models take seconds per call on a CPU: measure the
            # smallest traffic shape unless told otherwise, and say so.
            dims = min((s for s, _ in wl.traffic), key=lambda s: math.prod(s.values()))
            note = (f"measuring {shape_name(dims)}, the smallest traffic shape (CPU default; "
                    "choose with --shape)")
        space = build_space(wl.dtypes, device, parse_list(modes), parse_list(dtypes), fullgraph)
        if resume:
            _check_resumable(db, wl.name)
        store = ResultStore.from_url(db)
        if note:  # only once every flag is known to be good: a mistake stays one line
            typer.echo(note, err=True)
        settings = SweepSettings(device=device, n_trials=trials, budget_s=budget_s,
                                 timeout_s=timeout_s, measure_warm=warm, shape=dims)
        with ProgressObserver() as observer:
            launcher = Launcher(timeout_s=timeout_s, cache_root=keep_caches)
            outcome = Sweeper(store, loaded, space, settings, launcher, observer).run(resume)
    except AdvisorError as e:
        fail_on(e)
    if as_json:
        print_json({
            "sweep_id": outcome.sweep_id, "status": outcome.status,
            "study_name": outcome.study_name, "db": store.masked_url,
            "fingerprint": outcome.fingerprint,
            "recommendation": outcome.recommendation.to_dict(),
            "trials": outcome.records,
        })
    else:
        render.recommendation(outcome.recommendation)
        if outcome.status == "interrupted":
            render.console.print(
                f"[yellow]sweep {outcome.sweep_id} interrupted; finished trials are kept. "
                f"Continue with: advisor sweep {file} --resume[/yellow]"
            )
    if outcome.status == "interrupted":
        raise typer.Exit(130)
    if outcome.recommendation.best is None:
        typer.echo(f"advisor: no config of {wl.name} ran and passed; "
                   f"see `advisor show {outcome.sweep_id}`", err=True)
        raise typer.Exit(1)
