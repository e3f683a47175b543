"""A replay sized to the time it has. Pure: shapes, weights and measured costs in, plans out.

A replay trial (advisor.child.replay) serves its stream (the holdout, in order: the deciding
process-life figure), then measures the steady state and runs the fp32 eager reference. Over a
long-tail log the stream meets a hundred and more distinct shapes, and timing every one of them
for several passes, then running the reference of each, cost a CPU sweep its whole budget before
the first result (issue 41). So the steady state is measured on a **sample** of the distinct
shapes when all of them do not fit the trial's share of the budget:

- `stratified_sample`: the shapes the stream executed, sorted by size (elements computed, the
  buckets' cost model) and weighted by how many of its requests each took, cut into ``k``
  strata of equal weight; one draw per stratum, at a seeded random point of it. A shape heavier
  than a stratum is drawn in several; every draw stands for 1/k of the traffic, so the mean of
  the draws' latencies estimates the traffic-weighted mean (the steady-state mean the
  process-life cost uses for the requests after the stream).
- `plan_steady`: the largest sample (``k`` draws) whose warm-up, reference and `MIN_PASSES` timed
  passes fit the time, from each shape's measured cost of one call; every shape, and the stream's
  requests in order as before, when they all fit; never fewer than `MIN_DRAWS` draws (fewer
  passes first). `passes_for` chooses the passes again once the reference has run and the time
  left is known.
- `mean_interval`: the 95% interval of a sample's mean (collapsed strata: the variance from
  neighbouring draws' differences), stored with the figures.
- `stream_stride`: the stream itself, sampled when serving all of it does not fit: a replay
  serves the holdout in order but only every ``stride``-th request, the stride doubled (never
  lowered) whenever the rest, priced per element at what was served so far, would not end
  within the trial's share; never fewer than `MIN_STREAM` requests. The strides are powers of
  two from position 0, so every config of a sweep serves nested samples of the same requests
  (a faster config's sample holds a slower one's). Each served request stands for itself and
  the requests skipped after it (`coverage`): advisor.serving prices the whole stream from them.
- `next_budget`: what budget a sweep that stopped before its first result would need, from the
  stopped trials' served requests and phases.
"""

from __future__ import annotations

import bisect
import math
import random
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from advisor.config import CompileConfig

SAMPLE_SEED = 0
# A sample's fewest draws: on a 150-shape long tail whose cost grows with batch x seq (and seq^2),
# 16 size strata estimated the weighted mean within 2.5% at the median and 7% at the 95th
# percentile over seeds; 8 strata within 4% and 13% (tests/core/test_sizing.py checks the
# estimate on such a traffic).
MIN_DRAWS = 16
# A sampled stream's fewest requests: with each request weighted by the requests it stands for,
# the sample's classes (new shapes, repeats) price the stream (advisor.serving.stream_total_ms).
MIN_STREAM = 12
MIN_PASSES = 3  # timed passes a sample keeps before it shrinks (each draw: the median of them)
MAX_PASSES = 5
# A replay's steady state and reference are sized to this share of the trial's time at least,
# the rest being its start-up and stream; the eager fp32 baseline's replay gets this share of
# the sweep's budget (advisor.search.sweep.BASELINE_SHARE says why).
BASELINE_SHARE = 0.2
Z95 = 1.96


@dataclass(frozen=True)
class SteadyPlan:
    """What a replay's steady state times: ``draws``, the distinct shape (an index) timed at each
    position of a pass, in order; ``passes`` over them; ``of_shapes``, the distinct shapes the
    stream executed; ``sampled``, whether the draws are a sample (else the stream's requests, in
    order); ``estimated_s``, the time the plan takes by the costs it was made from (warm-up and
    reference of every drawn shape, then the passes); ``fits``, whether that is within the time
    given (False: the smallest plan, which does not)."""

    draws: tuple[int, ...]
    passes: int
    of_shapes: int
    sampled: bool
    estimated_s: float
    fits: bool

    @property
    def shapes(self) -> list[int]:
        """The distinct shapes timed (and checked against the reference), in index order."""
        return sorted(set(self.draws))

    def weights(self) -> dict[int, float]:
        """Each timed shape's share of the traffic as the draws estimate it (summing to 1)."""
        counts = Counter(self.draws)
        return {i: counts[i] / len(self.draws) for i in sorted(counts)}


