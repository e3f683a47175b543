"""Vision encoder: a ViT-S/16 turning 224 x 224 images into 384-d embeddings.

What it models: the image encoder of a multimodal agent (screenshots, photos, documents), the
size of timm's ``vit_small_patch16_224``: 16 x 16 patches -> 196 tokens + a class token, 12
pre-norm transformer blocks of width 384 with 6 heads and a 1536-wide MLP; the embedding is the
class token after the final LayerNorm. timm's model is used when timm is installed; otherwise
the plain PyTorch implementation below, which has the same layers and parameter names (timm
weights load into it). Both use seeded random weights (no pretrained download offline).

Inputs: synthetic images with natural-image statistics (smooth colour fields plus fine texture),
normalized with the ImageNet mean and standard deviation, as a real preprocessing step would.

Traffic: 1 image (a single screenshot, the most frequent), 8 and 32 images (a document's pages, a
batch of photos).

Quality: cosine similarity of every image embedding to its fp32 eager reference, at least 0.99.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from advisor import Quality, Workload

IMAGE, PATCH, DIM, DEPTH, HEADS = 224, 16, 384, 12, 6
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)  # ImageNet


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, c = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        out = F.scaled_dot_product_attention(q, k, v)
        return self.proj(out.transpose(1, 2).reshape(b, n, c))


class Mlp(nn.Module):
    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(dim, hidden), nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.gelu(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim, eps=1e-6), nn.LayerNorm(dim, eps=1e-6)
        self.attn, self.mlp = Attention(dim, heads), Mlp(dim, 4 * dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class PatchEmbed(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(3, dim, kernel_size=PATCH, stride=PATCH)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)  # (batch, 196, dim)


class VisionTransformer(nn.Module):
    """ViT-S/16 returning the final class-token embedding."""

    def __init__(self) -> None:
        super().__init__()
        self.patch_embed = PatchEmbed(DIM)
        self.cls_token = nn.Parameter(torch.randn(1, 1, DIM) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, (IMAGE // PATCH) ** 2 + 1, DIM) * 0.02)
        self.blocks = nn.Sequential(*(Block(DIM, HEADS) for _ in range(DEPTH)))
        self.norm = nn.LayerNorm(DIM, eps=1e-6)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        x = self.patch_embed(images)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embed
        return self.norm(self.blocks(x))[:, 0]


def _timm():
    try:
        import timm
    except ImportError:
        return None
    return timm


def build(device: str, dtype: torch.dtype) -> nn.Module:
    torch.manual_seed(0)
    if (timm := _timm()) is not None:
        model = timm.create_model("vit_small_patch16_224", pretrained=False, num_classes=0)
    else:
        model = VisionTransformer()
    return model.to(device=device, dtype=dtype).eval()


def inputs(shape: dict[str, int], device: str) -> tuple[torch.Tensor]:
    """`batch` synthetic RGB images in [0, 1], normalized like ImageNet inputs."""
    n = shape["batch"]
    coarse = F.interpolate(torch.rand(n, 3, 7, 7), size=(IMAGE, IMAGE), mode="bicubic")
    images = (coarse + 0.1 * torch.randn(n, 3, IMAGE, IMAGE)).clamp(0, 1)
    mean, std = torch.tensor(MEAN).view(1, 3, 1, 1), torch.tensor(STD).view(1, 3, 1, 1)
    return (((images - mean) / std).to(device),)


def min_cosine(reference: torch.Tensor, candidate: torch.Tensor) -> float:
    """The lowest cosine similarity between an embedding and its reference."""
    return float(F.cosine_similarity(reference, candidate, dim=-1).min())


def info() -> dict[str, str]:
    timm = _timm()
    return {
        "architecture": "ViT-S/16 (12 x 384, 6 heads, MLP 1536), 224 x 224, class-token output",
        "implementation": f"timm {timm.__version__} vit_small_patch16_224"
        if timm
        else "plain PyTorch (timm not installed)",
        "weights": "seeded random",
        "images": "synthetic (smooth colour fields + texture), ImageNet-normalized",
    }


workload = Workload(
    name="vision-encoder",
    build=build,
    inputs=inputs,
    traffic=[({"batch": 1}, 0.5), ({"batch": 8}, 0.3), ({"batch": 32}, 0.2)],
    dtypes=("fp32", "tf32", "bf16", "fp16"),
    tolerances={
        "fp32": (1e-4, 1e-4),
        "tf32": (2e-2, 1e-2),
        "bf16": (1e-1, 5e-2),
        "fp16": (2e-2, 1e-2),
    },
    quality=Quality("min_cosine_similarity", min_cosine, threshold=0.99),
    info=info,
)
