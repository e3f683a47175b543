"""Priors: which configs a budgeted sweep tries first, and why. Pure: no torch, no Optuna.

A prior is one row of `PRIORS`: a rule (which configs it speaks for, given the eager fp32
baseline's `Profile`), the speedup it expects for them, and the evidence behind it. A config's
expected speedup over eager fp32 is the product of the rows that apply; its cost is the fixed
cost of a trial plus its mode's compile cost (`COMPILE_COST`, in units of one ``default``
compile). `rank` orders the configs still to measure by expected gain per unit of cost
(``ln(speedup) / cost``), keeps each max-autotune config after its cheaper twin, and says for
each why it stands where it does. Priors estimate; the sweep measures.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from advisor.config import CompileConfig
from advisor.records import TrialRecord
from advisor.units import duration_ms

# Host time eager PyTorch spends per op (dispatch + launch), by device kind: what turns a launch
# count into a share of the eager wall time.
HOST_US_PER_OP = {"cuda": 20.0, "cpu": 5.0}
UNKNOWN_LAUNCH_SHARE = 0.4  # before (or without) the baseline's profile
# Relative compile cost per mode (one `default` compile = 1); a trial's fixed cost (process
# start, build, reference, measurement) on top. H200, torch 2.11, the reranker: the max-autotune
# modes compiled cold in 56.8-105.3 s against 11.5-13.8 s for default
# (bench/results/h200_runs6_7_trials.txt).
COMPILE_COST = {"eager": 0.0, "default": 1.0, "reduce-overhead": 1.1,
                "max-autotune-no-cudagraphs": 5.0, "max-autotune": 5.5}
TRIAL_FIXED_COST = 0.5
# The cheaper twin of each autotuning mode: the same kernels' schedule without the autotuning.
TWINS = {"max-autotune-no-cudagraphs": "default", "max-autotune": "reduce-overhead"}
HALF = ("bf16", "fp16")


@dataclass(frozen=True)
class Profile:
    """What the eager fp32 baseline measured, as the priors read it."""

    device: str  # "cuda" or "cpu"
    eager_ms: float | None = None
    ops_per_call: int | None = None  # launches on a GPU (kernels where launches are unknown)
    gpu_busy_share: float | None = None  # kernels' time over wall time, when a trial records it

    @classmethod
    def of(cls, device: str, baseline: TrialRecord | None) -> Profile:
        """The profile of a stored baseline record (None or a failed one: unknown)."""
        kind = "cuda" if device.startswith("cuda") else "cpu"
        if not baseline or baseline.get("status") != "ok":
            return cls(kind)
        ops = baseline.get("eager_launches_per_call")
        if ops is None:
            ops = baseline.get("launches_per_call")
        if ops is None:
            ops = baseline.get("eager_kernels_per_call") or baseline.get("kernels_per_call")
        return cls(kind, baseline.get("median_ms"), ops, baseline.get("gpu_busy_share"))

    @property
    def launch_share(self) -> float:
        """The share of eager wall time spent launching rather than computing."""
        if self.gpu_busy_share is not None:
            return min(1.0, max(0.0, 1.0 - self.gpu_busy_share))
        if not self.eager_ms or self.ops_per_call is None:
            return UNKNOWN_LAUNCH_SHARE
        return min(1.0, self.ops_per_call * HOST_US_PER_OP[self.device] / (self.eager_ms * 1000))

    @property
    def known(self) -> bool:
        return self.gpu_busy_share is not None or bool(self.eager_ms and self.ops_per_call)

    def describe(self) -> str:
        if not self.known:
            return "baseline profile unknown"
        ops = f"{self.ops_per_call} ops per call in {duration_ms(self.eager_ms)}"
        return f"~{self.launch_share:.0%} of eager time launching ({ops})"


@dataclass(frozen=True)
class Prior:
    """One row of the table: `applies` picks configs, `speedup` is what it expects for them."""

    name: str
    applies: Callable[[CompileConfig, Profile], bool]
    speedup: Callable[[Profile], float]
    evidence: str


def _removing(share: float) -> float:
    """The speedup of removing `share` of the wall time."""
    return 1.0 / max(1e-6, 1.0 - share)


def _gpu(p: Profile) -> bool:
    return p.device == "cuda"


PRIORS: tuple[Prior, ...] = (
    Prior("fusion", lambda c, p: c.compiled,
          lambda p: _removing(0.5 * p.launch_share),
          "Inductor fuses pointwise chains: fp32 eager 116 launches per call, fp16 + default 67 "
          "(reranker 50x128, H200, bench/results/h200_trial_vs_plain.md); fp32 default 5.312 ms "
          "(screened) vs eager 5.835 ms (h200_runs6_7_trials.txt, sweep 1)"),
    Prior("cuda-graphs", lambda c, p: _gpu(p) and c.uses_cudagraphs,
          lambda p: _removing(0.8 * p.launch_share),
          "launch-bound components gain most from CUDA graphs: 116 launches -> 2, fp32 + "
          "reduce-overhead 4.698 ms vs fp32 eager 5.756 ms (reranker, H200, "
          "h200_trial_vs_plain.md)"),
    Prior("half-precision", lambda c, p: _gpu(p) and c.dtype in HALF,
          lambda p: _removing(0.75 * (1.0 - p.launch_share)),
          "tensor cores and half the bytes shorten kernel time by ~4x: fp16 + max-autotune "
          "0.910 ms vs fp32 + max-autotune 4.840 ms (reranker 50x128, H200, "
          "h200_runs6_7_trials.txt, sweep 1)"),
    Prior("tf32", lambda c, p: _gpu(p) and c.dtype == "tf32",
          lambda p: _removing(0.3 * (1.0 - p.launch_share)),
          "TF32 runs fp32 matmuls on tensor cores; the rest of the kernels are unchanged"),
    Prior("autotune", lambda c, p: c.mode in TWINS,
          lambda p: _removing(0.1 * (1.0 - p.launch_share)),
          "autotuning only reschedules kernels: fp16 max-autotune 0.910 vs reduce-overhead "
          "1.067 ms, then 0.857 vs 1.076 (reranker, H200, h200_runs6_7_trials.txt)"),
    Prior("dynamic", lambda c, p: c.compiled and c.dynamic == "true",
          lambda p: 0.9,
          "dynamic kernels are slower than static ones: PyTorch's 2023 dashboard, amp geomeans "
          "1.11-1.27 dynamic vs 1.31-1.51 static + CUDA graphs (no raw file here)"),
)


def cost(config: CompileConfig) -> float:
    """A trial's expected cost, in units of one `default` compile."""
    return TRIAL_FIXED_COST + COMPILE_COST[config.mode]


