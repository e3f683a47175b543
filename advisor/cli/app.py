"""`advisor`: the typer application object. Command modules register themselves on `app`;
`advisor.cli.main` imports them and runs it."""

from __future__ import annotations

import typer

from advisor.cli.exits import EPILOG

app = typer.Typer(
    name="advisor",
    help="Measure torch.compile configurations of a workload, keep the results, recommend one.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    epilog=EPILOG,
)


def _version(value: bool) -> None:
    if value:
        from advisor.version import __version__

        typer.echo(f"advisor {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    verbose: bool = typer.Option(
        False, "--verbose", "-v",
        help="Log what advisor does (child processes, locks, retries, ...) to stderr at DEBUG; "
             "$ADVISOR_LOG_LEVEL names another level.",
    ),
) -> None:
    """Measure torch.compile configurations of a workload, keep the results, recommend one."""
    from advisor import settings
    from advisor.cli import logs
    from advisor.cli.common import fail_on
    from advisor.errors import ConfigError

    try:
        logs.configure(verbose)
        settings.check_all()  # a bad ADVISOR_* value: one line before any command writes
    except ConfigError as e:
        fail_on(e)
