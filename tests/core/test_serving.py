"""advisor.serving: the process-life figure and the flags, against hand-computed numbers."""

from __future__ import annotations

import pytest

from advisor.serving import (
    bound_costs,
    decides,
    flags,
    late_new_shapes_ms,
    process_life_lower_bound_ms,
    process_life_ms,
    pruned_text,
    startup_s,
    stream_total_ms,
)

STREAM = {"per_request_ms": [100.0, 2.0, 2.0, 2.0, 40.0, 2.0], "new_shape": [0, 4],
          "startup_s": 1.0, "late_new_shape_share": 1 / 3, "new_shape_mean_ms": 70.0,
          "mem_startup_bytes": 100 * 2**20, "mem_growth_bytes": 50 * 2**20}
REPLAY = {"mean_ms": 2.0, "varying_dims": ["batch"], "stream": STREAM, "boundaries": {},
          "trace_shapes": 3, "recompile_limit_hit": False, "eager_fallbacks": 0}


def test_a_short_process_pays_its_start_up_and_the_requests_it_meets() -> None:
    assert process_life_ms(REPLAY, 3) == pytest.approx((1000 + 104) / 3)
    assert process_life_ms(REPLAY, 6) == pytest.approx((1000 + 148) / 6)


def test_a_long_process_keeps_paying_the_late_new_shape_rate() -> None:
    # later half: positions 3-5, one new shape (40 ms): 1/3 x (40 - 2) extra per request
    assert late_new_shapes_ms(STREAM, 300, 2.0) == pytest.approx(300 * 38 / 3)
    n = 10_000
    expected = (1000 + 148 + (n - 6) * (2.0 + 38 / 3)) / n
    assert process_life_ms(REPLAY, n) == pytest.approx(expected)
    quiet = {**REPLAY, "stream": {**STREAM, "new_shape": [0]}}
    assert process_life_ms(quiet, n) == pytest.approx((1000 + 148 + (n - 6) * 2.0) / n)


def test_the_process_figure_decides_only_for_a_varying_stream() -> None:
    assert decides(REPLAY)
    assert not decides({**REPLAY, "varying_dims": []}) and not decides(None)
    assert process_life_ms({"mean_ms": 1.0}, 100) is None


def test_flags_name_what_a_server_will_meet() -> None:
    names = {f["flag"] for f in flags(REPLAY, cudagraphs=True, compiled=True)}
    assert names == {"cudagraph_per_shape", "new_shapes_persist", "memory_growth"}  # 50 MiB
    small = {**REPLAY, "stream": {**STREAM, "mem_growth_bytes": 12 * 2**20}}  # under 16 MiB
    assert "memory_growth" not in {f["flag"] for f in flags(small, cudagraphs=True,
                                                             compiled=True)}
    bucketed = {**REPLAY, "boundaries": {"batch": [8, 16]}, "recompile_limit_hit": True,
                "eager_fallbacks": 2, "eager_fallback_requests": 0.5,
                "stream": {**STREAM, "late_new_shape_share": 0.0, "mem_growth_bytes": 0}}
    names = {f["flag"] for f in flags(bucketed, cudagraphs=True, compiled=True)}
    assert names == {"recompile_limit", "eager_fallback"}
    assert flags({**REPLAY, "stream": {}}, cudagraphs=False, compiled=False) == []


def test_a_process_served_alone_is_the_one_that_decides() -> None:
    stream = {"startup_s": 3.0, "per_request_ms": [1.0, 1.0], "new_shape": []}
    replay = {"mean_ms": 1.0, "stream": stream}
    assert startup_s(stream) == 3.0
    assert process_life_ms(replay, 2) == pytest.approx((3000 + 2) / 2)
    alone = {"startup_s": 1.0, "per_request_ms": [4.0, 1.0], "new_shape": [0]}
    again = {**replay, "stream": {**stream, "alone": alone}}
    assert startup_s(again["stream"]) == 1.0
    assert process_life_ms(again, 2) == pytest.approx((1000 + 4 + 1) / 2)


def test_new_shapes_inside_a_bucket_grid_stop_when_its_buckets_are_met() -> None:
    # The late new shape (position 4) fell inside the grid and 3 buckets are left: a long
    # process meets at most 3 more, not a third of every later request.
    n = 10_000
    bucketed = {**REPLAY, "boundaries": {"batch": [8, 16]},
                "stream": {**STREAM, "bounded_new_shape": [4], "grid_left": 3}}
    assert late_new_shapes_ms(bucketed["stream"], n - 6, 2.0) == pytest.approx(3 * 38)
    assert process_life_ms(bucketed, n) == pytest.approx((1000 + 148 + (n - 6) * 2.0
                                                          + 3 * 38) / n)
    full = {**bucketed, "stream": {**bucketed["stream"], "grid_left": 0}}
    assert process_life_ms(full, n) == pytest.approx((1000 + 148 + (n - 6) * 2.0) / n)
    # a few more requests than that: the rate, under the bound
    assert late_new_shapes_ms(bucketed["stream"], 6, 2.0) == pytest.approx(2 * 38)
    # outside the grid (a size above every boundary passes unpadded): no bound
    outside = {**bucketed, "stream": {**bucketed["stream"], "bounded_new_shape": [0]}}
    assert process_life_ms(outside, n) == pytest.approx(process_life_ms(REPLAY, n))
    message = next(f["message"] for f in flags(bucketed, cudagraphs=True, compiled=True)
                   if f["flag"] == "new_shapes_persist")
    assert message.endswith("inside the buckets' grid at most 3 more")


