"""Samples in milliseconds -> summary statistics. Pure: no torch, no I/O.

Percentiles use linear interpolation between closest ranks (numpy's default "linear" method),
so they can be checked by hand: for n sorted samples, percentile p sits at rank (n - 1) * p / 100.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from advisor.records import SampleFigures

NOISE_IQR_RATIO = 0.10  # IQR / median above this flags a noisy measurement
WIDE_INTERVAL = 0.10  # an interval wider than this fraction of its median cannot order configs


def percentile(sorted_samples: Sequence[float], p: float) -> float:
    """The p-th percentile (0..100) of already sorted samples, linearly interpolated."""
    if not sorted_samples:
        raise ValueError("percentile of no samples")
    if not 0 <= p <= 100:
        raise ValueError(f"percentile {p} is outside 0..100")
    rank = (len(sorted_samples) - 1) * p / 100
    low = math.floor(rank)
    high = math.ceil(rank)
    frac = rank - low
    return sorted_samples[low] + (sorted_samples[high] - sorted_samples[low]) * frac


class Stats:
    """Summary of latency samples in milliseconds; each figure computed once, on first use."""

    def __init__(self, samples_ms: Sequence[float]) -> None:
        if not samples_ms:
            raise ValueError("Stats needs at least one sample")
        self.samples_ms = list(samples_ms)
        self.sorted_ms = sorted(self.samples_ms)

    @property
    def n_samples(self) -> int:
        return len(self.samples_ms)

    @cached_property
    def median_ms(self) -> float:
        return percentile(self.sorted_ms, 50)

    @cached_property
    def mean_ms(self) -> float:
        return statistics.fmean(self.samples_ms)

    @cached_property
    def min_ms(self) -> float:
        return self.sorted_ms[0]

    @cached_property
    def max_ms(self) -> float:
        return self.sorted_ms[-1]

    @cached_property
    def p90_ms(self) -> float:
        return percentile(self.sorted_ms, 90)

    @cached_property
    def p99_ms(self) -> float:
        return percentile(self.sorted_ms, 99)

    @cached_property
    def stdev_ms(self) -> float:
        return statistics.stdev(self.samples_ms) if self.n_samples > 1 else 0.0

    @cached_property
    def iqr_ms(self) -> float:
        return percentile(self.sorted_ms, 75) - percentile(self.sorted_ms, 25)

    @cached_property
    def noisy(self) -> bool:
        return self.median_ms > 0 and self.iqr_ms / self.median_ms > NOISE_IQR_RATIO

    def median_ci_ms(
        self, confidence: float = 0.95, resamples: int = 1000, seed: int = 0
    ) -> tuple[float, float]:
        """Bootstrap confidence interval of the median (percentile method, seeded)."""
        rng = random.Random(seed)
        n = self.n_samples
        medians = sorted(
            statistics.median(rng.choices(self.samples_ms, k=n)) for _ in range(resamples)
        )
        tail = (1 - confidence) / 2 * 100
        return percentile(medians, tail), percentile(medians, 100 - tail)

    def to_dict(self) -> SampleFigures:
        return {
            "median_ms": self.median_ms,
            "mean_ms": self.mean_ms,
            "min_ms": self.min_ms,
            "max_ms": self.max_ms,
            "p90_ms": self.p90_ms,
            "p99_ms": self.p99_ms,
            "stdev_ms": self.stdev_ms,
            "iqr_ms": self.iqr_ms,
            "n_samples": self.n_samples,
            "noisy": self.noisy,
        }


CONFIDENCE = 0.95


def ordered_tail(
    median_ms: float, p90_ms: float | None, p99_ms: float | None
) -> tuple[float | None, float | None]:
    """``p90_ms`` and ``p99_ms`` raised where needed so that p99 >= p90 >= ``median_ms``
    (None stays None: unknown). Percentiles of one set of samples already hold that order; this
    is for figures put together from several (pooled trials, a median replaced by a paired one).
    """
    p90 = None if p90_ms is None else max(float(p90_ms), median_ms)
    p99 = None if p99_ms is None else max(float(p99_ms), median_ms if p90 is None else p90)
    return p90, p99


def median_ci(
    samples_by_shape: Sequence[Sequence[float]],
    weights: Sequence[float] | None = None,
    confidence: float = CONFIDENCE,
    resamples: int = 1000,
    seed: int = 0,
) -> tuple[float, float]:
    """Bootstrap confidence interval of a traffic-weighted median (percentile method, seeded).

    Each resample draws every shape's samples with replacement and sums the shapes' medians
    with their (normalised) weights; one shape gives the plain median's interval, the same
    statistic as `advisor.stats.Stats.median_ci_ms`. Vectorised with numpy (imported here).

    A resample's median is drawn without drawing the resample: the median of n indices drawn
    uniformly is the order statistic ``floor(U_(k) * n)`` of n uniforms, and U_(k) is
    Beta(k, n - k + 1) (for even n, the next one is U_(k) plus the least of the n - k
    uniforms above it). The same distribution as resampling, at a cost that does not grow with
    n (a CPU trial of a fast call takes tens of thousands of samples).
    """
    import numpy as np

    if not samples_by_shape or any(len(s) == 0 for s in samples_by_shape):
        raise ValueError("median_ci needs at least one sample per shape")
    w = np.asarray(weights if weights is not None else [1.0] * len(samples_by_shape), float)
    w = w / w.sum()
    rng = np.random.default_rng(seed)
    total = np.zeros(resamples)
    for weight, samples in zip(w, samples_by_shape, strict=True):
        total += weight * _resampled_medians(np.sort(np.asarray(samples, float)), resamples, rng)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(total, [tail, 100 - tail])
    return float(low), float(high)


def _resampled_medians(ordered: Any, resamples: int, rng: Any) -> Any:
    """The medians of `resamples` bootstrap resamples of the sorted samples `ordered`."""
    import numpy as np

    n = len(ordered)
    k = (n + 1) // 2  # the lower middle order statistic (the middle one for odd n)
    u = rng.beta(k, n - k + 1, size=resamples)
    low = ordered[np.minimum((u * n).astype(np.int64), n - 1)]
    if n % 2:
        return low
    # the least of the n - k uniforms above U_(k): U_(k) + (1 - U_(k)) * (1 - V ** (1 / (n - k)))
    nxt = u + (1 - u) * (1 - rng.random(resamples) ** (1 / (n - k)))
    high = ordered[np.minimum((nxt * n).astype(np.int64), n - 1)]
    return (low + high) / 2


def paired_speedup(
    baseline_by_shape: Sequence[Sequence[float]],
    candidate_by_shape: Sequence[Sequence[float]],
    weights: Sequence[float] | None = None,
    confidence: float = CONFIDENCE,
    resamples: int = 1000,
    seed: int = 0,
) -> tuple[float, tuple[float, float]]:
    """Median over rounds of baseline time / candidate time, and its bootstrap interval.

    Samples are paired by round (the same index measured the baseline and the candidate back to
    back, as PyTorch's harness alternates eager and compiled); a round's ratio is the
    traffic-weighted baseline time over the traffic-weighted candidate time.
    """
    import numpy as np

    w = np.asarray(weights if weights is not None else [1.0] * len(baseline_by_shape), float)
    w = w / w.sum()
    base = np.asarray(baseline_by_shape, float)
    cand = np.asarray(candidate_by_shape, float)
    if base.shape != cand.shape or base.ndim != 2 or base.shape[1] == 0:
        raise ValueError("paired_speedup needs the same rounds for baseline and candidate")
    ratios = (w @ base) / (w @ cand)
    low, high = median_ci([ratios.tolist()], None, confidence, resamples, seed)
    return float(np.median(ratios)), (low, high)


MAX_ROUNDS = 1000


@dataclass(frozen=True)
class Rounds:
    """How long to measure: rounds until both `min_rounds` and `min_time_s`, never past
    `max_time_s` (with at least `floor_rounds`) or `max_rounds`; `warmup_rounds` untimed."""

    min_rounds: int = 100
    min_time_s: float = 2.0
    max_time_s: float = 30.0
    floor_rounds: int = 10
    max_rounds: int = MAX_ROUNDS
    warmup_rounds: int = 10

    @classmethod
    def for_device(cls, device: str, asked: float | None = None) -> Rounds:
        """The device's rounds; `asked` (seconds), when given, their least time."""
        if device.startswith("cuda"):
            return cls(min_time_s=asked or 2.0)
        return cls(min_rounds=30, min_time_s=asked or 1.0, max_time_s=10.0, warmup_rounds=3)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)
