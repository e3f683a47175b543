"""`advisor --version` and the exit codes `advisor --help` documents."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from report_support import run

from advisor import __version__
from advisor.cli import exits

README = Path(__file__).resolve().parents[2] / "README.md"


def test_version_prints_the_package_version() -> None:
    done = run("--version")
    assert done.exit_code == 0 and done.stdout == f"advisor {__version__}\n"


def test_help_and_readme_document_every_exit_code() -> None:
    done = run("--help")
    assert done.exit_code == 0
    text = " ".join(done.stdout.split())
    readme = README.read_text()
    assert " ".join(exits.EPILOG.split()) in text
    for code in (exits.OK, exits.FAILURE, exits.BAD_INPUT, exits.SLOWER, exits.INTERRUPTED):
        assert f" {code} " in exits.EPILOG or exits.EPILOG.startswith(f"Exit codes: {code} ")
        assert f"\n| {code} | " in readme


def test_help_imports_no_database_search_or_torch_module() -> None:
    """`advisor --help` (every command registered) stays light: the store, Optuna and torch are
    imported by the commands that use them, when they run."""
    script = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from advisor.cli.main import app, register\n"
        "register()\n"
        "assert CliRunner().invoke(app, ['--help']).exit_code == 0\n"
        "print(sorted(m.split('.')[0] for m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    loaded = set(ast.literal_eval(done.stdout.strip().splitlines()[-1]))
    assert "advisor" in loaded and "typer" in loaded
    assert not loaded & {"sqlalchemy", "alembic", "optuna", "torch", "pandas", "psycopg"}
