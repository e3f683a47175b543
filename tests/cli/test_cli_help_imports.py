"""What `--help` imports, for the root and every subcommand (nested groups too): no heavy module,
no pydantic, and no advisor module outside a small budget, so that the help's start-up time
(bench/cli_startup.py: under 0.3 s on a quiet 2-core host) cannot regress unseen. No timings
here: the figures belong to the bench.

Every help runs in one child process, one after another, as the `advisor` console script runs
it (`advisor.cli.main.main`), after the commands are registered as it registers them; what a
help imports stays imported, so the modules new after each step (registering included) are that
step's own, and their union is what any help imports."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from advisor.cli import common
from advisor.search import request

HEAVY = {"sqlalchemy", "alembic", "optuna", "torch", "pandas", "numpy", "streamlit", "psycopg",
         "triton", "plotly", "altair"}
# typer coerces an unset `--help` flag (None) through pydantic, ~70 ms to import; advisor's group
# (advisor.cli.app.AdvisorGroup) leaves it False, so no help imports it.
NOT_FOR_HELP = {"pydantic", "pydantic_core"}
# The advisor modules a help may import besides advisor.cli.*: the package root, its errors and
# version, the settings the root callback checks, and what option defaults and help texts are
# made of, and the declaration of the sweep's flags (advisor.search.request: `advisor sweep`'s
# options are made from it). Everything else (the workload loader, the traffic, the store, the
# rest of the search, the API, serving, recommendations, ...) is imported inside the command
# that uses it.
ADVISOR_BUDGET = {
    "advisor", "advisor.version", "advisor.errors", "advisor.settings", "advisor.protocol",
    "advisor.units", "advisor.config", "advisor.dimensions", "advisor.devices",
    "advisor.search", "advisor.search.request",
}

SCRIPT = r"""
import contextlib, io, json, sys
start = set(sys.modules)
import typer
from advisor.cli.app import app
from advisor.cli.main import main, register

register()
commands = []

def walk(command, path):
    commands.append([*path, "--help"])
    for name, sub in (getattr(command, "commands", None) or {}).items():
        walk(sub, [*path, name])

walk(typer.main.get_command(app), [])
seen = set(sys.modules)
# What every help imports first: typer and the command modules, registered.
report = [{"args": ["(every command registered)"], "code": 0, "chars": 1000,
           "new": sorted(seen - start)}]
for args in commands:
    sys.argv = ["advisor", *args]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            main()
            code = 0
        except SystemExit as e:
            code = e.code
    now = set(sys.modules)
    report.append({"args": args, "code": code, "chars": len(out.getvalue()),
                   "new": sorted(now - seen)})
    seen = now
print(json.dumps({"commands": report, "modules": sorted(sys.modules)}))
"""


@pytest.fixture(scope="module")
def helps() -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_every_command_and_nested_group_is_covered_and_helps(helps: dict[str, Any]) -> None:
    rows = helps["commands"]
    args = [row["args"] for row in rows]
    for expected in (["--help"], ["sweep", "--help"], ["trial", "--help"], ["list", "--help"],
                     ["recommend", "--help"], ["report", "--help"], ["db", "--help"],
                     ["db", "upgrade", "--help"], ["db", "current", "--help"]):
        assert expected in args
    assert len(args) >= 17
    for row in rows:
        assert row["code"] == 0 and row["chars"] > 200, row["args"]


def _top(modules: list[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_no_help_imports_a_heavy_module_or_pydantic(helps: dict[str, Any]) -> None:
    pulled = {" ".join(row["args"]): sorted(_top(row["new"]) & (HEAVY | NOT_FOR_HELP))
              for row in helps["commands"]}
    assert {args: found for args, found in pulled.items() if found} == {}


def test_help_imports_only_the_advisor_modules_in_the_budget(helps: dict[str, Any]) -> None:
    """A module-level import of another advisor module into a command module fails here: import
    it inside the function that needs it (or, deliberately, widen the budget)."""
    outside = {
        " ".join(row["args"]): sorted(
            m for m in row["new"]
            if m.split(".")[0] == "advisor" and not m.startswith("advisor.cli")
            and m not in ADVISOR_BUDGET)
        for row in helps["commands"]
    }
    assert {args: found for args, found in outside.items() if found} == {}
    modules = helps["modules"]
    for lazy in ("advisor.workload", "advisor.traffic", "advisor.api", "advisor.serving",
                 "advisor.search.launcher", "advisor.db", "advisor.recommendation"):
        assert lazy not in modules


@pytest.mark.parametrize("where", [common, request], ids=["cli.common", "search.request"])
def test_help_defaults_agree_with_their_modules(where: Any) -> None:
    """The option defaults `--help` shows are constants in advisor.cli.common and, for the sweep's
    flags, advisor.search.request (so that a help imports none of these modules); they are the
    modules' own values."""
    from advisor.search.launcher import DEFAULT_TIMEOUT_S
    from advisor.serving import DEFAULT_CALLS_PER_PROCESS
    from advisor.traffic import HOLDOUT

    assert where.HOLDOUT == HOLDOUT
    assert where.DEFAULT_CALLS_PER_PROCESS == DEFAULT_CALLS_PER_PROCESS
    assert where.DEFAULT_TIMEOUT_S == DEFAULT_TIMEOUT_S
    assert type(where.DEFAULT_TIMEOUT_S) is type(DEFAULT_TIMEOUT_S)
    assert type(where.HOLDOUT) is type(HOLDOUT)
