"""Reward-model training step: forward, backward and AdamW on preference pairs.

What it models: fine-tuning an agent's reward (preference) model in-house. The model is a
MiniLM-sized BERT (6 layers, hidden 384, 12 heads, via transformers) with a one-output head, as
TRL's reward trainer uses ``AutoModelForSequenceClassification(num_labels=1)``. One step scores a
chosen and a rejected response for each pair, takes the pairwise (Bradley-Terry) loss
``-log sigmoid(r_chosen - r_rejected)``, backpropagates, clips the gradient norm to 1 and applies
AdamW. bf16 runs use mixed precision as real training does: fp32 master weights and optimizer
state, the forward pass under ``torch.autocast`` (tf32 runs are fp32 with TF32 matmuls). Dropout
is off so that eager and compiled steps compute the same thing. Seeded random weights and token
ids (the cost of a step does not depend on what the weights or texts are).

Every call first copies back the weights kept at build time (one multi-tensor copy, small next
to the step), so every call (the reference, the first compiled call, each timed call) computes
the same loss and gradients, whatever order the advisor calls it in. AdamW's moments go on
accumulating, as in real training; they only shape the update, which the next call undoes.
`RewardTrainStep.step` is the plain step without the copy.

Traffic: 4-16 preference pairs of 128-512 tokens per step; responses fill 50-100% of ``seq``.

Quality: the step's loss and gradients against fp32 eager: the lower of 1 - relative loss error
and the cosine similarity of the flattened gradients, at least 0.99.
"""

from __future__ import annotations

import contextlib

import torch
import torch.nn.functional as F
from transformers import BertConfig, BertForSequenceClassification

from advisor import Quality, Workload

CONFIG = dict(
    vocab_size=30522,
    hidden_size=384,
    num_hidden_layers=6,
    num_attention_heads=12,
    intermediate_size=1536,
    max_position_embeddings=512,
    num_labels=1,
    hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0,
)
LR, WEIGHT_DECAY, MAX_GRAD_NORM = 1e-5, 0.01, 1.0


class RewardTrainStep(torch.nn.Module):
    """Calling it runs one training step from the weights kept at build time."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model
        self.autocast_dtype: torch.dtype | None = None
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(self.params, lr=LR, weight_decay=WEIGHT_DECAY)
        self.start = [p.detach().clone() for p in self.params]

    def step(self, chosen_ids, chosen_mask, rejected_ids, rejected_mask) -> dict:
        """One training step: loss, backward, gradient clipping, AdamW update."""
        for p in self.params:
            p.grad = None
        autocast = (
            torch.autocast(chosen_ids.device.type, dtype=self.autocast_dtype)
            if self.autocast_dtype is not None
            else contextlib.nullcontext()
        )
        with autocast:
            rewards = self.model(
                input_ids=torch.cat([chosen_ids, rejected_ids]),
                attention_mask=torch.cat([chosen_mask, rejected_mask]),
            ).logits[:, 0]
        chosen, rejected = rewards.float().chunk(2)
        loss = -F.logsigmoid(chosen - rejected).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.params, MAX_GRAD_NORM)
        self.optimizer.step()
        return {"loss": loss.detach(), "grads": [p.grad for p in self.params]}

    def forward(self, chosen_ids, chosen_mask, rejected_ids, rejected_mask) -> dict:
        with torch.no_grad():
            torch._foreach_copy_(self.params, self.start)  # back to the kept weights
        return self.step(chosen_ids, chosen_mask, rejected_ids, rejected_mask)


def build(device: str, dtype: torch.dtype) -> torch.nn.Module:
    torch.manual_seed(0)
    model = BertForSequenceClassification(BertConfig(**CONFIG)).to(device).train()
    trainer = RewardTrainStep(model)
    # one fp32 step on a warm-up batch, so that AdamW has its state as in mid-training
    trainer(**inputs({"batch": 2, "seq": 32}, device))
    trainer.autocast_dtype = None if dtype == torch.float32 else dtype
    return trainer


def inputs(shape: dict[str, int], device: str) -> dict[str, torch.Tensor]:
    """`batch` pairs of chosen and rejected token sequences, right-padded to `seq`."""
    n, seq = shape["batch"], shape["seq"]
    batch = {}
    for side in ("chosen", "rejected"):
        ids = torch.randint(1000, CONFIG["vocab_size"], (n, seq))
        lengths = torch.randint(seq // 2, seq + 1, (n, 1))
        mask = (torch.arange(seq) < lengths).long()
        ids[:, 0], ids[mask == 0] = 101, 0  # [CLS] first, [PAD] after the response
        batch[f"{side}_ids"], batch[f"{side}_mask"] = ids.to(device), mask.to(device)
    return batch


def loss_and_grad_agreement(reference: dict, candidate: dict) -> float:
    """min(1 - relative loss error, cosine similarity of all gradients flattened)."""
    loss_ref, loss_cand = reference["loss"], candidate["loss"]
    loss_agreement = 1 - float((loss_cand - loss_ref).abs() / loss_ref.abs().clamp(min=1e-12))
    grads_ref = torch.cat([g.flatten() for g in reference["grads"]])
    grads_cand = torch.cat([g.flatten() for g in candidate["grads"]])
    return min(loss_agreement, float(F.cosine_similarity(grads_ref, grads_cand, dim=0)))


def info() -> dict[str, str]:
    return {
        "architecture": "BertForSequenceClassification (MiniLM-L6: 6 x 384, 12 heads), "
        "1 output, dropout off",
        "step": f"pairwise loss, backward, clip_grad_norm {MAX_GRAD_NORM}, AdamW lr {LR} "
        f"wd {WEIGHT_DECAY}; bf16 = autocast with fp32 master weights",
        "weights": "seeded random; copied back before every call",
        "data": "seeded random token ids, responses 50-100% of seq",
    }


workload = Workload(
    name="reward-train",
    build=build,
    inputs=inputs,
    traffic=[
        ({"batch": 4, "seq": 128}, 0.3),
        ({"batch": 8, "seq": 256}, 0.4),
        ({"batch": 16, "seq": 512}, 0.3),
    ],
    dtypes=("fp32", "tf32", "bf16"),  # fp16 training needs a GradScaler; not modelled here
    tolerances={"fp32": (1e-5, 1e-3), "tf32": (1e-3, 5e-2), "bf16": (1e-2, 1e-1)},
    quality=Quality("loss_and_grad_agreement", loss_and_grad_agreement, threshold=0.99),
    inference=False,
    info=info,
)
