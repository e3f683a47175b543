"""A call that is a fixed 20 ms host wait after a chain of 200 pointwise ops on 16,384 floats.
Compiled, the chain fuses into one loop, so every compiled mode beats eager by the chain's cost
(eager 5.9 ms, compiled 0.44 ms on one thread of a 2-core CPU: eager is a quarter behind, a gap
that load widens rather than erases), and compiled modes of the same graph (fullgraph on and off)
take the same time in every process: the leader of a sweep is compiled, and its twin ties with it
by construction.

The wait is a custom op (opaque to Dynamo, no graph break), so the compiled graph and its caches
are real.
"""

import time

import torch

from advisor import Workload

WAIT_S = 0.02


@torch.library.custom_op("advisor_tests::fixed_wait", mutates_args=())
def fixed_wait(x: torch.Tensor) -> torch.Tensor:
    deadline = time.perf_counter() + WAIT_S
    while time.perf_counter() < deadline:
        pass
    return x.clone()


@fixed_wait.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


class FixedCost(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(200):
            x = x * 0.99 + 0.01
        return torch.sigmoid(fixed_wait(x))


def build(device: str, dtype: torch.dtype) -> torch.nn.Module:
    return FixedCost().to(device, dtype).eval()


def inputs(shape: dict[str, int], device: str) -> tuple[torch.Tensor]:
    return (torch.randn(shape["n"], device=device),)


workload = Workload(
    name="fixed-cost",
    build=build,
    inputs=inputs,
    traffic=[({"n": 16384}, 1)],
    dtypes=("fp32",),
)
