"""A classifier that returns a Hugging Face ``SequenceClassifierOutput``, with a quality check
written to the documented contract: it reads ``reference.logits`` (an attribute a plain dict
would not have)."""

import torch
from transformers.modeling_outputs import SequenceClassifierOutput

from advisor import Quality, Workload


class Classifier(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> SequenceClassifierOutput:
        return SequenceClassifierOutput(logits=self.linear(x))


def build(device: str, dtype: torch.dtype) -> torch.nn.Module:
    return Classifier().to(device=device, dtype=dtype).eval()


def inputs(shape: dict[str, int], device: str) -> tuple[torch.Tensor]:
    return (torch.randn(shape["batch"], 16, device=device),)


def same_top1(reference: SequenceClassifierOutput, candidate: SequenceClassifierOutput) -> float:
    assert isinstance(reference, SequenceClassifierOutput), type(reference)
    assert isinstance(candidate, SequenceClassifierOutput), type(candidate)
    agree = reference.logits.argmax(-1) == candidate.logits.argmax(-1)
    return float(agree.float().mean())


workload = Workload(
    name="hf-output",
    build=build,
    inputs=inputs,
    traffic=[({"batch": 8}, 1.0)],
    dtypes=("fp32", "bf16"),
    quality=Quality("same_top1", same_top1, threshold=0.5),
)
