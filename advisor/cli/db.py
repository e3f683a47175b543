"""`advisor db upgrade` and `advisor db current`: the results database's schema revision."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from advisor.cli import output
from advisor.cli.app import AdvisorGroup, AdvisorTyper, app
from advisor.cli.common import DbOption, fail_on
from advisor.errors import AdvisorError

if TYPE_CHECKING:
    from advisor.db import Revision

db_app = AdvisorTyper(
    name="db",
    help="The results database: its schema revision, and upgrades.",
    no_args_is_help=True,
    cls=AdvisorGroup,
)
app.add_typer(db_app, name="db")


@db_app.command("upgrade")
def upgrade(db: str | None = DbOption) -> None:
    """Create advisor's tables, or upgrade them to this advisor's schema revision."""
    from advisor.db import display_url, upgrade_database  # SQLAlchemy: not for `--help`

    try:
        before = upgrade_database(db)
    except AdvisorError as e:
        fail_on(e)
    where = display_url(db)
    if before.at_head:
        typer.echo(f"{where}: already at schema revision {before.head} (head)")
    elif before.current is None:
        typer.echo(f"{where}: created advisor's tables at schema revision {before.head} (head)")
    else:
        typer.echo(f"{where}: upgraded from schema revision {before.current} to {before.head}")


@db_app.command("current")
def current(
    db: str | None = DbOption,
    fmt: str = output.format_option(),
    as_json: bool = output.JsonOption,
    out: Path | None = output.OutputOption,
) -> None:
    """Show the database's schema revision and whether it needs `advisor db upgrade`."""
    from advisor.db import database_revision, display_url  # SQLAlchemy: not for `--help`

    try:
        fmt = output.resolve(fmt, as_json, out)
        from advisor.db.engine import check_sqlite_path, parse_url, resolve_url

        check_sqlite_path(parse_url(resolve_url(db)), folder_needed=True)  # never made there
        revision = database_revision(db)
    except AdvisorError as e:
        fail_on(e)
    where = display_url(db)
    document = {"database": where, "current": revision.current, "head": revision.head,
                "at_head": revision.at_head}
    output.emit(fmt, out, document=document, rows=lambda: [document],
                table=output.line(f"{where}: {_describe(revision, where)}"))


def _describe(revision: Revision, where: str) -> str:
    if revision.current is None:
        return f"no advisor tables yet (created at revision {revision.head} on first use)"
    if revision.at_head:
        return f"schema revision {revision.current} (head)"
    return (
        f"schema revision {revision.current}, head is {revision.head}: "
        f"run `advisor db upgrade --db {where}`"
    )
