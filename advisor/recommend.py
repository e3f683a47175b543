"""Trials -> a recommendation with its evidence. Pure: plain records in, plain data out.

Policies (`POLICIES`), each over the trials that ran and passed correctness and quality and meet
the constraints (`Constraints`: ``max_compile_s`` on the cold compile, ``max_memory_bytes`` on
the peak memory; a trial whose figure is unknown does not meet a constraint on it):

- ``latency`` (the default): the lowest traffic-weighted median (``median_ms``).
- ``tail``: the lowest traffic-weighted p99 (``p99_ms``).
- ``throughput``: the most calls per second over the traffic (per-shape back-to-back throughput,
  combined as 1 / sum(weight / throughput): the expected time per call of the traffic mix).
- ``break-even``: for ``calls_per_process`` calls in a process's life, the lowest
  ``cold_compile_s + calls x median_ms``. For every config, ``break_even_calls`` is the call
  count at which compiling has paid for itself against the fastest eager config:
  ``cold_compile_s / (eager_ms - median_ms) x 1000`` (None: never, it is not faster).

One figure per config: the median of the deciding figures (`deciding_ms`) of its full trials
(a screened trial, cut short after SCREEN_SAMPLES calls, counts only when the config has
nothing else, and is then ``short``), its interval the span of their 95% intervals
(``median_ci_ms``), ``noisy`` when any of them was; never the best of N. Every speedup is
against one baseline figure, named by `Recommendation.baseline_name`: eager fp32 pooled the same
way, or a confirmation's eager fp32 rounds. ``break_even_calls`` is against the fastest eager
config of the stack (bf16 eager often beats fp32 eager), ``break_even_calls_fp32`` beside it.

The decision (`Recommendation.decision`): a simpler config (eager < default < reduce-overhead <
max-autotune-no-cudagraphs < max-autotune, then fewer graphs, then the shorter cold compile)
wins only a **tie**: paired figures (a confirmation) within `TIE_RATIO`. Unpaired figures within
`TIE_RATIO`, or overlapping intervals, are **undecided**: the leader stands and the note says
so; on noisy timings, **undecided: noise**, and there is no pick. A short measurement never ties
and never casts doubt.

Confirmation: a stored confirmation (`advisor.search.confirm`) re-measured the leaders and eager
fp32
in one process, interleaved. When it covers the current leader, the `latency` and `break-even`
policies decide among the confirmed configs on the paired figures; otherwise the note says to
confirm again. `advisor.answer.answer` is what every surface calls.

Staleness: `nearest_fingerprint` compares a device's fingerprint with the measured ones and
names every field that differs. Export: `export_dict`, `to_python`, `to_yaml`.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from advisor import serving
from advisor.config import EAGER_FP32, MODE_COST_ORDER, TORCH_DTYPE_NAMES, CompileConfig
from advisor.errors import ConfigError
from advisor.fingerprint import DEVICE_FIELDS, ENV_FIELDS
from advisor.serving import DEFAULT_CALLS_PER_PROCESS
from advisor.stats import (  # noqa: F401 - median_ci, paired_speedup re-exported
    CONFIDENCE,
    Stats,
    median_ci,
    paired_speedup,
)

TIE_RATIO = 0.02  # figures closer than 2% count as a tie
# Figures within 10% of the leader's, each from its own process, cannot be ordered with
# confidence: on an H200 a CUDA-graph config's median moved 0.6-32% between two sweeps six
# minutes apart while each interval was under 0.4% wide (docs/performance.md). Such contenders
# are worth re-measuring side by side (advisor.search.sweep).
NEAR_RATIO = 0.10
POLICIES = ("latency", "tail", "throughput", "break-even")
CONFIRMED_POLICIES = ("latency", "break-even")  # the policies paired medians can decide
STACK_FIELDS = ("driver_version", "cuda_driver_version", "torch_version", "triton_version")


# --- statistics -------------------------------------------------------------------------------


def overlaps(a: Sequence[float] | None, b: Sequence[float] | None) -> bool:
    """Whether two intervals share a point (False when either is unknown)."""
    return a is not None and b is not None and a[0] <= b[1] and b[0] <= a[1]


# --- constraints ------------------------------------------------------------------------------

_SIZE_UNITS = {
    "": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
    "t": 10**12, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}  # fmt: skip


def parse_bytes(text: str) -> int:
    """``2GiB``, ``512MiB``, ``1.5GB``, ``1000000`` -> bytes (GiB = 2**30, GB = 10**9)."""
    found = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]*)\s*", str(text))
    unit = found.group(2).lower() if found else ""
    if not found or unit not in _SIZE_UNITS:
        raise ConfigError(
            f"bad memory size {text!r}: write a number with an optional unit, e.g. 2GiB, 512MiB"
        )
    value = float(found.group(1)) * _SIZE_UNITS[unit]
    if value <= 0:
        raise ConfigError(f"bad memory size {text!r}: it must be more than zero")
    return int(value)


@dataclass(frozen=True)
class Constraints:
    """Limits a recommended config must meet besides correctness and quality."""

    max_compile_s: float | None = None
    max_memory_bytes: int | None = None

    def __post_init__(self) -> None:
        for name, flag in (("max_compile_s", "--max-compile-s"), ("max_memory_bytes",
                                                                 "--max-memory")):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ConfigError(f"{name} ({flag}) must be more than zero, not {value!r}")

    def violation(self, rec: dict[str, Any]) -> str | None:
        """Why a record breaks a limit (None: it meets them all)."""
        mode = (rec.get("config") or {}).get("mode")
        if self.max_compile_s is not None and mode != "eager":
            cold = rec.get("cold_compile_s")
            if cold is None:
                return "cold compile time unknown"
            if cold > self.max_compile_s:
                return f"cold compile over {self.max_compile_s:g} s"
        if self.max_memory_bytes is not None:
            peak = rec.get("peak_mem_bytes")
            if peak is None:
                return "peak memory unknown"
            if peak > self.max_memory_bytes:
                return f"peak memory over {_fmt_bytes(self.max_memory_bytes)}"
        return None


def _fmt_bytes(n: float) -> str:
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} B"


# --- the evidence -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Ranked:
    """One config's evidence, relative to the eager fp32 baseline."""

    config: dict[str, Any]
    label: str
    median_ms: float
    p90_ms: float | None
    p99_ms: float | None
    speedup: float | None
    cold_compile_s: float | None
    warm_compile_s: float | None
    kernels_per_call: int | None
    launches_per_call: int | None
    max_abs_err: float | None
    quality_name: str | None
    quality_value: float | None
    trial_uuid: str
    median_ci_ms: list[float] | None = None  # [low, high], 95% bootstrap
    throughput_per_s: float | None = None
    peak_mem_bytes: int | None = None
    graph_count: int | None = None
    break_even_calls: int | None = None  # calls until it pays off vs the best eager config
    total_s: float | None = None  # break-even policy: cold compile + calls x median
    score: float | None = None  # the policy's figure for this config
    confirmed: bool = False  # figures from an interleaved confirmation run
    speedup_ci: list[float] | None = None  # confirmed: interval of the paired speedup
    shapes: list[dict[str, Any]] | None = None  # the measured shapes: shape, dims, weight
    buckets: dict[str, Any] | None = None  # shape strategy: strategy, boundaries, padding waste
    # "process": median_ms is the expected cost per request over a process's life (start-up,
    # new shapes and steady state: advisor.serving); "steady": the steady-state median
    figure: str = "steady"
    steady_ms: float | None = None  # the steady-state median, beside a process-life figure
    flags: list[dict[str, str]] | None = None  # what a serving process meets (advisor.serving)
    n_trials: int = 1  # full trials pooled into this figure (median of their figures)
    noisy: bool | None = None  # a pooled trial (or the confirmation) flagged its timing noisy
    short: bool = False  # only a screened (short, SCREEN_SAMPLES-call) measurement: never ties
    break_even_calls_fp32: int | None = None  # calls until compiling pays off vs eager fp32

    @property
    def config_key(self) -> str:
        return CompileConfig.from_dict(self.config).key


