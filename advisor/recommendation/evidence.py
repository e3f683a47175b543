"""The evidence: one config's pooled figures (`Ranked`), the recommendation that holds them
(`Recommendation`), and the figures they rest on (`deciding_ms`, `break_even_calls`).

One figure per config: the median of the deciding figures (`deciding_ms`) of its full trials
(a screened trial, cut short after SCREEN_SAMPLES calls, counts only when the config has
nothing else, and is then ``short``), its interval the span of their 95% intervals
(``median_ci_ms``), ``noisy`` when any of them was; never the best of N. Every speedup is
against one baseline figure, named by `Recommendation.baseline_name`: eager fp32 pooled the same
way, or a confirmation's eager fp32 rounds. ``break_even_calls`` is the call count at which
compiling has paid for itself against the fastest eager config of the stack (bf16 eager often
beats fp32 eager), ``cold_compile_s / (eager_ms - median_ms) x 1000`` (None: never, it is not
faster); ``break_even_calls_fp32`` is the same against eager fp32.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, cast

from advisor import serving
from advisor.config import CompileConfig
from advisor.dimensions import simplicity as dimension_simplicity
from advisor.records import Flag, TrialRecord
from advisor.serving import DEFAULT_CALLS_PER_PROCESS
from advisor.stats import CONFIDENCE, NOISE_IQR_RATIO, WIDE_INTERVAL
from advisor.units import duration_ms, interval_ms

# Figures within 10% of the leader's, each from its own process, cannot be ordered with
# confidence (a config's median moves between processes by more than its interval says:
# docs/performance.md, "Leaders re-measured side by side"). Such contenders are worth
# re-measuring side by side (advisor.search.sweep).
NEAR_RATIO = 0.10
STACK_FIELDS = ("driver_version", "cuda_driver_version", "torch_version", "triton_version")


def overlaps(a: Sequence[float] | None, b: Sequence[float] | None) -> bool:
    """Whether two intervals share a point (False when either is unknown)."""
    return a is not None and b is not None and a[0] <= b[1] and b[0] <= a[1]


@dataclass(frozen=True)
class Ranked:
    """One config's evidence, relative to the eager fp32 baseline."""

    config: CompileConfig  # a dict only where it is written out (`to_dict`)
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
    flags: list[Flag] | None = None  # what a serving process meets (advisor.serving)
    n_trials: int = 1  # full trials pooled into this figure (median of their figures)
    noisy: bool | None = None  # a pooled trial (or the confirmation) flagged its timing noisy
    short: bool = False  # only a screened (short, SCREEN_SAMPLES-call) measurement: never ties
    break_even_calls_fp32: int | None = None  # calls until compiling pays off vs eager fp32
    # every figure pooled was measured beside other processes' CPU work (advisor.hostload):
    # it never decides; ``host`` says what the host was doing ("" when quiet)
    contended: bool = False
    host: str = ""
    # its trials' figures lie more than `FAR_RATIO` apart ([lowest, highest]): flagged, not
    # silently pooled (then also ``noisy``)
    moved: list[float] | None = None
    # the quality check's parts (advisor.workload.Quality): how requests combined, the worst
    # request, and why the check only advised (stand-in weights) when it did
    quality_combine: str | None = None
    quality_worst: float | None = None
    quality_advisory: str | None = None

    @property
    def config_key(self) -> str:
        return self.config.key

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON/CSV-ready): the config as `CompileConfig.to_dict` writes it."""
        data = asdict(self)
        data["config"] = self.config.to_dict()
        return data


@dataclass(frozen=True)
class Recommendation:
    """The recommended config for one workload on one fingerprint, with its evidence."""

    workload: str
    fingerprint_hash: str | None
    best: Ranked | None
    baseline: Ranked | None
    ranked: list[Ranked] = field(default_factory=list)
    n_trials: int = 0
    n_failed: int = 0  # status "failed" (a pruned trial is no failure: `n_pruned`)
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
    # figures), "equivalent" (configs the evidence cannot order, all clearly faster than eager
    # fp32: a pick by the lower cold compile, then the simpler; the note names the rule and the
    # others), "undecided" (configs the evidence cannot order where the choice matters; the
    # leader stands, the note says so), "undecided: noise" (the same on noisy timings: no
    # pick), "none" (nothing passed)
    decision: str = "none"
    # labels the leader cannot be told from (under "equivalent" too: the pick may be one)
    undecided: list[str] = field(default_factory=list)
    eager_best: Ranked | None = None  # the fastest eager config (what break-even is against)
    baseline_source: str = ""  # where the baseline figure comes from, e.g. "median of 3 trials"
    n_pruned: int = 0  # replays stopped once proven worse than the best (advisor.records.Pruned)
    # set by the caller while a sweep of this workload on this fingerprint still runs: the
    # answer is provisional, from the trials finished so far ("" when none runs)
    provisional: str = ""
    # the coverage (advisor.recommendation.decide.cover): the configs its sweeps planned, the
    # labels of those never measured (decided only when none is left), and how many compiled
    # configs were measured at all ("compiling does not pay off" needs one)
    planned: int = 0
    unmeasured: list[str] = field(default_factory=list)
    unmeasured_compiled: int = 0
    compiled_measured: int = 0
    # the policy's own sentence of its pick (`advisor.recommendation.policies.Policy.headline`,
    # set by `decide`); "" for the median's (latency), which this class words
    headline: str = ""

    @property
    def leader(self) -> Ranked | None:
        """The config with the best figure under the policy (``best`` unless a tie, an
        equivalence or noise)."""
        return self.ranked[0] if self.ranked else None

    @property
    def baseline_name(self) -> str:
        """The one figure every speedup of this recommendation is against, named."""
        if self.baseline is None:
            return "no eager fp32 baseline"
        return f"eager fp32 {duration_ms(self.baseline.median_ms)} ({self.baseline_source})"

    @property
    def decided_by(self) -> str:
        """Which figure decided: the steady-state median or the cost over a process's life."""
        if self.best is not None and self.best.figure == "process":
            return (f"expected ms per request over a process serving "
                    f"{self.calls_per_process or DEFAULT_CALLS_PER_PROCESS:,} requests "
                    "(start-up, new shapes, steady state)")
        return "steady-state median"

    @property
    def paired(self) -> bool:
        """Whether the headline's speedup is a paired one: the pick and eager fp32 re-measured
        interleaved in one process (a confirmation), not two figures from separate processes."""
        return bool(self.best is not None and self.best.confirmed and self.baseline is not None
                    and self.baseline.confirmed)

    @property
    def doubt(self) -> str:
        """Why the headline's figures cannot carry a claim ("" when they can). Paired (a
        confirmation): the paired speedup's interval is wider than `WIDE_INTERVAL` of it.
        Unpaired: the pick's or the baseline's timings were noisy, or an interval is wider than
        `WIDE_INTERVAL` of its figure (then a speedup between the two can be anything inside
        their spans). The sentence says so before any number."""
        if self.best is None or self.decision == "undecided: noise":
            return ""
        ci = self.best.speedup_ci
        if self.paired and ci and self.best.speedup:
            # paired: the interval of the per-round ratios is what the claim rests on (samples
            # of a short call spread widely and still order the configs round by round)
            width = (ci[1] - ci[0]) / self.best.speedup
            if width <= WIDE_INTERVAL:
                return ""
            return (f"the paired speedup's 95% interval spans {ci[0]:.2f}-{ci[1]:.2f}x, "
                    f"{width:.0%} of its {self.best.speedup:.2f}x")
        shown = [self.best]
        if self.baseline is not None and self.baseline.trial_uuid != self.best.trial_uuid:
            shown.append(self.baseline)
        reasons = []
        for r in shown:
            name = "the pick" if r is self.best else "eager fp32"
            ci = r.median_ci_ms
            wide = bool(ci and r.median_ms and (ci[1] - ci[0]) / r.median_ms > WIDE_INTERVAL)
            if wide and ci:
                reasons.append(f"{name}'s 95% interval spans {interval_ms(ci[0], ci[1])}, "
                               f"{(ci[1] - ci[0]) / r.median_ms:.0%} of its "
                               f"{duration_ms(r.median_ms)}{' (noisy)' if r.noisy else ''}")
            elif r.noisy:
                reasons.append(f"{name}'s timings were noisy")
        if not reasons:
            return ""
        return "; ".join(reasons)

    @property
    def coverage(self) -> str:
        """What the answer rests on: ``measured 1 of 6 configs; not measured: ...`` ("" when
        its sweeps planned nothing it has not measured)."""
        if not self.unmeasured:
            return ""
        names = ", ".join(self.unmeasured[:5])
        if len(self.unmeasured) > 5:
            names += f" and {len(self.unmeasured) - 5} more"
        return (f"measured {self.planned - len(self.unmeasured)} of {self.planned} configs; "
                f"not measured: {names}")

    @property
    def sentence(self) -> str:
        """The evidence in one sentence; noisy evidence says so before any number, and an
        answer short of its coverage says it is provisional first."""
        text = self._sentence()
        if self.unmeasured and self.best is not None and (
                self.decision == "provisional" or self.decision.startswith("undecided")):
            text = f"provisional ({self.coverage}): {text}"  # short of its coverage, said first
        if self.best is not None and self.best.figure == "process":
            text += f" [{self.decided_by}; steady state {_ms(self.best.steady_ms)}]"
        if self.doubt:
            what = "even side by side" if self.paired else "from separate trials, not paired"
            text = f"noisy evidence ({self.doubt}, {what}), so these figures may not hold: {text}"
        return text

    def _sentence(self) -> str:
        if self.decision == "undecided: noise" and self.leader is not None:
            lead = self.leader
            return (f"undecided: noise. {lead.label} ({_with_ci(lead)}) cannot be told apart from "
                    f"{', '.join(self.undecided)} on noisy timings; measure again on a quiet host "
                    "or run `advisor recommend --confirm`")
        if self.decision == "undecided: host busy":
            busy = [r for r in [*self.ranked, *([self.baseline] if self.baseline else [])]
                    if r.contended]
            where = f" ({busy[0].host})" if busy and busy[0].host else ""
            return (f"cannot decide here: host busy{where}; no pick from figures measured beside "
                    "other processes' work: measure again on a quiet host")
        if self.best is None:
            if self.n_excluded:
                return (f"no config of {self.workload} meets the constraints "
                        f"({_reasons(self.excluded)}); nothing to recommend")
            return f"no config of {self.workload} ran and passed; nothing to recommend"
        return self.headline or self._latency_sentence()

    def _latency_sentence(self) -> str:
        b, base = self.best, self.baseline
        assert b is not None
        if not b.config.compiled and base is not None and self.decision == "equivalent":
            # compiled configs were as fast within the noise: not "does not pay off", which
            # says they were measured slower
            text = f"{b.label}: {duration_ms(b.median_ms)}"
            if b.speedup is not None and b.config_key != base.config_key:
                text += (f" vs {duration_ms(base.median_ms)} eager fp32 "
                         f"({self._speedup_text(b)})")
            return text + ("; no compiled config is faster beyond the noise, and it compiles "
                           "nothing (see the note)")
        if not b.config.compiled and base is not None:
            return self._eager_sentence(b)
        text = f"{b.label}: {duration_ms(b.median_ms)}"
        if base is not None and b.speedup is not None:
            text += f" vs {duration_ms(base.median_ms)} eager fp32 ({self._speedup_text(b)})"
        if b.cold_compile_s is not None and b.config.compiled:
            text += f", {b.cold_compile_s:.1f} s cold compile"
        calls = _per_call(b)
        if calls:
            text += f", {calls}"
            if base is not None and _per_call(base):
                text += f" vs {_per_call(base)}"
        return text

    def _eager_sentence(self, b: Ranked) -> str:
        """An eager pick: "compiling does not pay off" only when compiled configs were measured
        and lost; never beside a faster passing compiled config."""
        text = f"{b.label}: {duration_ms(b.median_ms)}"
        compiled = [r for r in self.ranked if r.config.compiled]
        if not self.compiled_measured:
            return text + ("; compiling was not measured" + (
                f" ({self.unmeasured_compiled} compiled configs not measured)"
                if self.unmeasured_compiled else ""))
        if compiled and compiled[0].median_ms < b.median_ms and self.decision != "tie":
            c = compiled[0]
            return text + (f"; {c.label} measured {duration_ms(c.median_ms)}, faster on its "
                           "figure (see the note)")
        if self.unmeasured_compiled:
            text += (f"; no measured compiled config pays off here ({self.unmeasured_compiled}"
                     " compiled configs not measured)")
        else:
            text += "; compiling does not pay off here"
        if compiled:
            c = compiled[0]
            text += f" (fastest compiled: {c.label}, {duration_ms(c.median_ms)}"
            text += f", {c.speedup:.2f}x)" if c.speedup else ")"
        return text

    def _speedup_text(self, r: Ranked) -> str:
        """``2.16x paired, 95% 2.05-2.27x`` from a confirmation; ``2.16x from separate
        trials, not paired`` otherwise (two processes' medians, minutes apart)."""
        if r.speedup is None:
            return "-"
        if r.confirmed and self.baseline is not None and self.baseline.confirmed:
            ci = r.speedup_ci
            return f"{r.speedup:.2f}x paired" + (f", 95% {ci[0]:.2f}-{ci[1]:.2f}x" if ci else "")
        return f"{r.speedup:.2f}x from separate trials, not paired"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for name in ("best", "baseline", "eager_best"):  # configs as their dicts
            r = getattr(self, name)
            data[name] = None if r is None else r.to_dict()
        data["ranked"] = [r.to_dict() for r in self.ranked]
        data["sentence"] = self.sentence
        data["decided_by"] = self.decided_by
        data["coverage"] = self.coverage
        return data


