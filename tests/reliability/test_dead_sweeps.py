"""Dead sweeps: the running sweep's parent refreshes a heartbeat; a sweep stored as running
whose heartbeat is stale is reported dead by every reader (computed on read: the row is not
written), and can be resumed."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
from reliability_support import advisor, one_line_error, sweep_support
from sqlalchemy import create_engine, select, update

from advisor.db import ResultStore
from advisor.db.models import Sweep, table
from advisor.search.heartbeat import sweep_beat_interval_s, sweep_heartbeat
from advisor.search.resume import resumable

SWEEPS = table(Sweep)


@pytest.fixture(autouse=True)
def _dead_after_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADVISOR_SWEEP_DEAD_AFTER_S", "120")


def _set_heartbeat(url: str, sweep_id: int, when: datetime) -> None:
    engine = create_engine(url)
    with engine.begin() as c:
        c.execute(update(SWEEPS).where(SWEEPS.c.id == sweep_id).values(heartbeat_at=when))
    engine.dispose()


def _stored(url: str, sweep_id: int) -> tuple[str, datetime]:
    engine = create_engine(url)
    with engine.connect() as c:
        row = c.execute(select(SWEEPS.c.status, SWEEPS.c.heartbeat_at)
                        .where(SWEEPS.c.id == sweep_id)).one()
    engine.dispose()
    return row.status, row.heartbeat_at


def test_a_running_sweep_with_a_stale_heartbeat_is_dead(
    store: ResultStore, store_url: str, make: SimpleNamespace
) -> None:
    sweep_id = store.create_sweep(make.workload(), make.fingerprint(), {}, "s", 2)
    assert store.get_sweep(sweep_id)["status"] == "running"
    _set_heartbeat(store_url, sweep_id, datetime.now(UTC) - timedelta(hours=1))
    before = _stored(store_url, sweep_id)

    sweep = store.get_sweep(sweep_id)
    assert (sweep["status"], sweep["stored_status"]) == ("dead", "running")
    assert [s["status"] for s in store.sweeps()] == ["dead"]
    code, out, err = advisor("list", "--db", store_url)
    assert code == 0, err
    assert " dead " in out
    assert _stored(store_url, sweep_id) == before  # readers do not write
    assert resumable(store.sweeps())["id"] == sweep_id  # type: ignore[index]

    store.beat(sweep_id)  # the process is alive after all
    assert store.get_sweep(sweep_id)["status"] == "running"
    store.finish_sweep(sweep_id, "finished")
    _set_heartbeat(store_url, sweep_id, datetime.now(UTC) - timedelta(hours=1))
    assert store.get_sweep(sweep_id)["status"] == "finished"  # only running sweeps die


def test_the_heartbeat_thread_beats_until_stopped(
    store: ResultStore, store_url: str, make: SimpleNamespace
) -> None:
    sweep_id = store.create_sweep(make.workload(), make.fingerprint(), {}, "s", 2)
    old = datetime.now(UTC) - timedelta(hours=1)
    _set_heartbeat(store_url, sweep_id, old)
    assert store.get_sweep(sweep_id)["status"] == "dead"

    class Watched:  # the real store, telling when a beat went through
        def __init__(self) -> None:
            self.beaten = threading.Event()

        def beat(self, sweep_id: int) -> None:
            store.beat(sweep_id)
            self.beaten.set()

    watched = Watched()
    with sweep_heartbeat(watched, sweep_id, interval_s=0.01):
        assert watched.beaten.wait(timeout=300)
    assert store.get_sweep(sweep_id)["status"] == "running"


@pytest.mark.parametrize(("beat", "dead_after", "interval"), [
    ("20", "120", 20.0),  # the defaults
    ("20", "10", 2.5),  # a dead-after shorter than two beats: a quarter of it
    ("1", "1", 0.25),
])
def test_a_sweep_beats_at_least_four_times_per_dead_after(
        monkeypatch: pytest.MonkeyPatch, beat: str, dead_after: str, interval: float) -> None:
    """A live sweep read dead by its own workers (they share its settings) refuses them: so its
    beats come at least four to a dead-after period, whatever the heartbeat setting says."""
    monkeypatch.setenv("ADVISOR_SWEEP_HEARTBEAT_S", beat)
    monkeypatch.setenv("ADVISOR_SWEEP_DEAD_AFTER_S", dead_after)
    assert sweep_beat_interval_s() == interval
    assert sweep_beat_interval_s(0.01) == 0.01


def test_an_alive_sweep_is_not_resumed(tmp_path: Path, make: SimpleNamespace) -> None:
    url = f"sqlite:///{tmp_path / 'alive.db'}"
    with ResultStore.from_url(url) as store:
        workload = make.workload("four-dtypes")
        sweep_id = store.create_sweep(workload, make.fingerprint(), {"space": []}, "s", 2)
    code, _, err = advisor("sweep", sweep_support.FOUR_DTYPES, "--db", url, "--device", "cpu",
                           "--resume")
    message = one_line_error(code, err)
    assert f"sweep {sweep_id} of four-dtypes is running" in message
    assert _stored(url, sweep_id)[0] == "running"
