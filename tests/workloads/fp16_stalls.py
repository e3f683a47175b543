"""A tiny model whose bf16 copy does a sixth of the fp32 copy's work (16 against 96 products of
two 128 x 128 fp32 matrices per call, beside its Linear) and whose fp16 build never returns: a
budgeted sweep measures the first two, and its fp16 trial is still running when the trials'
share of the budget ends. The extra work is computation, not sleep, so that a loaded host slows
both copies alike (a sleeping call waits for the scheduler on every wake-up)."""

import threading

import torch

from advisor import Workload

ROUNDS = {torch.float32: 96, torch.bfloat16: 16}


class Works(torch.nn.Module):
    def __init__(self, rounds: int, device: str) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(16, 16)
        self.rounds = rounds
        generator = torch.Generator().manual_seed(1)
        # plain attributes, not buffers: fp32 whatever the model's dtype
        self.a = torch.randn(128, 128, generator=generator).to(device)
        self.b = torch.randn(128, 128, generator=generator).to(device) / 128

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(self.rounds):
            torch.mm(self.a, self.b)
        return self.linear(x)


def build(device: str, dtype: torch.dtype) -> torch.nn.Module:
    if dtype == torch.float16:
        threading.Event().wait()  # forever: only the budget ends this trial
    torch.manual_seed(0)
    return Works(ROUNDS[dtype], device).to(device, dtype).eval()


workload = Workload(
    name="fp16-stalls",
    build=build,
    inputs=lambda shape, device: (torch.randn(shape["batch"], 16, device=device),),
    traffic=[({"batch": 4}, 1)],
    dtypes=("fp32", "bf16", "fp16"),
    tolerances={"bf16": (0.1, 0.1), "fp16": (0.05, 0.05)},
)
