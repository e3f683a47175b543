"""What a serving process runs on a CUDA GPU: `advisor.child.prepare` (TF32 precision, the
compile) and `advisor.child.serve.Applied` under CUDA graphs. Skipped without CUDA.

Run on the GPU machine with ``pytest -m gpu tests/gpu``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from advisor.child.prepare import prepare
from advisor.child.serve import Applied
from advisor.config import CompileConfig
from advisor.workload import load_workload

pytestmark = pytest.mark.gpu

TINY_MLP = Path(__file__).parents[1] / "workloads" / "tiny_mlp.py"


@pytest.fixture
def cuda() -> None:
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device (torch.cuda.is_available() is False)")


def _inputs(batch: int, seed: int) -> tuple[torch.Tensor, ...]:
    wl = load_workload(TINY_MLP).workload
    torch.manual_seed(seed)
    return tuple(wl.inputs({"batch": batch}, "cuda"))


def test_tf32_sets_matmul_precision_high_and_fp32_sets_it_back(cuda: None) -> None:
    wl = load_workload(TINY_MLP).workload
    prepare(wl.build("cuda", torch.float32), CompileConfig(mode="default", dtype="tf32"), "cuda")
    assert torch.get_float32_matmul_precision() == "high"
    assert torch.backends.cuda.matmul.allow_tf32 and torch.backends.cudnn.allow_tf32
    prepare(wl.build("cuda", torch.float32), CompileConfig(mode="default"), "cuda")
    assert torch.get_float32_matmul_precision() == "highest"
    assert not torch.backends.cuda.matmul.allow_tf32


def test_an_applied_cuda_graph_output_survives_the_next_call(cuda: None) -> None:
    """CUDA-graph trees reuse a graph's output memory on the next replay: what `Applied`
    returns must be a copy, or a caller's earlier result changes under it."""
    wl = load_workload(TINY_MLP).workload
    config = CompileConfig(mode="reduce-overhead", dtype="bf16")
    torch.manual_seed(0)
    model = wl.build("cuda", torch.float32)
    applied = Applied(fn=prepare(model, config, "cuda"), model=model, config=config)
    first_in, second_in = _inputs(16, seed=1), _inputs(16, seed=2)
    for _ in range(3):  # warm-up, recording, replay
        first = applied(*first_in)
    kept = first.clone()
    second = applied(*second_in)
    torch.cuda.synchronize()
    assert not torch.equal(second, kept)  # different inputs, different outputs
    assert torch.equal(first, kept)  # the earlier result is untouched by the later replay
    assert first.data_ptr() != second.data_ptr()
