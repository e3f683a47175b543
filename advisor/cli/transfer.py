"""`advisor export` and `advisor import`: pool results of hosts that share no database."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import typer

from advisor.cli import output
from advisor.cli.app import app
from advisor.cli.common import DbOption, fail, fail_on
from advisor.errors import AdvisorError


@app.command("export")
def export(
    workload: str | None = typer.Option(
        None, "--workload", "-w", help="Only this workload's trials.", show_default=False
    ),
    fmt: str = typer.Option(
        "json", "--format", "-f",
        help="json (lossless), csv (what `advisor import` reads) or yaml; csv --flatten: one "
        "column per field, for spreadsheets and pandas.",
    ),
    db: str | None = DbOption,
    as_json: bool = output.JsonOption,
    out: Path | None = output.OutputOption,
    flat: bool = output.FlattenOption,
) -> None:
    """Write stored trial records, with their sweeps, to stdout for `advisor import`."""
    from advisor.db import ResultStore  # SQLAlchemy: not for `--help`
    from advisor.db.transfer import FORMATS, write_records

    try:
        fmt = output.resolve(fmt, as_json, out, (*FORMATS, "yaml"))
        with ResultStore.from_url(db, read_only=True) as store:
            if workload is not None and workload not in store.workloads():
                known = ", ".join(store.workloads()) or "none yet"
                fail(f"no trials of workload {workload!r} in {store.masked_url} (known: {known})")
            records = store.export(workload)
    except AdvisorError as e:
        fail_on(e)
    if fmt in FORMATS and not flat:
        if out is None:
            write_records(records, sys.stdout, fmt)
            return
        text = io.StringIO()
        write_records(records, text, fmt)
        output.write_file(out, text.getvalue())  # whole or not at all; a failure is one line
        typer.echo(f"wrote {len(records)} trials to {out}", err=True)
        return
    output.emit(fmt, out, document=records, rows=lambda: records, table=lambda: None, flat=flat)


@app.command("import")
def import_(
    file: str = typer.Argument(
        ..., help="An `advisor export` file (.json or .csv; - reads stdin).", show_default=False
    ),
    db: str | None = DbOption,
    fmt: str = output.format_option(),
    as_json: bool = output.JsonOption,
    out: Path | None = output.OutputOption,
) -> None:
    """Merge exported trial records into the database; trials already there are skipped."""
    from advisor.db import ResultStore  # SQLAlchemy: not for `--help`
    from advisor.db.transfer import read_records

    try:
        fmt = output.resolve(fmt, as_json, out)
        records = read_records(file)  # every record checked: a bad file opens no database
        with ResultStore.from_url(db) as store:
            added, skipped = store.import_records(records)
            where = store.masked_url
    except AdvisorError as e:
        fail_on(e)
    document = {"database": where, "added": added, "skipped": skipped}
    output.emit(fmt, out, document=document, rows=lambda: [document], table=output.line(
        f"imported {added} trials into {where}; skipped {skipped} already there"))
