"""Convolutional image classifier: a ResNet-50 labelling 224 x 224 images with one of 1000 classes.

What it models: the image classifier of a vision pipeline (triage of screenshots, photos and
scanned pages before an agent acts on them): torchvision's ``resnet50`` (v1.5: stride 2 in the
3 x 3 convolution of a bottleneck), a 7 x 7 stem, 16 bottleneck blocks in four stages (3, 4, 6,
3; widths 256 to 2048), global average pooling and a 2048 -> 1000 linear head, 25.6M parameters;
BatchNorm in inference mode. torchvision's ``resnet50(weights=None)`` is used when torchvision is
installed; otherwise the plain PyTorch implementation below, which has the same layers,
initialization and parameter names (torchvision weights load into it). Both use seeded random
weights (no pretrained download offline); ``info()`` says which implementation ran. Unlike the
transformer workloads it is convolution-bound: Inductor fuses the BatchNorm, ReLU and
residual-add epilogues (and folds BatchNorm into the convolutions with the ``freezing`` option),
but the convolutions stay library calls.

Inputs: synthetic images with natural-image statistics (smooth colour fields plus fine texture),
normalized with the ImageNet mean and standard deviation, as a real preprocessing step would.

Traffic: 1 image (an interactive request), 8 and 16 images (a batch of pages or photos); batches
of 16 dominate.

Quality: top-1 label agreement with the fp32 eager reference, near-ties excused: an image agrees
when the candidate's top class is the reference's, or one the reference scores within 1% of its
logit range (max - min over the 1000 classes) of its top class (the reranker's tie rule); at
least 1.0, every image. Why this check: a classifier's decision is its top-1 label, and a swap
between two classes the reference itself cannot tell apart is rounding, not an error. fp32
compiled always passes: a swap outside the band needs an error of half the band (about 0.6
logits here), and fp32 compiled differs from eager by about 4e-5 on the CPU. Measured on the
seeded random weights (CPU, batches 1, 8 and 16): every image's top class is the same one (a
random ResNet's logits are dominated by an image-independent part: range about 125, top-1 margin
at least 1.6), bf16 moves a logit by at most 0.37 and keeps every top-1 label; so on random
weights the check confirms that class, and the element-wise tolerances carry the rest. Rejected:
top-5 overlap (bf16 swaps near-tied 5th and 6th classes, 0.04 apart: overlap 0.8 at batch 16),
and the cosine similarity of the logits (at least 0.99998 in bf16: it measures the same
image-independent part).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from advisor import Quality, Workload

IMAGE, CLASSES = 224, 1000
STAGES = ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2))  # planes, blocks, stride
EXPANSION = 4
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)  # ImageNet
TIE = 0.01  # share of the reference's logit range within which two classes tie


class Bottleneck(nn.Module):
    """1x1 -> 3x3 (stride) -> 1x1 convolutions with BatchNorm, plus the (projected) input."""

    def __init__(
        self, inplanes: int, planes: int, stride: int = 1, downsample: nn.Module | None = None
    ) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, kernel_size=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * EXPANSION, kernel_size=1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * EXPANSION)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        out += identity
        return self.relu(out)


class ResNet50(nn.Module):
    """torchvision's ResNet-50: same modules, in the same order, with the same initialization."""

    def __init__(self, num_classes: int = CLASSES) -> None:
        super().__init__()
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1, self.layer2, self.layer3, self.layer4 = (
            self._stage(planes, blocks, stride) for planes, blocks, stride in STAGES
        )
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * EXPANSION, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def _stage(self, planes: int, blocks: int, stride: int) -> nn.Sequential:
        downsample = None
        if stride != 1 or self.inplanes != planes * EXPANSION:
            downsample = nn.Sequential(
                nn.Conv2d(
                    self.inplanes, planes * EXPANSION, kernel_size=1, stride=stride, bias=False
                ),
                nn.BatchNorm2d(planes * EXPANSION),
            )
        layers = [Bottleneck(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * EXPANSION
        layers += [Bottleneck(self.inplanes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def _torchvision():
    try:
        import torchvision
    except ImportError:
        return None
    return torchvision


def build(device: str, dtype: torch.dtype) -> nn.Module:
    torch.manual_seed(0)
    if (torchvision := _torchvision()) is not None:
        model = torchvision.models.resnet50(weights=None)
    else:
        model = ResNet50()
    return model.to(device=device, dtype=dtype).eval()


def inputs(shape: dict[str, int], device: str) -> tuple[torch.Tensor]:
    """`batch` synthetic RGB images in [0, 1], normalized like ImageNet inputs."""
    n = shape["batch"]
    coarse = F.interpolate(torch.rand(n, 3, 7, 7), size=(IMAGE, IMAGE), mode="bicubic")
    images = (coarse + 0.1 * torch.randn(n, 3, IMAGE, IMAGE)).clamp(0, 1)
    mean, std = torch.tensor(MEAN).view(1, 3, 1, 1), torch.tensor(STD).view(1, 3, 1, 1)
    return (((images - mean) / std).to(device),)


def top1_agreement(reference: torch.Tensor, candidate: torch.Tensor) -> float:
    """Share of images whose candidate top-1 class is the reference's, or a class the reference
    scores within `TIE` of its logit range of its top class (a tie, not an error)."""
    best = reference.max(dim=-1).values
    spread = best - reference.min(dim=-1).values
    chosen = reference.gather(-1, candidate.argmax(dim=-1, keepdim=True)).squeeze(-1)
    return float((best - chosen <= TIE * spread).float().mean())


def info() -> dict[str, str]:
    torchvision = _torchvision()
    return {
        "architecture": "ResNet-50 v1.5 (bottlenecks 3-4-6-3, 2048 -> 1000), 224 x 224, "
        "BatchNorm in inference mode, logits output",
        "implementation": f"torchvision {torchvision.__version__} resnet50(weights=None)"
        if torchvision
        else "plain PyTorch (torchvision not installed)",
        "weights": "seeded random (torchvision's initialization)",
        "images": "synthetic (smooth colour fields + texture), ImageNet-normalized",
    }


workload = Workload(
    name="convnet",
    build=build,
    inputs=inputs,
    traffic=[({"batch": 1}, 0.2), ({"batch": 8}, 0.3), ({"batch": 16}, 0.5)],
    dtypes=("fp32", "tf32", "bf16", "fp16"),
    # logits spread over about +-60 (std about 17): absolute tolerances scaled to that. CPU,
    # batches 1-16: bf16 needs atol 0.28 at rtol 5e-2, fp16 0.03 at 2e-2, fp32 compiled errs by
    # 4e-5 at most; tf32 is an estimate (fp16's mantissa in the convolutions' inputs)
    tolerances={
        "fp32": (1e-3, 1e-4),
        "tf32": (2e-1, 2e-2),
        "bf16": (1.0, 5e-2),
        "fp16": (1e-1, 2e-2),
    },
    quality=Quality("top1_agreement", top1_agreement, threshold=1.0),
    info=info,
)
