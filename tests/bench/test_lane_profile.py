"""bench/lane_profile.py on a real command: the command's own process counted under its kind,
its exit code kept, the host's busy CPU beside the sampled; and bad arguments (one line, exit 2,
nothing written). No figure is asserted beyond what the command must have used."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from bench_support import load

lane_profile = load("lane_profile")

# 1.5 CPU-seconds, then exit: the bench samples the command once more after it has exited
# (a zombie until reaped, its CPU final), so every one of them is counted, however loaded the
# host; and a wall at least as long as one thread's CPU
SPIN = "import time\nt = time.process_time()\nwhile time.process_time() - t < 1.5: pass"


def test_a_command_that_spins_is_counted_under_its_kind(tmp_path: Path) -> None:
    code = lane_profile.main(["--out", str(tmp_path), "--every", "0.1", "--",
                              sys.executable, "-c", SPIN])
    assert code == 0
    (found,) = tmp_path.glob("lane_profile_*.json")
    result = json.loads(found.read_text())
    assert result["exit_code"] == 0 and result["wall_s"] >= 1.5
    kinds = {row["kind"]: row for row in result["kinds"]}
    spun = kinds["python -c (advisor's CLI from a test, Inductor's probes)"]
    assert spun["cpu_s"] >= 1.4 and spun["processes"] >= 1  # 1.5 s, in clock ticks, rounded
    # /proc/stat's busy time spans the command's whole life and counts every process, its too
    assert result["busy_cpu_s"] >= spun["cpu_s"] - 0.1
    assert (tmp_path / found.name.replace(".json", ".md")).read_text().startswith("# lane profile")


def test_a_failing_command_keeps_its_exit_code(tmp_path: Path) -> None:
    code = lane_profile.main(["--out", str(tmp_path), "--", sys.executable, "-c",
                              "raise SystemExit(3)"])
    assert code == 1
    (found,) = tmp_path.glob("lane_profile_*.json")
    assert json.loads(found.read_text())["exit_code"] == 3


@pytest.mark.parametrize("argv", [["--out", "x"], ["--every", "0", "--", "true"], ["--"]])
def test_bad_arguments_are_one_line_exit_2_and_write_nothing(
        tmp_path: Path, argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    argv = [a if a != "x" else str(tmp_path / "out") for a in argv]
    assert lane_profile.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("lane_profile:")
    assert not (tmp_path / "out").exists()
