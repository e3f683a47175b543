"""Reduction fusion: the kernel-fusion article's ``(x * 2.0).sum(dim=-1) + 1.0``.

What it models: a reduction with a pointwise prologue and epilogue, the shape of normalization,
pooling, score aggregation and loss fragments. Eager runs three kernels (mul, sum, add) and
materializes the scaled copy of x; Inductor folds the multiply into the reduction's loads and the
add into its store, one kernel (``triton_per_fused_add_mul_sum_0`` on a GPU,
``cpp_fused_add_mul_sum_0`` on a CPU).

Traffic: the article's 1024 x 1024 (the default shape) and 16384 x 1024 (row sums over a large
batch, where memory bandwidth rather than launches sets the time).

Quality: relative L2 error of the row sums against fp32 eager, at most 1e-2.
"""

from __future__ import annotations

import torch

from advisor import Quality, Workload


def reduction_example(x: torch.Tensor) -> torch.Tensor:
    tmp = x * 2.0  # pointwise prologue
    result = tmp.sum(dim=-1)  # reduction
    return result + 1.0  # pointwise epilogue


def build(device: str, dtype: torch.dtype):
    return reduction_example


def inputs(shape: dict[str, int], device: str) -> tuple[torch.Tensor]:
    return (torch.randn(shape["rows"], shape["cols"], device=device),)


def relative_l2_error(reference: torch.Tensor, candidate: torch.Tensor) -> float:
    return float((candidate - reference).norm() / reference.norm())


workload = Workload(
    name="reduction",
    build=build,
    inputs=inputs,
    traffic=[({"rows": 1024, "cols": 1024}, 0.7), ({"rows": 16384, "cols": 1024}, 0.3)],
    default_shape={"rows": 1024, "cols": 1024},
    # sums of 1024 terms reach ~±200: low-precision outputs are off by a few units in the last place
    tolerances={
        "fp32": (1e-3, 1e-4),
        "tf32": (1e-3, 1e-4),
        "bf16": (2.0, 2e-2),
        "fp16": (2.5e-1, 5e-3),
    },
    quality=Quality("relative_l2_error", relative_l2_error, threshold=1e-2, higher_is_better=False),
)
