"""bench/time_to_answer.py's arithmetic on hand-made trial records: the first (compiled) result,
the pick each prefix of finished trials supports, its figure against the final pick's (paired
where the confirmation measured both, else the trials' medians), the first and settled times
within 3%, the targets' hit or miss; the generated long-tail log; bad arguments are one line,
exit 2, nothing written. (A real sweep: the slow test at the end, and the CPU run kept in
bench/results.)"""

from __future__ import annotations

import csv
import io
import itertools
import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from bench_support import load

from advisor.config import CompileConfig
from advisor.recommendation import recommend
from advisor.records import empty_record

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench" / "time_to_answer.py"
tta = load("time_to_answer")

T0 = datetime(2026, 12, 3, 10, 0, 0, tzinfo=UTC)
START_S = T0.timestamp()
_uuids = itertools.count()


def at(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat()


def trial(mode: str, dtype: str, median_ms: float | None, finished_s: float,
          status: str = "ok", passed: bool = True) -> dict[str, Any]:
    """A stored-looking record of one config that finished ``finished_s`` after the start."""
    config = CompileConfig(mode=mode, dtype=dtype)
    record: dict[str, Any] = dict(empty_record())
    record.update(trial_uuid=f"t-{next(_uuids)}", status=status, config=config.to_dict(),
                  config_key=config.key, median_ms=median_ms, passed=passed,
                  started_at=at(finished_s - 3), finished_at=at(finished_s),
                  cold_compile_s=None if mode == "eager" else 10.0)
    if status != "ok":
        record.update(median_ms=None, passed=None, failure_reason="compile_error")
    return record


def confirmation(*entries: tuple[str, str, float], created_s: float) -> dict[str, Any]:
    """A stored-looking confirmation: (mode, dtype, paired median) per config."""
    out = []
    for mode, dtype, median in entries:
        config = CompileConfig(mode=mode, dtype=dtype)
        out.append({"config": config.to_dict(), "config_key": config.key, "label": config.label,
                    "median_ms": median, "median_ci_ms": [median * 0.99, median * 1.01],
                    "speedup": 1.0, "speedup_ci": [0.99, 1.01]})
    return {"uuid": "c-1", "created_at": at(created_s), "rounds": 50, "method": "perf_counter",
            "entries": out}


# eager fp32 first, a compile that fails, fp32 default, then bf16 default (the fastest) and a
# bf16 eager that finishes last; listed out of order (the store's order is not the finish order)
SWEEP = [
    trial("default", "bf16", 2.0, 60.0),
    trial("eager", "fp32", 10.0, 5.0),
    trial("max-autotune", "fp32", None, 15.0, status="failed"),
    trial("default", "fp32", 5.0, 30.0),
    trial("eager", "bf16", 8.0, 70.0),
]


def key(mode: str, dtype: str) -> str:
    return CompileConfig(mode=mode, dtype=dtype).key


# --- first results ----------------------------------------------------------------------------


def test_first_result_is_the_first_ok_trial_to_finish() -> None:
    assert tta.first_result(SWEEP, START_S) == {"t_s": 5.0, "config": "fp32 + eager",
                                                 "status": "ok", "passed": True}


def test_first_compiled_result_skips_eager_and_failed_trials() -> None:
    first = tta.first_result(SWEEP, START_S, compiled=True)
    assert first == {"t_s": 30.0, "config": "fp32 + default", "status": "ok", "passed": True}
    failed = tta.first_result(SWEEP, START_S, compiled=True, any_status=True)
    assert (failed["t_s"], failed["status"]) == (15.0, "failed")
    assert tta.first_result([r for r in SWEEP if r["config"]["mode"] == "eager"], START_S,
                            compiled=True) is None


def test_trials_without_a_finish_are_left_out() -> None:
    unfinished = {**trial("default", "fp16", None, 1.0, status="failed"), "finished_at": None}
    assert tta.finished_in_order([unfinished, *SWEEP])[0]["finished_at"] == at(5.0)


# --- picks over time --------------------------------------------------------------------------


def test_each_prefix_picks_what_its_trials_support() -> None:
    picks = tta.prefix_picks("w", SWEEP, "fp", START_S)
    assert [p["t_s"] for p in picks] == [5.0, 15.0, 30.0, 60.0, 70.0]
    assert [p["pick"] for p in picks] == [key("eager", "fp32"), key("eager", "fp32"),
                                          key("default", "fp32"), key("default", "bf16"),
                                          key("default", "bf16")]
    assert picks[1]["step"] == "trial fp32 + max-autotune (failed)"


def test_ratio_is_paired_where_the_confirmation_measured_both_else_on_medians() -> None:
    conf = confirmation(("eager", "fp32", 9.0), ("default", "bf16", 2.2),
                        ("default", "fp32", 4.4), created_s=80.0)
    final = recommend("w", SWEEP, "fp", confirmation=conf)
    medians = recommend("w", SWEEP, "fp")
    assert tta.final_key(final) == key("default", "bf16")
    assert tta.ratio_to_final(key("default", "fp32"), final, medians) == (
        pytest.approx(2.0), "paired")
    assert tta.ratio_to_final(key("eager", "bf16"), final, medians) == (
        pytest.approx(4.0), "medians")  # not confirmed: 8.0 / 2.0 on the trials' medians
    assert tta.ratio_to_final(None, final, medians) == (None, "no pick")


def test_within_times_first_and_settled() -> None:
    picks = [{"t_s": 1.0, "ratio": 1.5, "basis": "medians", "pick_label": "a"},
             {"t_s": 2.0, "ratio": 1.02, "basis": "paired", "pick_label": "b"},
             {"t_s": 3.0, "ratio": 1.1, "basis": "medians", "pick_label": "c"},
             {"t_s": 4.0, "ratio": 1.0, "basis": "paired", "pick_label": "d"},
             {"t_s": 5.0, "ratio": 1.03, "basis": "paired", "pick_label": "b"}]
    assert tta.within_times(picks) == {"within_s": 2.0, "within_basis": "paired",
                                       "within_pick": "b", "settled_s": 4.0}
    assert tta.within_times(picks[:3])["settled_s"] is None
    assert tta.within_times([{"t_s": 1.0, "ratio": None, "basis": "no pick",
                              "pick_label": "none"}])["within_s"] is None


def test_evaluate_replays_the_sweep_and_adds_the_confirmation_step() -> None:
    # the trials pick bf16 + default from 60 s on; the confirmation (at 90 s) keeps it, and
    # every config it measured is judged on its paired figure
    conf = confirmation(("eager", "fp32", 9.0), ("default", "bf16", 2.0),
                        ("default", "fp32", 4.0), created_s=90.0)
    final = recommend("w", SWEEP, "fp", confirmation=conf)
    out = tta.evaluate("w", SWEEP, "fp", START_S, final, None, conf["created_at"])
    assert (out["trials"], out["ok"]) == (5, 4)
    assert out["first_compiled"]["t_s"] == 30.0
    assert [p["t_s"] for p in out["picks"]][-1] == 90.0
    assert out["picks"][-1]["step"] == "confirmation of the leaders (paired)"
    assert [p["basis"] for p in out["picks"]] == ["paired", "paired", "paired", "paired",
                                                  "paired", "paired"]
    assert [p["ratio"] for p in out["picks"]] == [4.5, 4.5, 2.0, 1.0, 1.0, 1.0]
    assert (out["within_s"], out["within_basis"], out["settled_s"]) == (60.0, "paired", 60.0)
    assert out["final"]["pick"] == "bf16 + default" and out["final"]["figure"] == "paired"


def test_evaluate_without_a_confirmation_compares_medians() -> None:
    final = recommend("w", SWEEP, "fp")
    out = tta.evaluate("w", SWEEP, "fp", START_S, final)
    assert [p["ratio"] for p in out["picks"]] == [5.0, 5.0, 2.5, 1.0, 1.0]
    assert {p["basis"] for p in out["picks"]} == {"medians"}
    assert out["within_s"] == 60.0 and out["final"]["figure"] == "medians"


def test_evaluate_without_a_final_recommendation_still_reports_first_results() -> None:
    out = tta.evaluate("w", SWEEP[:1], "fp", START_S, None)
    assert out["first_result"]["t_s"] == 60.0 and out["picks"] == []
    assert out["within_s"] is None and out["final"] is None


# --- targets ----------------------------------------------------------------------------------


def row(**fields: Any) -> dict[str, Any]:
    base = {"kind": "plain", "rc": 0, "stopped": None, "wall_s": 400.0, "within_s": 100.0,
            "first_compiled": {"t_s": 90.0}, "compiled_in_space": True}
    return {**base, **fields}


def test_targets_hit() -> None:
    assert tta.targets(row()) == {"first_compiled": "hit", "within_3pct": "hit"}
    assert tta.targets(row(kind="traffic", wall_s=600.0, within_s=150.0, rc=1)) == {
        "first_compiled": "hit", "within_3pct": "hit", "traffic_sweep": "hit"}


def test_targets_miss() -> None:
    assert tta.targets(row(first_compiled={"t_s": 90.5}))["first_compiled"] == "miss"
    assert tta.targets(row(first_compiled=None))["first_compiled"] == "miss"
    assert tta.targets(row(within_s=100.5))["within_3pct"] == "miss"
    assert tta.targets(row(within_s=None))["within_3pct"] == "miss"
    assert tta.targets(row(kind="traffic", wall_s=601.0))["traffic_sweep"] == "miss"


def test_a_stopped_or_crashed_sweep_misses_the_whole_sweep_targets() -> None:
    stopped = tta.targets(row(kind="traffic", stopped="deadline", rc=130, wall_s=300.0,
                              within_s=10.0))
    assert stopped == {"first_compiled": "hit", "within_3pct": "miss", "traffic_sweep": "miss"}
    assert tta.targets(row(rc=2))["within_3pct"] == "miss"


def test_an_eager_only_space_has_no_compiled_target() -> None:
    assert tta.targets(row(compiled_in_space=False, first_compiled=None))["first_compiled"] == (
        "n/a: no compiled config in the space")


# --- traffic ----------------------------------------------------------------------------------


def test_dim_ranges_span_the_declared_traffic() -> None:
    traffic = [({"batch": 10, "seq": 64}, 0.2), ({"batch": 100, "seq": 32}, 0.5),
               ({"batch": 50, "seq": 256}, 0.3)]
    assert tta.dim_ranges(traffic) == {"batch": (10, 100), "seq": (32, 256)}


def test_longtail_log_is_a_traffic_csv_over_the_declared_ranges() -> None:
    text = tta.longtail_log(REPO / "tests" / "workloads" / "tiny_seq.py", 50, seed=3)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 50 and set(rows[0]) == {"batch", "seq"}
    from advisor.workload import load_workload

    wl = load_workload(REPO / "tests" / "workloads" / "tiny_seq.py").workload
    ranges = tta.dim_ranges(wl.traffic)
    assert all(ranges[d][0] <= int(r[d]) <= ranges[d][1] for r in rows for d in ranges)
    assert len({(r["batch"], r["seq"]) for r in rows}) > 25, "a long tail: mostly new shapes"
    assert text == tta.longtail_log(REPO / "tests" / "workloads" / "tiny_seq.py", 50, seed=3)


def test_sweep_command_is_what_a_user_runs() -> None:
    cmd = tta.sweep_command(Path("w.py"), Path("/tmp/x.db"), ["--modes", "eager"],
                            Path("log.csv"), "static,dynamic")
    assert cmd[1:] == ["-m", "advisor", "sweep", "w.py", "--db", "sqlite:////tmp/x.db",
                       "--modes", "eager", "--traffic", "log.csv", "--shapes", "static,dynamic"]


# --- the command line -------------------------------------------------------------------------


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True,
                          timeout=600, cwd=REPO)


