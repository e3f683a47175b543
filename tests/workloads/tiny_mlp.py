"""A tiny MLP: the smallest real workload, for fast tests."""

import torch

from advisor import Quality, Workload


class TinyMLP(torch.nn.Module):
    def __init__(self, width: int = 64) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(width, width)
        self.fc2 = torch.nn.Linear(width, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.nn.functional.gelu(self.fc1(x) * 0.5 + 1.0))


def build(device: str, dtype: torch.dtype) -> torch.nn.Module:
    return TinyMLP().to(device=device, dtype=dtype).eval()


def inputs(shape: dict[str, int], device: str) -> tuple[torch.Tensor]:
    return (torch.randn(shape["batch"], 64, device=device),)


def top1_agreement(reference: torch.Tensor, candidate: torch.Tensor) -> float:
    return float((reference.argmax(-1) == candidate.argmax(-1)).float().mean())


workload = Workload(
    name="tiny-mlp",
    build=build,
    inputs=inputs,
    traffic=[({"batch": 16}, 3), ({"batch": 32}, 1)],
    dtypes=("fp32", "bf16"),
    quality=Quality("top1_agreement", top1_agreement, threshold=0.9),
    info=lambda: {"weights": "seeded random"},
)
