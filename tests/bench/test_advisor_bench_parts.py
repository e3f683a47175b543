"""bench/advisor_bench.py with its grid in parts, on the CPU: two parts, then the advisor against
the parts put together; parts that do not cover the space are refused in one line. The arithmetic
(the grid's wall from its parts, the ratio, the regret) on hand-made parts and records whose
figures are run 8's (bench/results/advisor_bench_cuda_reranker_run8.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from advisor.config import CompileConfig
from advisor.errors import ConfigError
from bench import advisor_bench

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench" / "advisor_bench.py"
FOUR_DTYPES = REPO / "tests" / "workloads" / "four_dtypes.py"



def _run(out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH), "--workload", str(FOUR_DTYPES), "--device", "cpu",
         "--modes", "eager", "--dtypes", "fp32,bf16", "--out", str(out), *args],
        capture_output=True, text=True, timeout=300, cwd=REPO)


@pytest.mark.slow
def test_grid_parts_put_together_make_the_grid(tmp_path: Path) -> None:
    out = tmp_path / "out"
    for k in (1, 2):
        done = _run(out, "--grid-part", f"{k}/2")
        assert done.returncode == 0, done.stderr
    # each run's files carry its UTC stamp: ..._grid1of2_<yyyymmddThhmmssZ>.json
    parts = [p for k in (1, 2)
             for p in out.glob(f"advisor_bench_cpu_four-dtypes_grid{k}of2_*.json")]
    assert len(parts) == 2
    rows = [json.loads(p.read_text())["rows"] for p in parts]
    assert [len(r) for r in rows] == [1, 1]  # every 2nd config: one each
    assert {rows[0][0]["label"], rows[1][0]["label"]} == {"fp32 + eager", "bf16 + eager"}
    assert not list(out.glob("advisor_bench_cpu_four-dtypes_2*.json"))  # a part: no report yet

    lonely = _run(tmp_path / "refused", "--grid-from", str(parts[0]))
    assert lonely.returncode == 2
    assert len(lonely.stderr.strip().splitlines()) == 1
    assert "do not cover the space (missing: bf16 + eager" in lonely.stderr
    assert not (tmp_path / "refused").exists()

    done = _run(out, "--grid-from", ",".join(map(str, parts)),
                "--sweep-args=--no-warm --no-confirm-leaders")
    assert done.returncode == 0, done.stderr
    (path,) = out.glob("advisor_bench_cpu_four-dtypes_2*.json")
    report = json.loads(path.read_text())
    # (the walls' sum and the ratio: known inputs in the tests below)
    assert [p["configs"] for p in report["grid_parts"]] == [1, 1]
    assert report["grid_ran"] == 2 and report["advisor_trials"] == 2
    assert "grid parts (one after another: the sum)" in path.with_suffix(".md").read_text()


@pytest.mark.slow
def test_a_grid_part_that_is_not_json_is_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "part.json"
    broken.write_text("{ not json")
    done = _run(tmp_path / "out", "--grid-from", str(broken))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"advisor_bench: --grid-from: {broken} is not JSON; write it with --grid-part"]
    assert not (tmp_path / "out").exists()


FP16_RO = CompileConfig(mode="reduce-overhead", dtype="fp16")
BF16_RO = CompileConfig(mode="reduce-overhead", dtype="bf16")


def _plan(tmp: Path, grid_from: list[Path] | None = None) -> advisor_bench.Plan:
    return advisor_bench.Plan(
        workload_path=tmp / "reranker.py", workload_name="reranker", device="cuda",
        dims={"batch": 50, "seq": 128}, modes=["reduce-overhead"], dtypes=["fp16", "bf16"],
        configs=[FP16_RO, BF16_RO], skip_grid_modes=[], sweep_args=[], order="grid-first",
        child_timeout_s=600.0, out=tmp, grid_from=grid_from)


def _grid_row(config: CompileConfig, median_ms: float) -> dict[str, Any]:
    return {"key": config.key, "label": config.label, "config": config.to_dict(),
            "status": "ok", "passed": True, "median_ms": median_ms,
            "device_name": "NVIDIA H200", "torch_version": "2.11.0+cu130"}


def _part(tmp: Path, k: int, wall_s: float, row: dict[str, Any]) -> Path:
    path = tmp / f"part{k}.json"
    path.write_text(json.dumps({"kind": "grid-part", "part": [k, 2], "workload": "reranker",
                                "shape": "batch=50,seq=128", "wall_s": wall_s, "rows": [row]}))
    return path


def test_the_grid_of_parts_is_their_sum_and_its_best_the_lowest_passing_median(
        tmp_path: Path) -> None:
    # run 8's parts 4/8 and 3/8 held these two configs: 105.7 + 118.1 s = 223.8 s
    parts = [_part(tmp_path, 1, 105.7, _grid_row(FP16_RO, 0.9415)),
             _part(tmp_path, 2, 118.1, _grid_row(BF16_RO, 0.9706))]
    grid = advisor_bench.grid_from_parts(_plan(tmp_path, parts))
    assert grid["wall_s"] == pytest.approx(223.8)
    assert grid["best"]["label"] == "fp16 + reduce-overhead"  # 0.9415 < 0.9706 ms
    assert [p["configs"] for p in grid["parts"]] == [1, 1]
    # the same config in two parts is refused
    twice = [parts[0], _part(tmp_path, 3, 1.0, _grid_row(FP16_RO, 1.0))]
    with pytest.raises(ConfigError, match="fp16 \\+ reduce-overhead is in two parts"):
        advisor_bench.grid_from_parts(_plan(tmp_path, twice))


def test_the_regret_is_the_grid_median_of_the_pick_over_the_grid_best(tmp_path: Path) -> None:
    grid = {"wall_s": 960.3, "rows": [_grid_row(FP16_RO, 0.9415), _grid_row(BF16_RO, 0.9706)]}
    grid["best"] = grid["rows"][0]
    advisor = {"wall_s": 348.0, "exit_code": 0, "error": None,
               "recommendation": {"best": {"config": BF16_RO.to_dict()}},
               "trials": [{"config": BF16_RO.to_dict(), "status": "ok", "median_ms": 0.9096},
                          {"config": FP16_RO.to_dict(), "status": "ok", "median_ms": 0.9423}]}
    out = advisor_bench.verdict(grid, advisor)
    # run 8: the pick bf16 + RO at 0.9706 ms in the grid, the grid's best 0.9415 ms:
    # 0.9706 / 0.9415 - 1 = 3.09%, the 3.1% of the kept report
    assert out["regret"] == pytest.approx(0.030908, abs=1e-6)
    assert out["pick_is_grid_best"] is False
    assert out["pick"]["advisor_median_ms"] == 0.9096  # the pick's own trial, not the grid's
    report = advisor_bench.build_report(_plan(tmp_path), {}, grid, advisor)
    # 348.0 / 960.3 = 0.3624: the 0.362 of the kept report
    assert report["ratio_advisor_to_grid"] == pytest.approx(0.36239, abs=1e-5)
    assert report["grid_best"]["median_ms"] == 0.9415
    # the pick is the grid's best: regret 0, and the flag says so
    advisor["recommendation"] = {"best": {"config": FP16_RO.to_dict()}}
    same = advisor_bench.verdict(grid, advisor)
    assert same["regret"] == 0.0 and same["pick_is_grid_best"] is True
    # a pick the grid failed has no regret, and the note says why
    grid["rows"][0] = {**grid["rows"][0], "status": "failed", "error": "OOM"}
    assert advisor_bench.verdict(grid, advisor)["regret_note"] == (
        "the advisor's pick failed in the grid: OOM")