@pytest.mark.parametrize("args", [
    [],
    ["--workload", "no/such/file.py"],
    ["--workload", "workloads/pointwise.py", "--sweep-args", "--db sqlite:///x.db"],
    ["--workload", "workloads/pointwise.py", "--sweep-args=--shapes=static"],
    ["--workload", "workloads/pointwise.py", "--no-such-flag"],
    ["--workload", "workloads/pointwise.py", "--traffic-only"],
    ["--workload", "workloads/pointwise.py", "--deadline-s", "0"],
    ["--workload", "workloads/pointwise.py", "--sweep-args", "--modes 'eager"],
])
def test_bad_arguments_are_one_line_and_write_nothing(tmp_path: Path, args: list[str]) -> None:
    done = _run(*args, "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert done.stderr.startswith("time_to_answer: ")
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_real_sweep_is_timed_end_to_end(tmp_path: Path) -> None:
    # The bf16 copy does a sixth of the fp32 copy's work (computation, not sleep: load slows
    # both alike), so the answer is known whatever the host's load.
    done = _run("--workload", "tests/workloads/fp16_stalls.py", "--sweep-args",
                "--device cpu --modes eager --dtypes fp32,bf16 --no-warm", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    [report] = [json.loads(p.read_text()) for p in tmp_path.glob("time_to_answer_cpu_*.json")]
    assert len(list(tmp_path.glob("time_to_answer_cpu_*.md"))) == 1
    [r] = report["rows"]
    assert (r["rc"], r["stopped"], r["trials"], r["ok"]) == (0, None, 2, 2)
    assert 0 < r["first_result"]["t_s"] < r["wall_s"]
    assert r["targets"]["first_compiled"].startswith("n/a")
    assert r["final"]["pick"] == "bf16 + eager"
    assert r["within_s"] is not None and r["within_basis"] in {"paired", "medians"}
    assert report["host"]["hostname"] and report["host"]["load_at_end"]
