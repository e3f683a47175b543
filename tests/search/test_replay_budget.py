"""Replays sized to the time they have, in real trial children (CPU, the tiny sequence workload).

A budgeted sweep gives each trial its share of the budget and a time limit (advisor.search.sweep
.Sweeper.trial_time). Past its share the replay measures its steady state on a sample of the
distinct shapes (advisor.sizing); out of time it stops itself, and is stored as "stopped" with the
bound what it served proves (never a figure); a sweep none of whose trials got a result says so,
with the budget a next run needs, and its row reads "stopped". The pure sizing is in
tests/core/test_sizing.py, the parent's side of a stopped record in tests/search/test_stopped.py.
"""

from __future__ import annotations

import math
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from advisor.config import EAGER_FP32, CompileConfig
from advisor.db.store import ResultStore
from advisor.records import BucketFigures, undeclared_keys
from advisor.search.launcher import Launcher
from advisor.search.request import SweepSettings
from advisor.search.study import open_study
from advisor.search.sweep import record_outcome
from advisor.serving import process_life_ms
from advisor.sizing import MIN_DRAWS, MIN_STREAM
from advisor.traffic import load_traffic

ROOT = Path(__file__).resolve().parents[2]
TINY_SEQ = ROOT / "tests" / "workloads" / "tiny_seq.py"
FINGERPRINT = {"device_hash": "d" * 16, "env_hash": "e" * 16, "fingerprint_hash": "f" * 16,
               "device_kind": "cpu", "hostname": "test-host"}
WORKLOAD = {"name": "tiny-seq", "path": str(TINY_SEQ), "source_sha256": "s" * 64, "info": {}}

pytestmark = pytest.mark.slow  # every test starts trial children


def long_tail(path: Path, n: int = 200, seed: int = 0) -> Path:
    """``n`` requests over batch 2-12 x seq 4-40, nearly every one a new shape."""
    rng = random.Random(seed)
    rows = [f"{rng.randint(2, 12)},{rng.randint(4, 40)}" for _ in range(n)]
    path.write_text("batch,seq\n" + "\n".join(rows) + "\n")
    return path


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return long_tail(tmp_path / "longtail.csv")


@pytest.fixture
def few_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADVISOR_REPLAY_REQUESTS", "80")
    monkeypatch.setenv("TORCHINDUCTOR_COMPILE_THREADS", "1")


def test_a_replay_past_its_share_measures_a_sample_of_the_shapes(log: Path,
                                                                  few_requests: None) -> None:
    spec = load_traffic(log, ["batch", "seq"]).to_spec()
    # a share over before the stream ends, a limit far off: the least sample, measured in time
    record = Launcher(timeout_s=300).run(TINY_SEQ, EAGER_FP32, "cpu", spec, measure_warm=False,
                                         time_budget_s=0.5, time_limit_s=240)
    assert record["status"] == "ok", record["error_tail"]
    replay = record["replay"]
    sample = replay["steady_sample"]
    assert sample["sampled"] and sample["draws"] == MIN_DRAWS
    assert sample["shapes"] <= MIN_DRAWS < sample["of_shapes"] == replay["trace_shapes"]
    assert sample["passes"] == replay["passes"] >= 1 and sample["time_share_s"] == 0.5
    low, high = sample["mean_ci_ms"]
    assert low <= replay["mean_ms"] <= high
    # the buckets timed carry the sample's weights; the stream itself is a sample of the 80
    # holdout requests, in order, at the widest stride that spreads MIN_STREAM over them
    assert math.isclose(sum(s["weight"] for s in record["shapes"]), 1.0)
    stream = replay["stream"]
    assert replay["requests"] == 80 and stream["sample"]["of_requests"] == 80
    positions = stream["sample"]["positions"]
    assert MIN_STREAM <= stream["requests"] == len(positions) < 80 and positions[0] == 0
    assert positions == sorted(positions) and sum(stream["sample"]["weights"]) == 80
    assert process_life_ms(replay, 10_000) is not None
    # the reference checked the same shapes: accuracy and quality were judged
    assert record["correct"] is True and record["quality_value"] is not None
    assert undeclared_keys(record, parts={"shapes": BucketFigures}) == []  # typed, all of it
    # all the time it needs: every shape, the stream's requests in order
    whole = Launcher(timeout_s=300).run(TINY_SEQ, EAGER_FP32, "cpu", spec, measure_warm=False,
                                        time_budget_s=240, time_limit_s=240)
    assert whole["status"] == "ok", whole["error_tail"]
    every = whole["replay"]["steady_sample"]
    assert not every["sampled"] and every["shapes"] == every["of_shapes"]
    assert every["draws"] == 80 and every["mean_ci_ms"] is None
    assert whole["replay"]["stream"]["requests"] == 80 and "sample" not in whole["replay"]["stream"]


