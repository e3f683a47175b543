"""`advisor export` and `advisor import`: pool results of hosts that share no database."""

from __future__ import annotations

import sys

import typer

from advisor.cli.app import app
from advisor.cli.common import DbOption, fail, fail_on
from advisor.db import ResultStore
from advisor.db.transfer import FORMATS, read_records, write_records
from advisor.errors import AdvisorError


@app.command("export")
def export(
    workload: str | None = typer.Option(
        None, "--workload", "-w", help="Only this workload's trials.", show_default=False
    ),
    fmt: str = typer.Option("json", "--format", "-f", help="json (lossless) or csv."),
    db: str | None = DbOption,
) -> None:
    """Write stored trial records, with their sweeps, to stdout for `advisor import`."""
    if fmt not in FORMATS:
        fail(f"unknown format {fmt!r}: choose one of {', '.join(FORMATS)}")
    try:
        with ResultStore.from_url(db, read_only=True) as store:
            if workload is not None and workload not in store.workloads():
                known = ", ".join(store.workloads()) or "none yet"
                fail(f"no trials of workload {workload!r} in {store.masked_url} (known: {known})")
            records = store.export(workload)
    except AdvisorError as e:
        fail_on(e)
    write_records(records, sys.stdout, fmt)


@app.command("import")
def import_(
    file: str = typer.Argument(
        ..., help="An `advisor export` file (.json or .csv; - reads stdin).", show_default=False
    ),
    db: str | None = DbOption,
) -> None:
    """Merge exported trial records into the database; trials already there are skipped."""
    try:
        records = read_records(file)
        with ResultStore.from_url(db) as store:
            added, skipped = store.import_records(records)
            where = store.masked_url
    except AdvisorError as e:
        fail_on(e)
    typer.echo(f"imported {added} trials into {where}; skipped {skipped} already there")
