"""bench/experiments/launch_noise.py on the CPU: unpinned and pinned windows give per-setting
figures; a core this process may not use is refused in one line with nothing written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

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
            figures = row[kind]
            assert figures["windows"] > 1 and figures["median_us"] > 0
            assert figures["cv_windows_pct"] >= 0
            assert figures["blocks"] == len(figures["block_medians_us"]) >= 1
    assert result["launches"] == 20 and result["device"] == "cpu"
    assert f"| core {core} |" in path.with_suffix(".md").read_text()


def test_a_core_out_of_reach_is_one_line(tmp_path: Path) -> None:
    done = _run("--cores", "4096", "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("launch_noise: --cores [4096] not available to this process")
    assert not (tmp_path / "out").exists()
