"""A workload that breaks the contract at run time: inputs() returns a bare tensor."""

import torch

from advisor import Workload


def inputs(shape: dict[str, int], device: str) -> torch.Tensor:
    return torch.ones(shape["batch"], device=device)  # should be a tuple or a dict


workload = Workload(
    name="bad-inputs",
    build=lambda device, dtype: torch.nn.Identity(),
    inputs=inputs,
    traffic=[({"batch": 4}, 1)],
    dtypes=("fp32",),
)
