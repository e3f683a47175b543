"""`advisor`: the typer application object. Command modules register themselves on `app`;
`advisor.cli.main` imports them and runs it."""

from __future__ import annotations

from typing import Any

import typer
import typer.core

from advisor.cli.exits import EPILOG


class AdvisorGroup(typer.core.TyperGroup):
    """typer's group with its own `--help` flag False when not given, not None: typer coerces
    a None through pydantic, whose import (~70 ms) every `advisor COMMAND --help` paid before
    the command's help printed. Nothing else differs."""

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        if option is not None and option.default is None:
            option.default = False
        return option


app = typer.Typer(
    name="advisor",
    help="Measure torch.compile configurations of a workload, keep the results, recommend one.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    epilog=EPILOG,
    cls=AdvisorGroup,
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
