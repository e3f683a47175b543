"""A chain of 40 small pointwise ops on a small tensor: eager pays the dispatch of every op,
Inductor fuses the chain into one loop, so compiling wins by a wide margin, also on a busy CPU."""

import torch

from advisor import Workload


class Chain(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(40):
            x = x * 0.99 + 0.01
        return torch.sigmoid(x)


def build(device: str, dtype: torch.dtype) -> torch.nn.Module:
    return Chain().to(device, dtype).eval()


def inputs(shape: dict[str, int], device: str) -> tuple[torch.Tensor]:
    return (torch.randn(shape["n"], device=device),)


workload = Workload(
    name="many-small-ops",
    build=build,
    inputs=inputs,
    traffic=[({"n": 64}, 1)],
    dtypes=("fp32",),
)
