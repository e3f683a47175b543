"""A measured trial is not lost when the database stays locked past its busy timeout: the sweep's
write is retried with backoff for $ADVISOR_STORE_RETRY_S, then the record goes to a spill file
beside the database, which `advisor import` or a resumed sweep stores. The lock is real: another
process holds BEGIN EXCLUSIVE on the SQLite file; the timeouts are cut to a fraction of a second."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from faults_support import Lock
from reliability_support import advisor

from advisor.db.spill import FIRST_RETRY_S, spill_dir, spill_path, store_spilled, store_trial
from advisor.db.store import ResultStore
from advisor.errors import StoreError


@pytest.fixture
def opened(tmp_path: Path, sqlite_template: Path, monkeypatch: pytest.MonkeyPatch,
           make: SimpleNamespace) -> Iterator[tuple[ResultStore, int, Path]]:
    """A store on a SQLite file with a short busy timeout, and a sweep in it."""
    monkeypatch.setenv("ADVISOR_DB_BUSY_TIMEOUT_S", "0.1")
    path = tmp_path / "a.db"
    shutil.copyfile(sqlite_template, path)
    with ResultStore.from_url(f"sqlite:///{path}") as store:
        sweep_id = store.create_sweep(make.workload(), make.fingerprint(), {}, None)
        yield store, sweep_id, path


def test_a_trial_the_locked_database_refuses_is_spilled_then_imported(
        opened: tuple[ResultStore, int, Path], make: SimpleNamespace,
        monkeypatch: pytest.MonkeyPatch) -> None:
    store, sweep_id, path = opened
    monkeypatch.setenv("ADVISOR_STORE_RETRY_S", "0.3")
    record = make.record(0, workload={**make.workload(), "path": "/w/reranker.py"})
    lock = Lock(path)
    try:
        with pytest.raises(StoreError) as raised:
            store_trial(store, record, sweep_id)
        spilled = spill_path(store.url, sweep_id, record["trial_uuid"])
        message = str(raised.value)
        assert "\n" not in message and "locked" in message
        assert str(spilled) in message and "/w/reranker.py" in message and "--resume" in message
        assert spilled.parent == path.with_name("a.db.spill")
        (kept,) = json.loads(spilled.read_text())
        assert kept["trial_uuid"] == record["trial_uuid"]
        assert kept["sweep_uuid"] == store.get_sweep(sweep_id)["uuid"]
        assert store.trials(sweep_id=sweep_id) == []  # read through the writer's lock (WAL)
    finally:
        lock.close()
    code, out, err = advisor("import", spilled, "--db", store.url)
    assert code == 0, err
    assert "imported 1 trials" in out
    (stored,) = store.trials(sweep_id=sweep_id)
    assert stored["trial_uuid"] == record["trial_uuid"]
    assert stored["sweep_id"] == sweep_id


def test_a_resumed_sweep_stores_what_it_spilled_first(
        opened: tuple[ResultStore, int, Path], make: SimpleNamespace,
        monkeypatch: pytest.MonkeyPatch) -> None:
    store, sweep_id, path = opened
    monkeypatch.setenv("ADVISOR_STORE_RETRY_S", "0.2")
    records = [make.record(i) for i in range(2)]
    lock = Lock(path)
    try:
        for record in records:
            with pytest.raises(StoreError, match="is kept in"):
                store_trial(store, record, sweep_id)
    finally:
        lock.close()
    assert len(list(spill_dir(store.url).glob(f"db-*-sweep-{sweep_id}-*.json"))) == 2
    other = store.create_sweep(make.workload(), make.fingerprint(), {}, None)
    assert store_spilled(store, other) == 0  # another sweep's files are left alone
    assert store_spilled(store, sweep_id) == 2
    assert {r["trial_uuid"] for r in store.trials(sweep_id=sweep_id)} == {
        r["trial_uuid"] for r in records}
    assert not spill_dir(store.url).exists()


def test_a_lock_released_while_retrying_loses_nothing_and_spills_nothing(
        opened: tuple[ResultStore, int, Path], make: SimpleNamespace,
        monkeypatch: pytest.MonkeyPatch) -> None:
    store, sweep_id, path = opened
    monkeypatch.setenv("ADVISOR_STORE_RETRY_S", "60")
    record = make.record(0)
    lock = Lock(path)
    pauses: list[float] = []

    def release_instead_of_waiting(seconds: float) -> None:
        pauses.append(seconds)
        lock.release()

    try:
        store_trial(store, record, sweep_id, wait=release_instead_of_waiting)
    finally:
        lock.close()
    assert pauses == [FIRST_RETRY_S]
    assert [r["trial_uuid"] for r in store.trials(sweep_id=sweep_id)] == [record["trial_uuid"]]
    assert not spill_dir(store.url).exists()


def test_an_invalid_record_is_not_retried_nor_spilled(
        opened: tuple[ResultStore, int, Path], make: SimpleNamespace) -> None:
    store, sweep_id, _ = opened
    bad = make.record(0, failure_reason="warp")
    with pytest.raises(StoreError, match="failure_reason"):
        store_trial(store, bad, sweep_id, wait=lambda s: pytest.fail("retried"))
    assert not spill_dir(store.url).exists()


def test_spill_files_lie_beside_a_sqlite_file_and_in_the_working_directory_otherwise(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert spill_dir("sqlite:///results/a.db") == tmp_path / "results" / "a.db.spill"
    assert spill_dir("postgresql+psycopg://u:p@host/db") == tmp_path / "advisor-spill"