@dataclass(frozen=True)
class Recommendation:
    """The recommended config for one workload on one fingerprint, with its evidence."""

    workload: str
    fingerprint_hash: str | None
    best: Ranked | None
    baseline: Ranked | None
    ranked: list[Ranked] = field(default_factory=list)
    n_trials: int = 0
    n_failed: int = 0
    n_rejected: int = 0
    note: str = ""
    policy: str = "latency"
    calls_per_process: int | None = None
    constraints: dict[str, Any] = field(default_factory=dict)
    n_excluded: int = 0  # passed, but broke a constraint
    excluded: dict[str, int] = field(default_factory=dict)  # reason -> configs
    confirmation: dict[str, Any] | None = None  # which confirmation, and whether it was used
    staleness: dict[str, Any] | None = None  # set by the caller: see `Staleness.to_dict`
    artifact: dict[str, Any] | None = None  # set by the caller: the stored warm-start artifact
    # config keys of the configs tied with the leader or within NEAR_RATIO of it, in ranked
    # order, the leader first (empty: the leader stands alone); `advisor.search.sweep`
    # re-measures them
    # interleaved
    contenders: list[str] = field(default_factory=list)
    # "decided" (the leader is ahead), "tie" (a simpler config within TIE_RATIO on paired
    # figures), "undecided" (configs the evidence cannot order; the leader stands, the note says
    # so), "undecided: noise" (the same on noisy timings: no pick), "none" (nothing passed)
    decision: str = "none"
    undecided: list[str] = field(default_factory=list)  # labels the leader cannot be told from
    eager_best: Ranked | None = None  # the fastest eager config (what break-even is against)
    baseline_source: str = ""  # where the baseline figure comes from, e.g. "median of 3 trials"

    @property
    def leader(self) -> Ranked | None:
        """The config with the best figure under the policy (``best`` unless a tie or noise)."""
        return self.ranked[0] if self.ranked else None

    @property
    def baseline_name(self) -> str:
        """The one figure every speedup of this recommendation is against, named."""
        if self.baseline is None:
            return "no eager fp32 baseline"
        return f"eager fp32 {self.baseline.median_ms:.4g} ms ({self.baseline_source})"

    @property
    def decided_by(self) -> str:
        """Which figure decided: the steady-state median or the cost over a process's life."""
        if self.best is not None and self.best.figure == "process":
            return (f"expected ms per request over a process serving "
                    f"{self.calls_per_process or DEFAULT_CALLS_PER_PROCESS:,} requests "
                    "(start-up, new shapes, steady state)")
        return "steady-state median"

    @property
    def sentence(self) -> str:
        """The evidence in one sentence."""
        text = self._sentence()
        if self.best is not None and self.best.figure == "process":
            text += f" [{self.decided_by}; steady state {_ms(self.best.steady_ms)}]"
        return text

    def _sentence(self) -> str:
        if self.decision == "undecided: noise" and self.leader is not None:
            lead = self.leader
            return (f"undecided: noise. {lead.label} ({_with_ci(lead)}) cannot be told apart from "
                    f"{', '.join(self.undecided)} on noisy timings; measure again on a quiet host "
                    "or run `advisor recommend --confirm`")
        if self.best is None:
            if self.n_excluded:
                return (f"no config of {self.workload} meets the constraints "
                        f"({_reasons(self.excluded)}); nothing to recommend")
            return f"no config of {self.workload} ran and passed; nothing to recommend"
        if self.policy == "break-even":
            return self._break_even_sentence()
        if self.policy in ("tail", "throughput"):
            return self._policy_sentence()
        return self._latency_sentence()

    def _latency_sentence(self) -> str:
        b, base = self.best, self.baseline
        assert b is not None
        if b.config["mode"] == "eager" and base is not None:
            compiled = [r for r in self.ranked if r.config["mode"] != "eager"]
            text = f"{b.label}: {b.median_ms:.3g} ms; compiling does not pay off here"
            if compiled:
                c = compiled[0]
                text += f" (fastest compiled: {c.label}, {c.median_ms:.3g} ms"
                text += f", {c.speedup:.2f}x)" if c.speedup else ")"
            return text
        text = f"{b.label}: {b.median_ms:.3g} ms"
        if base is not None and b.speedup is not None:
            text += f" vs {base.median_ms:.3g} ms eager fp32 ({b.speedup:.2f}x)"
        if b.cold_compile_s is not None and b.config["mode"] != "eager":
            text += f", {b.cold_compile_s:.1f} s cold compile"
        calls = _per_call(b)
        if calls:
            text += f", {calls}"
            if base is not None and _per_call(base):
                text += f" vs {_per_call(base)}"
        return text

    def _policy_sentence(self) -> str:
        b, base = self.best, self.baseline
        assert b is not None
        if self.policy == "tail":
            text = f"{b.label}: p99 {_ms(b.p99_ms)}"
            if base is not None and base.p99_ms is not None:
                text += f" vs {_ms(base.p99_ms)} eager fp32"
        else:
            text = f"{b.label}: {b.throughput_per_s:,.0f} calls/s"
            if base is not None and base.throughput_per_s:
                text += f" vs {base.throughput_per_s:,.0f} eager fp32"
        return text + f" (median {b.median_ms:.3g} ms)"

    def _break_even_sentence(self) -> str:
        b, base, n = self.best, self.baseline, self.calls_per_process
        assert b is not None and n is not None
        text = f"for {n:,} calls per process, {b.label}: {b.total_s:.3g} s in all"
        if b.config["mode"] != "eager":
            text += f" ({b.cold_compile_s or 0:.1f} s cold compile + {n:,} x {b.median_ms:.3g} ms)"
        if base is not None and base.total_s is not None and b.trial_uuid != base.trial_uuid:
            text += f" vs {base.total_s:.3g} s eager fp32"
        if b.config["mode"] != "eager":
            if b.break_even_calls is not None:
                text += f"; compiling pays off after {b.break_even_calls:,} calls"
                eager = self.eager_best
                if eager is not None and eager.config_key != EAGER_FP32.key:
                    text += f" against {eager.label}"
                    if b.break_even_calls_fp32 is not None:
                        text += f" ({b.break_even_calls_fp32:,} against eager fp32)"
            return text
        paying = [r for r in self.ranked if r.config["mode"] != "eager" and r.break_even_calls]
        if paying:
            c = min(paying, key=lambda r: r.break_even_calls or 0)
            text += (f"; compiling does not pay off within {n:,} calls (soonest: {c.label} "
                     f"pays off after {c.break_even_calls:,} calls)")
        else:
            text += "; compiling does not pay off here"
        return text

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["sentence"] = self.sentence
        data["decided_by"] = self.decided_by
        return data


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g} ms"


