"""bench/search_bench.py's arithmetic on hand-built runs: how many trials ran at once, the
best-so-far curve, the times to within 3% of the reference (paired and unpaired) against the
grid's wall and the goal, the configs the paired child re-measures; bad arguments are one line,
exit 2, nothing written. (The sweeps themselves: the CPU proof run in docs/performance.md.)"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench" / "search_bench.py"
_spec = importlib.util.spec_from_file_location("search_bench", BENCH)
assert _spec is not None and _spec.loader is not None
search_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(search_bench)


def point(start: float | None, t: float, config: str, ms: float | None) -> dict[str, Any]:
    return {"start_s": start, "t_s": t, "config": config, "median_ms": ms}


def test_max_at_once_counts_overlapping_trials() -> None:
    points = [point(0, 10, "a", 1.0), point(1, 5, "b", 1.0), point(2, 4, "c", 1.0),
              point(5, 8, "d", 1.0), point(None, 9, "e", 1.0)]
    # a, b, c overlap in [2, 4); d starts when b ends: a trial ending frees its slot first
    assert search_bench.max_at_once(points) == 3
    assert search_bench.max_at_once([]) == 0


def test_best_so_far_keeps_the_fastest_passed_config() -> None:
    points = [point(0, 1, "eager", 5.0), point(0, 2, "bad", None), point(0, 3, "ro", 1.0),
              point(0, 4, "default", 2.0)]
    search_bench.best_so_far(points)
    assert [p["best_config"] for p in points] == ["eager", "eager", "ro", "ro"]
    assert [p["best_ms"] for p in points] == [5.0, 5.0, 1.0, 1.0]


def test_summary_paired_and_unpaired_against_the_goal() -> None:
    ref = {"config": "ro", "median_ms": 1.0}
    ratios = {"ro": {"ratio": 1.0}, "fp16ro": {"ratio": 1.025}, "default": {"ratio": 1.8}}
    run = {"points": [point(0, 10, "default", 1.8), point(0, 20, "fp16ro", 0.95),
                      point(0, 30, "ro", 1.02)]}
    search_bench.summarize(run, ref, ratios, grid_wall_s=100.0)
    # fp16ro ran faster than the reference's grid median, unpaired: within at 20 s;
    # paired, it is 2.5% slower: within 3% at 20 s too
    assert run["time_within_paired_s"] == 20 and run["time_within_unpaired_s"] == 20
    assert run["share_of_grid_paired"] == 0.2 and run["goal"] == "hit"
    assert run["final_config"] == "fp16ro" and run["final_paired_ratio"] == 1.025

    strict = {**ratios, "fp16ro": {"ratio": 1.06}}
    run = {"points": [point(0, 10, "default", 1.8), point(0, 20, "fp16ro", 0.95),
                      point(0, 30, "ro", 0.9)]}
    search_bench.summarize(run, ref, strict, grid_wall_s=100.0)
    # paired it is 6% slower: within only once the reference itself is the best so far,
    # after 25% of the grid's wall: a miss, though the unpaired figure hit at 20 s
    assert run["time_within_paired_s"] == 30 and run["time_within_unpaired_s"] == 20
    assert run["goal"] == "miss" and run["share_of_grid_paired"] == 0.3

    run = {"points": [point(0, 10, "default", 1.8)]}
    search_bench.summarize(run, ref, None, grid_wall_s=100.0)
    assert run["time_within_paired_s"] is None and run["goal"].startswith("undecided")


def test_paired_set_is_every_best_so_far_config_after_the_reference() -> None:
    runs = [{"points": [point(0, 1, "eager", 5.0), point(0, 2, "ro", 1.0)]},
            {"points": [point(0, 1, "default", 2.0), point(0, 2, "eager", 5.0)]},
            {"skipped": "not run"}]
    assert search_bench.paired_set(runs, "ro") == ["ro", "eager", "default"]


def test_bad_arguments_are_one_line_and_write_nothing(tmp_path: Path) -> None:
    for args, says in ((["--strategies", "advisor,grid"], "unknown strategy 'grid'"),
                       (["--gpus", "2", "--device", "cpu"], "--gpus N needs --device cuda"),
                       (["--workloads", "nothing-here"], "no workload 'nothing-here'")):
        done = subprocess.run([sys.executable, str(BENCH), *args, "--out", str(tmp_path)],
                              capture_output=True, text=True, timeout=60, cwd=REPO)
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("search_bench: ") and says in lines[0]
    assert list(tmp_path.iterdir()) == []


def test_slots_give_each_workload_its_gpu_and_a_share_of_the_cores(monkeypatch: Any) -> None:
    cores = sorted(os.sched_getaffinity(0))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    two = search_bench.slots(2)
    assert [gpu for gpu, _ in two] == ["3", "5"]
    assert two[0][1] + two[1][1] == cores and len(two[0][1]) == len(cores) // 2
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert search_bench.slots(1) == [(None, cores)]  # one workload at a time: the whole host
    assert [gpu for gpu, _ in search_bench.slots(2)] == ["0", "1"]


def test_the_report_names_its_stack_in_the_file_itself() -> None:
    report: dict[str, Any] = {
        "device": "cuda", "date": "20261205T000000Z", "host": "vm", "cores": 16, "gpus": 1,
        "load_at_start": [0.1, 0.1, 0.1], "load_at_end": [1.0, 1.0, 1.0], "jobs": 8,
        "modes": None, "dtypes": None, "shape": None, "budget": "80 s", "grace_s": 5.0,
        "goal": "within 3%", "note": "", "workloads": [], "commit": "5784b81",
        "stack": {"gpus": [{"name": "NVIDIA H100 80GB HBM3", "driver": "580.159.04"}],
                  "torch": "2.11.0", "triton": "3.6.0", "python": "3.12.3"}}
    text = search_bench.markdown(report)
    assert ("GPUs: NVIDIA H100 80GB HBM3 (driver 580.159.04); torch 2.11.0, triton 3.6.0, "
            "Python 3.12.3; commit 5784b81") in text
    assert "load average at start [0.1, 0.1, 0.1]" in text
    del report["stack"]  # a report written before the stack was kept says so
    assert "stack: not recorded" in search_bench.markdown(report)
