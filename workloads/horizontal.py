"""Horizontal fusion: the same update applied to every tensor of a list (a weight EMA).

What it models: keeping an exponential moving average of a model's weights, a step that training
and distillation loops run after every optimizer step: ``ema = decay * ema + (1 - decay) * p``
for each of the model's parameter tensors (here those of a BERT-style encoder). The tensors are
independent and mostly small, so eager PyTorch pays three kernel launches per tensor (hundreds per
call) for very little arithmetic. Inductor's default mode fuses each tensor's chain into one
kernel (vertical fusion); on a GPU its ``combo_kernels`` option also merges the independent
kernels into a few launches (horizontal fusion): sweep it as an Inductor option.

Traffic: the parameter list of a 6-layer x 384 encoder (MiniLM-sized, the default shape) and of a
12-layer x 768 one (BERT-base-sized); the embeddings are left out.

Quality: relative L2 error of the updated averages against fp32 eager, at most 1e-2.
"""

from __future__ import annotations

import torch

from advisor import Quality, Workload

DECAY = 0.999


def ema_update(ema: list[torch.Tensor], params: list[torch.Tensor]) -> list[torch.Tensor]:
    return [DECAY * e + (1 - DECAY) * p for e, p in zip(ema, params, strict=True)]


def build(device: str, dtype: torch.dtype):
    return ema_update


def encoder_param_shapes(layers: int, hidden: int) -> list[tuple[int, ...]]:
    """Parameter shapes of a BERT-style encoder layer stack (4x wide feed-forward)."""
    per_layer = [
        *[(hidden, hidden), (hidden,)] * 4,  # query, key, value, attention output
        (hidden,),
        (hidden,),  # attention LayerNorm
        (4 * hidden, hidden),
        (4 * hidden,),
        (hidden, 4 * hidden),
        (hidden,),  # feed-forward
        (hidden,),
        (hidden,),  # output LayerNorm
    ]
    return per_layer * layers


def inputs(shape: dict[str, int], device: str) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    shapes = encoder_param_shapes(shape["layers"], shape["hidden"])
    params = [torch.randn(s, device=device) * 0.02 for s in shapes]
    ema = [p + torch.randn_like(p) * 1e-3 for p in params]
    return ema, params


def relative_l2_error(reference: list[torch.Tensor], candidate: list[torch.Tensor]) -> float:
    ref = torch.cat([t.flatten() for t in reference])
    cand = torch.cat([t.flatten() for t in candidate])
    return float((cand - ref).norm() / ref.norm())


workload = Workload(
    name="horizontal",
    build=build,
    inputs=inputs,
    traffic=[({"layers": 6, "hidden": 384}, 0.6), ({"layers": 12, "hidden": 768}, 0.4)],
    tolerances={"bf16": (2e-4, 1e-2), "fp16": (2e-5, 2e-3)},  # values are ~0.02
    quality=Quality("relative_l2_error", relative_l2_error, threshold=1e-2, higher_is_better=False),
)
