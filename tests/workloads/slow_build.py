"""A tiny workload whose build takes a few seconds: a trial that can be caught in flight."""

import threading

import torch

from advisor import Workload


def build(device: str, dtype: torch.dtype) -> torch.nn.Module:
    threading.Event().wait(4.0)  # a slow model load, so tests can kill a worker mid-trial
    return torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.Tanh()).to(device, dtype).eval()


def inputs(shape: dict[str, int], device: str) -> tuple[torch.Tensor]:
    return (torch.randn(shape["batch"], 16, device=device),)


workload = Workload(
    name="slow-build",
    build=build,
    inputs=inputs,
    traffic=[({"batch": 4}, 1)],
    dtypes=("fp32", "tf32", "bf16", "fp16"),
    tolerances={"bf16": (0.1, 0.1), "fp16": (0.05, 0.05)},
)
