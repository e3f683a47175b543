"""What every command shares: the --db option, one-line errors with exit code 2, output."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import typer

from advisor.errors import AdvisorError

DB_HELP = (
    "Results database URL (sqlite:///path.db or postgresql+psycopg://user@host/db); "
    "default: $ADVISOR_DB_URL, else sqlite:///advisor.db in the working directory."
)
DbOption = typer.Option(None, "--db", help=DB_HELP, show_default=False)


def fail(message: str) -> NoReturn:
    """A user mistake: one line on stderr, exit code 2."""
    typer.echo(f"advisor: error: {message}", err=True)
    raise typer.Exit(2)


def fail_on(error: AdvisorError) -> NoReturn:
    fail(str(error).splitlines()[0] if str(error) else type(error).__name__)


def print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")
