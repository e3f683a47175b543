"""A function with a graph break in the middle: fullgraph must refuse it, default splits it."""

import torch

from advisor import Workload


class GraphBreak(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x * 2.0
        torch._dynamo.graph_break()  # what a print(), a .item() or a numpy call would cause
        return torch.sigmoid(y) + 1.0


def build(device: str, dtype: torch.dtype) -> torch.nn.Module:
    return GraphBreak()


def inputs(shape: dict[str, int], device: str) -> tuple[torch.Tensor]:
    return (torch.randn(shape["batch"], 16, device=device),)


workload = Workload(
    name="graph-break",
    build=build,
    inputs=inputs,
    traffic=[({"batch": 8}, 1)],
    dtypes=("fp32",),
)