def _with_ci(r: Ranked) -> str:
    text = f"{r.median_ms:.3g} ms"
    if r.median_ci_ms:
        text += f", {CONFIDENCE:.0%} CI {r.median_ci_ms[0]:.3g}-{r.median_ci_ms[1]:.3g}"
    return text + (", noisy" if r.noisy else "")


def _reasons(excluded: dict[str, int]) -> str:
    return ", ".join(f"{n} with {reason}" for reason, n in sorted(excluded.items()))


def _per_call(r: Ranked) -> str:
    if r.launches_per_call is not None:
        return f"{r.launches_per_call} launches per call"
    if r.kernels_per_call is not None:
        return f"{r.kernels_per_call} kernels per call"
    return ""


def traffic_throughput(shapes: Sequence[dict[str, Any]]) -> float | None:
    """Calls per second of the traffic mix: 1 / sum(weight / throughput) (weights normalised)."""
    usable = [s for s in shapes if s.get("throughput_per_s") and s.get("weight")]
    if not usable or len(usable) != len(shapes):
        return None
    total = sum(s["weight"] for s in usable)
    return 1.0 / sum(s["weight"] / total / s["throughput_per_s"] for s in usable)


def break_even_calls(cold_compile_s: float | None, median_ms: float,
                     eager_ms: float | None) -> int | None:
    """Calls after which a config's compile has paid for itself against eager (None: never)."""
    if eager_ms is None or median_ms >= eager_ms:
        return None
    calls = (cold_compile_s or 0.0) * 1000 / (eager_ms - median_ms)
    return math.ceil(calls * (1 - 1e-9))  # float noise: 1000000.0000005 is 1 000 000 calls


def deciding_ms(rec: dict[str, Any], calls: int | None) -> float:
    """A record's deciding figure: the expected cost per request over a process serving
    `calls` requests when its replay streams varying traffic (advisor.serving), else its
    steady-state median."""
    life = _life_ms(rec, calls)
    return float(rec["median_ms"]) if life is None else life


def _life_ms(rec: dict[str, Any], calls: int | None) -> float | None:
    replay = rec.get("replay")
    if replay is None or not serving.decides(replay):
        return None
    return serving.process_life_ms(replay, calls or DEFAULT_CALLS_PER_PROCESS)


