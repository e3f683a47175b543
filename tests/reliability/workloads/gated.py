"""A tiny eager workload whose trial is held in flight for as long as a test needs: in a process
started with $ADVISOR_TEST_GATE (a FIFO), the first build waits until the test opens the gate
(opens the FIFO for writing and closes it). Without the variable it builds at once."""

import os

import torch

from advisor import Workload

_waited = False


def build(device: str, dtype: torch.dtype) -> torch.nn.Module:
    global _waited
    gate = os.environ.get("ADVISOR_TEST_GATE")
    if gate and not _waited:
        _waited = True
        with open(gate) as f:  # blocks until the test's writer opens the FIFO, then EOF
            f.read()
    return torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.Tanh()).to(device, dtype).eval()


def inputs(shape: dict[str, int], device: str) -> tuple[torch.Tensor]:
    return (torch.randn(shape["batch"], 16, device=device),)


workload = Workload(
    name="gated",
    build=build,
    inputs=inputs,
    traffic=[({"batch": 4}, 1)],
    dtypes=("fp32", "bf16"),
    tolerances={"bf16": (0.1, 0.1)},
)
