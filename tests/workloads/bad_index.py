"""A component that indexes out of bounds: IndexError on a CPU, a device-side assert on a GPU."""

import torch

from advisor import Workload


def forward(x: torch.Tensor) -> torch.Tensor:
    index = torch.full((4,), x.shape[0] + 1000, dtype=torch.long, device=x.device)
    return x[index]


workload = Workload(
    name="bad-index",
    build=lambda device, dtype: forward,
    inputs=lambda shape, device: (torch.ones(shape["batch"], device=device),),
    traffic=[({"batch": 4}, 1)],
    dtypes=("fp32",),
)