def flag_legend(rows: Sequence[Ranked]) -> str:
    """What the flags of an evidence table mean, for the flags its ``rows`` show ("" for none):
    every table that shows ``short``, ``noisy`` or ``paired`` prints this beside it, and it
    says when a row's quality check only advised (`advisor.workload.Quality.advisory`)."""
    parts = []
    if any(r.short for r in rows):
        parts.append("short = measured only by the short screening run (screened out as "
                     "clearly slower than the best so far; --screen 0 measures every config "
                     "in full)")
    if any(r.contended and not r.short for r in rows):
        parts.append("busy = measured only while other processes used the CPU it needed "
                     "(stored with the host's figures; such a figure never decides)")
    if any(r.noisy and not r.short and not r.contended for r in rows):
        parts.append(f"noisy = its timings' spread (IQR) exceeded {NOISE_IQR_RATIO:.0%} of its "
                     "median")
    if any(r.confirmed for r in rows):
        parts.append("paired = re-measured interleaved with eager fp32 in one process (its "
                     "speedup is the paired one); the other rows' speedups come from separate "
                     "trials, not paired")
    for advisory in dict.fromkeys(r.quality_advisory for r in rows if r.quality_advisory):
        parts.append(f"quality* = its quality check is advisory, not used to reject: {advisory}")
    return "; ".join(parts)


