"""Several processes writing into one database at once lose nothing and never collide."""

from __future__ import annotations

import multiprocessing
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