def test_a_replay_out_of_time_is_stopped_and_stored_with_its_bound(
        log: Path, few_requests: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # every new shape compiles (dynamic=false, no recompile limit): start-up and stream take
    # a minute and more, twice the trial's limit
    monkeypatch.setenv("ADVISOR_RECOMPILE_LIMIT", "1000")
    config = CompileConfig(dynamic="false")
    spec = load_traffic(log, ["batch", "seq"]).to_spec()
    seen: list[tuple[float, dict[str, Any]]] = []
    record = Launcher(timeout_s=300).run(
        TINY_SEQ, config, "cpu", spec, measure_warm=False, time_budget_s=25, time_limit_s=25,
        on_progress=lambda info: seen.append((time.monotonic(), info)))
    assert record["status"] == "stopped", record["error_tail"]
    stopped = record["stopped"]
    assert stopped["phase"] in ("start-up", "replaying")
    assert stopped["requests_served"] < stopped["requests_total"] == 80
    assert stopped["lower_bound_ms"] is not None and stopped["lower_bound_ms"] > 0
    assert stopped["share_s"] == 25 and stopped["calls_per_process"] == 10_000
    assert record["median_ms"] is None and record["phases_s"]  # its phases, kept
    assert undeclared_keys(record) == []
    # its progress came every few seconds, with counts where its phase has them
    assert seen and all(b - a <= 10 for (a, _), (b, _) in zip(seen, seen[1:], strict=False))
    assert any(info["unit"] in ("start-up shape", "request", "sampled request") and info["total"]
               for _, info in seen)
    # stored as stopped, with its bound
    with ResultStore.from_url(f"sqlite:///{tmp_path / 'advisor.sqlite'}") as store:
        stored = SweepSettings(device="cpu", traffic=spec).to_dict()  # as a sweep stores them
        sweep_id = int(store.create_sweep(WORKLOAD, FINGERPRINT, stored, "s", 1))
        record["workload"], record["fingerprint"] = WORKLOAD, FINGERPRINT  # as the sweep does
        study = open_study(store.url, "s", seed=0)
        record_outcome(store, study, study.ask(), record, config, sweep_id)
        (kept,) = store.trials(sweep_id=sweep_id)
        assert kept["status"] == "stopped" and kept["median_ms"] is None
        assert kept["stopped"]["lower_bound_ms"] == stopped["lower_bound_ms"]
        assert store.get_sweep(sweep_id)["n_stopped"] == 1


def test_a_sweep_with_no_result_reads_stopped_not_finished(log: Path, tmp_path: Path) -> None:
    db = tmp_path / "advisor.sqlite"
    env = {**os.environ, "ADVISOR_REPLAY_REQUESTS": "80", "TORCHINDUCTOR_COMPILE_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "advisor", "sweep", str(TINY_SEQ), "--traffic", str(log),
         "--modes", "eager", "--dtypes", "fp32", "--budget", "8s", "--device", "cpu",
         "--db", f"sqlite:///{db}"],
        capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)
    # the baseline had its fifth of 8 s: stopped (by itself, or killed at its limit)
    assert done.returncode == 1, done.stderr
    assert "stopped: the budget ended before the first result; a next run needs" in done.stderr
    assert "--budget" in done.stderr.split("a next run needs")[1]
    assert "ran and passed" not in done.stderr
    with ResultStore.from_url(f"sqlite:///{db}") as store:
        (sweep,) = store.sweeps()
        assert sweep["status"] == "stopped"
        (trial,) = store.trials(sweep_id=sweep["id"])
        assert trial["status"] == "stopped" and trial["median_ms"] is None
        assert trial["stopped"]["share_s"] == pytest.approx(8 * 0.2)
