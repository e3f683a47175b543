"""A call that is a fixed 20 ms host sleep after a chain of 200 small pointwise ops (64 floats).
Compiled, the chain fuses into one loop, so every compiled mode beats eager by the chain's
dispatch cost (about 1 ms of CPU work, which load stretches), and compiled modes of the same
graph (fullgraph on and off) take the same time in every process: the leader of a sweep is
compiled, and its twin comes within a few percent of it (a contender) however loaded the host:
a sleep, unlike CPU work, does not stretch when a busy neighbour holds the cores (only its
wake-up can be late, by far less than the 10% that makes a contender). The tensor stays small
so that Inductor's loop runs on one thread (an OpenMP loop slows down by multiples when a
neighbour holds the other core).

The wait is a custom op (opaque to Dynamo, no graph break), so the compiled graph and its caches
are real.
"""

import time

import torch

from advisor import Workload

WAIT_S = 0.02
OPS = 200


@torch.library.custom_op("advisor_tests::fixed_wait", mutates_args=())
def fixed_wait(x: torch.Tensor) -> torch.Tensor:
    time.sleep(WAIT_S)
    return x.clone()


@fixed_wait.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


class FixedCost(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(OPS):
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
    traffic=[({"n": 64}, 1)],
    dtypes=("fp32",),
)
