"""advisor.serving: the process-life figure and the flags, against hand-computed numbers."""

from __future__ import annotations

import pytest

from advisor.serving import (
    decides,
    flags,
    late_new_shape_extra_ms,
    process_life_ms,
    startup_s,
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
    assert late_new_shape_extra_ms(STREAM, 2.0) == pytest.approx(38 / 3)
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
