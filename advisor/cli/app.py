"""`advisor`: the typer application object. Command modules register themselves on `app`;
`advisor.cli.main` imports them and runs it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import typer
import typer.core

from advisor.cli.exits import EPILOG

F = TypeVar("F", bound=Callable[..., Any])


class AdvisorGroup(typer.core.TyperGroup):
    """typer's group with its own `--help` flag False when not given, not None: typer coerces
    a None through pydantic, whose import (~70 ms) every `advisor COMMAND --help` paid before
    the command's help printed; and its help laid out by `advisor.cli.helpfmt` (readable at 80
    columns)."""

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        if option is not None and option.default is None:
            option.default = False
        return option

    def get_params(self, ctx: Any) -> Any:
        # typer's --install-completion / --show-completion, unset: False, not None (the same
        # pydantic import, paid by every command through the root's options)
        params = super().get_params(ctx)
        for param in params:
            if param.name in ("install_completion", "show_completion") and param.default is None:
                param.default = False
        return params

    def format_help(self, ctx: Any, formatter: Any) -> None:
        from advisor.cli.helpfmt import format_help

        format_help(self, ctx)


class AdvisorCommand(typer.core.TyperCommand):
    """A command whose help is laid out by `advisor.cli.helpfmt` (readable at 80 columns: a
    wide help column, defaults in full, flags without a type); its `--help` flag False when
    not given, as `AdvisorGroup`'s."""

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        if option is not None and option.default is None:
            option.default = False
        return option

    def format_help(self, ctx: Any, formatter: Any) -> None:
        from advisor.cli.helpfmt import format_help

        format_help(self, ctx)


class AdvisorTyper(typer.Typer):
    """`typer.Typer` whose commands are `AdvisorCommand`s unless they name another class."""

    def command(self, name: str | None = None, **kwargs: Any) -> Callable[[F], F]:
        kwargs.setdefault("cls", AdvisorCommand)
        decorator: Callable[[F], F] = super().command(name, **kwargs)
        return decorator


app = AdvisorTyper(
    name="advisor",
    help="Measure torch.compile configurations of a workload, keep the results, recommend one.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish)
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
