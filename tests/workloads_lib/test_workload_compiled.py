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
# reward_train's step (forward, backward, AdamW over every parameter) over its 6 layers took
# 100-130 s to compile here, the slowest test of the suite. Dynamo unrolls the layers: each one
# is the same code compiled again, so one layer and pairs of 64 tokens compile every op of the
# step (the forward, its backward, clipping, the optimizer) in a fraction of that. The same
# holds for the seeded transformers whose depth is a module constant (the vision encoder's 12
# blocks, the decoder's 6 layers): one or two blocks compile every op the full depth does, and
# for the convolutional classifier's 16 bottlenecks (3, 4, 6, 3 a stage: one a stage compiles
# every shape of kernel the four stages have; without torchvision, which builds its own). The
# full models are compiled by the sweeps that measure them (bench/, the GPU runs). The BERT
# workloads' six layers are one layer too, unless the MiniLM weights are installed (their
# checkpoint fixes the depth): 15-21 s of a 2-core CPU each at six layers.
# name -> (module globals to set, keys of its CONFIG dict to set, the shape; None: smallest)
SMALLER: dict[str, tuple[dict[str, object], dict[str, int], dict[str, int] | None]] = {
    "reward_train": ({}, {"num_hidden_layers": 1}, {"batch": 2, "seq": 64}),
    "vision_encoder": ({"DEPTH": 2}, {}, None),
    "local_lm": ({"LAYERS": 1}, {}, None),
    "convnet": ({"STAGES": ((64, 1, 1), (128, 1, 2), (256, 1, 2), (512, 1, 2))}, {}, None),
}
BERT = ("reranker", "embedder", "guardrail")  # one layer while no checkpoint is installed


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_COMPILE else n for n in ALL]
)
def test_compiled_passes_its_quality_check(harness, monkeypatch, name):
    wl = harness.load(name)
    constants, config, shape = SMALLER.get(name, ({}, {}, None))
    if name in BERT and wl.build.__globals__["_package_dir"]() is None:
        config = {"num_hidden_layers": 1}
    for key, value in constants.items():
        assert key in wl.build.__globals__, key  # a renamed constant fails here, not silently
        monkeypatch.setitem(wl.build.__globals__, key, value)
    for key, value in config.items():
        monkeypatch.setitem(wl.build.__globals__["CONFIG"], key, value)
    harness.check(wl, "fp32", compiled=True, shape=shape)
