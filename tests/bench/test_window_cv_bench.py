"""bench/experiments/window_cv.py: each window's median, CV and samples from hand-made rounds;
end to end on CPU: the tiny MLP, eager fp32, two windows; bad arguments."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.experiments import window_cv

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench" / "experiments" / "window_cv.py"
TINY = REPO / "tests" / "workloads" / "tiny_mlp.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCH), "--workload", str(TINY), "--device", "cpu",
                           *args], capture_output=True, text=True, timeout=120, cwd=REPO)


@pytest.mark.slow
def test_each_window_gets_its_median_and_cv(tmp_path: Path) -> None:
    done = _run("--configs", "fp32:eager", "--windows", "0.05,0.2", "--repeats", "3",
                "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    (path,) = tmp_path.glob("window_cv_cpu_tiny-mlp_*.json")  # the run's dated file
    result = json.loads(path.read_text())
    (entry,) = result["configs"]
    assert entry["status"] == "ok" and result["windows_s"] == [0.05, 0.2]
    short, long = entry["windows"]
    assert (short["window_s"], long["window_s"]) == (0.05, 0.2)
    for w in (short, long):
        assert len(w["rounds_ms"]) == 3  # (median and CV: known inputs below)
        # The CPU policy's 30 calls at the least, and never less time than the window.
        assert w["samples"] >= 30
        assert min(w["rounds_sampled_s"]) >= w["window_s"]
    assert "| fp32:eager | 0.2 |" in path.with_suffix(".md").read_text()


def test_bad_window_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = _run("--configs", "fp32:eager", "--windows", "1,0", "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert "bad --windows '1,0'" in done.stderr
    assert not (tmp_path / "out").exists()


def test_each_window_summarized_from_its_rounds() -> None:
    # (median ms, samples, seconds sampled) per round, per window
    rows = window_cv.summarize({1.0: [(2.0, 300, 1.0), (4.0, 310, 1.1), (3.0, 290, 1.0)],
                                4.0: [(3.0, 1200, 4.0)]})
    one, four = rows
    # 1 s: median of 2, 4, 3 = 3.0; CV = stdev 1.0 / mean 3.0 = 33.33%; samples median 300
    assert (one["window_s"], one["median_ms"], one["samples"]) == (1.0, 3.0, 300)
    assert one["cv_pct"] == pytest.approx(100 / 3)
    assert one["rounds_ms"] == [2.0, 4.0, 3.0] and one["rounds_sampled_s"] == [1.0, 1.1, 1.0]
    # 4 s: one round, no CV
    assert (four["window_s"], four["median_ms"], four["cv_pct"], four["samples"]) == (
        4.0, 3.0, None, 1200)
