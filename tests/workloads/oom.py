"""A component too big for any device: building it asks for an exbibyte."""

import torch

from advisor import Workload


def build(device: str, dtype: torch.dtype) -> torch.nn.Module:
    weights = torch.empty(2**60, dtype=torch.uint8, device=device)
    return lambda x: x + weights[0]


workload = Workload(
    name="oom",
    build=build,
    inputs=lambda shape, device: (torch.ones(shape["batch"], device=device),),
    traffic=[({"batch": 4}, 1)],
    dtypes=("fp32",),
)
