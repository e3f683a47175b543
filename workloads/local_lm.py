"""Local language model: a small GPT-style decoder with a static KV cache, prefill and decode.

What it models: a local LM on an agent's critical path (a router, a summarizer, a draft model)
served the way torch.compile likes it: a static KV cache, preallocated once, so every decode step
has the same shapes and the position is a tensor, not a shape. The model is GPT-style (learned
positions, pre-norm blocks, GELU MLP, tied input/output embeddings): 6 layers x 512, 8 heads, MLP
2048, 32k vocabulary, seeded random weights (~35M parameters). Each call returns the logits of
the next token for every sequence, as a generation loop needs them.

Shapes: ``batch`` sequences x ``tokens`` new tokens. A call with ``tokens > 1`` is a prefill: the
prompt's keys and values go into cache slots 0..batch-1 at positions 0..tokens-1. A call with
``tokens == 1`` is a decode step at position `DECODE_POS` in slots 8..8+batch-1, whose first
`DECODE_POS` positions hold an earlier context (seeded random keys and values). Both kinds of
call overwrite only what they read, so repeated calls and any order of shapes give the same
results. With a static cache a decode step attends over all `MAX_SEQ` positions (masked), so its
cost does not depend on the position.

Traffic: decode steps at batch 1, 4 and 8 (most calls: one per generated token) and prefills of
32-512 tokens at batch 1-8.

Quality: greedy next-token agreement with the fp32 eager reference: the share of sequences whose
argmax next token is the same, which must be 1.0.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from advisor import Quality, Workload

VOCAB, DIM, LAYERS, HEADS, MLP = 32000, 512, 6, 8, 2048
MAX_BATCH, MAX_SEQ = 8, 1024
DECODE_POS = 511  # decode steps continue a 511-token context
HEAD_DIM = DIM // HEADS


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(DIM), nn.LayerNorm(DIM)
        self.qkv, self.proj = nn.Linear(DIM, 3 * DIM), nn.Linear(DIM, DIM)
        self.fc1, self.fc2 = nn.Linear(DIM, MLP), nn.Linear(MLP, DIM)
        # the static cache: prefill slots 0..7, decode slots 8..15
        cache = (2 * MAX_BATCH, HEADS, MAX_SEQ, HEAD_DIM)
        self.register_buffer("k_cache", torch.zeros(cache), persistent=False)
        self.register_buffer("v_cache", torch.zeros(cache), persistent=False)

    def forward(self, x: torch.Tensor, pos: torch.Tensor, slot: int) -> torch.Tensor:
        b, t, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, HEADS, HEAD_DIM).permute(2, 0, 3, 1, 4)
        k_cache, v_cache = self.k_cache[slot : slot + b], self.v_cache[slot : slot + b]
        k_cache.index_copy_(2, pos, k)  # write this call's keys and values in place
        v_cache.index_copy_(2, pos, v)
        visible = pos[:, None] >= torch.arange(MAX_SEQ, device=pos.device)  # causal, (t, MAX_SEQ)
        out = F.scaled_dot_product_attention(q, k_cache, v_cache, attn_mask=visible)
        x = x + self.proj(out.transpose(1, 2).reshape(b, t, DIM))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class LocalLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.tok_emb = nn.Embedding(VOCAB, DIM)
        self.pos_emb = nn.Embedding(MAX_SEQ, DIM)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.ln_f = nn.LayerNorm(DIM)
        for name, p in self.named_parameters():  # GPT-2 initialization ...
            if p.dim() == 2:
                residual = name.endswith(("proj.weight", "fc2.weight"))
                nn.init.normal_(p, std=0.02 / (2 * LAYERS) ** 0.5 if residual else 0.02)
            elif name.endswith("bias"):
                nn.init.zeros_(p)
        # ... with token embeddings at the scale of a trained model's (GPT-2's are ~0.1), so
        # that next-token logits have a clear winner, as a trained LM's usually do
        nn.init.normal_(self.tok_emb.weight, std=0.1)

    def forward(self, tokens: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        """Next-token logits (batch, vocab) after `tokens` (batch, t) at positions `pos` (t,)."""
        slot = MAX_BATCH if tokens.shape[1] == 1 else 0  # decode steps use the second half
        x = self.tok_emb(tokens) + self.pos_emb(pos)
        for block in self.blocks:
            x = block(x, pos, slot)
        return self.ln_f(x[:, -1]) @ self.tok_emb.weight.T  # tied output embedding


def build(device: str, dtype: torch.dtype) -> nn.Module:
    torch.manual_seed(0)
    model = LocalLM()
    for block in model.blocks:  # the earlier context of the decode slots, at the scale of k, v
        history = torch.randn(2, 1, HEADS, MAX_SEQ, HEAD_DIM) * 0.45
        block.k_cache[MAX_BATCH:] = history[0]
        block.v_cache[MAX_BATCH:] = history[1]
    return model.to(device=device, dtype=dtype).eval()


def inputs(shape: dict[str, int], device: str) -> tuple[torch.Tensor, torch.Tensor]:
    batch, t = shape["batch"], shape["tokens"]
    if batch > MAX_BATCH or t > MAX_SEQ or (t == 1 and DECODE_POS >= MAX_SEQ):
        raise ValueError(f"shape {shape} exceeds the static cache ({MAX_BATCH} x {MAX_SEQ})")
    tokens = torch.randint(0, VOCAB, (batch, t))
    pos = torch.tensor([DECODE_POS]) if t == 1 else torch.arange(t)
    return tokens.to(device), pos.to(device)


def greedy_agreement(reference: torch.Tensor, candidate: torch.Tensor) -> float:
    """Share of sequences whose greedy next token matches the reference's."""
    return float((reference.argmax(dim=-1) == candidate.argmax(dim=-1)).float().mean())


def info() -> dict[str, str]:
    return {
        "architecture": f"GPT-style decoder, {LAYERS} x {DIM}, {HEADS} heads, MLP {MLP}, "
        f"vocab {VOCAB}, tied embeddings",
        "kv_cache": f"static: {2 * MAX_BATCH} slots x {MAX_SEQ} positions "
        f"(prefill slots 0-{MAX_BATCH - 1}, decode slots {MAX_BATCH}-{2 * MAX_BATCH - 1})",
        "weights": "seeded random (GPT-2 initialization)",
    }


workload = Workload(
    name="local-lm",
    build=build,
    inputs=inputs,
    traffic=[
        ({"batch": 1, "tokens": 1}, 0.35),  # decode
        ({"batch": 4, "tokens": 1}, 0.25),
        ({"batch": 8, "tokens": 1}, 0.2),
        ({"batch": 1, "tokens": 32}, 0.05),  # prefill
        ({"batch": 1, "tokens": 512}, 0.05),
        ({"batch": 4, "tokens": 128}, 0.05),
        ({"batch": 8, "tokens": 256}, 0.05),
    ],
    dtypes=("fp32", "tf32", "bf16", "fp16"),
    tolerances={
        "fp32": (1e-3, 1e-4),
        "tf32": (5e-2, 1e-2),
        "bf16": (2.5e-1, 5e-2),
        "fp16": (5e-2, 1e-2),
    },
    quality=Quality("greedy_token_agreement", greedy_agreement, threshold=1.0),
    info=info,
)
