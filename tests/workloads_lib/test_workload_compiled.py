"""Every workload of the library (workloads/*.py) compiled with Inductor (C++ on the CPU) passes
its own quality check against the fp32 eager reference, on its smallest traffic shape."""

from __future__ import annotations

from pathlib import Path

import pytest

WORKLOADS_DIR = Path(__file__).resolve().parents[2] / "workloads"
ALL = sorted(p.stem for p in WORKLOADS_DIR.glob("*.py") if not p.name.startswith("_"))
# compiling these takes 3 s or more on a 2-core CPU (cold Inductor cache)
SLOW_COMPILE = {"reranker", "embedder", "guardrail", "vision_encoder", "local_lm", "reward_train",
                "cast_prologue", "horizontal", "gemm_epilogue", "convnet"}  # fmt: skip


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_COMPILE else n for n in ALL]
)
def test_compiled_passes_its_quality_check(harness, name):
    harness.check(name, "fp32", compiled=True)