def test_the_lower_bound_is_start_up_and_the_requests_paid_over_the_process() -> None:
    # STREAM's start-up is 1 s; after 2 requests (100 + 2 ms) of a 10,000-request process
    assert process_life_lower_bound_ms(1.0, [100.0, 2.0], 10_000) == pytest.approx(1102 / 10_000)
    # nothing served yet: the start-up alone
    assert process_life_lower_bound_ms(1.0, [], 4) == pytest.approx(250.0)
    # a process shorter than what was paid counts its first `calls` requests only
    assert process_life_lower_bound_ms(1.0, [100.0, 2.0, 2.0, 2.0], 3) == pytest.approx(
        (1000 + 104) / 3)
    with pytest.raises(ValueError):
        process_life_lower_bound_ms(1.0, [1.0], 0)


@pytest.mark.parametrize("calls", [1, 3, 6, 7, 10_000])
@pytest.mark.parametrize("replay", [
    REPLAY,
    {**REPLAY, "stream": {**STREAM, "bounded_new_shape": [4], "grid_left": 0}},
    {**REPLAY, "mean_ms": 0.0},
])
def test_the_lower_bound_never_exceeds_the_process_life_cost(replay: dict, calls: int) -> None:
    """At every point of the stream the bound is at most what the full stream is priced at
    (and reaches it once the whole stream is paid, when the process ends with it)."""
    stream, life = replay["stream"], process_life_ms(replay, calls)
    assert life is not None
    costs = stream["per_request_ms"]
    bounds = [process_life_lower_bound_ms(stream["startup_s"], costs[:k], calls)
              for k in range(len(costs) + 1)]
    assert all(b <= life + 1e-12 for b in bounds)
    assert bounds == sorted(bounds)  # paying more never lowers it
    if calls <= len(costs):
        assert bounds[-1] == pytest.approx(life)


def test_a_pruned_trial_reads_as_its_bound_never_a_figure() -> None:
    assert pruned_text({"lower_bound_ms": 12.34}) == "pruned: at least 12.3 ms a request"
    assert pruned_text({"lower_bound_ms": 0.5}) == "pruned: at least 0.500 ms a request"


def sample_of(positions: list[int], n: int, new_positions: list[int]) -> dict:
    from advisor.sizing import coverage

    return {"of_requests": n, "positions": positions, "weights": coverage(positions, n),
            "new_positions": new_positions, "bounded_new_positions": []}


def test_a_stream_served_whole_at_stride_one_is_priced_as_it_was_paid() -> None:
    costs = STREAM["per_request_ms"]
    whole = sample_of(list(range(6)), 6, [0, 4])
    assert stream_total_ms(costs, [0, 4], whole, 2.0) == pytest.approx(sum(costs))
    sampled = {**STREAM, "sample": whole}
    assert process_life_ms({**REPLAY, "stream": sampled}, 6) == pytest.approx(
        process_life_ms(REPLAY, 6))


def test_a_sampled_stream_prices_new_shapes_and_repeats_apart() -> None:
    # 64 requests, shapes a a b b c c ...: the even positions meet a new shape (100 ms), the odd
    # ones repeat it (1 ms). Sampled at stride 4: only new shapes served; the repeats are
    # priced at the steady state
    new = list(range(0, 64, 2))
    sample = sample_of(list(range(0, 64, 4)), 64, new)
    costs = [100.0] * 16
    assert stream_total_ms(costs, list(range(16)), sample, 1.0) == pytest.approx(
        32 * 100 + 32 * 1.0)
    # shapes a b b b ...: at stride 2 the sample meets b first at position 2, a repeat in the
    # whole stream; its 100 ms compile is not a repeat's cost, nor part of a lower bound
    sample = sample_of([0, 2, 4, 6], 8, [0, 1])
    costs = [100.0, 100.0, 1.0, 1.0]
    assert stream_total_ms(costs, [0, 1], sample, 5.0) == pytest.approx(2 * 100 + 6 * 1.0)
    assert bound_costs(costs, [0, 1], sample) == [100.0, 1.0, 1.0]
    # the process: start-up, the whole stream's estimate, the rest at the steady state
    replay = {**REPLAY, "mean_ms": 1.0, "stream": {
        **STREAM, "per_request_ms": costs, "new_shape": [0, 1], "sample": sample}}
    assert process_life_ms(replay, 8) == pytest.approx((1000 + 206) / 8)
    assert process_life_ms(replay, 4) == pytest.approx((1000 + 206 / 2) / 4)


def test_a_sampled_stream_keeps_paying_the_whole_stream_s_late_new_shape_rate() -> None:
    # 8 requests; the whole stream meets new shapes at 0, 1, 5 and 6 (two of them in its later
    # half, positions 4-7); served at stride 2, the new shapes at 0 and 6 cost 100 ms
    sample = sample_of([0, 2, 4, 6], 8, [0, 1, 5, 6])
    stream = {**STREAM, "per_request_ms": [100.0, 1.0, 1.0, 100.0], "new_shape": [0, 3],
              "sample": sample}
    # rate from the whole stream (2 of 4), cost from the served late new shape (100 - 2 steady)
    assert late_new_shapes_ms(stream, 40, 2.0) == pytest.approx(40 * 2 / 4 * 98)
    # a bucketed plan: late new shapes inside the grid stop at the buckets left
    bounded = {**stream, "grid_left": 3, "sample": {**sample, "bounded_new_positions": [5, 6]}}
    assert late_new_shapes_ms(bounded, 40, 2.0) == pytest.approx(3 * 98)
