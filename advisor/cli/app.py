"""`advisor`: the typer application. Command modules register themselves on `app`."""

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
        from advisor import __version__

        typer.echo(f"advisor {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Measure torch.compile configurations of a workload, keep the results, recommend one."""


def _register() -> None:
    # Imported here, not at module level in each other, so the order is explicit; none of these
    # modules imports torch at import time (`advisor --help` must stay fast).
    from advisor.cli import (  # noqa: F401
        check,
        dashboard,
        db,
        doctor,
        fleet,
        report,
        results,
        sweep,
        transfer,
        trial,
    )


def _terminated(signum: int, frame: object) -> None:
    """SIGTERM: leave as Ctrl-C does, through every `finally` (temporary directories removed,
    children ended), with the conventional exit code 143. A sweep's loop handles it itself."""
    from advisor.errors import Terminated

    raise Terminated(signum)


def main() -> None:
    import signal

    signal.signal(signal.SIGTERM, _terminated)
    _register()
    app()
