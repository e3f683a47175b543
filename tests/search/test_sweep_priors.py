"""Budgeted sweeps for real: several jobs and the priors' order (the fleet's warm start:
test_sweep_fleet_start.py).

`launch_bound.py` is launch-bound by construction (40 tiny pointwise ops; eager pays each op's
dispatch, Inductor fuses them into one loop), so a compiled config is its best by far: a budgeted
sweep must measure one right after the eager fp32 baseline, and say why. A database holding
another fingerprint's results for the same workload file makes a sweep try that fingerprint's
best config first, and say so. Assertions are about order and mechanism, not speed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.sweeps import advisor, json_out, open_store, sqlite_url

from advisor.config import EAGER_FP32, CompileConfig
from advisor.search.feed import PLAN_ATTR
from advisor.search.plan import BASELINE_REASON, EAGER_REASON

pytestmark = pytest.mark.slow

LAUNCH_BOUND = Path(__file__).resolve().parents[1] / "workloads" / "launch_bound.py"
DEFAULT_FP32 = CompileConfig(mode="default", dtype="fp32")


def _trials_in_order(url: str) -> list[dict]:
    with open_store(url) as store:
        return sorted(store.trials(), key=lambda r: r["started_at"])


def test_budgeted_sweep_measures_the_compiled_best_right_after_the_baseline(
        tmp_path: Path) -> None:
    # Three trials: the baseline, every other eager dtype (cheap first: seconds, no compile),
    # then the priors' first pick.
    url = sqlite_url(tmp_path / "a.db")
    done = advisor("sweep", LAUNCH_BOUND, "--db", url, "--trials", "3", "--no-warm",
                   "--no-confirm-leaders", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    records = _trials_in_order(url)
    assert [CompileConfig.from_dict(r["config"]) for r in records] == [
        EAGER_FP32, CompileConfig(mode="eager", dtype="bf16"), DEFAULT_FP32]
    assert records[0]["tried_because"] == BASELINE_REASON
    assert records[1]["tried_because"] == EAGER_REASON
    # The launch share is measured (a busy neighbour lowers it), so only its form is asserted.
    assert re.match(r"prior rank 1: ~\d+% of eager time launching", records[2]["tried_because"])
    assert "tried because prior rank 1" in done.stderr
    # The compiled config leads by far: eager is never the pick, nor undecided with it
    rec = json_out(done)["recommendation"]
    assert rec["ranked"][0]["config"]["mode"] != "eager"
    assert rec["best"] is None or rec["best"]["config"]["mode"] != "eager"
    if rec["best"] is None:
        assert rec["decision"] == "undecided: noise"
        assert all(label != "fp32 + eager" for label in rec["undecided"])


def test_budgeted_sweep_runs_several_jobs_in_the_priors_order(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "a.db")
    done = advisor("sweep", LAUNCH_BOUND, "--db", url, "--trials", "4", "--jobs", "2",
                   "--no-warm", "--no-confirm-leaders", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "configs queued for 2 workers (2 per device)" in done.stderr
    assert json_out(done)["status"] == "finished"
    records = {r["config_key"]: r for r in _trials_in_order(url)}
    assert len(records) == 4  # the cap
    bf16_eager = CompileConfig(mode="eager", dtype="bf16").key
    assert {EAGER_FP32.key, bf16_eager, DEFAULT_FP32.key} <= set(records)
    # The baseline and the other eager dtype were queued before the workers started: two
    # workers took them at once, so their trials overlap.
    a, b = records[EAGER_FP32.key], records[bf16_eager]
    assert a["started_at"] < b["finished_at"] and b["started_at"] < a["finished_at"]
    # Each measured its turn alone on the device, waiting for the other when needed.
    assert all(len(r["measured_alone"]) == 1 for r in records.values())
    for r in records.values():
        assert r["tried_because"]
    from advisor.search.study import open_study

    study = open_study(url, json_out(done)["study_name"])
    assert study.user_attrs[PLAN_ATTR] == "closed"  # the cap was queued by the plan itself