def _ms(value: float | None) -> str:
    return duration_ms(value)


def _with_ci(r: Ranked) -> str:
    text = duration_ms(r.median_ms)
    if r.median_ci_ms:
        text += f", {CONFIDENCE:.0%} CI {interval_ms(r.median_ci_ms[0], r.median_ci_ms[1])}"
    return text + (", noisy" if r.noisy else "")


def _reasons(excluded: dict[str, int]) -> str:
    return ", ".join(f"{n} with {reason}" for reason, n in sorted(excluded.items()))


def _per_call(r: Ranked) -> str:
    if r.launches_per_call is not None:
        return f"{r.launches_per_call} launches per call"
    if r.kernels_per_call is not None:
        return f"{r.kernels_per_call} kernels per call"
    return ""


def traffic_throughput(shapes: Sequence[Mapping[str, Any]]) -> float | None:
    """Calls per second of the traffic mix: 1 / sum(weight / throughput) (weights normalised)."""
    usable = [s for s in shapes if s.get("throughput_per_s") and s.get("weight")]
    if not usable or len(usable) != len(shapes):
        return None
    total = sum(s["weight"] for s in usable)
    return float(1.0 / sum(s["weight"] / total / s["throughput_per_s"] for s in usable))


def break_even_calls(cold_compile_s: float | None, median_ms: float,
                     eager_ms: float | None) -> int | None:
    """Calls after which a config's compile has paid for itself against eager (None: never)."""
    if eager_ms is None or median_ms >= eager_ms:
        return None
    calls = (cold_compile_s or 0.0) * 1000 / (eager_ms - median_ms)
    return math.ceil(calls * (1 - 1e-9))  # float noise: 1000000.0000005 is 1 000 000 calls


