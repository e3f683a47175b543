"""A tiny MLP whose bf16 call also sleeps 20 ms (a custom op, opaque to Dynamo), so that eager
fp32 beats eager bf16 by construction however loaded the host: a sleep does not stretch when a
busy neighbour holds the cores, and the MLP's own CPU work is far below it. For a sweep whose
answer must not turn on noise between two eager configs (tests/search/test_coverage.py)."""

import time

import torch

from advisor import Quality, Workload

WAIT_S = 0.02


@torch.library.custom_op("advisor_tests::dtype_gap_wait", mutates_args=())
def dtype_gap_wait(x: torch.Tensor) -> torch.Tensor:
    time.sleep(WAIT_S)
    return x.clone()


@dtype_gap_wait.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


class DtypeGap(torch.nn.Module):
    def __init__(self, wait: bool) -> None:
        super().__init__()
        self.wait = wait
        self.fc1 = torch.nn.Linear(64, 64)
        self.fc2 = torch.nn.Linear(64, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc2(torch.nn.functional.gelu(self.fc1(x)))
        return dtype_gap_wait(y) if self.wait else y


def build(device: str, dtype: torch.dtype) -> torch.nn.Module:
    return DtypeGap(wait=dtype == torch.bfloat16).to(device=device, dtype=dtype).eval()


def inputs(shape: dict[str, int], device: str) -> tuple[torch.Tensor]:
    return (torch.randn(shape["batch"], 64, device=device),)


def top1_agreement(reference: torch.Tensor, candidate: torch.Tensor) -> float:
    return float((reference.argmax(-1) == candidate.argmax(-1)).float().mean())


workload = Workload(
    name="dtype-gap",
    build=build,
    inputs=inputs,
    traffic=[({"batch": 16}, 1)],
    dtypes=("fp32", "bf16"),
    quality=Quality("top1_agreement", top1_agreement, threshold=0.9),
)
