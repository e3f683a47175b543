"""Bucket boundaries: powers of two, multiples, and boundaries fitted to the traffic."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from advisor.buckets import (
    BucketPlan,
    expected_cost,
    fit,
    fit_1d,
    fit_1d_brute,
    multiple_bounds,
    next_multiple,
    next_pow2,
    pad_value,
    padding_waste,
    pow2_bounds,
)


def seq_traffic(weights: dict[int, float], batch: int = 1) -> list[tuple[dict[str, int], float]]:
    return [({"batch": batch, "seq": s}, w) for s, w in weights.items()]


def cost_1d(weights: dict[int, float], bounds: tuple[int, ...]) -> float:
    return sum(w * pad_value(v, bounds) for v, w in weights.items())


# --- simple schemes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "pow2", "mult8"),
    [(1, 1, 8), (2, 2, 8), (3, 4, 8), (8, 8, 8), (9, 16, 16), (100, 128, 104)],
)
def test_next_pow2_and_multiple(value: int, pow2: int, mult8: int) -> None:
    assert next_pow2(value) == pow2
    assert next_multiple(value, 8) == mult8


def test_pow2_and_multiple_bounds_pad_only_the_varying_dims() -> None:
    shapes = [
        ({"batch": 10, "seq": 33, "hidden": 384}, 1),
        ({"batch": 100, "seq": 256, "hidden": 384}, 1),
    ]
    assert pow2_bounds(shapes) == {"batch": (16, 128), "seq": (64, 256)}
    assert multiple_bounds(shapes, 32) == {"batch": (32, 128), "seq": (64, 256)}
    plan = BucketPlan.for_strategy("buckets:pow2", shapes)
    assert plan.bucket({"batch": 10, "seq": 33, "hidden": 384}) == {
        "batch": 16,
        "seq": 64,
        "hidden": 384,
    }


def test_the_grid_counts_every_bucket_the_boundaries_define() -> None:
    """A server cannot know which buckets tomorrow's traffic uses: its recompile limit must
    let dynamo compile every one of them (else a bucket its start-up missed runs eagerly)."""
    pow2 = BucketPlan("buckets:pow2", {"batch": (16, 32, 64, 128), "seq": (64, 128, 256)})
    assert pow2.grid_size() == 12
    assert BucketPlan("buckets:fitted-2", {"seq": (7, 30)}).grid_size() == 2
    assert BucketPlan("static").grid_size() == 1


def test_a_served_bucket_plan_raises_the_recompile_limit_to_its_grid() -> None:
    import torch._dynamo

    from advisor.child.serve import RecommendationWarning, bucket_plan
    from advisor.config import CompileConfig

    before = torch._dynamo.config.recompile_limit
    try:
        torch._dynamo.config.recompile_limit = 8
        config = CompileConfig(shapes="buckets:pow2")
        bounds = {"batch": [16, 32, 64, 128], "seq": [64, 128, 256]}
        with pytest.warns(RecommendationWarning, match="without the workload's pad"):
            plan = bucket_plan(config, {"boundaries": bounds}, "reranker", None)
        assert plan is not None and plan.grid_size() == 12
        assert torch._dynamo.config.recompile_limit == 12
    finally:
        torch._dynamo.config.recompile_limit = before


def test_pad_value_above_the_top_boundary_passes_unpadded() -> None:
    assert pad_value(5, (4, 8)) == 8
    assert pad_value(8, (4, 8)) == 8
    assert pad_value(9, (4, 8)) == 9


def test_non_bucketed_strategies_pass_shapes_as_they_are() -> None:
    shapes = seq_traffic({5: 1, 9: 1})
    for strategy in ("static", "dynamic", "mark_dynamic"):
        plan = BucketPlan.for_strategy(strategy, shapes)
        assert plan.bounds == {} and not plan.pads
        assert plan.bucket({"batch": 1, "seq": 9}) == {"batch": 1, "seq": 9}
        assert plan.padding_waste(shapes) == 0.0


# --- fitted: one dim, by hand ------------------------------------------------------------------


def test_hand_worked_three_sizes() -> None:
    # sizes 10 (0.5), 20 (0.3), 100 (0.2), K = 2:
    #   {20, 100}: 0.5*20 + 0.3*20 + 0.2*100 = 36    <- best
    #   {10, 100}: 0.5*10 + 0.3*100 + 0.2*100 = 55
    weights = {10: 0.5, 20: 0.3, 100: 0.2}
    assert fit_1d(weights, 2) == (20, 100)
    assert cost_1d(weights, (20, 100)) == pytest.approx(36)
    # K = 1: everything pads to the largest size
    assert fit_1d(weights, 1) == (100,)
    # K >= distinct sizes: no padding at all
    assert fit_1d(weights, 3) == (10, 20, 100)
    assert fit_1d(weights, 9) == (10, 20, 100)


def test_bimodal_lengths_get_a_boundary_between_the_modes() -> None:
    # short prompts around 20-40 tokens, long ones around 200-240: two modes
    weights = {**{s: 1.0 for s in range(20, 41)}, **{s: 0.5 for s in range(200, 241)}}
    bounds = fit_1d(weights, 2)
    assert bounds == (40, 240)  # the top of each mode
    assert any(40 <= b < 200 for b in bounds)
    # the 2-D fit on the same histogram (batch fixed) agrees
    assert fit(seq_traffic(weights, batch=8), 2) == {"seq": (40, 240)}


def test_k1_is_the_max_in_every_varying_dim() -> None:
    shapes = [({"batch": b, "seq": s}, 1.0) for b, s in [(10, 64), (50, 128), (100, 32)]]
    assert fit(shapes, 1) == {"batch": (100,), "seq": (128,)}


def test_fixed_dims_are_never_padded() -> None:
    shapes = [({"batch": 4, "seq": s}, 1.0) for s in (3, 5, 17)]
    assert set(fit(shapes, 2)) == {"seq"}
    assert fit([({"batch": 4, "seq": 9}, 1.0)], 2) == {}


def _exhaustive(weights: dict[int, float], k: int) -> float:
    values = sorted(weights)
    best = math.inf
    for size in range(1, min(k, len(values)) + 1):
        for lower in itertools.combinations(values[:-1], size - 1):
            best = min(best, cost_1d(weights, (*lower, values[-1])))
    return best


def test_fit_1d_is_optimal_against_brute_force_and_exhaustive_search() -> None:
    rng = random.Random(7)
    for _ in range(200):
        values = rng.sample(range(1, 300), rng.randint(1, 9))
        weights = {v: rng.choice([0.1, 1.0, rng.random(), 5.0]) for v in values}
        k = rng.randint(1, 5)
        fast, brute = fit_1d(weights, k), fit_1d_brute(weights, k)
        assert len(fast) <= k and fast[-1] == max(values)
        assert cost_1d(weights, fast) == pytest.approx(cost_1d(weights, brute))
        assert cost_1d(weights, fast) == pytest.approx(_exhaustive(weights, k))


def test_fit_1d_matches_brute_force_on_many_sizes() -> None:
    rng = random.Random(3)
    for k in (2, 3, 5, 8):
        weights = {v: rng.random() for v in rng.sample(range(1, 2000), 120)}
        fast, brute = fit_1d(weights, k), fit_1d_brute(weights, k)
        assert cost_1d(weights, fast) == pytest.approx(cost_1d(weights, brute))


# --- fitted: several dims ----------------------------------------------------------------------


def _random_traffic(rng: random.Random) -> list[tuple[dict[str, int], float]]:
    return [
        ({"batch": rng.randint(1, 120), "seq": rng.randint(8, 300)}, rng.random())
        for _ in range(rng.randint(2, 25))
    ]


def test_fitted_is_never_worse_than_pow2_on_its_own_traffic() -> None:
    rng = random.Random(11)
    for _ in range(60):
        shapes = _random_traffic(rng)
        pow2 = pow2_bounds(shapes)
        k = max((len(b) for b in pow2.values()), default=1)
        fitted = fit(shapes, k)
        assert expected_cost(shapes, fitted) <= expected_cost(shapes, pow2) * (1 + 1e-12)
        assert all(len(b) <= k for b in fitted.values())


def test_reranker_traffic_fitted_beats_pow2() -> None:
    shapes = [
        ({"batch": 10, "seq": 64}, 0.15),
        ({"batch": 20, "seq": 128}, 0.20),
        ({"batch": 50, "seq": 128}, 0.30),
        ({"batch": 50, "seq": 256}, 0.15),
        ({"batch": 100, "seq": 32}, 0.05),
        ({"batch": 100, "seq": 256}, 0.15),
    ]
    pow2 = pow2_bounds(shapes)
    assert pow2 == {"batch": (16, 32, 64, 128), "seq": (32, 64, 128, 256)}
    fitted = fit(shapes, 4)
    assert expected_cost(shapes, fitted) < expected_cost(shapes, pow2)
    assert padding_waste(shapes, fitted) == 0.0  # 4 boundaries cover these few sizes exactly
    two = fit(shapes, 2)
    assert padding_waste(shapes, two) > 0


def test_coordinate_descent_never_loses_to_the_independent_fit() -> None:
    from advisor.buckets import _dim_weights

    rng = random.Random(5)
    for _ in range(40):
        shapes = _random_traffic(rng)
        dims = [d for d in ("batch", "seq") if len({s[d] for s, _ in shapes}) > 1]
        independent = {d: fit_1d(_dim_weights(shapes, d, {}), 2) for d in dims}
        assert expected_cost(shapes, fit(shapes, 2)) <= expected_cost(shapes, independent) + 1e-9


def test_padding_waste_by_hand() -> None:
    # seq 6 (w 1) and 8 (w 1) padded to 8: computed 16, real 14 -> waste 2/16
    shapes = seq_traffic({6: 1.0, 8: 1.0})
    assert padding_waste(shapes, {"seq": (8,)}) == pytest.approx(2 / 16)
    plan = BucketPlan.for_strategy("buckets:fitted-1", shapes)
    assert plan.buckets(shapes) == [({"batch": 1, "seq": 8}, 2.0)]
    assert plan.to_dict() == {"strategy": "buckets:fitted-1", "bounds": {"seq": [8]}}
