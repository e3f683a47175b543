"""A tiny workload that allows all four dtypes: an eager-only space of four cheap configs."""

import torch

from advisor import Workload


def build(device: str, dtype: torch.dtype) -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.ReLU()).to(device, dtype).eval()


def inputs(shape: dict[str, int], device: str) -> tuple[torch.Tensor]:
    return (torch.randn(shape["batch"], 32, device=device),)


workload = Workload(
    name="four-dtypes",
    build=build,
    inputs=inputs,
    traffic=[({"batch": 8}, 1)],
    dtypes=("fp32", "tf32", "bf16", "fp16"),
    tolerances={"bf16": (0.1, 0.1), "fp16": (0.05, 0.05)},
)
