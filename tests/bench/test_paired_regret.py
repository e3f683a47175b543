"""bench/paired_regret.py on the CPU: a real advisor_bench report, then the pick and the grid's
best re-measured interleaved in one child; nothing to do when they are the same config; a report
that is not one is refused in one line with nothing written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench"
FOUR_DTYPES = REPO / "tests" / "workloads" / "four_dtypes.py"

pytestmark = pytest.mark.slow


def _run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True,
                          text=True, timeout=300, cwd=REPO)


def test_pick_and_grid_best_are_measured_side_by_side(tmp_path: Path) -> None:
    done = _run("advisor_bench.py", "--workload", str(FOUR_DTYPES), "--device", "cpu",
                "--modes", "eager", "--dtypes", "fp32,bf16", "--out", str(tmp_path),
                "--sweep-args=--no-warm --no-confirm-leaders", "--startup-runs", "1")
    assert done.returncode == 0, done.stderr
    (path,) = tmp_path.glob("advisor_bench_cpu_four-dtypes_2*.json")  # <stem>_<UTC>.json
    report = json.loads(path.read_text())
    assert len(report["startup"]["runs_wall_s"]) == 1

    # The report as written: the pick is the grid's best or another config; make it each in turn.
    best = report["grid_best"]
    other = next(g for g in report["grid_rows"] if g["label"] != best["label"])
    for pick in (best, other):
        report["pick"] = {"config": pick["config"], "label": pick["label"]}
        path.write_text(json.dumps(report))
        done = _run("paired_regret.py", str(path))
        assert done.returncode == 0, done.stderr
        paired = json.loads(path.read_text())["paired"]
        md = path.with_suffix(".md").read_text()
        if pick is best:
            assert paired["status"] == "skipped" and paired["regret"] == 0.0
            assert "the pick is the grid's best" in md
            continue
        assert paired["status"] == "ok", paired
        assert paired["pick"] == other["label"] and paired["grid_best"] == best["label"]
        assert paired["rounds"] >= 30 and paired["method"] == "perf_counter"
        low, high = paired["regret_ci"]
        assert low <= paired["regret"] <= high
        assert set(paired["medians_ms"]) == {best["label"], other["label"]}
        assert all(ms > 0 for ms in paired["medians_ms"].values())
        assert f"pick {other['label']} and grid best {best['label']}" in md


def test_a_file_that_is_not_a_report_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"workload": "x"}))
    done = _run("paired_regret.py", str(path))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"paired_regret: {path} lacks workload_path, device, shape, pick, grid_best: not a "
        "report of bench/advisor_bench.py"]
    assert not path.with_suffix(".md").exists()
    assert json.loads(path.read_text()) == {"workload": "x"}
