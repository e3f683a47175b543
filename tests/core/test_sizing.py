"""A replay sized to its time (advisor.sizing): the steady state's sample of the shapes and its
passes follow the time share, the sample estimates the traffic's mean, and a sweep stopped before
its first result gets an estimate of the budget it needs. Pure: numbers computed by hand."""

from __future__ import annotations

import random
import statistics
from collections import Counter

import pytest

from advisor.config import EAGER_FP32
from advisor.sizing import (
    BASELINE_SHARE,
    MAX_PASSES,
    MIN_DRAWS,
    MIN_PASSES,
    MIN_STREAM,
    coverage,
    mean_interval,
    next_budget,
    passes_for,
    plan_steady,
    stratified_sample,
    stream_stride,
    trial_estimate_s,
)


def long_tail(n: int = 150, seed: int = 1) -> tuple[list[int], dict[int, float], dict[int, float]]:
    """A stream of ``n`` requests over uniform batch 10-100 x seq 32-256 (the reranker's long
    tail): (each request's distinct shape, each shape's size, each shape's cost in ms: per
    token and per attention pair, as an encoder's)."""
    rng = random.Random(seed)
    requests = [(rng.randint(10, 100), rng.randint(32, 256)) for _ in range(n)]
    shapes = sorted(set(requests))
    index = {s: i for i, s in enumerate(shapes)}
    sizes = {i: float(b * s) for (b, s), i in index.items()}
    costs = {i: b * s * 0.01 + b * s * s * 3e-5 for (b, s), i in index.items()}
    return [index[r] for r in requests], sizes, costs


def weights_of(stream: list[int]) -> dict[int, float]:
    counts = Counter(stream)
    return {i: c / len(stream) for i, c in counts.items()}


def test_a_sample_is_stratified_by_size_and_weighted_by_the_traffic() -> None:
    sizes = {0: 10.0, 1: 20.0, 2: 30.0, 3: 40.0}
    weights = {0: 0.5, 1: 0.25, 2: 0.125, 3: 0.125}
    draws = stratified_sample(sizes, weights, 8, seed=3)
    # eight strata of 1/8 each over the weights laid out by size: shape 0 covers four of them,
    # shape 1 two, shapes 2 and 3 one each, wherever a stratum's point falls inside it
    assert draws == [0, 0, 0, 0, 1, 1, 2, 3]
    assert stratified_sample(sizes, weights, 8, seed=3) == draws  # seeded: the same again
    # a shape with no weight (met only at start-up) is never drawn
    assert 4 not in stratified_sample({**sizes, 4: 1.0}, {**weights, 4: 0.0}, 8)
    with pytest.raises(ValueError):
        stratified_sample(sizes, weights, 0)


def test_a_sample_of_the_long_tail_estimates_its_mean() -> None:
    stream, sizes, costs = long_tail()
    weights = weights_of(stream)
    true_mean = sum(weights[i] * costs[i] for i in weights)
    errors = []
    for seed in range(40):
        draws = stratified_sample(sizes, weights, MIN_DRAWS, seed)
        errors.append(abs(statistics.fmean(costs[i] for i in draws) / true_mean - 1))
    assert statistics.median(errors) < 0.05
    assert max(errors) < 0.15
    # more draws, closer
    wide = [abs(statistics.fmean(costs[i] for i in stratified_sample(sizes, weights, 48, s))
                / true_mean - 1) for s in range(40)]
    assert statistics.median(wide) < statistics.median(errors)


def test_every_shape_when_they_fit_in_the_stream_order() -> None:
    stream, sizes, costs = long_tail()
    plan = plan_steady(costs, sizes, stream, None, fixed_calls=2.0)
    assert not plan.sampled and plan.fits
    assert plan.draws == tuple(stream) and plan.passes == MAX_PASSES
    assert plan.of_shapes == len(set(stream)) == len(plan.shapes)
    # a share that holds every shape's warm-up and reference and five passes: the same plan
    whole = (2.0 * sum(costs.values()) + MAX_PASSES * sum(costs[i] for i in stream)) / 1000
    assert plan_steady(costs, sizes, stream, whole + 0.01, fixed_calls=2.0).draws == plan.draws
    assert plan_steady(costs, sizes, stream, whole + 0.01, fixed_calls=2.0).passes == MAX_PASSES


def test_the_sample_and_its_passes_follow_the_time_share() -> None:
    stream, sizes, costs = long_tail()
    per_stream_s = sum(costs[i] for i in stream) / 1000
    plans = [plan_steady(costs, sizes, stream, per_stream_s * f, fixed_calls=2.0)
             for f in (8, 4, 2, 1, 0.5)]
    draws = [len(p.draws) for p in plans]
    assert draws == sorted(draws, reverse=True)  # less time, fewer draws
    assert plans[0].sampled is False or draws[0] > draws[-1]
    for f, plan in zip((8, 4, 2, 1, 0.5), plans, strict=True):
        if plan.sampled:
            assert MIN_DRAWS <= len(plan.draws) < plan.of_shapes
            assert plan.fits and plan.estimated_s <= per_stream_s * f
            if len(plan.draws) > MIN_DRAWS:  # a sample keeps its passes before it shrinks
                assert plan.passes >= MIN_PASSES
        weights = plan.weights()
        assert sum(weights.values()) == pytest.approx(1.0)
    # a fifth of a stream's time: the least sample, with what passes fit (fits or not)
    least = plan_steady(costs, sizes, stream, per_stream_s / 50, fixed_calls=2.0)
    assert least.sampled and len(least.draws) == MIN_DRAWS and not least.fits
    assert least.passes == 1
    # no time at all: the least, once
    assert plan_steady(costs, sizes, stream, -1.0, fixed_calls=2.0).passes == 1