def deciding_ms(rec: TrialRecord, calls: int | None) -> float:
    """A record's deciding figure: the expected cost per request over a process serving
    `calls` requests when its replay streams varying traffic (advisor.serving), else its
    steady-state median."""
    life = _life_ms(rec, calls)
    return steady_ms(rec) if life is None else life


def steady_ms(rec: TrialRecord) -> float:
    """An ok record's steady-state median (float(None) raised the same before the types)."""
    median = rec["median_ms"]
    if median is None:
        raise TypeError(f"trial {rec['trial_uuid']} has no median_ms: not an ok record")
    return float(median)


def _life_ms(rec: TrialRecord, calls: int | None) -> float | None:
    replay = rec.get("replay")
    if replay is None or not serving.decides(replay):
        return None
    return serving.process_life_ms(replay, calls or DEFAULT_CALLS_PER_PROCESS)


def rank_record(
    rec: TrialRecord, baseline_ms: float | None, calls: int | None = None
) -> Ranked:
    config = CompileConfig.from_dict(rec["config"])
    life = _life_ms(rec, calls)
    process = life is not None
    figure_ms = steady_ms(rec) if life is None else life
    ci = None if process else rec.get("median_ci_ms")
    replay = rec.get("replay")
    return Ranked(
        figure="process" if process else "steady", steady_ms=rec["median_ms"],
        flags=(replay.get("flags") if replay else None) or None,
        config=config, label=config.label, median_ms=figure_ms,
        p90_ms=rec.get("p90_ms"), p99_ms=rec.get("p99_ms"),
        speedup=baseline_ms / figure_ms if baseline_ms and figure_ms else None,
        cold_compile_s=rec.get("cold_compile_s"), warm_compile_s=rec.get("warm_compile_s"),
        kernels_per_call=rec.get("kernels_per_call"),
        launches_per_call=rec.get("launches_per_call"), max_abs_err=rec.get("max_abs_err"),
        quality_name=rec.get("quality_name"), quality_value=rec.get("quality_value"),
        quality_combine=rec.get("quality_combine"), quality_worst=rec.get("quality_worst"),
        quality_advisory=rec.get("quality_advisory"),
        trial_uuid=cast(str, rec["trial_uuid"]),  # the store gives every trial one
        median_ci_ms=[float(ci[0]), float(ci[1])] if ci else None,
        throughput_per_s=traffic_throughput(rec.get("shapes") or []),
        peak_mem_bytes=rec.get("peak_mem_bytes"), graph_count=rec.get("graph_count"),
        break_even_calls=break_even_calls(
            None if not config.compiled or process else rec.get("cold_compile_s"), figure_ms,
            baseline_ms,
        ),
        shapes=[
            {"shape": s.get("shape"), "dims": s.get("dims"), "weight": s.get("weight")}
            for s in rec.get("shapes") or []
        ] or None,
        buckets=_buckets_of(config, rec),
    )


def _buckets_of(config: CompileConfig, rec: TrialRecord) -> dict[str, Any] | None:
    """A shape strategy's measured buckets: strategy and boundaries per padded dim."""
    if config.shapes == "static":
        return None
    replay = rec.get("replay")
    return {"strategy": config.shapes,
            "boundaries": (replay.get("boundaries") if replay else None) or {},
            "padding_waste": replay.get("padding_waste") if replay else None}


def simplicity(r: Ranked) -> tuple[float, ...]:
    """Simpler and cheaper first: the dimensions' ranks (the mode's cost; advisor.dimensions),
    then fewer graphs, then a shorter compile."""
    graphs = 0 if not r.config.compiled else (r.graph_count or 0)
    return (*dimension_simplicity(r.config), graphs, r.cold_compile_s or 0.0)