def _ranked(rec: dict[str, Any], baseline_ms: float | None, calls: int | None = None) -> Ranked:
    config = CompileConfig.from_dict(rec["config"])
    life = _life_ms(rec, calls)
    process = life is not None
    figure_ms = float(rec["median_ms"]) if life is None else life
    ci = None if process else rec.get("median_ci_ms")
    replay = rec.get("replay") or {}
    return Ranked(
        figure="process" if process else "steady", steady_ms=rec["median_ms"],
        flags=replay.get("flags") or None,
        config=config.to_dict(), label=config.label, median_ms=figure_ms,
        p90_ms=rec.get("p90_ms"), p99_ms=rec.get("p99_ms"),
        speedup=baseline_ms / figure_ms if baseline_ms and figure_ms else None,
        cold_compile_s=rec.get("cold_compile_s"), warm_compile_s=rec.get("warm_compile_s"),
        kernels_per_call=rec.get("kernels_per_call"),
        launches_per_call=rec.get("launches_per_call"), max_abs_err=rec.get("max_abs_err"),
        quality_name=rec.get("quality_name"), quality_value=rec.get("quality_value"),
        trial_uuid=rec["trial_uuid"],
        median_ci_ms=[float(ci[0]), float(ci[1])] if ci else None,
        throughput_per_s=traffic_throughput(rec.get("shapes") or []),
        peak_mem_bytes=rec.get("peak_mem_bytes"), graph_count=rec.get("graph_count"),
        break_even_calls=break_even_calls(
            None if config.mode == "eager" or process else rec.get("cold_compile_s"), figure_ms,
            baseline_ms,
        ),
        shapes=[
            {"shape": s.get("shape"), "dims": s.get("dims"), "weight": s.get("weight")}
            for s in rec.get("shapes") or []
        ] or None,
        buckets=_buckets_of(config, rec),
    )


def _buckets_of(config: CompileConfig, rec: dict[str, Any]) -> dict[str, Any] | None:
    """A shape strategy's measured buckets: strategy and boundaries per padded dim."""
    if config.shapes == "static":
        return None
    replay = rec.get("replay") or {}
    return {"strategy": config.shapes, "boundaries": replay.get("boundaries") or {},
            "padding_waste": replay.get("padding_waste")}


def _simplicity(r: Ranked) -> tuple[int, int, float]:
    """Simpler and cheaper first: the mode's cost, then fewer graphs, then a shorter compile."""
    graphs = 0 if r.config["mode"] == "eager" else (r.graph_count or 0)
    return MODE_COST_ORDER[r.config["mode"]], graphs, r.cold_compile_s or 0.0


# --- policies ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Policy:
    name: str
    calls: int | None

    @property
    def higher_is_better(self) -> bool:
        return self.name == "throughput"

    def score(self, r: Ranked) -> float | None:
        if self.name == "latency":
            return r.median_ms
        if self.name == "tail":
            return r.p99_ms
        if self.name == "throughput":
            return r.throughput_per_s
        assert self.calls is not None
        if r.figure == "process":  # start-up is inside the process-life figure already
            return self.calls * r.median_ms / 1000
        compile_s = 0.0 if r.config["mode"] == "eager" else (r.cold_compile_s or 0.0)
        return compile_s + self.calls * r.median_ms / 1000

    def interval(self, r: Ranked) -> list[float] | None:
        """The score's confidence interval, where the score rests on the median."""
        if r.median_ci_ms is None or self.name not in ("latency", "break-even"):
            return None
        if self.name == "latency":
            return r.median_ci_ms
        assert self.calls is not None and r.total_s is not None
        fixed = r.total_s - self.calls * r.median_ms / 1000
        return [fixed + self.calls * v / 1000 for v in r.median_ci_ms]

    def sort_key(self, r: Ranked) -> float:
        assert r.score is not None
        return -r.score if self.higher_is_better else r.score

    def within_ratio(self, r: Ranked, leader: Ranked, ratio: float = TIE_RATIO) -> bool:
        assert r.score is not None and leader.score is not None
        if self.higher_is_better:
            return r.score * (1 + ratio) >= leader.score
        return r.score <= leader.score * (1 + ratio)

    def figure(self, r: Ranked) -> str:
        if self.name == "throughput":
            return f"{r.score:,.0f} calls/s"
        if self.name == "break-even":
            return f"{r.score:.3g} s"
        return f"{r.score:.3g} ms"


def check_policy(policy: str, calls_per_process: int | None) -> None:
    if policy not in POLICIES:
        raise ConfigError(f"unknown policy {policy!r}: choose one of {', '.join(POLICIES)}")
    if policy == "break-even" and (calls_per_process is None or calls_per_process < 1):
        raise ConfigError("the break-even policy needs --calls-per-process N (N >= 1)")


def _with_score(r: Ranked, policy: _Policy) -> Ranked:
    if policy.name == "break-even":
        r = replace(r, total_s=policy.score(r))
    return replace(r, score=policy.score(r))


def _verdict(r: Ranked, leader: Ranked, policy: _Policy) -> str | None:
    """How ``r`` stands against the leader: "tie" (paired figures within `TIE_RATIO`: the
    simpler may win), "undecided" (the evidence cannot order them: unpaired figures within
    `TIE_RATIO`, or overlapping intervals), or None (the leader is ahead). A short (screened)
    measurement is never a tie nor a reason for doubt."""
    if r.short:
        return None
    within = policy.within_ratio(r, leader)
    if r.confirmed and leader.confirmed:
        if within:
            return "tie"
        if policy.name == "latency":  # paired: the speedups over the same rounds decide
            return "undecided" if overlaps(r.speedup_ci, leader.speedup_ci) else None
    if within or overlaps(policy.interval(r), policy.interval(leader)):
        return "undecided"
    return None


@dataclass(frozen=True)
class _Choice:
    best: Ranked | None
    note: str
    contenders: list[str]
    decision: str
    undecided: list[str]


def _choose(ranked: list[Ranked], policy: _Policy) -> _Choice:
    """The pick among configs already sorted by the policy. A simpler config wins only a tie
    on paired figures; configs the evidence cannot order leave the decision "undecided" (the
    leader stands, the note says so), or "undecided: noise" when their timings are noisy (no
    pick). The contenders: keys of the leader and the configs tied with it, undecided against
    it or within `NEAR_RATIO` of it (empty when there are none besides the leader)."""
    if not ranked:
        return _Choice(None, "", [], "none", [])
    leader = ranked[0]
    verdicts = {id(r): v for r in ranked[1:] if (v := _verdict(r, leader, policy)) is not None}
    near = [r.config_key for r in ranked[1:] if id(r) in verdicts
            or (not r.short and policy.within_ratio(r, leader, NEAR_RATIO))]
    contenders = [leader.config_key, *near] if near else []
    ties = [r for r in ranked if verdicts.get(id(r)) == "tie"]
    doubt = [r for r in ranked if verdicts.get(id(r)) == "undecided"]
    best = min([leader, *ties], key=_simplicity)
    if doubt and (leader.noisy or any(r.noisy for r in doubt)):
        return _Choice(None, _doubt_note(leader, doubt, policy, noise=True), contenders,
                       "undecided: noise", [r.label for r in doubt])
    notes = [_tie_note(best, leader, policy)] if best is not leader else []
    if doubt:
        notes.append(_doubt_note(leader, doubt, policy, noise=False))
    decision = "undecided" if doubt else ("tie" if best is not leader else "decided")
    return _Choice(best, " ".join(notes), contenders, decision, [r.label for r in doubt])


