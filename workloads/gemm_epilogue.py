"""GEMM epilogue fusion: ``relu(x @ weight + bias)``, the article's matmul -> bias -> activation.

What it models: the feed-forward up-projection of a MiniLM-sized transformer (384 -> 1536) over
the tokens of a request. The matmul is compute-heavy; the bias add and activation that follow are
cheap but, unfused, write the (tokens x 1536) result to memory and read it back. Inductor's
default mode calls the vendor GEMM and fuses bias + relu into one pointwise kernel; max-autotune
can generate a Triton GEMM template with the epilogue inside it (a ``triton_tem_fused_...``
kernel), so this workload shows what each mode buys.

Traffic: 128 tokens (one short request), 1,280 tokens (10 candidates x 128) and 6,400 tokens
(the reranker's 50 candidates x 128, the default shape).

Quality: relative L2 error of the output against fp32 eager, at most 1e-2.
"""

from __future__ import annotations

import torch

from advisor import Quality, Workload

HIDDEN, FFN = 384, 1536


class LinearReLU(torch.nn.Module):
    def __init__(self, d_in: int, d_out: int) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(d_in, d_out) / d_in**0.5)
        self.bias = torch.nn.Parameter(torch.randn(d_out) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = x @ self.weight
        out = out + self.bias
        return torch.relu(out)


def build(device: str, dtype: torch.dtype) -> torch.nn.Module:
    torch.manual_seed(0)
    return LinearReLU(HIDDEN, FFN).to(device=device, dtype=dtype).eval()


def inputs(shape: dict[str, int], device: str) -> tuple[torch.Tensor]:
    return (torch.randn(shape["tokens"], HIDDEN, device=device),)


def relative_l2_error(reference: torch.Tensor, candidate: torch.Tensor) -> float:
    return float((candidate - reference).norm() / reference.norm())


workload = Workload(
    name="gemm-epilogue",
    build=build,
    inputs=inputs,
    traffic=[({"tokens": 128}, 0.3), ({"tokens": 1280}, 0.3), ({"tokens": 6400}, 0.4)],
    tolerances={
        "fp32": (1e-4, 1e-4),
        "tf32": (2e-2, 1e-2),
        "bf16": (1e-1, 2e-2),
        "fp16": (1e-2, 5e-3),
    },
    quality=Quality("relative_l2_error", relative_l2_error, threshold=1e-2, higher_is_better=False),
)
