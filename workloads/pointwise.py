"""Pointwise vertical fusion: the kernel-fusion article's ``sigmoid(x * w + b)``.

What it models: a dependent chain of elementwise ops (scale -> bias -> activation), the pattern
that gating, masking and activation code is full of. Eager PyTorch runs three kernels and writes
two intermediate tensors (5 full-tensor reads, 3 writes); Inductor fuses the chain into one kernel
(``triton_poi_fused_add_mul_sigmoid_0`` on a GPU, ``cpp_fused_add_mul_sigmoid_0`` on a CPU) that
reads x, w and b once and writes the result once.

Traffic: the article's 4096 x 4096 (memory-bound, the default shape) and 512 x 4096 (a 512-token
batch of activations, where launch overhead weighs more).

Quality: relative L2 error of the output against fp32 eager, at most 1e-2.
"""

from __future__ import annotations

import torch

from advisor import Quality, Workload


def pointwise_example(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    tmp = x * w
    tmp = tmp + b
    return tmp.sigmoid()


def build(device: str, dtype: torch.dtype):
    return pointwise_example  # no weights: x, w and b are all inputs, as in the article


def inputs(shape: dict[str, int], device: str) -> tuple[torch.Tensor, ...]:
    size = (shape["rows"], shape["cols"])
    return tuple(torch.randn(size, device=device) for _ in range(3))  # x, w, b


def relative_l2_error(reference: torch.Tensor, candidate: torch.Tensor) -> float:
    return float((candidate - reference).norm() / reference.norm())


workload = Workload(
    name="pointwise",
    build=build,
    inputs=inputs,
    traffic=[({"rows": 4096, "cols": 4096}, 0.7), ({"rows": 512, "cols": 4096}, 0.3)],
    tolerances={"bf16": (1e-2, 1e-2), "fp16": (2e-3, 2e-3)},  # outputs lie in (0, 1)
    quality=Quality("relative_l2_error", relative_l2_error, threshold=1e-2, higher_is_better=False),
)
