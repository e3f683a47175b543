"""What the reliability tests share: the CLI run in this process, and the check that bad input
gives one line and exit code 2."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner


def advisor(*args: str | Path) -> tuple[int, str, str]:
    """`advisor ARGS` run in this process: (exit code, stdout, stderr)."""
    from advisor.cli.app import _register, app

    _register()
    result = CliRunner().invoke(app, [str(a) for a in args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def one_line_error(code: int, err: str) -> str:
    """The message of a user mistake: exit code 2 and one line on stderr."""
    assert code == 2, err
    assert err.startswith("advisor: error: ") and err.count("\n") == 1, err
    return err.removeprefix("advisor: error: ").strip()
