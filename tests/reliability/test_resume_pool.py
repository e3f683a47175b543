"""A resumed pooled sweep never measures a config twice. A trial whose worker still lives (a
worker started by hand, `advisor worker`, outlives the sweep's parent; its heartbeat is fresh)
is left to it: neither failed nor queued again, so no second row and no spurious failure. The
trials of a parent killed with -9 (its workers die with it) are queued again at once. Real
processes, real databases (SQLite and PostgreSQL); a gate (a FIFO) holds a trial in flight."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from faults_support import GATED, Background, Gate, wait_for
from reliability_support import sweep_support

from advisor.db import ResultStore
from advisor.search.fleet import queue_order
from advisor.search.request import SweepSettings
from advisor.search.space import build_space
from advisor.search.study import open_study

pytestmark = pytest.mark.slow
POOLED = ("--device", "cpu", "--jobs", "2")


def _rows(url: str, sweep_id: int) -> list[dict[str, Any]]:
    with ResultStore.from_url(url, read_only=True) as store:
        return store.trials(sweep_id=sweep_id)


def _queued_sweep(url: str) -> int:
    """A sweep of the gated workload (eager fp32 and bf16) as a dead pooled run leaves it:
    interrupted, both configs queued for workers."""
    from advisor import fingerprint
    from advisor.workload import load_workload

    loaded = load_workload(GATED)
    workload = {"name": "gated", "path": str(loaded.path), "source_sha256": loaded.source_sha256,
                "info": {}}
    settings = SweepSettings(device="cpu", measure_warm=False, confirm_leaders=False,
                             priors=False, timeout_s=300.0)
    space = build_space(("fp32", "bf16"), "cpu", {"mode": ["eager"], "dtype": ["fp32", "bf16"]})
    stored = {**settings.to_dict(), "space": [c.to_dict() for c in space.configs]}
    with ResultStore.from_url(url) as store:
        sweep_id = store.create_sweep(workload, fingerprint.collect("cpu"), stored, "held", 2)
        store.finish_sweep(sweep_id, "interrupted")
    study = open_study(url, "held", heartbeat=True)
    for config in queue_order(space):
        study.enqueue_trial({"mode": config.mode, "dtype": config.dtype},
                            user_attrs={"queued": True})
    return sweep_id


def test_a_trial_its_live_worker_holds_is_not_measured_again(
        db_url: str, tmp_path: Path) -> None:
    sweep_id = _queued_sweep(db_url)
    gate = Gate(tmp_path / "gate")
    worker = Background("worker", str(sweep_id), "--db", db_url, "--device", "cpu",
                        cwd=tmp_path, env=gate.env)  # by hand: it does not die with a sweep
    resumed = None
    try:
        wait_for(worker.trial_children, "the worker's trial (eager fp32, held at the gate)")
        resumed = Background("sweep", GATED, "--db", db_url, "--resume", *POOLED, cwd=tmp_path)
        wait_for(lambda: any(r["config_key"] == "eager/bf16" for r in _rows(db_url, sweep_id)),
                 "the resumed sweep's eager bf16")
        gate.open()  # the worker's eager fp32 goes on, and is stored by it
        code, _, err = resumed.finish()
        worker_code, _, worker_err = worker.finish()
    finally:
        gate.open()
        worker.kill()
        if resumed is not None:
            resumed.kill()
    assert code in (0, 1), err
    assert worker_code == 0 and "Traceback" not in worker_err, worker_err
    rows = _rows(db_url, sweep_id)
    assert Counter(r["config_key"] for r in rows) == {"eager/fp32": 1, "eager/bf16": 1}, rows
    assert {r["status"] for r in rows} == {"ok"}
    with ResultStore.from_url(db_url, read_only=True) as store:
        assert store.get_sweep(sweep_id)["status"] == "finished"


def test_resuming_a_pooled_sweep_killed_with_minus_9_measures_each_config_once(
        db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ResultStore.from_url(db_url).close()
    gate = Gate(tmp_path / "gate")
    sweep = Background("sweep", GATED, "--db", db_url, "--modes", "eager", "--dtypes",
                       "fp32,bf16", "--no-warm", "--no-confirm-leaders", *POOLED, cwd=tmp_path,
                       env=gate.env)
    try:
        wait_for(lambda: len(sweep.trial_children()) == 2, "both workers' trials at the gate")
        sweep.process.kill()  # kill -9 of the parent
        sweep.process.wait()
        # its workers and their trials die with it (advisor.lifetime), measuring nothing more
        wait_for(lambda: not sweep_support.marked_processes(sweep.marker),
                 "the killed sweep's workers and trials to be gone", timeout_s=30)
    finally:
        gate.open()
        sweep.kill()
    monkeypatch.setenv("ADVISOR_SWEEP_DEAD_AFTER_S", "1")  # for this reader only:
    with ResultStore.from_url(db_url, read_only=True) as store:
        wait_for(lambda: store.get_sweep(1)["status"] == "dead", "the sweep to read dead")
    # the resumed sweep's workers read it under their own settings: inheriting 1 s, a worker
    # that started over a second after the resume's beat (a loaded host) found it dead
    monkeypatch.delenv("ADVISOR_SWEEP_DEAD_AFTER_S")
    done = sweep_support.advisor("sweep", GATED, "--db", db_url, "--resume", *POOLED,
                                 cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    rows = _rows(db_url, 1)
    assert Counter(r["config_key"] for r in rows) == {"eager/fp32": 1, "eager/bf16": 1}, rows
    assert {r["status"] for r in rows} == {"ok"}  # no spurious crash
