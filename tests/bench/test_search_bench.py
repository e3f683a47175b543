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


def mpoint(start: float | None, t: float, config: str, ms: float | None) -> dict[str, Any]:
    return {**point(start, t, config, ms), "label": config.split("/")[1] + " + "
            + config.split("/")[0], "status": "ok"}


def test_autotuning_trials_against_their_twins_and_each_other() -> None:
    suffix = "/bf16/graphbreaks-ok/dynamic-auto"
    points = [mpoint(0, 5, "eager/fp32", 5.0), mpoint(1, 20, "reduce-overhead" + suffix, 1.0),
              mpoint(21, 60, "max-autotune" + suffix, 0.9),
              mpoint(22, 50, "max-autotune-no-cudagraphs" + suffix, 1.5),
              mpoint(30, 40, "default" + suffix, 1.6),
              mpoint(55, 70, "max-autotune/fp16/graphbreaks-ok/dynamic-auto", 0.95)]
    at = search_bench.autotuning(points)
    # max-autotune waited for reduce-overhead (finished 20 s, started 21 s); the
    # no-cudagraphs one started at 22 s, before default finished (40 s); fp16's twin never
    # finished in this run; at most two autotuning trials ran at once (21-60 s with 22-50 s)
    assert at["max_at_once"] == 2 and len(at["trials"]) == 3
    assert at["started_before_twin_finished"] == [
        "bf16 + max-autotune-no-cudagraphs", "fp16 + max-autotune"]
    assert at["trials"][0]["twin_t_s"] == 20 and at["trials"][2]["twin_t_s"] is None
    assert search_bench.autotuning([mpoint(0, 1, "eager/fp32", 5.0)]) == {
        "trials": [], "max_at_once": 0, "started_before_twin_finished": []}


def stored_report(gpu: str = "NVIDIA H100 80GB HBM3") -> dict[str, Any]:
    ref = {"config": "ro", "config_dict": {"mode": "reduce-overhead", "dtype": "bf16"},
           "label": "bf16 + reduce-overhead", "median_ms": 1.0, "trial_uuid": "u1"}
    grid = {"strategy": "grid", "wall_s": 401.1, "points": [point(0, 78.4, "ro", 1.0)],
            "max_at_once": 8, "caches": "/tmp/gone_caches", "pick": ref, "trials": 1,
            "time_within_paired_s": 78.4, "share_of_grid_paired": 0.209, "goal": "hit",
            "time_within_unpaired_s": 78.4, "share_of_grid_unpaired": 0.209,
            "final_config": "ro", "final_paired_ratio": 1.0}
    return {"device": "cuda", "date": "20261206T031022Z", "modes": None, "dtypes": None,
            "shape": None, "commit": "4126086",
            "stack": {"gpus": [{"name": gpu, "driver": "580.159.04"}], "torch": "2.11.0",
                      "triton": "3.6.0", "python": "3.12.3"},
            "workloads": [{"workload": "reranker", "grid_wall_s": 375.53, "reference": ref,
                           "runs": [grid, {"strategy": "random", "skipped": "not run"}]}]}


