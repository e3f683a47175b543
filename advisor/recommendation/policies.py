"""The policies a recommendation is decided under: small classes in one registry (`POLICIES`).

A policy scores each config's pooled evidence (`Ranked`); lower is better unless
`higher_is_better`. The base class holds what every policy shares (the order, the tie ratio, how a
score reads); a policy says only how it scores, and, where its score rests on the median, its
interval. `paired`: the policy can decide on a confirmation's paired medians. Adding a policy is
one class and one registry entry.

Each policy ranks the trials that ran and passed correctness and quality and meet the
constraints (`Constraints`: ``max_compile_s`` on the cold compile, ``max_memory_bytes`` on the
peak memory; a trial whose figure is unknown does not meet a constraint on it):

- ``latency`` (the default): the lowest traffic-weighted median (``median_ms``).
- ``tail``: the lowest traffic-weighted p99 (``p99_ms``).
- ``throughput``: the most calls per second over the traffic (per-shape back-to-back throughput,
  combined as 1 / sum(weight / throughput): the expected time per call of the traffic mix).
- ``break-even``: for ``calls_per_process`` calls in a process's life, the lowest
  ``cold_compile_s + calls x median_ms``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from advisor.config import EAGER_FP32
from advisor.errors import ConfigError
from advisor.units import duration_ms, duration_s, rate

if TYPE_CHECKING:
    from advisor.recommendation.evidence import Ranked, Recommendation

TIE_RATIO = 0.02  # figures closer than 2% count as a tie


class Policy:
    """How configs are ordered. Subclasses set `name` and implement `score`."""

    name: ClassVar[str]
    unit: ClassVar[str] = "ms"
    higher_is_better: ClassVar[bool] = False
    paired: ClassVar[bool] = False  # a confirmation's paired medians can decide it
    # its paired speedup intervals order two confirmed configs, and a config against the
    # baseline (advisor.recommendation.decide)
    speedup_decides: ClassVar[bool] = False
    needs_calls: ClassVar[bool] = False  # needs --calls-per-process
    # the columns the CLI's ranking table adds for it: (header, priority at narrow widths)
    columns: ClassVar[tuple[tuple[str, int], ...]] = ()

    def __init__(self, calls: int | None = None) -> None:
        self.calls = calls

    def score(self, r: Ranked) -> float | None:
        raise NotImplementedError

    def interval(self, r: Ranked) -> list[float] | None:
        """The score's confidence interval, where the score rests on the median (None: not)."""
        return None

    def sort_key(self, r: Ranked) -> float:
        assert r.score is not None
        return -r.score if self.higher_is_better else r.score

    def within_ratio(self, r: Ranked, leader: Ranked, ratio: float = TIE_RATIO) -> bool:
        assert r.score is not None and leader.score is not None
        if self.higher_is_better:
            return r.score * (1 + ratio) >= leader.score
        return r.score <= leader.score * (1 + ratio)

    def export_figures(self, rec: Recommendation, best: Ranked) -> dict[str, Any]:
        """What `advisor export` adds to the pick's figures under this policy."""
        return {}

    def headline(self, rec: Recommendation) -> str:
        """The sentence's words for the pick ``rec.best`` under this policy ("": the median's,
        which `Recommendation` words, as for latency)."""
        return ""

    def figure(self, r: Ranked) -> str:
        """The policy's figure of ``r`` as a person reads it (advisor.units)."""
        assert r.score is not None
        if self.unit == "ms":
            return duration_ms(r.score)
        if self.unit == "s":
            return duration_s(r.score)
        return f"{rate(r.score)} {self.unit}" if self.unit == "calls/s" else f"{r.score:.3g}"


class Latency(Policy):
    """The lowest traffic-weighted median (or process-life figure)."""

    name = "latency"
    paired = True
    speedup_decides = True

    def score(self, r: Ranked) -> float | None:
        return r.median_ms

    def interval(self, r: Ranked) -> list[float] | None:
        return r.median_ci_ms


class Tail(Policy):
    """The lowest traffic-weighted p99."""

    name = "tail"

    def score(self, r: Ranked) -> float | None:
        return r.p99_ms

    def headline(self, rec: Recommendation) -> str:
        b, base = rec.best, rec.baseline
        assert b is not None
        text = f"{b.label}: p99 {duration_ms(b.p99_ms)}"
        if base is not None and base.p99_ms is not None:
            text += f" vs {duration_ms(base.p99_ms)} eager fp32"
        return text + f" (median {duration_ms(b.median_ms)})"


