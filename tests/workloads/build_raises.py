"""A component whose build fails (missing weights, wrong device, ...)."""

import torch

from advisor import Workload


def build(device: str, dtype: torch.dtype) -> torch.nn.Module:
    raise FileNotFoundError("weights.bin: the checkpoint is not downloaded")


workload = Workload(
    name="build-raises",
    build=build,
    inputs=lambda shape, device: (torch.ones(shape["batch"], device=device),),
    traffic=[({"batch": 4}, 1)],
    dtypes=("fp32",),
)