def test_a_stored_grid_is_marked_and_a_grid_of_another_gpu_gives_no_unpaired_figures() -> None:
    report = stored_report()
    source = {"path": "old.json", "date": report["date"], "stack": "GPUs: ...",
              "grid": "NOT re-run in this call: taken from this file"}
    grid = search_bench.stored_grid(report["workloads"][0], source)
    assert grid["stored_from"] == source and "caches" not in grid
    assert grid["pick"]["config"] == "ro" and grid["points"][0]["t_s"] == 78.4
    assert "caches" in report["workloads"][0]["runs"][0]  # the loaded report is left as it was

    h100, h200 = [{"name": "NVIDIA H100 80GB HBM3"}], [{"name": "NVIDIA H200"}]
    assert search_bench.other_gpu_than(h100, h100) is None
    assert search_bench.other_gpu_than(h100, h200) == "NVIDIA H100 80GB HBM3"
    assert search_bench.other_gpu_than([], []) is None  # the CPU: no GPU on either side

    ratios = {"ro": {"ratio": 1.0}, "fp16ro": {"ratio": 1.02}}
    run = {"strategy": "random", "wall_s": 99.0, "max_at_once": 8,
           "points": [point(0, 30, "fp16ro", 0.95)]}
    search_bench.summarize(run, grid["pick"], ratios, 375.53, other_gpu="NVIDIA H100 80GB HBM3")
    # the paired figures are this call's; the unpaired ones would compare two GPUs' medians
    assert run["time_within_paired_s"] == 30 and run["goal"] == "hit"
    assert run["time_within_unpaired_s"] is None and run["final_unpaired_ratio"] is None
    assert "another GPU (NVIDIA H100 80GB HBM3)" in run["unpaired_left_out"]

    wl = {"workload": "reranker", "grid_wall_s": 375.53, "budget_s": 93.9, "goal_s": 93.9,
          "reference": grid["pick"], "reference_from": source,
          "reference_other_gpu": "NVIDIA H100 80GB HBM3", "runs": [grid, run],
          "paired": {"status": "ok", "rounds": 100, "method": "cuda_events",
                     "configs": {"ro": "bf16 + reduce-overhead", "fp16ro": "fp16 + ro"},
                     "ratios": {k: {"label": k, "ratio": v["ratio"], "ci": [1.0, 1.0]}
                                for k, v in ratios.items()}}}
    text = search_bench.markdown({
        "device": "cuda", "date": "20261206T050000Z", "host": "vm", "cores": 16, "gpus": 1,
        "load_at_start": [0.1, 0.1, 0.1], "jobs": 8, "modes": None, "dtypes": None,
        "shape": None, "budget": "0.25 x grid wall", "grace_s": 5.0, "goal": "within 3%",
        "note": "", "reference_from": source, "workloads": [wl]})
    assert "Reference: the grid runs of old.json (20261206T031022Z; GPUs: ...); the grid was " \
           "NOT re-run in this call." in text
    assert "| grid (stored, not re-run) | 401.1 | 1 |" in text
    assert "| random | 99.0 | 1 | 8 | 30.0 | 0.08 | hit | other GPU | - | fp16 + ro, 1.02 |" \
        in text


def test_a_bad_reference_file_is_one_line_exit_2_and_nothing_written(tmp_path: Path) -> None:
    import json

    out = tmp_path / "out"
    good, other, text = tmp_path / "good.json", tmp_path / "other.json", tmp_path / "t.json"
    good.write_text(json.dumps(stored_report()))
    other.write_text(json.dumps({**stored_report(), "dtypes": "bf16"}))
    text.write_text("not json")
    for args, says in (
            (["--reference-from", str(tmp_path / "none.json")], "not a search bench JSON"),
            (["--reference-from", str(text)], "not a search bench JSON"),
            (["--reference-from", str(good), "--workloads", "pointwise"],
             "no grid run with a reference for workload 'pointwise' in it (it has: reranker)"),
            (["--reference-from", str(other)], "its --dtypes was 'bf16'"),
            (["--reference-from", str(good), "--device", "cpu"], "its device was 'cuda'")):
        done = subprocess.run([sys.executable, str(BENCH), "--workloads", "reranker", *args,
                               "--out", str(out)], capture_output=True, text=True, timeout=60,
                              cwd=REPO)
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("search_bench: ") and says in lines[0]
    assert not out.exists()
    # a good file parses: the workload's stored grid, its source named with its stack
    args = search_bench.parse_args(["--workloads", "reranker", "--reference-from", str(good)])
    assert args.reference["from"]["date"] == "20261206T031022Z"
    assert "NVIDIA H100 80GB HBM3 (driver 580.159.04)" in args.reference["from"]["stack"]
    assert list(args.reference["workloads"]) == ["reranker"]
    assert search_bench.stem_of("intent", "tiny") == "intent_tiny"
    assert search_bench.stem_of("reranker", "full") == "reranker"
