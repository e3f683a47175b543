"""Concurrent first use of a new database: advisor's tables and Optuna's are created once,
under a lock, so eight processes that open a store and a study at once lose nothing."""

from __future__ import annotations

import multiprocessing
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy import create_engine, inspect

from advisor.db import ResultStore, upgrade_database
from advisor.search.study import open_study

PROCESSES = 8


def _first_use(url: str, n: int, sweep: dict[str, Any], record: dict[str, Any],
               start: Any) -> None:
    """One process of a sweep's first moments: the store, a sweep row, the Optuna study, one
    trial asked, stored and told."""
    start.wait()
    with ResultStore.from_url(url) as store:
        sweep_id = store.create_sweep(sweep["workload"], sweep["fingerprint"], {}, f"s{n}", 1)
        study = open_study(url, f"first-use-{n}")
        trial = study.ask()
        store.add_trial(record, sweep_id)
        study.tell(trial, 1.0 + n)
        store.finish_sweep(sweep_id, "finished")


@pytest.mark.slow
def test_eight_processes_opening_a_new_database_at_once(
    db_url: str, make: SimpleNamespace
) -> None:
    context = multiprocessing.get_context("fork")  # the race is in opening, not importing
    start = context.Barrier(PROCESSES)
    sweep = {"workload": make.workload(), "fingerprint": make.fingerprint()}
    procs = [context.Process(target=_first_use, args=(db_url, n, sweep, make.record(n), start))
             for n in range(PROCESSES)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    assert [p.exitcode for p in procs] == [0] * PROCESSES

    import optuna

    studies = optuna.get_all_study_summaries(optuna.storages.RDBStorage(db_url))
    assert sorted(s.study_name for s in studies) == sorted(
        f"first-use-{n}" for n in range(PROCESSES))
    assert all(s.n_trials == 1 and s.best_trial is not None for s in studies)
    with ResultStore.from_url(db_url, read_only=True) as store:
        assert len(store.trials()) == PROCESSES
        assert [s["status"] for s in store.sweeps()] == ["finished"] * PROCESSES


def test_db_upgrade_creates_optunas_tables_too(db_url: str) -> None:
    upgrade_database(db_url)
    engine = create_engine(db_url)
    names = set(inspect(engine).get_table_names())
    engine.dispose()
    assert {"studies", "trials", "version_info", "alembic_version"} <= names
    assert "advisor_sweeps" in names
    upgrade_database(db_url)  # a second time: nothing to do, nothing raised
