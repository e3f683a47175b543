"""bench/experiments/launch_noise.py: per-setting figures from hand-made windows (microseconds per
launch, the CV over windows, the half-second blocks' medians, CV and slowest / fastest); on the
CPU: unpinned and pinned windows give per-setting figures; a core this process may not use is
refused in one line with nothing written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.experiments import launch_noise

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench" / "experiments" / "launch_noise.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCH), "--device", "cpu", *args],
                          capture_output=True, text=True, timeout=120, cwd=REPO)


@pytest.mark.slow
def test_settings_unpinned_and_pinned(tmp_path: Path) -> None:
    core = min(os.sched_getaffinity(0))
    done = _run("--seconds", "1.2", "--launches", "20", "--cores", str(core), "--out",
                str(tmp_path))
    assert done.returncode == 0, done.stderr
    (path,) = tmp_path.glob("launch_noise_cpu_*.json")  # the run's dated file
    result = json.loads(path.read_text())
    assert [r["setting"] for r in result["rows"]] == ["unpinned", f"core {core}",
                                                      "unpinned again"]
    for row in result["rows"]:
        for kind in ("launch", "python"):
            figures = row[kind]  # (the figures' arithmetic: known inputs below)
            assert figures["blocks"] == len(figures["block_medians_us"]) >= 1
    assert result["launches"] == 20 and result["device"] == "cpu"
    assert f"| core {core} |" in path.with_suffix(".md").read_text()


def test_a_core_out_of_reach_is_one_line(tmp_path: Path) -> None:
    done = _run("--cores", "4096", "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("launch_noise: --cores [4096] not available to this process")
    assert not (tmp_path / "out").exists()


def test_windows_become_microseconds_per_launch_and_half_second_blocks() -> None:
    # (end time s, window s) for windows of 100 launches: five 1 ms windows in the first half
    # second (10 us a launch), five 0.5 ms windows in the second (5 us), one more at 1.0 s
    samples = [(0.1 * i, 0.001) for i in range(5)] + [(0.5 + 0.1 * i, 0.0005) for i in range(5)]
    got = launch_noise.summarize([*samples, (1.0, 0.0005)], per=100)
    # 11 windows: five at 10 us, six at 5 us: median 5 us
    assert got["windows"] == 11 and got["median_us"] == pytest.approx(5.0)
    # block 0: 10 us, block 1: 5 us; block 2 has one window, fewer than 5: left out
    assert got["blocks"] == 2 and got["block_medians_us"] == pytest.approx([10.0, 5.0])
    # blocks (10, 5): stdev 3.5355 / mean 7.5 = 47.14%; slowest / fastest 10 / 5 = 2.0
    assert got["cv_blocks_pct"] == pytest.approx(47.1405, abs=1e-4)
    assert got["slowest_over_fastest_block"] == pytest.approx(2.0)
    # windows: five at 10, six at 5: mean 80 / 11 = 7.2727, sample stdev
    # sqrt((5 x 2.7273^2 + 6 x 2.2727^2) / 10) = 2.6112: CV 35.90%
    assert got["cv_windows_pct"] == pytest.approx(35.90, abs=0.01)
    one = launch_noise.summarize(samples[:5], per=100)  # one block: no CV across blocks
    assert one["blocks"] == 1 and one["cv_blocks_pct"] is None
    assert one["slowest_over_fastest_block"] == pytest.approx(1.0)