class Throughput(Policy):
    """The most calls per second over the traffic mix."""

    name = "throughput"
    unit = "calls/s"
    higher_is_better = True

    columns = (("calls/s", 4),)  # a back-to-back burst of its own: shown where it decides

    def score(self, r: Ranked) -> float | None:
        return r.throughput_per_s

    def figure(self, r: Ranked) -> str:
        return f"{r.score:,.0f} calls/s"

    def headline(self, rec: Recommendation) -> str:
        b, base = rec.best, rec.baseline
        assert b is not None
        text = f"{b.label}: {b.throughput_per_s:,.0f} calls/s"
        if base is not None and base.throughput_per_s:
            text += f" vs {base.throughput_per_s:,.0f} eager fp32"
        return text + f" (median {duration_ms(b.median_ms)})"


class BreakEven(Policy):
    """The lowest cold compile + calls x median over a process of `calls` calls."""

    name = "break-even"
    unit = "s"
    paired = True
    needs_calls = True

    def score(self, r: Ranked) -> float | None:
        assert self.calls is not None
        if r.figure == "process":  # start-up is inside the process-life figure already
            return self.calls * r.median_ms / 1000
        compile_s = 0.0 if not r.config.compiled else (r.cold_compile_s or 0.0)
        return compile_s + self.calls * r.median_ms / 1000

    def export_figures(self, rec: Recommendation, best: Ranked) -> dict[str, Any]:
        return {"calls_per_process": rec.calls_per_process, "total_s": best.total_s}

    def headline(self, rec: Recommendation) -> str:
        b, base, n = rec.best, rec.baseline, rec.calls_per_process
        assert b is not None and n is not None
        text = f"for {n:,} calls per process, {b.label}: {duration_s(b.total_s)} in all"
        if b.config.compiled:
            text += (f" ({duration_s(b.cold_compile_s or 0)} cold compile + {n:,} x "
                     f"{duration_ms(b.median_ms)})")
        if base is not None and base.total_s is not None and b.trial_uuid != base.trial_uuid:
            text += f" vs {duration_s(base.total_s)} eager fp32"
        if b.config.compiled:
            if b.break_even_calls is not None:
                text += f"; compiling pays off after {b.break_even_calls:,} calls"
                eager = rec.eager_best
                if eager is not None and eager.config_key != EAGER_FP32.key:
                    text += f" against {eager.label}"
                    if b.break_even_calls_fp32 is not None:
                        text += f" ({b.break_even_calls_fp32:,} against eager fp32)"
            return text
        paying = [r for r in rec.ranked if r.config.compiled and r.break_even_calls]
        if paying:
            c = min(paying, key=lambda r: r.break_even_calls or 0)
            text += (f"; compiling does not pay off within {n:,} calls (soonest: {c.label} "
                     f"pays off after {c.break_even_calls:,} calls)")
        elif not rec.compiled_measured:
            text += "; compiling was not measured"
        else:
            text += "; compiling does not pay off here"
        return text

    def interval(self, r: Ranked) -> list[float] | None:
        if r.median_ci_ms is None:
            return None
        assert self.calls is not None and r.total_s is not None
        fixed = r.total_s - self.calls * r.median_ms / 1000
        return [fixed + self.calls * v / 1000 for v in r.median_ci_ms]


REGISTRY: dict[str, type[Policy]] = {p.name: p for p in (Latency, Tail, Throughput, BreakEven)}
POLICIES = tuple(REGISTRY)
CONFIRMED_POLICIES = tuple(name for name, p in REGISTRY.items() if p.paired)


def check_policy(policy: str, calls_per_process: int | None) -> None:
    if policy not in REGISTRY:
        raise ConfigError(f"unknown policy {policy!r}: choose one of {', '.join(POLICIES)}")
    if REGISTRY[policy].needs_calls and (calls_per_process is None or calls_per_process < 1):
        raise ConfigError(f"the {policy} policy needs --calls-per-process N (N >= 1)")


def policy_named(policy: str, calls_per_process: int | None = None) -> Policy:
    """The policy a stored answer names (known: its sweep checked it), unchecked."""
    return REGISTRY[policy](calls_per_process)


def make_policy(policy: str, calls_per_process: int | None) -> Policy:
    """The policy named ``policy`` (checked: one line naming the choices when unknown)."""
    check_policy(policy, calls_per_process)
    return REGISTRY[policy](calls_per_process)
