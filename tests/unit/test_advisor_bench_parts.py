"""bench/advisor_bench.py with its grid in parts, on the CPU: two parts, then the advisor against
the parts put together; parts that do not cover the space are refused in one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench" / "advisor_bench.py"
FOUR_DTYPES = REPO / "tests" / "sweep" / "four_dtypes.py"

pytestmark = pytest.mark.slow


def _run(out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH), "--workload", str(FOUR_DTYPES), "--device", "cpu",
         "--modes", "eager", "--dtypes", "fp32,bf16", "--out", str(out), *args],
        capture_output=True, text=True, timeout=300, cwd=REPO)


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
    walls = [json.loads(p.read_text())["wall_s"] for p in parts]
    assert report["grid_wall_s"] == pytest.approx(sum(walls))
    assert [p["configs"] for p in report["grid_parts"]] == [1, 1]
    assert report["grid_ran"] == 2 and report["advisor_trials"] == 2
    assert report["ratio_advisor_to_grid"] == pytest.approx(
        report["advisor_wall_s"] / sum(walls))
    assert "grid parts (one after another: the sum)" in path.with_suffix(".md").read_text()


def test_a_grid_part_that_is_not_json_is_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "part.json"
    broken.write_text("{ not json")
    done = _run(tmp_path / "out", "--grid-from", str(broken))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"advisor_bench: --grid-from: {broken} is not JSON; write it with --grid-part"]
    assert not (tmp_path / "out").exists()
