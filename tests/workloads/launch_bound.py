"""Launch-bound by construction: a chain of 40 small pointwise ops on 64 numbers. Eager pays the
dispatch of every op (its profile: ~80 ops per call in well under a millisecond); Inductor fuses
the chain into one loop. Two dtypes, so the CPU space has six configs, of which the compiled ones
win by far: the priors must put them first."""

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
    name="launch-bound",
    build=build,
    inputs=inputs,
    traffic=[({"n": 64}, 1)],
    dtypes=("fp32", "bf16"),
)
