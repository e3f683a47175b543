"""bench/fidelity.py end to end on CPU: the tiny MLP, eager fp32, two rounds; bad arguments."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench" / "fidelity.py"
TINY = REPO / "tests" / "workloads" / "tiny_mlp.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCH), "--workload", str(TINY), "--device", "cpu",
                           *args], capture_output=True, text=True, timeout=120, cwd=REPO)


@pytest.mark.slow
def test_measures_eager_with_both_cpu_methods(tmp_path: Path) -> None:
    done = _run("--configs", "fp32:eager", "--repeats", "2", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    (path,) = tmp_path.glob("fidelity_cpu_tiny-mlp_*.json")  # the run's dated file
    result = json.loads(path.read_text())
    (entry,) = result["configs"]
    assert entry["config"] == "fp32:eager" and entry["status"] == "ok"
    assert entry["advisor_median_ms"] > 0 and entry["plain_median_ms"] > 0
    assert entry["advisor_over_plain"] > 0
    assert entry["do_bench_median_ms"] is None and entry["advisor_over_do_bench"] is None
    assert entry["back_to_back_ms"] > 0 and entry["back_to_back_over_do_bench"] is None
    assert len(entry["rounds_ms"]["advisor"]) == 2 == len(entry["rounds_ms"]["back_to_back"])
    assert result["device_name"] == "cpu" and result["shape"] == "batch=16"
    assert "| fp32:eager |" in path.with_suffix(".md").read_text()
    assert "worst |ratio - 1|: advisor/plain " in done.stdout


def test_bad_mode_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = _run("--configs", "fp32:turbo", "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert "unknown mode 'turbo'" in done.stderr
    assert not (tmp_path / "out").exists()
