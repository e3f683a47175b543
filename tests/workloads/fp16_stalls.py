"""A tiny model whose bf16 copy is clearly faster than fp32 (each call waits 1 ms vs 6 ms) and
whose fp16 build never returns: a budgeted sweep measures the first two, and its fp16 trial is
still running when the trials' share of the budget ends."""

import threading
import time

import torch

from advisor import Workload

WAIT_S = {torch.float32: 0.006, torch.bfloat16: 0.001}


class Waits(torch.nn.Module):
    def __init__(self, wait_s: float) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(16, 16)
        self.wait_s = wait_s

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        time.sleep(self.wait_s)
        return self.linear(x)


def build(device: str, dtype: torch.dtype) -> torch.nn.Module:
    if dtype == torch.float16:
        threading.Event().wait()  # forever: only the budget ends this trial
    torch.manual_seed(0)
    return Waits(WAIT_S[dtype]).to(device, dtype).eval()


workload = Workload(
    name="fp16-stalls",
    build=build,
    inputs=lambda shape, device: (torch.randn(shape["batch"], 16, device=device),),
    traffic=[({"batch": 4}, 1)],
    dtypes=("fp32", "bf16", "fp16"),
    tolerances={"bf16": (0.1, 0.1), "fp16": (0.05, 0.05)},
)
