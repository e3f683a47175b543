"""A pooled sweep's progress lines (advisor.search.pool.pool_progress) on a real SQLite store:
each trial the workers stored is named once, with its own outcome and its own reason for being
tried, whatever order the store returns the trials in; failures count failed trials only."""

from __future__ import annotations

from pathlib import Path

from support import records

from advisor.config import EAGER_FP32, CompileConfig
from advisor.db.store import ResultStore
from advisor.search.pool import pool_progress


def test_each_stored_trial_is_named_once_with_its_outcome_and_reason(tmp_path: Path) -> None:
    helpers = records
    url = f"sqlite:///{tmp_path / 'progress.db'}"
    workload, fingerprint = helpers.make_workload(), helpers.make_fingerprint()
    default = CompileConfig(mode="default", dtype="bf16")
    slow = CompileConfig(mode="max-autotune", dtype="bf16")
    said: list[str] = []
    with ResultStore.from_url(url) as store:
        sweep_id = store.create_sweep(workload, fingerprint, {"device": "cuda"}, "p", 3)
        tick = pool_progress(store, sweep_id, 3, said.append)
        tick()
        assert said == []  # nothing stored: nothing said
        # the default config finished first, though the baseline was stored first
        store.add_trial(helpers.make_record(
            1, config=EAGER_FP32, workload=workload, fingerprint=fingerprint, median_ms=4.0,
            finished_at="2026-12-03T10:00:30+00:00", tried_because="baseline"), sweep_id)
        store.add_trial(helpers.make_record(
            2, config=default, workload=workload, fingerprint=fingerprint, median_ms=1.0,
            finished_at="2026-12-03T10:00:20+00:00", tried_because="prior rank 1"), sweep_id)
        tick()
        assert said[0] == "  bf16 + default: 1.00 ms; tried because prior rank 1"
        assert said[1] == "  fp32 + eager: 4.00 ms; tried because baseline"
        assert said[2] == f"sweep {sweep_id}: 2/3 trials, 0 failed, best bf16 + default 1.00 ms"
        tick()
        assert len(said) == 3  # each trial named once
        store.add_trial(helpers.make_record(
            3, config=slow, workload=workload, fingerprint=fingerprint, status="failed",
            finished_at="2026-12-03T10:01:00+00:00", tried_because="prior rank 2"), sweep_id)
        tick()
    assert said[3] == "  bf16 + max-autotune: failed: compile_error; tried because prior rank 2"
    assert said[4].startswith(f"sweep {sweep_id}: 3/3 trials, 1 failed")
