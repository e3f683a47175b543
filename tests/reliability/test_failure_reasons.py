"""Failure reasons by stage and mode: an exception raised in the user's forward under an eager
config is the component's runtime error, never a compile error (nothing was compiled)."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.child.trial import classify
from advisor.config import CompileConfig
from advisor.search.launcher import Launcher

RAISES_IN_BF16 = Path(__file__).with_name("workloads") / "raises_in_bf16.py"
FAST = {"min_samples": 3, "min_time_s": 0.0, "max_time_s": 1.0, "floor_samples": 3,
        "throughput_calls": 3}


@pytest.mark.slow
def test_an_eager_config_whose_forward_raises_is_a_runtime_error(tmp_path: Path) -> None:
    record = Launcher(timeout_s=300.0, cache_root=tmp_path).run(
        RAISES_IN_BF16, CompileConfig(mode="eager", dtype="bf16"), "cpu", measure_warm=False,
        policy=FAST)
    assert record["status"] == "failed"
    assert record["failure_reason"] == "runtime_error", record["error_tail"]
    assert record["error_tail"].startswith("[run]")
    assert "does not take bf16 inputs" in record["error_tail"]


def test_reasons_by_stage() -> None:
    error = ValueError("the user's own error")
    assert classify(error, "run") == "runtime_error"
    assert classify(error, "reference") == "runtime_error"
    assert classify(error, "compile") == "compile_error"
    assert classify(error, "build") == "build_error"