def _tie_note(best: Ranked, leader: Ranked, policy: _Policy) -> str:
    """Why ``best`` is preferred over the fastest, ``leader``: a tie on paired figures."""
    return (f"{best.label} ({policy.figure(best)}) is within {TIE_RATIO:.0%} of the fastest, "
            f"{leader.label} ({policy.figure(leader)}), on paired figures (measured "
            f"interleaved in one process) and simpler, so it is preferred")


def _doubt_note(leader: Ranked, doubt: list[Ranked], policy: _Policy, noise: bool) -> str:
    """Which configs the evidence cannot order against the leader, and why."""
    def shown(r: Ranked) -> str:
        ci = policy.interval(r)
        text = policy.figure(r)
        if ci:
            unit = "ms" if policy.name == "latency" else "s"
            text += f", {CONFIDENCE:.0%} CI {ci[0]:.3g}-{ci[1]:.3g} {unit}"
        if r.confirmed:
            text += ", paired"
        return f"{r.label} ({text}{', noisy' if r.noisy else ''})"

    others = "; ".join(shown(r) for r in doubt)
    head = "undecided: noise" if noise else "undecided"
    tail = ("no pick on noisy timings: measure again on a quiet host, or run `advisor "
            "recommend --confirm`" if noise else
            f"{leader.label} stays the pick on its figure; `advisor recommend --confirm` "
            "measures them side by side")
    return (f"{head}: the fastest, {shown(leader)}, cannot be told apart from {others} "
            f"(within {TIE_RATIO:.0%} on unpaired figures or overlapping intervals); {tail}")


def recommend(
    workload: str,
    records: list[dict[str, Any]],
    fingerprint_hash: str | None = None,
    *,
    policy: str = "latency",
    calls_per_process: int | None = None,
    constraints: Constraints | None = None,
    confirmation: dict[str, Any] | None = None,
) -> Recommendation:
    """The recommendation under ``policy`` over ``records`` (trials of one workload on one
    fingerprint), optionally decided on a stored ``confirmation``'s paired figures."""
    check_policy(policy, calls_per_process)
    pol = _Policy(policy, calls_per_process)
    constraints = constraints or Constraints()
    ok = [r for r in records if r["status"] == "ok" and r.get("median_ms")]
    passed = [r for r in ok if r.get("passed")]
    calls = calls_per_process
    base_recs = [r for r in ok if r["config"] == EAGER_FP32.to_dict()]
    baseline = _pooled(base_recs, None, calls) if base_recs else None
    base_ms = baseline.median_ms if baseline else None
    if baseline is not None:
        baseline = _pooled(base_recs, base_ms, calls)
    excluded: dict[str, int] = {}
    by_key: dict[str, list[dict[str, Any]]] = {}
    for rec in passed:  # one entry per config: its pooled evidence, never its best trial
        by_key.setdefault(rec["config_key"], []).append(rec)
    pooled = [_pooled(group, base_ms, calls) for group in by_key.values()]
    pooled = _against_best_eager(pooled, base_ms)
    candidates = []
    for r in pooled:
        why = constraints.violation(asdict(r))
        if why is None:
            candidates.append(r)
        else:
            excluded[why] = excluded.get(why, 0) + 1
    scored = [_with_score(r, pol) for r in candidates]
    unscorable = [r for r in scored if r.score is None]
    if unscorable:
        excluded[f"no {policy} figure"] = len(unscorable)
    ranked = sorted((r for r in scored if r.score is not None), key=pol.sort_key)
    if baseline is not None:
        baseline = _with_score(baseline, pol)
    source = _source(baseline)
    conf_note, conf_info = "", None
    if confirmation is not None:
        ranked, baseline, conf_info, conf_note = _confirmed(ranked, baseline, confirmation, pol)
        if conf_info["used"]:
            source = (f"paired confirmation, {confirmation.get('rounds')} rounds; re-measured "
                      "configs: paired per-round ratios")
    pool = [r for r in ranked if r.confirmed] if conf_info and conf_info["used"] else ranked
    choice = _choose(pool, pol)
    note = " ".join(n for n in (choice.note, conf_note) if n)
    eager = [r for r in ranked if r.config["mode"] == "eager"]
    return Recommendation(
        workload=workload, fingerprint_hash=fingerprint_hash, best=choice.best, baseline=baseline,
        ranked=ranked, n_trials=len(records),
        n_failed=sum(1 for r in records if r["status"] != "ok"),
        n_rejected=len(ok) - len(passed), note=note, policy=policy,
        calls_per_process=calls_per_process,
        constraints={k: v for k, v in asdict(constraints).items() if v is not None},
        n_excluded=sum(excluded.values()), excluded=excluded, confirmation=conf_info,
        contenders=choice.contenders, decision=choice.decision, undecided=choice.undecided,
        eager_best=min(eager, key=lambda r: r.median_ms) if eager else None,
        baseline_source=source,
    )


def _paired(entry: dict[str, Any] | None) -> float | None:
    return entry.get("speedup") if entry else None


def _source(baseline: Ranked | None) -> str:
    if baseline is None:
        return ""
    what = "steady-state median" if baseline.figure == "steady" else "process-life cost"
    if baseline.n_trials == 1:
        return f"{what} of 1 trial"
    return f"median of {baseline.n_trials} trials' {what}s"


