"""What the fault tests share: a database made to refuse writes for real (a SQLite file held
under BEGIN EXCLUSIVE by another process; a PostgreSQL database closed to new connections and
its backends terminated), a gate that holds a trial in flight, and the real CLI started in the
background with a marker the test finds its processes by."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reliability_support import HERE, sweep_support
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

GATED = HERE / "workloads" / "gated.py"
SLOW = sweep_support.REPO / "tests" / "workloads" / "slow_build.py"  # a 4 s build
EAGER_TWO = ("--device", "cpu", "--modes", "eager", "--dtypes", "fp32,bf16", "--no-warm",
             "--no-confirm-leaders")
HOLD = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.readline()
db.execute("COMMIT")
print("free", flush=True)
sys.stdin.readline()
"""


class Lock:
    """Another process holding BEGIN EXCLUSIVE on a SQLite file until `release`."""

    def __init__(self, path: Path) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", HOLD, str(path)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self._say() == "locked"

    def _say(self) -> str:
        assert self.process.stdout is not None
        return self.process.stdout.readline().strip()

    def release(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        assert self._say() == "free"

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


def pg_admin() -> Any:
    """An AUTOCOMMIT engine on the test server's own database."""
    server = make_url(os.environ["ADVISOR_TEST_PG_URL"]).set(drivername="postgresql+psycopg")
    return create_engine(server, isolation_level="AUTOCOMMIT")


def terminate_backends(url: str) -> int:
    """pg_terminate_backend of every connection to the database of ``url``; how many."""
    admin = pg_admin()
    try:
        with admin.connect() as c:
            return len(c.execute(text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = :name AND pid <> pg_backend_pid()"),
                {"name": make_url(url).database}).all())
    finally:
        admin.dispose()


class Refusal:
    """The database of ``url`` refusing every write until `release`: a SQLite file held under
    BEGIN EXCLUSIVE by another process (writers wait out their busy timeout, then "database is
    locked"); a PostgreSQL database closed to new connections, its backends terminated."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.lock: Lock | None = None
        self.released = False
        if url.startswith("sqlite"):
            self.lock = Lock(Path(str(make_url(url).database)))
        else:
            self._allow(False)
            terminate_backends(url)

    def _allow(self, allowed: bool) -> None:
        admin = pg_admin()
        try:
            with admin.connect() as c:
                name = make_url(self.url).database
                c.execute(text(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS {allowed}'))
        finally:
            admin.dispose()

    def release(self) -> None:
        """Take writes again (once; again is a no-op)."""
        if self.released:
            return
        self.released = True
        if self.lock is not None:
            self.lock.close()
        else:
            self._allow(True)


def wait_for(found: Callable[[], Any], what: str, timeout_s: float = 240.0) -> Any:
    """Poll ``found`` every 0.2 s until it returns something true; fail naming ``what``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = found()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


class Background:
    """`advisor ARGS` started in the background (its processes marked), read once it ends."""

    def __init__(self, *args: str | Path, cwd: Path, env: dict[str, str] | None = None,
                 command: list[str] | None = None) -> None:
        self.marker = uuid.uuid4().hex
        full_env = {**sweep_support.cli_env(self.marker), **(env or {})}
        self.process = subprocess.Popen(
            command or [*sweep_support.advisor_command(), *map(str, args)], cwd=cwd,
            env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def trial_children(self) -> list[Any]:
        """Its running trial children (not the device's probe, a child too)."""
        return sweep_support.trial_children(self.marker)

    def finish(self, timeout_s: float = 300.0) -> tuple[int, str, str]:
        out, err = self.process.communicate(timeout=timeout_s)
        return self.process.returncode, out, err

    def kill(self) -> None:
        for proc in sweep_support.marked_processes(self.marker):
            with contextlib.suppress(Exception):
                proc.kill()
        with contextlib.suppress(Exception):
            self.process.kill()
            self.process.communicate(timeout=30)


class Gate:
    """A FIFO that a gated workload's build waits on (`ADVISOR_TEST_GATE`) until `open`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        os.mkfifo(path)
        self.env = {"ADVISOR_TEST_GATE": str(path)}

    def open(self) -> None:
        """Let every build waiting on the gate go (a writer opens the FIFO and closes it);
        nothing when none waits."""
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # ENXIO: no reader waits
            return
        os.close(fd)


def error_line(err: str) -> str:
    """The one `advisor: error:` line of stderr (asserting there is exactly one, no traceback)."""
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("advisor: error: ")]
    assert len(lines) == 1, err
    return lines[0].removeprefix("advisor: error: ")
