"""Every workload of the library (workloads/*.py) compiled with Inductor (C++ on the CPU) passes
its own quality check against the fp32 eager reference, on its smallest traffic shape."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import safetensors.torch

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
# workloads' six layers are one layer too: with the MiniLM weights installed, the checkpoint's
# first (its embeddings and layer 0), which halves each one's compile (the reranker: 12.65
# CPU-s at six layers, 5.2 at one, alone on the 2-core CPU; no raw file).
# name -> (module globals to set, keys of its CONFIG dict to set, the shape; None: smallest)
SMALLER: dict[str, tuple[dict[str, object], dict[str, int], dict[str, int] | None]] = {
    "reward_train": ({}, {"num_hidden_layers": 1}, {"batch": 2, "seq": 64}),
    "vision_encoder": ({"DEPTH": 2}, {}, None),
    "local_lm": ({"LAYERS": 1}, {}, None),
    "convnet": ({"STAGES": ((64, 1, 1), (128, 1, 2), (256, 1, 2), (512, 1, 2))}, {}, None),
}
BERT = ("reranker", "embedder", "guardrail")  # one layer, the checkpoint's first when installed
LATER_LAYER = re.compile(r"(^|\.)encoder\.layer\.[1-9]\d*\.")


def _first_layer_only(load_file):
    """`safetensors.torch.load_file` less the keys of every encoder layer after the first."""

    def load(*args, **kwargs):
        state = load_file(*args, **kwargs)
        kept = {k: v for k, v in state.items() if not LATER_LAYER.search(k)}
        assert len(kept) < len(state), "no layer after the first in the checkpoint"
        return kept

    return load


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_COMPILE else n for n in ALL]
)
def test_compiled_passes_its_quality_check(harness, monkeypatch, name):
    wl = harness.load(name)
    constants, config, shape = SMALLER.get(name, ({}, {}, None))
    if name in BERT:
        config = {"num_hidden_layers": 1}
        if wl.build.__globals__["_package_dir"]() is not None:
            monkeypatch.setattr(safetensors.torch, "load_file",
                                _first_layer_only(safetensors.torch.load_file))
    for key, value in constants.items():
        assert key in wl.build.__globals__, key  # a renamed constant fails here, not silently
        monkeypatch.setitem(wl.build.__globals__, key, value)
    for key, value in config.items():
        monkeypatch.setitem(wl.build.__globals__["CONFIG"], key, value)
    harness.check(wl, "fp32", compiled=True, shape=shape)
