"""Prologue fusion: an int8 weight-only quantized linear layer, ``x @ (w_int8 * scale).T``.

What it models: the projections of a local language model served with int8 weight-only
quantization. Before each matmul the int8 weight is cast to the activation dtype and scaled per
output channel. Eager PyTorch materializes the dequantized weight (a full-size write and read of
the weight in the activation dtype) on every call; Inductor can do the cast and scale while the
matmul loads its operand (prologue fusion into a Triton GEMM template under max-autotune) or at
least in one fused pointwise kernel. At decode batch sizes the layer is memory-bound, so the bytes
saved are the time saved.

Traffic: 1 and 8 tokens (decode steps at batch 1 and 8) and 256 tokens (a prefill chunk), through
a 4096 x 4096 layer (a 7B-class model's attention projection); the default shape is 8 tokens.

Quality: relative L2 error of the output against fp32 eager, at most 1e-2.
"""

from __future__ import annotations

import torch

from advisor import Quality, Workload

D_IN = D_OUT = 4096


class Int8Linear(torch.nn.Module):
    def __init__(self, weight: torch.Tensor) -> None:
        super().__init__()
        scale = weight.abs().amax(dim=1) / 127  # symmetric, per output channel
        self.register_buffer("weight_int8", torch.round(weight / scale[:, None]).to(torch.int8))
        self.register_buffer("scale", scale)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight = self.weight_int8.to(x.dtype) * self.scale[:, None]  # cast + scale prologue
        return x @ weight.T


def build(device: str, dtype: torch.dtype) -> torch.nn.Module:
    torch.manual_seed(0)
    layer = Int8Linear(torch.randn(D_OUT, D_IN) / D_IN**0.5)
    return layer.to(device=device, dtype=dtype).eval()  # casts `scale`; int8 stays int8


def inputs(shape: dict[str, int], device: str) -> tuple[torch.Tensor]:
    return (torch.randn(shape["tokens"], D_IN, device=device),)


def relative_l2_error(reference: torch.Tensor, candidate: torch.Tensor) -> float:
    return float((candidate - reference).norm() / reference.norm())


workload = Workload(
    name="cast-prologue",
    build=build,
    inputs=inputs,
    traffic=[({"tokens": 1}, 0.4), ({"tokens": 8}, 0.4), ({"tokens": 256}, 0.2)],
    default_shape={"tokens": 8},
    tolerances={
        "fp32": (1e-4, 1e-4),
        "tf32": (2e-2, 1e-2),
        "bf16": (1e-1, 2e-2),
        "fp16": (1e-2, 5e-3),
    },
    quality=Quality("relative_l2_error", relative_l2_error, threshold=1e-2, higher_is_better=False),
)
