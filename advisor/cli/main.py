"""The `advisor` command: every command module imported (each registers itself on
`advisor.cli.app.app`), SIGTERM handled, the application run."""

from __future__ import annotations

from advisor.cli.app import app


def register() -> None:
    # Imported here, not at module level in each other, so the order is explicit; none of these
    # modules imports torch at import time (`advisor --help` must stay fast).
    from advisor.cli import (  # noqa: F401
        check,
        dashboard,
        db,
        diff,
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
    register()
    app()
