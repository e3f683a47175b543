"""A tiny workload whose bf16 config runs but fails correctness (its tolerance is zero): a
measured, infeasible trial beside a feasible fp32 one."""

import torch

from advisor import Workload


def build(device: str, dtype: torch.dtype) -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.ReLU()).to(device, dtype).eval()


def inputs(shape: dict[str, int], device: str) -> tuple[torch.Tensor]:
    return (torch.randn(shape["batch"], 32, device=device),)


workload = Workload(
    name="bf16-inaccurate",
    build=build,
    inputs=inputs,
    traffic=[({"batch": 8}, 1)],
    dtypes=("fp32", "bf16"),
    tolerances={"bf16": (0.0, 0.0)},
)