def stratified_sample(sizes: Mapping[int, float], weights: Mapping[int, float], k: int,
                      seed: int = SAMPLE_SEED) -> list[int]:
    """``k`` draws of the shapes (keys of ``sizes`` and ``weights``), stratified by size and
    weighted by traffic: the shapes sorted by size (ties by index), their weights laid end to
    end over [0, 1), cut into ``k`` strata of equal weight; one draw per stratum at a random
    point of it (``seed``), the shape whose weight covers that point. Returned smallest first; a
    shape heavier than a stratum is drawn more than once. Every draw stands for 1/k of the
    traffic."""
    if k < 1:
        raise ValueError(f"a sample needs at least one draw, not {k}")
    order = sorted((i for i in sizes if weights.get(i, 0) > 0), key=lambda i: (sizes[i], i))
    if not order:
        raise ValueError("no shape with a positive weight to sample")
    total = sum(weights[i] for i in order)
    ends, running = [], 0.0
    for i in order:
        running += weights[i] / total
        ends.append(running)
    rng = random.Random(seed)
    points = [(j + rng.random()) / k for j in range(k)]
    return [order[min(bisect.bisect_right(ends, p), len(order) - 1)] for p in points]


def _cost_s(draws: Sequence[int], costs_ms: Mapping[int, float], fixed_calls: float,
            passes: int) -> float:
    """Seconds a plan takes: each distinct drawn shape's fixed calls (warm-up, reference), then
    ``passes`` over the draws."""
    fixed = fixed_calls * sum(costs_ms[i] for i in set(draws))
    return (fixed + passes * sum(costs_ms[i] for i in draws)) / 1000


def plan_steady(costs_ms: Mapping[int, float], sizes: Mapping[int, float], stream: Sequence[int],
                time_s: float | None, *, fixed_calls: float, max_passes: int = MAX_PASSES,
                min_draws: int = MIN_DRAWS, seed: int = SAMPLE_SEED,
                stream_weights: Sequence[float] | None = None) -> SteadyPlan:
    """The steady state a replay can afford in ``time_s`` seconds (None: no limit).

    ``stream``: the distinct shape each request of the stream executed, in order (its counts
    weight the shapes); ``costs_ms``: each of those shapes' cost of one call, as measured;
    ``sizes``: their sizes (the strata's order); ``fixed_calls``: calls per distinct shape
    timed besides the passes (its warm-up, and the reference's call in cost units of this
    config's); ``stream_weights``: each request's weight (a sampled stream's `coverage`;
    default 1 each).

    Every shape, timed as the stream's requests in order, when that fits with `MIN_PASSES`
    passes (or ``time_s`` is None); else the largest sample (`stratified_sample`, fewer draws
    than distinct shapes, at least ``min_draws``) that fits with `MIN_PASSES` passes; else
    ``min_draws`` draws with as many passes as fit, at least one (``fits`` False when even that
    does not). The passes are then as many as fit, up to ``max_passes``."""
    if not stream:
        raise ValueError("an empty stream has no steady state")
    distinct = sorted(set(stream))
    missing = [i for i in distinct if i not in costs_ms or i not in sizes]
    if missing:
        raise ValueError(f"shapes {missing} have no cost or size")
    counts: dict[int, float] = {}
    for n, i in enumerate(stream):
        counts[i] = counts.get(i, 0.0) + 1.0 if stream_weights is None else float(stream_weights[n])
    whole = sum(counts.values())
    weights = {i: counts[i] / whole for i in distinct}
    full = tuple(stream)

    def done(draws: tuple[int, ...], sampled: bool) -> SteadyPlan:
        passes = max_passes if time_s is None else passes_for(
            sum(costs_ms[i] for i in draws), time_s - _cost_s(draws, costs_ms, fixed_calls, 0),
            max_passes)
        estimated = _cost_s(draws, costs_ms, fixed_calls, passes)
        fits = time_s is None or estimated <= time_s
        return SteadyPlan(draws, passes, len(distinct), sampled, estimated, fits)

    least = min(MIN_PASSES, max_passes)
    if time_s is None or len(distinct) <= min_draws or (
            _cost_s(full, costs_ms, fixed_calls, least) <= time_s):
        return done(full, False)
    for k in range(len(distinct) - 1, min_draws - 1, -1):
        draws = tuple(stratified_sample(
            {i: sizes[i] for i in distinct}, weights, k, seed))
        if _cost_s(draws, costs_ms, fixed_calls, least) <= time_s:
            return done(draws, True)
    return done(tuple(stratified_sample({i: sizes[i] for i in distinct}, weights, min_draws,
                                        seed)), True)


