"""A tiny masked sequence scorer with pad() and cut(): shape strategies on a fast workload.

Token ids and an attention mask of shape (batch, seq) -> one score per row: embeddings, a small
per-token MLP, a masked mean over the sequence, a linear head. Padded tokens carry mask 0 and
drop out of the mean; padded rows are extra rows that cut() slices away.
"""

import torch

from advisor import Quality, Workload

VOCAB, WIDTH = 50, 16


class TinySeq(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, WIDTH)
        self.mlp = torch.nn.Linear(WIDTH, WIDTH)
        self.head = torch.nn.Linear(WIDTH, 1)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        h = torch.nn.functional.gelu(self.mlp(self.embed(ids)))
        m = mask.unsqueeze(-1).to(h.dtype)
        pooled = (h * m).sum(1) / m.sum(1).clamp_min(1.0)
        return self.head(pooled)[:, 0]


def build(device: str, dtype: torch.dtype) -> torch.nn.Module:
    return TinySeq().to(device=device, dtype=dtype).eval()


def inputs(shape: dict[str, int], device: str) -> dict[str, torch.Tensor]:
    batch, seq = shape["batch"], shape["seq"]
    ids = torch.randint(1, VOCAB, (batch, seq), device=device)
    lengths = torch.randint(1, seq + 1, (batch,), device=device)
    mask = (torch.arange(seq, device=device)[None, :] < lengths[:, None]).long()
    return {"ids": ids * mask, "mask": mask}


def pad(
    args: dict[str, torch.Tensor], from_dims: dict[str, int], to_dims: dict[str, int]
) -> dict[str, torch.Tensor]:
    rows = to_dims["batch"] - from_dims["batch"]
    cols = to_dims["seq"] - from_dims["seq"]
    return {
        name: torch.nn.functional.pad(t, (0, cols, 0, rows), value=0) for name, t in args.items()
    }


def cut(outputs: torch.Tensor, from_dims: dict[str, int]) -> torch.Tensor:
    return outputs[: from_dims["batch"]]


def same_order(reference: torch.Tensor, candidate: torch.Tensor) -> float:
    return float((reference.argsort() == candidate.argsort()).float().mean())


workload = Workload(
    name="tiny-seq",
    build=build,
    inputs=inputs,
    traffic=[
        ({"batch": 2, "seq": 5}, 4),
        ({"batch": 3, "seq": 7}, 3),
        ({"batch": 2, "seq": 12}, 2),
        ({"batch": 4, "seq": 30}, 1),
        ({"batch": 3, "seq": 33}, 1),
    ],
    dtypes=("fp32", "bf16"),
    quality=Quality("same_order", same_order, threshold=0.5),
    pad=pad,
    cut=cut,
    info=lambda: {"weights": "seeded random"},
)