def _pooled(recs: list[dict[str, Any]], base_ms: float | None, calls: int | None) -> Ranked:
    """One config's figure from all its trials: the median of the full trials' deciding figures
    (screened trials only when there is nothing else: then ``short``), its interval the span of
    their intervals, and the trial nearest that median for the other facts."""
    full = [r for r in recs if not r.get("screened_out")]
    use = full or recs
    figures = sorted(deciding_ms(r, calls) for r in use)
    figure = statistics.median(figures)
    rep = min(use, key=lambda r: abs(deciding_ms(r, calls) - figure))
    one = _ranked(rep, base_ms, calls)
    if len(use) == 1:
        ci = one.median_ci_ms
    elif one.figure == "process":
        ci = [figures[0], figures[-1]]
    else:
        lows = [float((r.get("median_ci_ms") or [deciding_ms(r, calls)])[0]) for r in use]
        highs = [float((r.get("median_ci_ms") or [0, deciding_ms(r, calls)])[1]) for r in use]
        ci = [min(lows), max(highs)]
    return replace(
        one, median_ms=figure, median_ci_ms=ci, n_trials=len(use), short=not full,
        noisy=any(bool(r.get("noisy")) for r in use),
        speedup=base_ms / figure if base_ms and figure else None,
        break_even_calls_fp32=_pays_off(one, figure, base_ms),
        break_even_calls=_pays_off(one, figure, base_ms),
    )


def _pays_off(r: Ranked, figure_ms: float, eager_ms: float | None) -> int | None:
    if r.config["mode"] == "eager":
        return None
    return break_even_calls(None if r.figure == "process" else r.cold_compile_s, figure_ms,
                           eager_ms)


def _against_best_eager(ranked: list[Ranked], base_ms: float | None) -> list[Ranked]:
    """Break-even against the fastest eager config (bf16 eager often beats fp32 eager: that is
    what compiling has to pay back), with eager fp32's beside it."""
    eager = [r.median_ms for r in ranked if r.config["mode"] == "eager"]
    best_eager = min([*eager, *([base_ms] if base_ms else [])], default=None)
    return [replace(r, break_even_calls=_pays_off(r, r.median_ms, best_eager)) for r in ranked]


def _confirmed(
    ranked: list[Ranked], baseline: Ranked | None, confirmation: dict[str, Any], pol: _Policy
) -> tuple[list[Ranked], Ranked | None, dict[str, Any], str]:
    """Ranked configs with the confirmation's paired figures where it measured them."""
    entries = {
        e["config_key"]: e for e in confirmation.get("entries", []) if e.get("median_ms")
    }
    info = {
        "uuid": confirmation.get("uuid"), "created_at": confirmation.get("created_at"),
        "rounds": confirmation.get("rounds"), "method": confirmation.get("method"),
        "configs": [e["label"] for e in confirmation.get("entries", []) if e.get("label")],
        "used": False,
    }
    if pol.name not in CONFIRMED_POLICIES:
        return ranked, baseline, info, (
            f"the confirmation measured medians; the {pol.name} policy uses the sweep's figures")
    if not ranked or ranked[0].config_key not in entries:
        leader = ranked[0].label if ranked else "?"
        return ranked, baseline, info, (
            f"the stored confirmation does not include the current leader ({leader}); "
            "run `advisor recommend --confirm` again")

    eager_entry = entries.get(EAGER_FP32.key)
    base_ms = eager_entry["median_ms"] if eager_entry else None

    def apply(r: Ranked) -> Ranked:
        e = entries.get(r.config_key)
        if e is None:
            return r
        out = replace(
            r, median_ms=e["median_ms"], median_ci_ms=e.get("median_ci_ms"),
            p90_ms=e.get("p90_ms", r.p90_ms), p99_ms=e.get("p99_ms", r.p99_ms),
            speedup_ci=e.get("speedup_ci"), confirmed=True, short=False,
            noisy=any(Stats(s).noisy for s in e.get("samples_ms") or [] if s),
            n_trials=r.n_trials,
        )
        return out

    ranked = [apply(r) for r in ranked]
    if baseline is not None:
        baseline = apply(baseline)
        base_ms = baseline.median_ms
    # One baseline figure for the whole table: every speedup and break-even against it.
    # (a confirmed row's speedup is its paired one: the median of per-round ratios against
    # the same eager fp32 rounds, which stays inside its interval)
    ranked = [_with_score(replace(
        r, speedup=_paired(entries.get(r.config_key)) if r.confirmed
        else (base_ms / r.median_ms if base_ms else None),
        break_even_calls_fp32=_pays_off(r, r.median_ms, base_ms),
    ), pol) for r in _against_best_eager(ranked, base_ms)]
    if baseline is not None:
        baseline = _with_score(replace(baseline, speedup=1.0 if base_ms else None), pol)
    confirmed = sorted((r for r in ranked if r.confirmed), key=pol.sort_key)
    ranked = confirmed + [r for r in ranked if not r.confirmed]
    info["used"] = True
    rounds = confirmation.get("rounds")
    return ranked, baseline, info, (
        f"decided on paired figures: {len(confirmed)} configs re-measured in one process, "
        f"interleaved over {rounds} rounds with eager fp32")


# --- staleness --------------------------------------------------------------------------------

COMPARED_FIELDS = DEVICE_FIELDS + ENV_FIELDS


@dataclass(frozen=True)
class FieldChange:
    """One fingerprint field that differs between the measured device and this one."""

    field: str
    measured: Any
    current: Any


