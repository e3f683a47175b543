"""What every command shares: the --db option, one-line errors with exit code 2, output."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import typer

from advisor.errors import AdvisorError, ConfigError

# Option defaults that `--help` shows: advisor.search.request's (light), so that a help imports
# neither advisor.traffic, advisor.serving nor advisor.search.launcher
# (tests/cli/test_cli_help_imports.py holds them equal to those modules' own).
from advisor.search.request import DEFAULT_CALLS_PER_PROCESS as DEFAULT_CALLS_PER_PROCESS
from advisor.search.request import DEFAULT_TIMEOUT_S as DEFAULT_TIMEOUT_S
from advisor.search.request import HOLDOUT as HOLDOUT

DB_HELP = (
    "Results database URL (sqlite:///path.db or postgresql+psycopg://user@host/db); "
    "default: $ADVISOR_DB_URL, else sqlite:///advisor.db in the working directory."
)
DbOption = typer.Option(None, "--db", help=DB_HELP, show_default=False)


def complete_workloads(ctx: typer.Context, incomplete: str) -> list[str]:
    """Shell completion: the database's workload names (`advisor.cli.complete`)."""
    from advisor.cli import complete

    return complete.workloads(ctx, incomplete)


def complete_sweep_ids(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    """Shell completion: the database's sweep ids, newest first (`advisor.cli.complete`)."""
    from advisor.cli import complete

    return complete.sweep_ids(ctx, incomplete)


def workload_argument(help: str = "Workload name (see `advisor list`).",
                      default: Any = ...) -> Any:
    """The WORKLOAD argument of the read commands, completed from the database (``default``
    None: optional)."""
    return typer.Argument(default, help=help, autocompletion=complete_workloads)


def sweep_argument(help: str = "Sweep id (see `advisor list`).") -> Any:
    """The SWEEP argument, completed from the database's sweep ids."""
    return typer.Argument(..., help=help, autocompletion=complete_sweep_ids)
MAX_ID = 2**31 - 1  # sweep ids are Integer columns (int4 on PostgreSQL)

def fail(message: str) -> NoReturn:
    """A user mistake: one line on stderr, exit code 2."""
    typer.echo(f"advisor: error: {message}", err=True)
    raise typer.Exit(2)


def fail_on(error: AdvisorError) -> NoReturn:
    fail(str(error).splitlines()[0] if str(error) else type(error).__name__)


def print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")


def check_id(value: int, what: str = "sweep") -> None:
    """A sweep id as the database can hold it (1 to `MAX_ID`); ConfigError otherwise."""
    if not 1 <= value <= MAX_ID:
        shown = str(value) if len(str(value)) <= 30 else f"{str(value)[:27]}..."
        raise ConfigError(f"{what} id {shown} is out of range: ids run from 1 to {MAX_ID:,}; "
                          "`advisor list` shows them")


def check_calls_per_process(value: int | None) -> None:
    """``--calls-per-process N``: N >= 1 when given (any policy)."""
    if value is not None and value < 1:
        raise ConfigError(f"--calls-per-process {value}: a process serves at least 1 call; "
                          "give the requests a serving process lives for, e.g. 10000")
