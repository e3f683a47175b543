"""A sweep's owner is known by its process (host, pid and start time, migration 0006) as well as
by its heartbeat: after a kill -9 of its parent, `--resume` right away resumes (it was refused for
up to 120 s, "another process is measuring it", though no process of it was left); a reader on
that host reports it dead at once. On another host the heartbeat rule stays. Real processes,
real databases (SQLite and PostgreSQL)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from faults_support import EAGER_TWO, GATED, Background, Gate, wait_for
from reliability_support import advisor, one_line_error, sweep_support
from sqlalchemy import create_engine, update

from advisor import lifetime
from advisor.db import ResultStore
from advisor.db.models import Sweep

SWEEPS = Sweep.__table__


def _set(url: str, sweep_id: int, **values: Any) -> None:
    engine = create_engine(url)
    with engine.begin() as c:
        c.execute(update(SWEEPS).where(SWEEPS.c.id == sweep_id).values(**values))
    engine.dispose()


def _dead_pid() -> int:
    """The pid of a process that has ended (and was reaped)."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


def test_a_sweep_records_its_owner_and_a_resume_takes_it_over(
    store: ResultStore, make: SimpleNamespace
) -> None:
    sweep_id = store.create_sweep(make.workload(), make.fingerprint(), {}, "s", 2)
    owner = store.get_sweep(sweep_id)["owner"]
    assert owner == lifetime.owner()
    assert owner["host"] == socket.gethostname() and owner["pid"] == os.getpid()
    assert isinstance(owner["started"], float)
    store.finish_sweep(sweep_id, "interrupted")
    _set(store.url, sweep_id, owner=None)
    store.finish_sweep(sweep_id, "running")  # resumed: this process owns it now
    assert store.get_sweep(sweep_id)["owner"] == lifetime.owner()


def test_a_running_sweep_whose_owner_here_is_gone_reads_dead_at_once(
    store: ResultStore, make: SimpleNamespace
) -> None:
    sweep_id = store.create_sweep(make.workload(), make.fingerprint(), {}, "s", 2)
    assert store.get_sweep(sweep_id)["status"] == "running"  # its owner: this process
    here = socket.gethostname()
    _set(store.url, sweep_id, owner={"host": here, "pid": _dead_pid(), "started": 1.0})
    sweep = store.get_sweep(sweep_id)
    assert (sweep["status"], sweep["stored_status"]) == ("dead", "running")  # fresh heartbeat
    assert [s["status"] for s in store.sweeps()] == ["dead"]

    # a pid given to another process since: alive, but not the owner
    started = lifetime.started_at(os.getpid())
    assert started is not None
    _set(store.url, sweep_id, owner={"host": here, "pid": os.getpid(), "started": started - 100})
    assert store.get_sweep(sweep_id)["status"] == "dead"
    _set(store.url, sweep_id, owner={"host": here, "pid": os.getpid(), "started": started})
    assert store.get_sweep(sweep_id)["status"] == "running"


def test_on_another_host_the_heartbeat_decides(store: ResultStore, make: SimpleNamespace) -> None:
    sweep_id = store.create_sweep(make.workload(), make.fingerprint(), {}, "s", 2)
    elsewhere = {"host": f"not-{socket.gethostname()}", "pid": _dead_pid(), "started": 1.0}
    _set(store.url, sweep_id, owner=elsewhere)
    assert store.get_sweep(sweep_id)["status"] == "running"  # that host's process: unknown
    _set(store.url, sweep_id, heartbeat_at=datetime.now(UTC) - timedelta(hours=1))
    assert store.get_sweep(sweep_id)["status"] == "dead"


def test_a_sweep_without_an_owner_keeps_the_heartbeat_rule(
    store: ResultStore, make: SimpleNamespace
) -> None:
    """A row an older advisor wrote (or an import carried): no owner, the heartbeat tells."""
    sweep_id = store.create_sweep(make.workload(), make.fingerprint(), {}, "s", 2)
    _set(store.url, sweep_id, owner=None)
    assert store.get_sweep(sweep_id)["status"] == "running"


def test_a_live_owner_here_is_named_when_a_resume_is_refused(
    tmp_path: Path, make: SimpleNamespace
) -> None:
    url = f"sqlite:///{tmp_path / 'alive.db'}"
    with ResultStore.from_url(url) as store:
        sweep_id = store.create_sweep(make.workload("four-dtypes"), make.fingerprint(),
                                      {"space": []}, "s", 2)
    code, _, err = advisor("sweep", sweep_support.FOUR_DTYPES, "--db", url, "--device", "cpu",
                           "--resume")
    message = one_line_error(code, err)
    assert f"sweep {sweep_id} of four-dtypes is running (its process {os.getpid()} runs on " \
           "this host)" in message, message


def _rows(url: str, sweep_id: int) -> list[dict[str, Any]]:
    with ResultStore.from_url(url, read_only=True) as store:
        return store.trials(sweep_id=sweep_id)


@pytest.mark.slow
@pytest.mark.parametrize("jobs", [(), ("--jobs", "2")], ids=["serial", "pooled"])
def test_resume_right_after_a_kill_9_of_the_parent_resumes_at_once(
    jobs: tuple[str, ...], db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parent killed with -9 while a trial is in flight; `--resume` at once, with the
    default 120 s after which a sweep without a heartbeat reads dead: it resumes now."""
    monkeypatch.delenv("ADVISOR_SWEEP_DEAD_AFTER_S", raising=False)
    ResultStore.from_url(db_url).close()
    gate = Gate(tmp_path / "gate")
    sweep = Background("sweep", GATED, "--db", db_url, *EAGER_TWO, *jobs, cwd=tmp_path,
                       env=gate.env)
    try:
        wait_for(sweep.trial_children, "a trial of the sweep held at the gate")
        sweep.process.kill()  # kill -9 of the parent
        sweep.process.wait()
        wait_for(lambda: not sweep_support.marked_processes(sweep.marker),
                 "the killed sweep's children to be gone", timeout_s=60)
    finally:
        gate.open()
        sweep.kill()
    with ResultStore.from_url(db_url, read_only=True) as store:
        (found,) = store.sweeps()
    assert (found["status"], found["stored_status"]) == ("dead", "running")  # at once
    done = sweep_support.advisor("sweep", GATED, "--db", db_url, "--resume", *EAGER_TWO, *jobs,
                                 cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    assert "another process is measuring it" not in done.stderr
    rows = _rows(db_url, found["id"])
    assert Counter(r["config_key"] for r in rows) == {"eager/fp32": 1, "eager/bf16": 1}, rows
    with ResultStore.from_url(db_url, read_only=True) as store:
        assert store.get_sweep(found["id"])["status"] == "finished"