@dataclass(frozen=True)
class Staleness:
    """How this device's fingerprint relates to the one a recommendation was measured on."""

    current_hash: str
    measured_hash: str | None  # None: nothing comparable was measured (another device kind)
    changed: list[FieldChange] = field(default_factory=list)
    measured_device: str | None = None
    # Beside the fingerprint: the workload file and the advisor that measured the trials
    # (measured: the values the trials carry, newest first; current: here, None if unknown).
    source_sha256: dict[str, Any] | None = None
    advisor_version: dict[str, Any] | None = None

    @property
    def exact(self) -> bool:
        return self.measured_hash is not None and self.measured_hash == self.current_hash

    @property
    def fresh(self) -> bool:
        """Same fingerprint, same workload source, same advisor version."""
        return self.exact and not self.source_sha256 and not self.advisor_version

    @property
    def warning(self) -> str:
        parts = [self._fingerprint_warning()] if not self.exact else []
        if self.source_sha256:
            s = self.source_sha256
            parts.append(f"the workload file changed since its trials (sha256 "
                         f"{str(s['current'])[:12]} here, {str(s['measured'][0])[:12]} measured)"
                         "; sweep it again")
        if self.advisor_version:
            a = self.advisor_version
            parts.append(f"the trials were measured by advisor {', '.join(a['measured'])}, "
                         f"this is {a['current']}")
        return "; ".join(parts)

    def _fingerprint_warning(self) -> str:
        if self.measured_hash is None:
            return (f"nothing was measured on this kind of device (fingerprint "
                    f"{self.current_hash}); sweep it here")
        diffs = "; ".join(
            f"{c.field}: {c.measured} measured, {c.current} here" for c in self.changed
        )
        return (f"no sweep on this device and stack (fingerprint {self.current_hash}); using the "
                f"nearest measured fingerprint {self.measured_hash} ({self.measured_device}), "
                f"which differs in {diffs}; its recommendation may be stale: sweep here to be sure")

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(exact=self.exact, fresh=self.fresh, warning=self.warning)
        return data


def provenance(staleness: Staleness | None, records: list[dict[str, Any]],
               source_sha256: str | None, advisor_version: str | None) -> Staleness | None:
    """``staleness`` (None: the fingerprint matched) with the workload source and advisor
    version checked against the trials' (newest first); None when all of it is current."""
    newest = sorted(records, key=lambda r: str(r.get("started_at") or ""), reverse=True)

    def seen(values: list[Any]) -> list[Any]:
        return list(dict.fromkeys(v for v in values if v))

    sources = seen([(r.get("workload") or {}).get("source_sha256") for r in newest])
    versions = seen([(r.get("fingerprint") or {}).get("advisor_version") for r in newest])
    source = ({"measured": sources, "current": source_sha256}
              if source_sha256 and sources and sources[0] != source_sha256 else None)
    version = ({"measured": versions, "current": advisor_version}
               if advisor_version and versions and advisor_version not in versions else None)
    if source is None and version is None:
        return staleness
    if staleness is None:
        here = next((r.get("fingerprint_hash") or (r.get("fingerprint") or {}).get(
            "fingerprint_hash") for r in newest), None) or "?"
        staleness = Staleness(here, here, [], None)
    return replace(staleness, source_sha256=source, advisor_version=version)


def fingerprint_changes(measured: dict[str, Any], current: dict[str, Any]) -> list[FieldChange]:
    """The device and stack fields (those hashed) whose values differ, in field order."""
    return [
        FieldChange(name, measured.get(name), current.get(name))
        for name in COMPARED_FIELDS
        if measured.get(name) != current.get(name)
    ]


def nearest_fingerprint(current: dict[str, Any], measured: list[dict[str, Any]]) -> Staleness:
    """The measured fingerprint closest to ``current``: the same kind of device, then the
    fewest differing device fields, driver/CUDA/torch/triton fields, other stack fields, then
    the most trials. An exact match (same fingerprint hash) is itself."""
    here = current["fingerprint_hash"]
    for fp in measured:
        if fp.get("fingerprint_hash") == here:
            return Staleness(here, here, [], fp.get("device_name"))
    same_kind = [fp for fp in measured if fp.get("device_kind") == current.get("device_kind")]
    if not same_kind:
        return Staleness(here, None)

    def distance(fp: dict[str, Any]) -> tuple[int, int, int, int]:
        changed = {c.field for c in fingerprint_changes(fp, current)}
        return (
            len(changed & set(DEVICE_FIELDS)),
            len(changed & set(STACK_FIELDS)),
            len(changed - set(DEVICE_FIELDS) - set(STACK_FIELDS)),
            -int(fp.get("n_trials") or 0),
        )

    near = min(same_kind, key=distance)
    return Staleness(here, near["fingerprint_hash"], fingerprint_changes(near, current),
                     near.get("device_name"))


# --- export -----------------------------------------------------------------------------------


def export_dict(rec: Recommendation) -> dict[str, Any]:
    """What to paste into a serving process: the torch.compile call, dtype handling, shapes
    and the figures the recommendation rests on. Plain data (JSON/YAML-ready)."""
    if rec.best is None:
        return {"workload": rec.workload, "fingerprint_hash": rec.fingerprint_hash,
                "policy": rec.policy, "recommendation": None, "sentence": rec.sentence}
    b = rec.best
    config = CompileConfig.from_dict(b.config)
    figures: dict[str, Any] = {
        "median_ms": b.median_ms, "median_ci_ms": b.median_ci_ms, "p99_ms": b.p99_ms,
        "speedup_vs_eager_fp32": b.speedup, "speedup_ci": b.speedup_ci,
        "eager_fp32_median_ms": rec.baseline.median_ms if rec.baseline else None,
        "cold_compile_s": b.cold_compile_s, "warm_compile_s": b.warm_compile_s,
        "break_even_calls": b.break_even_calls, "throughput_per_s": b.throughput_per_s,
        "peak_mem_bytes": b.peak_mem_bytes, "max_abs_err": b.max_abs_err,
        "confirmed": b.confirmed, "trial_uuid": b.trial_uuid,
        "decided_by": rec.decided_by, "steady_ms": b.steady_ms,
    }
    if b.figure == "process":
        figures["calls_per_process"] = rec.calls_per_process or DEFAULT_CALLS_PER_PROCESS
    if rec.policy == "break-even":
        figures.update(calls_per_process=rec.calls_per_process, total_s=b.total_s)
    out: dict[str, Any] = {
        "workload": rec.workload,
        "fingerprint_hash": rec.fingerprint_hash,
        "policy": rec.policy,
        "config": config.to_dict(),
        "label": config.label,
        "compiled": config.compiled,
        "torch_compile": config.compile_kwargs() if config.compiled else None,
        "dtype": {
            "name": config.dtype,
            "torch_dtype": f"torch.{TORCH_DTYPE_NAMES[config.dtype]}",
            "cast_model": config.dtype in ("bf16", "fp16"),
            "cast_inputs": "floating-point tensors" if config.dtype in ("bf16", "fp16") else None,
            "float32_matmul_precision": "high" if config.dtype == "tf32" else "highest",
        },
        "cudagraphs": config.uses_cudagraphs,
        "shapes": b.shapes,
        "buckets": b.buckets,
        "flags": b.flags,
        "figures": figures,
        "sentence": rec.sentence,
        "note": rec.note or None,
        "staleness": rec.staleness,
        "artifact": rec.artifact,
    }
    return out


