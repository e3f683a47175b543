"""bench/fidelity.py: its figures from hand-made rounds (medians, paired ratios, CVs, the worst
config and the verdict line, this last on the ratios of the kept 2026-11-30 16:54 run); end to
end on CPU: the tiny MLP, eager fp32, two rounds; bad arguments."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench import fidelity

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
    # (the figures' arithmetic: known inputs below; a CPU has no do_bench)
    assert entry["do_bench_median_ms"] is None and entry["advisor_over_do_bench"] is None
    assert entry["back_to_back_over_do_bench"] is None
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


def test_summarize_takes_medians_paired_ratios_and_cvs_over_rounds() -> None:
    rounds = {"advisor": [2.0, 4.0], "plain": [2.0, 2.0], "do_bench": [1.0, 2.0],
              "back_to_back": [1.0, 3.0]}
    got = fidelity.summarize(rounds)
    # medians of two rounds: (2 + 4) / 2 = 3.0, 2.0, 1.5, 2.0
    assert (got["advisor_median_ms"], got["plain_median_ms"], got["do_bench_median_ms"],
            got["back_to_back_ms"]) == (3.0, 2.0, 1.5, 2.0)
    # ratios paired by round, then their median: advisor/plain (1, 2) -> 1.5, not 3.0 / 2.0;
    # advisor/do_bench (2, 2) -> 2.0; back-to-back/do_bench (1, 1.5) -> 1.25
    assert got["advisor_over_plain"] == 1.5
    assert got["advisor_over_do_bench"] == 2.0
    assert got["back_to_back_over_do_bench"] == 1.25
    # CV = sample stdev / mean: (2, 4): sqrt(2) / 3 = 47.14%; (2, 2): 0; (1, 3): sqrt(2) / 2
    assert got["cv_advisor_pct"] == pytest.approx(47.1405, abs=1e-4)
    assert got["cv_plain_pct"] == 0.0
    assert got["cv_back_to_back_pct"] == pytest.approx(70.7107, abs=1e-4)
    # no do_bench (a CPU): no ratio to it; one round: no CV
    cpu = fidelity.summarize({"advisor": [2.0], "plain": [4.0], "do_bench": [None],
                              "back_to_back": [1.0]})
    assert cpu["advisor_over_plain"] == 0.5 and cpu["advisor_over_do_bench"] is None
    assert cpu["cv_advisor_pct"] is None and cpu["do_bench_median_ms"] is None


def test_the_worst_config_and_the_verdict_line_of_the_run_that_missed() -> None:
    # bench/results/fidelity_cuda_reranker_20261130T172016Z.md, advisor/plain: fp32 eager
    # 0.997, fp16 eager 1.011, bf16 default 0.931: the worst is bf16 default, 1 - 0.931 =
    # 0.069, outside the 0.03 bar; its last line said "vs plain 0.069 (bf16:default, OUTSIDE"
    entries = [{"config": "fp32:eager", "advisor_over_plain": 0.997},
               {"config": "fp16:eager", "advisor_over_plain": 1.011},
               {"config": "bf16:default", "advisor_over_plain": 0.931},
               {"config": "fp16:default", "advisor_over_plain": None}]
    got = fidelity.worst(entries, "advisor_over_plain")
    assert got is not None and got["config"] == "bf16:default"
    assert got["abs_ratio_minus_1"] == pytest.approx(0.069) and got["within"] is False
    # 1.029 (the 2026-12-01 run's worst back-to-back / do_bench) is within the 0.03 bar, 1.031
    # is not (1.03 itself sits on the bar, where float rounding decides: not tested)
    assert fidelity.worst([{"config": "a", "r": 1.029}], "r")["within"] is True
    assert fidelity.worst([{"config": "a", "r": 1.031}], "r")["within"] is False
    assert fidelity.worst([{"config": "a", "r": None}], "r") is None
    line = fidelity.verdict({"worst": {"plain": got, "do_bench": None,
                                       "back_to_back vs do_bench": None}})
    assert line == ("worst |ratio - 1|: advisor/plain 0.069 (bf16:default, OUTSIDE 0.03); "
                    "advisor/do_bench -; back-to-back/do_bench -")
