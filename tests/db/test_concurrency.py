"""Several processes writing into one database at once lose nothing and never collide."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from advisor.db import ResultStore

PROCESSES = 8
TRIALS_EACH = 100


def _write(url: str, sweep: dict[str, Any], records: list[dict[str, Any]], start: Any) -> None:
    """One writer: open the (maybe brand-new) database, open a sweep, add trials one by one."""
    start.wait()
    with ResultStore.from_url(url) as store:
        sweep_id = store.create_sweep(sweep["workload"], sweep["fingerprint"], {}, "race", None)
        for record in records:
            store.add_trial(record, sweep_id)
        store.finish_sweep(sweep_id, "finished")


@pytest.mark.slow
def test_eight_processes_writing_at_once_lose_nothing(db_url: str, make: SimpleNamespace) -> None:
    sweep = {"workload": make.workload(), "fingerprint": make.fingerprint()}
    batches = [
        [make.record(p * TRIALS_EACH + i) for i in range(TRIALS_EACH)] for p in range(PROCESSES)
    ]
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(PROCESSES)
    writers = [
        context.Process(target=_write, args=(db_url, sweep, batch, start)) for batch in batches
    ]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(timeout=120)
    assert [w.exitcode for w in writers] == [0] * PROCESSES

    with ResultStore.from_url(db_url) as store:
        stored = store.trials()
        assert len(stored) == PROCESSES * TRIALS_EACH
        assert {r["trial_uuid"] for r in stored} == {r["trial_uuid"] for b in batches for r in b}
        sweeps = store.sweeps()
        assert sorted(s["n_trials"] for s in sweeps) == [TRIALS_EACH] * PROCESSES
        assert {s["status"] for s in sweeps} == {"finished"}
        [best] = store.best_per_workload_device()
        assert best["median_ms"] == min(r["median_ms"] for b in batches for r in b)
        assert [d["n_trials"] for d in store.devices()] == [PROCESSES * TRIALS_EACH]


def test_a_new_file_another_connection_is_writing_is_opened_once_it_commits(tmp_path: Path) -> None:
    # A file still in SQLite's first (rollback) mode with a writer at work: switching it to WAL
    # is refused at once ("database is locked", no busy wait); the store tries again until the
    # writer commits, and then finds the file in WAL mode.
    path = tmp_path / "advisor.db"
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute("CREATE TABLE other (x)")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO other VALUES (1)")
    commit = threading.Timer(0.5, lambda: writer.execute("COMMIT"))
    commit.start()
    try:
        with ResultStore.from_url(f"sqlite:///{path}") as store:
            assert store.sweeps() == []
    finally:
        commit.join()
        writer.close()
    with sqlite3.connect(path) as check:
        assert check.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert check.execute("SELECT x FROM other").fetchall() == [(1,)]


@pytest.mark.postgres
def test_an_advisory_lock_makes_a_second_holder_wait_until_the_first_lets_go(
        pg_scratch: str) -> None:
    """`ResultStore.advisory_lock` (the pooled sweep's proposing workers take turns through it
    on PostgreSQL): a second store asking for the same name waits, seen by the server as an
    advisory lock not granted, and enters only once the first has left; another name does not
    wait."""
    from sqlalchemy import text

    order: list[str] = []
    first, second = ResultStore.from_url(pg_scratch), ResultStore.from_url(pg_scratch)
    try:
        with first.advisory_lock("test-turns"):
            with second.advisory_lock("test-other"):
                order.append("other name, not waiting")
            waiter = threading.Thread(target=lambda: _enter(second, order))
            waiter.start()
            waiting = text("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT "
                           "granted AND database = (SELECT oid FROM pg_database WHERE datname "
                           "= current_database())")
            deadline = time.monotonic() + 120  # a bound only a hang reaches
            with first._engine.connect() as c:  # the waiter is queued on the server
                while not c.execute(waiting).scalar():
                    c.commit()
                    assert time.monotonic() < deadline, "the second holder never asked"
                    waiter.join(0.05)
                    assert waiter.is_alive(), order  # it entered while the lock was held
            order.append("first leaves")
        waiter.join(60)
        assert order == ["other name, not waiting", "first leaves", "second enters"]
    finally:
        first.close()
        second.close()


def _enter(store: ResultStore, order: list[str]) -> None:
    with store.advisory_lock("test-turns"):
        order.append("second enters")
