"""Replays in real trial children with real compilation (CPU, a tiny workload).

The traffic logs here are three sequence lengths (5, 7, 30) at batch 2. A replay fits on the
log's earlier half and serves its later half in order. When both halves hold every length,
``buckets:fitted-2`` pads them to two buckets (7 and 30), prepared at start-up: the stream meets
no new shape and never recompiles. When the later half brings lengths the earlier never had,
``static`` with ``dynamic=false`` compiles each one when it first arrives, inside the request
that brought it, and the stream figure carries that cost; with the recompile limit lowered to 1
the later lengths run eagerly, and the replay must say so.

The bucketed replay of the mixed log (no new shape, no recompile, two buckets prepared at
start-up) is asserted on the sweep's bucketed trial in tests/search/test_sweep_shapes.py, the same
config on the same log; here `advisor trial --traffic` replays it with eager fp32.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.config import CompileConfig
from advisor.search.launcher import Launcher
from advisor.traffic import load_traffic

ROOT = Path(__file__).resolve().parents[2]
TINY_SEQ = ROOT / "tests" / "workloads" / "tiny_seq.py"
MIXED = (["2,5"] * 4 + ["2,7"] * 3 + ["2,30"]) * 15  # every length in both halves
NOVEL = ["2,5"] * 64 + (["2,5"] * 4 + ["2,7"] * 3 + ["2,30"]) * 8  # 7 and 30 only later
FAST = {"ADVISOR_REPLAY_REQUESTS": "60", "TORCHINDUCTOR_COMPILE_THREADS": "1"}

pytestmark = pytest.mark.slow  # every test starts a trial child; most compile


def _log(path: Path, rows: list[str]) -> Path:
    path.write_text("batch,seq\n" + "\n".join(rows) + "\n")
    return path


@pytest.fixture
def requests_csv(tmp_path: Path) -> Path:
    return _log(tmp_path / "requests.csv", MIXED)


@pytest.fixture
def novel_csv(tmp_path: Path) -> Path:
    return _log(tmp_path / "novel.csv", NOVEL)


@pytest.fixture
def fast_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in FAST.items():
        monkeypatch.setenv(name, value)  # the launcher passes its environment to the child


def _replay(config: CompileConfig, requests_csv: Path) -> dict:
    traffic = load_traffic(requests_csv, ["batch", "seq"])
    record = Launcher(timeout_s=300).run(
        TINY_SEQ, config, "cpu", traffic.to_spec(), measure_warm=False
    )
    assert record["status"] == "ok", record["error_tail"]
    return record


def test_a_traffic_log_replays_through_the_trial_cli(requests_csv: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "advisor",
            "trial",
            str(TINY_SEQ),
            "--traffic",
            str(requests_csv),
            "--mode",
            "eager",
            "--device",
            "cpu",
            "--no-warm",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **FAST},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    record = json.loads(result.stdout)
    replay = record["replay"]
    assert replay["strategy"] == "static" and replay["boundaries"] == {}
    assert replay["traffic_source"].endswith("requests.csv") and replay["varying_dims"] == ["seq"]
    assert replay["requests"] == 60 and replay["trace_shapes"] == 3
    assert replay["split"] == 60 and replay["holdout"] == 0.5  # fitted on the first 60
    assert replay["graphs"] == 0 and replay["recompiles"] == 0 and replay["eager_fallbacks"] == 0
    stream = replay["stream"]
    assert stream["requests"] == 60 and stream["startup_shapes"] == 3  # every length, up front
    assert stream["new_shape_events"] == 0 and stream["new_shape"] == []
    assert len(stream["per_request_ms"]) == 60
    assert replay["flags"] == [] and replay["padding_waste"] == 0
    assert record["median_ms"] == replay["p50_ms"] and record["p99_ms"] == replay["p99_ms"]
    assert replay["expected_ms"] > 0
    # per-shape latencies, weighted by the traffic they serve
    served = MIXED[60:120]
    shapes = {s["shape"]: s for s in record["shapes"]}
    assert set(shapes) == {"batch=2,seq=5", "batch=2,seq=7", "batch=2,seq=30"}
    for length in (5, 7, 30):
        figures = shapes[f"batch=2,seq={length}"]
        assert figures["requests"] == served.count(f"2,{length}")
        assert figures["weight"] == pytest.approx(served.count(f"2,{length}") / 60)
    assert record["correct"] and record["passed"]
    assert record["config"]["mode"] == "eager"


def test_new_shapes_in_the_stream_pay_their_recompile(novel_csv: Path, fast_env: None) -> None:
    record = _replay(CompileConfig(dynamic="false"), novel_csv)
    replay, stream = record["replay"], record["replay"]["stream"]
    assert replay["strategy"] == "static" and replay["stance"] is None
    assert stream["startup_shapes"] == 1  # the earlier half only ever sent length 5
    assert replay["recompiles"] == 2 and record["recompiles"] == 2  # lengths 7 and 30
    assert stream["new_shape_events"] == 2 and stream["new_shape"] == [4, 7]  # first 7, first 30
    assert replay["eager_fallbacks"] == 0 and record["passed"]
    recompile_ms = (replay["compile_s_total"] - replay["startup_compile_s"]) * 1000
    assert recompile_ms > 0
    # The recompiles are paid inside the requests that met the new lengths (the same timer):
    # the stream's figure carries them, whatever the host's load did to each call.
    new_costs = [stream["per_request_ms"][i] for i in stream["new_shape"]]
    assert sum(new_costs) == pytest.approx(recompile_ms, rel=1e-6)
    assert sum(stream["per_request_ms"]) >= recompile_ms
    assert stream["new_shape_mean_ms"] == pytest.approx(recompile_ms / 2, rel=1e-6)
    # both new lengths came early: nothing new later on, so nothing to flag for the long run
    assert stream["late_new_shape_share"] == 0 and replay["flags"] == []


def test_more_shapes_than_the_recompile_limit_is_an_eager_fallback(
    novel_csv: Path, fast_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ADVISOR_RECOMPILE_LIMIT", "1")
    record = _replay(CompileConfig(dynamic="false"), novel_csv)
    replay = record["replay"]
    assert replay["recompile_limit"] == 1 and replay["recompile_limit_hit"]
    assert replay["graphs"] == 1 and replay["recompiles"] == 0
    assert replay["eager_fallbacks"] == 2
    assert replay["eager_fallback_buckets"] == ["batch=2,seq=30", "batch=2,seq=7"]
    assert replay["eager_fallback_requests"] > 0
    eager = {s["shape"] for s in record["shapes"] if s["eager"]}
    assert eager == {"batch=2,seq=7", "batch=2,seq=30"}
    # correct results, but not a candidate: its speed is eager speed
    assert record["correct"] and not record["passed"]
    assert {"recompile_limit", "eager_fallback"} <= {f["flag"] for f in replay["flags"]}


def test_a_replay_proven_above_the_sweeps_bar_stops_with_its_bound(
    novel_csv: Path, fast_env: None
) -> None:
    """The sweep's bar (advisor.search.sweep.prune_bar) set below anything a process can cost:
    the start-up alone (a real compile) proves the config above it, so the stream stops before
    its first request, and the record keeps the bound it proved and no figure."""
    traffic = load_traffic(novel_csv, ["batch", "seq"])
    bar = {"above_ms": 1e-6, "calls_per_process": 10, "margin": 0.1}
    record = Launcher(timeout_s=300).run(
        TINY_SEQ, CompileConfig(dynamic="false"), "cpu", traffic.to_spec(), measure_warm=True,
        prune=bar,
    )
    assert record["status"] == "pruned", record["error_tail"]
    pruned = record["pruned"]
    assert (pruned["requests_served"], pruned["requests_total"]) == (0, 60)
    assert pruned["above_ms"] == 1e-6 and pruned["calls_per_process"] == 10
    # start-up over a 10-request process: the start-up's wall time holds its compile (the
    # compiling calls are timed inside the start-up's window: nested spans, which load cannot
    # reorder)
    assert pruned["lower_bound_ms"] > pruned["above_ms"]
    assert pruned["lower_bound_ms"] * 10 / 1000 >= record["cold_compile_s"] > 0
    assert pruned["reason"].startswith("after 0 of 60 requests")
    # never a figure it did not earn; no warm start, no accuracy, no replay figures
    assert record["median_ms"] is None and record["p99_ms"] is None
    assert record["passed"] is None and record["warm_compile_s"] is None
    assert record["failure_reason"] is None and "replay" not in record


def test_a_bar_set_while_the_replay_runs_reaches_it(novel_csv: Path, fast_env: None) -> None:
    """A pooled sweep's first wave starts before any trial has finished: no bar at the start.
    The launcher looks the bar up again while the child runs (`prune_refresh`) and the child
    rereads it before each request: the bar the sweep set meanwhile stops the stream. (The first
    lookup answers None; the next, `BAR_REFRESH_S` later, the bar: the child meets it after its
    compile, which takes longer than that on any host.)"""
    traffic = load_traffic(novel_csv, ["batch", "seq"])
    bar = {"above_ms": 1e-6, "calls_per_process": 10, "margin": 0.1}
    lookups: list[int] = []

    def refresh() -> dict[str, float] | None:
        lookups.append(1)
        return None if len(lookups) == 1 else bar

    record = Launcher(timeout_s=300).run(
        TINY_SEQ, CompileConfig(dynamic="false"), "cpu", traffic.to_spec(), measure_warm=False,
        prune=None, prune_refresh=refresh,
    )
    assert len(lookups) >= 2
    assert record["status"] == "pruned", record["error_tail"]
    assert record["pruned"]["above_ms"] == 1e-6 and record["median_ms"] is None


def test_a_replay_under_the_sweeps_bar_is_measured_in_full(
    requests_csv: Path, fast_env: None
) -> None:
    """A bar no process of the trace reaches: checked before every request, never crossed."""
    traffic = load_traffic(requests_csv, ["batch", "seq"])
    bar = {"above_ms": 1e9, "calls_per_process": 10, "margin": 0.1}
    record = Launcher(timeout_s=300).run(
        TINY_SEQ, CompileConfig(mode="eager"), "cpu", traffic.to_spec(), measure_warm=False,
        prune=bar,
    )
    assert record["status"] == "ok" and "pruned" not in record, record["error_tail"]
    assert record["replay"]["stream"]["requests"] == 60 and record["median_ms"] > 0


def test_on_a_long_tail_the_pick_moves_to_buckets(
    tmp_path: Path, fast_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nearly every request of a long tail brings a length not seen before: unbucketed, each
    one compiles inside the request; fitted buckets were prepared at start-up. The steady state
    cannot tell them apart (every shape already warm); the process-life cost can."""
    import random

    from advisor.recommendation import recommend

    rng = random.Random(7)
    # six requests, every one of another shape: fitted on three, the later three served (each
    # shape the unbucketed config meets is a compile, so the log is kept short)
    rows = [f"{rng.randint(2, 4)},{rng.randint(4, 60)}" for _ in range(6)]
    assert len(set(rows)) == 6
    log = _log(tmp_path / "long_tail.csv", rows)
    monkeypatch.setenv("ADVISOR_REPLAY_REQUESTS", "3")
    monkeypatch.setenv("ADVISOR_RECOMPILE_LIMIT", "64")  # every new length compiles, none eager
    # The question is how to meet the shapes, so the compiled strategies are compared (eager is
    # within noise of them on a model this small); start-up amortised over a long life.
    static, bucketed = (_replay(c, log) for c in (CompileConfig(dynamic="false"),
                                                  CompileConfig(shapes="buckets:fitted-2")))
    assert static["replay"]["stream"]["new_shape_share"] > 0.5  # the tail, as served
    assert static["replay"]["stream"]["late_new_shape_share"] > 0.3
    assert static["passed"] and bucketed["passed"]
    # what bounds a longer process's new shapes: none unbucketed; inside the grid, its buckets
    assert static["replay"]["stream"]["grid_left"] is None
    assert static["replay"]["stream"]["bounded_new_shape"] == []
    grid = bucketed["replay"]["stream"]
    assert set(grid["bounded_new_shape"]) <= set(grid["new_shape"])
    buckets = math.prod(len(b) for b in bucketed["replay"]["boundaries"].values())
    # start-up met one bucket per bucket the fitted part used, every one inside the grid
    assert 0 <= grid["grid_left"] <= buckets - grid["startup_shapes"]
    records = [static, bucketed]
    for i, r in enumerate(records):
        r["trial_uuid"], r["config_key"] = f"t{i}", CompileConfig.from_dict(r["config"]).key
    rec = recommend("tiny-seq", records, calls_per_process=10**7)
    assert rec.best is not None and rec.best.config.shapes == "buckets:fitted-2"
    assert rec.best.figure == "process" and "process serving" in rec.decided_by
    by_label = {r.label: r for r in rec.ranked}
    unbucketed = by_label[CompileConfig(dynamic="false").label]
    # an unbucketed new length costs a compile per request: orders of magnitude, not percent
    assert unbucketed.median_ms > 5 * rec.best.median_ms
    assert {f["flag"] for f in static["replay"]["flags"]} >= {"new_shapes_persist"}
