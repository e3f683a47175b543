"""A component whose forward raises on bf16 inputs only: the fp32 eager reference passes, an
eager bf16 config fails in the user's own code."""

import torch

from advisor import Workload


class RefusesBf16(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dtype == torch.bfloat16:
            raise ValueError("this component does not take bf16 inputs")
        return self.linear(x)


def build(device: str, dtype: torch.dtype) -> torch.nn.Module:
    return RefusesBf16().to(device, dtype).eval()


def inputs(shape: dict[str, int], device: str) -> tuple[torch.Tensor]:
    return (torch.randn(shape["batch"], 8, device=device),)


workload = Workload(name="raises-in-bf16", build=build, inputs=inputs,
                    traffic=[({"batch": 2}, 1)], dtypes=("fp32", "bf16"),
                    tolerances={"bf16": (0.1, 0.1)})
