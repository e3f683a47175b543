"""`advisor export` and `advisor import`: pool results of hosts that share no database."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import typer

from advisor.cli import output
from advisor.cli.app import app
from advisor.cli.common import DbOption, complete_workloads, fail, fail_on
from advisor.errors import AdvisorError


@app.command("export")
def export(
    workload: str | None = typer.Option(
        None, "--workload", "-w", help="Only this workload's trials.", show_default=False,
        autocompletion=complete_workloads,
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
        if not records:  # an empty export is valid: nothing to import, no database made
            _imported_nothing(file, db, fmt, out)
            return
        with ResultStore.from_url(db) as store:
            where = store.masked_url

            def written(added: int, skipped: int) -> None:
                """The report, written to -o before the import commits: a file that cannot
                be written (a full disk, /dev/full) leaves the database as it was."""
                if out is not None:
                    _report(fmt, out, where, added, skipped)

            added, skipped = store.import_records(records, before_commit=written)
    except AdvisorError as e:
        fail_on(e)
    _report(fmt, out, where, added, skipped, written=out is not None)


def _report(fmt: str, out: Path | None, where: str, added: int, skipped: int,
            written: bool = False) -> None:
    """What `import` reports, to stdout or ``out`` (``written``: to ``out`` already: said)."""
    if written:
        typer.echo(f"wrote {out}", err=True)
        return
    document = {"database": where, "added": added, "skipped": skipped}
    text = f"imported {added} trials into {where}; skipped {skipped} already there"
    if out is None:
        output.emit(fmt, None, document=document, rows=lambda: [document],
                    table=output.line(text))
        return
    output.write_file(out, output.render_text(fmt, document=document, rows=lambda: [document],
                                              table=output.line(text)))


def _imported_nothing(file: str, db: str | None, fmt: str, out: Path | None) -> None:
    """The report of an empty export (``[]``, a CSV with only its header): nothing imported,
    said so, exit code 0. The database is only asked its schema revision (a --db that cannot
    be opened is still a mistake); nothing is written, a new one is not created."""
    from advisor.db.engine import check_sqlite_path, display_url, parse_url, resolve_url
    from advisor.db.store import database_revision

    try:
        check_sqlite_path(parse_url(resolve_url(db)), folder_needed=True)
        database_revision(db)  # reads; a SQLite file that is not there is not made
    except AdvisorError as e:
        fail_on(e)
    where = display_url(db)
    name = "stdin" if file == "-" else file
    document = {"database": where, "added": 0, "skipped": 0}
    output.emit(fmt, out, document=document, rows=lambda: [document], table=output.line(
        f"imported nothing: {name} holds no trial records; {where} left as it was"))