def to_python(rec: Recommendation) -> str:
    """A Python snippet applying the recommendation (comments carry the evidence)."""
    data = export_dict(rec)
    lines = [f"# advisor recommendation for {rec.workload} (fingerprint {rec.fingerprint_hash}, "
             f"policy {rec.policy})"]
    lines += _comment(rec.sentence)
    if rec.note:
        lines += _comment("note: " + rec.note)
    if rec.staleness and not rec.staleness.get("exact"):
        lines += _comment("WARNING: " + rec.staleness["warning"])
    if rec.best is None:
        return "\n".join([*lines, "# nothing to apply: keep the model eager"]) + "\n"
    b = rec.best
    f = data["figures"]
    if b.median_ci_ms:
        lines.append(f"# median {b.median_ms:.4g} ms, {CONFIDENCE:.0%} CI "
                     f"{b.median_ci_ms[0]:.4g}-{b.median_ci_ms[1]:.4g} ms"
                     + (" (confirmed, interleaved with eager fp32)" if b.confirmed else ""))
    if f["break_even_calls"] is not None and b.config["mode"] != "eager":
        lines.append(f"# compiling pays off after {f['break_even_calls']:,} calls")
    config = CompileConfig.from_dict(b.config)
    dtype = data["dtype"]
    lines += ["import torch", ""]
    if config.dtype == "tf32":
        lines.append('torch.set_float32_matmul_precision("high")  # tf32 matmuls')
    if dtype["cast_model"]:
        lines.append(f"model = model.to({dtype['torch_dtype']})  # and cast floating inputs "
                     f"to {dtype['torch_dtype']}")
    if config.compiled:
        args = ", ".join(f"{k}={v!r}" for k, v in config.compile_kwargs().items())
        lines.append(f"model = torch.compile(model, {args})")
    else:
        lines.append("# no torch.compile: eager is the recommendation here")
    lines.append("")
    lines.append("with torch.inference_mode():")
    if config.uses_cudagraphs:
        lines.append("    torch.compiler.cudagraph_mark_step_begin()  # before every call")
    cast = f".to({dtype['torch_dtype']})" if dtype["cast_model"] else ""
    lines.append(f"    out = model(x{cast})" + ("  # clone outputs you keep (CUDA graphs reuse "
                                               "them)" if config.uses_cudagraphs else ""))
    if b.buckets and b.buckets.get("boundaries"):
        lines += _comment(f"shape strategy {b.buckets['strategy']}: pad each request up to its "
                          f"bucket, boundaries {b.buckets['boundaries']}, and cut the outputs "
                          "back (advisor.apply(...).request(dims, ...) does it with the "
                          "workload's pad and cut); warm up every bucket before traffic")
    elif b.buckets:
        lines += _comment(f"shape strategy {b.buckets['strategy']}")
    if rec.artifact:
        lines.append("# warm start: advisor.apply(model, workload=..., db=...) loads the stored "
                     "cache artifact")
    return "\n".join(lines) + "\n"


def _comment(text: str) -> list[str]:
    """``text`` as wrapped comment lines, continuations indented."""
    return [("# " if i == 0 else "#   ") + part for i, part in enumerate(_wrap(text))]


def _wrap(text: str, width: int = 94) -> list[str]:
    words, out, line = text.split(), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            out.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*out, line] if line else out


_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
_YAML_WORDS = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"}


def _yaml_scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        text = repr(value)
        mantissa, e, exponent = text.partition("e")
        if e and "." not in mantissa:  # YAML 1.1 readers want 1.0e-06, not 1e-06
            text = f"{mantissa}.0e{exponent}"
        return text
    text = str(value)
    if _PLAIN.match(text) and text.lower() not in _YAML_WORDS:
        return text
    return json.dumps(text)  # a JSON string is a valid YAML double-quoted scalar


def to_yaml(data: Any, indent: int = 0) -> str:
    """Plain data (dicts, lists, scalars) as block YAML, written by hand (no dependency)."""
    pad = " " * indent
    if isinstance(data, dict):
        if not data:
            return pad + "{}\n"
        out = []
        for key, value in data.items():
            name = _yaml_scalar(str(key))
            if isinstance(value, (dict, list)) and value:
                out.append(f"{pad}{name}:\n{to_yaml(value, indent + 2)}")
            else:
                out.append(f"{pad}{name}: {_inline(value)}\n")
        return "".join(out)
    if isinstance(data, list):
        if not data:
            return pad + "[]\n"
        out = []
        for item in data:
            if isinstance(item, (dict, list)) and item:
                body = to_yaml(item, indent + 2)
                out.append(f"{pad}- {body[indent + 2:]}")
            else:
                out.append(f"{pad}- {_inline(item)}\n")
        return "".join(out)
    return pad + _yaml_scalar(data) + "\n"


def _inline(value: Any) -> str:
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    return _yaml_scalar(value)