def test_few_shapes_are_all_timed_whatever_the_time() -> None:
    stream = [0, 1, 0, 2, 0, 1]
    costs = {0: 10.0, 1: 20.0, 2: 40.0}
    sizes = {0: 1.0, 1: 2.0, 2: 4.0}
    plan = plan_steady(costs, sizes, stream, 0.05, fixed_calls=1.0)
    assert not plan.sampled and plan.draws == tuple(stream)  # 3 shapes: fewer than MIN_DRAWS
    # 50 ms leaves no room for a pass after the 70 ms of warm-up: one pass, and it says so
    assert plan.passes == 1 and not plan.fits
    assert plan.estimated_s == pytest.approx((70 + 110) / 1000)  # a pass: 10+20+10+40+10+20
    # 1 s: (1000 - 70) / 110 = 8.5 passes fit, five are taken
    assert plan_steady(costs, sizes, stream, 1.0, fixed_calls=1.0).passes == MAX_PASSES
    # 0.3 s: (300 - 70) / 110 = 2.1: two
    assert plan_steady(costs, sizes, stream, 0.3, fixed_calls=1.0).passes == 2
    with pytest.raises(ValueError):
        plan_steady({0: 1.0}, {0: 1.0}, [0, 1], 1.0, fixed_calls=1.0)


def test_passes_for_the_time_left() -> None:
    assert passes_for(100.0, 1.0) == MAX_PASSES
    assert passes_for(100.0, 0.35) == 3
    assert passes_for(100.0, 0.05) == 1  # one at least
    assert passes_for(100.0, 0.35, max_passes=2) == 2
    assert passes_for(0.0, 1.0) == MAX_PASSES


def test_the_interval_of_a_samples_mean() -> None:
    # differences 2, 2, 2: variance 3 x 4 / (2 x 4 x 3) = 0.5; half-width 1.96 x sqrt(0.5)
    low, high = mean_interval([1.0, 3.0, 5.0, 7.0])  # type: ignore[misc]
    assert (low + high) / 2 == pytest.approx(4.0)
    assert (high - low) / 2 == pytest.approx(1.96 * 0.5 ** 0.5)
    assert mean_interval([3.0]) is None


def stopped_record(**stopped: object) -> dict[str, object]:
    return {"status": "stopped", "config": EAGER_FP32.to_dict(),
            "phases_s": {"start": 1.0, "build": 4.0, "measure": 40.0},
            "stopped": {"lower_bound_ms": None, "requests_served": 40, "requests_total": 150,
                        "phase": "replaying", "reason": "...", "stream_s": 40.0,
                        "elapsed_s": 50.0, "share_s": 60.0, **stopped}}


def test_the_budget_a_next_run_needs_from_what_ran() -> None:
    record = stopped_record()
    # 10 s before its stream, 1 s a request: 150 requests and the least steady state (16 shapes
    # x (warm-up + reference + 3 passes) = 80 calls) at that rate: 10 + 230 = 240 s
    assert trial_estimate_s(record["stopped"], record["phases_s"]) == pytest.approx(240.0)  # type: ignore[arg-type]
    estimate = next_budget([record], 300.0)
    assert estimate is not None and not estimate.at_least
    # the baseline's replay gets its share of the budget (60 of 300 s: 20%): 240 / 0.2
    assert estimate.budget_s == pytest.approx(240.0 / 0.2)
    assert "fp32 + eager served 40 of 150 requests in 40 s" in estimate.basis
    # stopped before its first request: only a floor, twice this budget
    early = stopped_record(requests_served=0, stream_s=None, phase="start-up")
    floor = next_budget([early], 300.0)
    assert floor is not None and floor.at_least and floor.budget_s == 600.0
    # nothing stopped: nothing to go by
    assert next_budget([{"status": "failed", "config": EAGER_FP32.to_dict()}], 300.0) is None
    # a share not recorded: the baseline's, BASELINE_SHARE of the budget
    plain = stopped_record(share_s=None)
    assert next_budget([plain], 300.0).budget_s == pytest.approx(240.0 / BASELINE_SHARE)  # type: ignore[union-attr]


def test_a_stream_is_sampled_at_the_stride_its_time_share_allows() -> None:
    sizes = [1.0] * 150  # 150 requests of 100 ms each: 15 s served whole
    assert stream_stride(1, 0, sizes, 100.0, None) == 1  # no budget: the whole stream
    assert stream_stride(1, 0, sizes, 100.0, 20.0) == 1  # it fits
    assert stream_stride(1, 0, sizes, 100.0, 8.0) == 2  # 75 requests, 7.5 s
    assert stream_stride(1, 0, sizes, 100.0, 4.0) == 4  # 38 requests, 3.8 s
    # never wider than spreads MIN_STREAM requests over the whole stream (150 // 12 -> 8)
    widest = stream_stride(1, 0, sizes, 100.0, 0.0)
    assert widest == 8 and len(range(0, 150, widest)) >= MIN_STREAM
    # the rest only is priced, from where the stream is; a stride is never narrowed again
    assert stream_stride(1, 140, sizes, 100.0, 1.0) == 1  # 10 left: 1 s
    assert stream_stride(4, 0, sizes, 100.0, 1000.0) == 4
    # by size: the same count of requests, four times the elements, a wider stride
    assert stream_stride(1, 0, [4.0] * 150, 100.0, 8.0) == 8


def test_each_served_request_stands_for_those_skipped_after_it() -> None:
    assert coverage([0, 1, 2, 4, 8], 12) == [1, 1, 2, 4, 4]
    assert sum(coverage(list(range(0, 150, 8)), 150)) == 150
    assert coverage([0], 5) == [5]
