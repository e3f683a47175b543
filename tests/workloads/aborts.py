"""A component that kills its own process (as a segfault or a failed CUDA assert would)."""

import os

import torch

from advisor import Workload


def forward(x: torch.Tensor) -> torch.Tensor:
    os.abort()


workload = Workload(
    name="aborts",
    build=lambda device, dtype: forward,
    inputs=lambda shape, device: (torch.ones(shape["batch"], device=device),),
    traffic=[({"batch": 4}, 1)],
    dtypes=("fp32",),
)