@dataclass(frozen=True)
class Ranked:
    config: CompileConfig
    speedup: float  # expected, over eager fp32
    cost: float
    score: float  # ln(speedup) per unit of cost
    reason: str


def expected(config: CompileConfig, profile: Profile,
             priors: Iterable[Prior] = PRIORS) -> tuple[float, list[tuple[str, float]]]:
    """The expected speedup over eager fp32 and the rows behind it (name, factor)."""
    rows = [(p.name, p.speedup(profile)) for p in priors if p.applies(config, profile)]
    return math.prod(f for _, f in rows), rows


def twin_of(config: CompileConfig) -> CompileConfig | None:
    """The cheaper twin of a max-autotune config (same dtype, shapes, ...), else None."""
    mode = TWINS.get(config.mode)
    if mode is None:
        return None
    return CompileConfig(mode=mode, dtype=config.dtype, fullgraph=config.fullgraph,
                         dynamic=config.dynamic, options=config.options, shapes=config.shapes)


def goes_after(config: CompileConfig) -> CompileConfig | None:
    """The config measured before ``config`` while both are still to measure: a max-autotune
    config's cheaper twin (`twin_of`: the same kernels without the autotuning), and an eager
    config's compiled twin (``default``, same dtype). Fusion seldom loses to eager in the same
    dtype, and an eager variant is cheap only per trial: in a budget's first wave, before the
    baseline's profile is known, cheap half-precision eager configs ranked first by gain per
    cost and crowded out the compiled ones (docs/performance.md, "A budget")."""
    if config.mode == "eager":
        return CompileConfig(mode="default", dtype=config.dtype)
    return twin_of(config)


def twin_profile(profile: Profile, record: TrialRecord | None) -> Profile:
    """The profile an autotuning config is judged on once its twin is measured: the twin's own
    launches and median say how much of its time is in kernels (room for autotuning)."""
    if not record or record.get("status") != "ok" or not record.get("median_ms"):
        return profile
    ops = record.get("launches_per_call")
    if ops is None:
        ops = record.get("kernels_per_call")
    return Profile(profile.device, record["median_ms"], ops, record.get("gpu_busy_share"))


def rank(todo: Iterable[CompileConfig], profile: Profile,
         measured: Mapping[str, TrialRecord] | None = None) -> list[Ranked]:
    """`todo` best first by expected gain per unit of cost (ties keep `todo`'s order). Each
    max-autotune config stays after its cheaper twin, and each eager config after its compiled
    twin, while that twin is still to be measured (`goes_after`); once an autotuning config's
    twin is measured (`measured`: config key -> record), the twin's figures judge it."""
    measured = measured or {}
    todo = list(todo)
    scored: dict[CompileConfig, Ranked] = {}
    for config in todo:
        twin = twin_of(config)
        judged = twin_profile(profile, measured.get(twin.key)) if twin else profile
        speedup, rows = expected(config, judged)
        c = cost(config)
        score = math.log(max(speedup, 1.0)) / c
        why = ", ".join(f"{name} x{factor:.2f}" for name, factor in rows) or "no prior applies"
        scored[config] = Ranked(config, speedup, c, score, f"expected x{speedup:.2f} for "
                                f"{c:.1f} cost units ({why})")
    for config in todo:
        twin = goes_after(config)
        if twin is not None and twin in scored:  # the twin first
            r, t = scored[config], scored[twin]
            if r.score >= t.score:
                scored[config] = Ranked(config, r.speedup, r.cost, t.score * 0.999,
                                        r.reason + f"; after its twin {twin.label}")
    return sorted(scored.values(), key=lambda r: -r.score)
