"""What the reliability tests share: the CLI run in this process, and the check that bad input
gives one line and exit code 2."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from support import sweeps
from typer.testing import CliRunner

HERE = Path(__file__).resolve().parent


def load(name: str, path: Path) -> ModuleType:
    """A helper module of another test folder, by path (test folders are not packages)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# the shared sweep helpers: the real CLI in a subprocess, the smallest workloads
sweep_support = sweeps


def advisor(*args: str | Path) -> tuple[int, str, str]:
    """`advisor ARGS` run in this process: (exit code, stdout, stderr)."""
    from advisor.cli.main import app, register

    register()
    result = CliRunner().invoke(app, [str(a) for a in args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def one_line_error(code: int, err: str) -> str:
    """The message of a user mistake: exit code 2 and one line on stderr."""
    assert code == 2, err
    assert err.startswith("advisor: error: ") and err.count("\n") == 1, err
    return err.removeprefix("advisor: error: ").strip()