def first_at(position: int, stride: int) -> int:
    """The first position at or after ``position`` that a stream sampled at ``stride`` serves
    (the multiples of ``stride``)."""
    return -(-position // stride) * stride


def stream_stride(stride: int, next_position: int, sizes: Sequence[float], rate_ms: float,
                  time_s: float | None, *, min_stream: int = MIN_STREAM) -> int:
    """The stride a sampled stream goes on at from ``next_position`` (module doc): ``stride``,
    doubled while serving the rest at it (``sizes``: every request's size, in stream order,
    priced at ``rate_ms`` per unit of size) would take more than ``time_s`` seconds, up to the
    widest power of two that still spreads ``min_stream`` requests over the whole stream.
    ``time_s`` None: no limit, the stride stays."""
    if time_s is None or rate_ms <= 0:
        return stride
    n = len(sizes)
    widest = 1 << max(0, (max(1, n // max(1, min_stream))).bit_length() - 1)
    while stride < widest and rate_ms * sum(
            sizes[p] for p in range(first_at(next_position, stride), n, stride)) / 1000 > time_s:
        stride *= 2
    return stride


def coverage(positions: Sequence[int], n: int) -> list[int]:
    """Per served position (ascending, the first 0): the requests it stands for, itself and
    those skipped up to the next served one (the last: up to the stream's end ``n``). They sum
    to ``n``."""
    ends = [*positions[1:], n]
    return [end - p for p, end in zip(positions, ends, strict=True)]


def passes_for(pass_ms: float, time_s: float, max_passes: int = MAX_PASSES) -> int:
    """Timed passes of ``pass_ms`` each that fit in ``time_s`` seconds: at least one, at most
    ``max_passes``."""
    if pass_ms <= 0:
        return max_passes
    return max(1, min(max_passes, math.floor(time_s * 1000 / pass_ms)))


def mean_interval(values: Sequence[float]) -> tuple[float, float] | None:
    """The 95% interval of the mean of a stratified sample's values, in stratum order: the
    variance from neighbouring draws' squared differences (collapsed strata, conservative where
    the value trends with size). None for fewer than two values."""
    k = len(values)
    if k < 2:
        return None
    variance = sum((values[j] - values[j - 1]) ** 2 for j in range(1, k)) / (2 * k * (k - 1))
    mean, half = statistics.fmean(values), Z95 * math.sqrt(variance)
    return mean - half, mean + half


# --- what a stopped sweep needed -----------------------------------------------------------


@dataclass(frozen=True)
class NextBudget:
    """The budget a next run needs for a first result (``budget_s``), and what it rests on
    (``basis``: one clause); ``at_least``: only a floor is known (nothing was served)."""

    budget_s: float
    basis: str
    at_least: bool = False


def trial_estimate_s(stopped: Mapping[str, Any], phases_s: Mapping[str, float]) -> float | None:
    """A stopped replay's whole time, from what ran: the time before its stream, its stream at
    the rate it was served, then the smallest steady state and reference (`MIN_DRAWS` shapes,
    a warm-up, the reference and `MIN_PASSES` passes each, at that rate). None when it served
    no request (no rate to go by)."""
    served, total = int(stopped.get("requests_served") or 0), int(stopped.get("requests_total")
                                                                  or 0)
    stream_s = stopped.get("stream_s")
    if served < 1 or total < 1 or stream_s is None:
        return None
    elapsed = float(stopped.get("elapsed_s") or sum(phases_s.values()))
    per_request = float(stream_s) / served
    before = max(0.0, elapsed - float(stream_s))
    rest = min(MIN_DRAWS, total) * (2 + MIN_PASSES)
    return before + per_request * (total + rest)


def next_budget(records: Sequence[Mapping[str, Any]], budget_s: float) -> NextBudget | None:
    """For a sweep that stored no result: the budget its first result needs, from the trials
    the budget stopped (status "stopped"). Each stopped replay's whole time is estimated
    (`trial_estimate_s`) and divided by the share of the budget its kind gets (the eager fp32
    baseline's: `BASELINE_SHARE`; another's: the share it was given, over the budget); the
    largest wins. A trial stopped before its first request gives a floor: twice this budget.
    None: no trial was stopped."""
    stopped = [r for r in records if r.get("status") == "stopped" and r.get("stopped")]
    if not stopped:
        return None
    best: NextBudget | None = None
    for r in stopped:
        s = r["stopped"]
        estimate = trial_estimate_s(s, r.get("phases_s") or {})
        share = float(s.get("share_s") or budget_s * BASELINE_SHARE)
        fraction = min(1.0, max(share / budget_s, 1e-3)) if budget_s > 0 else BASELINE_SHARE
        label = CompileConfig.from_dict(r["config"]).label if r.get("config") else "a trial"
        if estimate is None:
            candidate = NextBudget(2 * budget_s, f"{label} spent its {share:.0f} s before its "
                                   "first request", at_least=True)
        else:
            candidate = NextBudget(
                estimate / fraction,
                f"{label} served {s['requests_served']} of {s['requests_total']} requests in "
                f"{float(s['stream_s']):.0f} s: its replay takes about {estimate:.0f} s, "
                f"{fraction:.0%} of the budget")
        if best is None or candidate.budget_s > best.budget_s:
            best = candidate
    return best
