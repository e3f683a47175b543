"""What the tests that run sweeps share: the real CLI in a subprocess, the store, children.

Every CLI process a test starts carries a marker in its environment; the launcher copies the
environment into each trial child (and Inductor's compile workers inherit it), so the processes
of one test's sweep can be found, and proven gone, without guessing by name.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import psutil

from advisor.db.store import ResultStore
from advisor.errors import StoreError
from advisor.protocol import process_name

REPO = Path(__file__).resolve().parents[2]
TINY_MLP = REPO / "tests" / "workloads" / "tiny_mlp.py"
FOUR_DTYPES = REPO / "tests" / "workloads" / "four_dtypes.py"  # eager-only, up to 4 configs
MANY_SMALL_OPS = REPO / "tests" / "workloads" / "many_small_ops.py"  # compiling wins by far
MARK = "ADVISOR_TEST_SWEEP_MARK"
CLI_TIMEOUT_S = 300


def advisor_command() -> list[str]:
    """The installed `advisor` console script (next to this interpreter), else via -c."""
    script = Path(sys.executable).with_name("advisor")
    if script.exists():
        return [str(script)]
    found = shutil.which("advisor")
    if found:
        return [found]
    return [sys.executable, "-c", "from advisor.cli.main import main; main()"]


def modules_at_exit(path: Path, names: tuple[str, ...]) -> list[str]:
    """An `advisor` command (for `advisor`'s ``command``) that writes to ``path``, as it exits,
    a JSON object of which of ``names`` its own process imported."""
    hook = (f"import atexit, json, sys; atexit.register(lambda: open({str(path)!r}, 'w')"
            f".write(json.dumps({{n: n in sys.modules for n in {list(names)!r}}}))); ")
    return [sys.executable, "-c", hook + "from advisor.cli.main import main; main()"]


def cli_env(marker: str | None = None) -> dict[str, str]:
    """The environment of a CLI process a test starts. Given a `marker` (the test finds its
    processes by it), the command starts its own fork server: children forked from the shared
    one (tests/conftest.py) carry that server's environment in /proc, not the marker."""
    env = dict(os.environ)
    env.pop("ADVISOR_DB_URL", None)  # every test names its database, or means the default
    if marker is not None:
        env.pop("ADVISOR_FORK_SERVER_SOCKET", None)
    env[MARK] = marker or uuid.uuid4().hex
    env["COLUMNS"] = "200"
    return env


def advisor(
    *args: str | Path, cwd: Path, marker: str | None = None, timeout: float = CLI_TIMEOUT_S,
    command: list[str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `advisor ARGS` to completion (``command``: how, default `advisor_command`); stdout
    and stderr captured as text."""
    return subprocess.run(
        [*(command or advisor_command()), *map(str, args)],
        cwd=cwd,
        env=cli_env(marker),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def json_out(done: subprocess.CompletedProcess[str]) -> Any:
    """stdout parsed as JSON (the whole of it), with stderr in the message when it is not."""
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError as e:
        raise AssertionError(
            f"stdout is not JSON ({e}):\n{done.stdout}\n--- stderr:\n{done.stderr}"
        ) from e


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


def open_store(url: str) -> ResultStore:
    """The store of an existing database, never creating or upgrading anything."""
    return ResultStore.from_url(url, create=False)


def stored_trials(db_path: Path) -> list[dict[str, Any]]:
    """Trials a (possibly still starting) sweep has stored; [] until its schema exists."""
    if not db_path.exists():
        return []  # connecting would create the file under the sweep's feet
    try:
        with open_store(sqlite_url(db_path)) as store:
            return store.trials()
    except StoreError:
        return []  # the sweep has not created the schema yet


def marked_processes(marker: str) -> list[psutil.Process]:
    """Live processes (zombies aside) started by the CLI run that carries `marker`. Each
    process's environment is read raw from /proc and only a match becomes a `psutil.Process`:
    tests poll this while a sweep runs, and psutil's parse of every process's environment cost
    about ten times the CPU on the 2-core host."""
    entry = f"{MARK}={marker}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                environ = f.read()
        except OSError:
            continue  # gone meanwhile, or not this user's to read
        if entry not in environ.split(b"\0"):
            continue
        try:
            proc = psutil.Process(int(name))
            if proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except psutil.NoSuchProcess:
            pass
    return found


def trial_children(marker: str) -> list[psutil.Process]:
    """The running trial children of one marked CLI run (named by `advisor.protocol.process_name`:
    forked from the fork server, they keep its command line)."""
    children = []
    for proc in marked_processes(marker):
        try:
            if proc.name() == process_name("trial"):
                children.append(proc)
        except psutil.NoSuchProcess:
            pass
    return children


def config_keys(records: list[dict[str, Any]]) -> list[str]:
    return sorted(r["config_key"] for r in records)
