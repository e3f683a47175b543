"""Pooled figures keep p99 >= p90 >= median: each percentile is pooled as the figure is (the
median over the same trials), and a confirmation's paired median never rises above the tails
shown beside it. Hand-built trial records, hand-computed answers."""

from __future__ import annotations

from typing import Any

import pytest
from support import records

from advisor.config import CompileConfig
from advisor.recommendation import export_dict, recommend
from advisor.stats import ordered_tail


def trial(mode: str, dtype: str, median_ms: float, p90_ms: float | None, p99_ms: float | None,
          **fields: Any) -> dict[str, Any]:
    """A passed trial of one config with its percentiles (`records.trial`)."""
    return records.trial(mode, dtype, median_ms, p90_ms=p90_ms, p99_ms=p99_ms, **fields)


def _by_label(rec: Any) -> dict[str, Any]:
    return {r.label: r for r in rec.ranked}


def test_two_trials_that_disagree_no_longer_show_a_p99_under_the_median() -> None:
    """The issue's figure: two trials of 2.0 and 46.2 ms pool to 24.1 ms; the representative
    (the first of the two equally near trials) had a p99 of 5.18 ms, which was shown."""
    records = [trial("eager", "fp32", 60.0, 62.0, 70.0),
               trial("default", "fp32", 2.0, 3.0, 5.18),
               trial("default", "fp32", 46.2, 48.0, 52.0)]
    pooled = _by_label(recommend("w", records))["fp32 + default"]
    assert pooled.median_ms == pytest.approx(24.1) and pooled.n_trials == 2
    assert pooled.p90_ms == pytest.approx((3.0 + 48.0) / 2)  # 25.5
    assert pooled.p99_ms == pytest.approx((5.18 + 52.0) / 2)  # 28.59
    assert pooled.steady_ms == pytest.approx(24.1)  # the steady median is pooled the same way
    figures = export_dict(recommend("w", records[1:]))["figures"]  # what a serving process reads
    assert figures["p99_ms"] == pytest.approx(28.59) and figures["median_ms"] < 28.59


def test_each_percentile_is_the_median_over_the_trials_not_the_max_nor_the_representatives(
) -> None:
    records = [trial("default", "fp32", 1.0, 1.2, 10.0),  # one stray tail
               trial("default", "fp32", 2.0, 2.1, 2.2),  # the representative (the median)
               trial("default", "fp32", 3.0, 3.3, 3.5)]
    (pooled,) = recommend("w", records).ranked
    assert (pooled.median_ms, pooled.p90_ms, pooled.p99_ms) == (2.0, 2.1, 3.5)


def test_missing_or_disordered_percentiles_are_raised_to_keep_the_order() -> None:
    records = [
        trial("default", "fp32", 2.0, 2.2, 2.5),
        trial("default", "fp32", 4.0, None, 4.5),  # no p90: the p90 of one trial, 2.2 < 3.0
        trial("eager", "bf16", 3.0, 5.0, 4.0),  # imported by hand: p90 above p99
        trial("eager", "fp32", 9.0, None, None),  # no percentiles at all: unknown stays unknown
    ]
    by = _by_label(recommend("w", records))
    default = by["fp32 + default"]
    assert (default.median_ms, default.p90_ms, default.p99_ms) == (3.0, 3.0, 3.5)
    assert (by["bf16 + eager"].p90_ms, by["bf16 + eager"].p99_ms) == (5.0, 5.0)
    assert (by["fp32 + eager"].p90_ms, by["fp32 + eager"].p99_ms) == (None, None)


def test_ordered_tail_by_hand() -> None:
    assert ordered_tail(3.0, 3.3, 3.9) == (3.3, 3.9)  # already ordered: unchanged
    assert ordered_tail(3.0, 2.0, 2.5) == (3.0, 3.0)
    assert ordered_tail(3.0, None, 2.0) == (None, 3.0)
    assert ordered_tail(3.0, 4.0, None) == (4.0, None)


def _confirmation(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"uuid": "c-1", "created_at": "2026-10-03T10:00:00+00:00", "rounds": 50,
            "method": "cuda_events", "entries": list(entries)}


def _entry(mode: str, dtype: str, median_ms: float, **fields: Any) -> dict[str, Any]:
    config = CompileConfig(mode=mode, dtype=dtype)
    return {"config": config.to_dict(), "config_key": config.key, "label": config.label,
            "median_ms": median_ms, "median_ci_ms": [median_ms * 0.99, median_ms * 1.01],
            "speedup": 4.0, "speedup_ci": [3.9, 4.1], **fields}


def test_a_confirmations_median_never_sits_above_the_tails_beside_it() -> None:
    """A paired median replaces the pooled one; an entry without percentiles kept the sweep's,
    which were under it (2.0 ms p99 beside a 2.5 ms median before)."""
    records = [trial("eager", "fp32", 10.0, 11.0, 12.0),
               trial("max-autotune", "fp32", 1.8, 1.9, 2.0),
               trial("default", "fp32", 2.0, 2.2, 2.4)]
    conf = _confirmation(_entry("eager", "fp32", 9.0, p90_ms=9.5, p99_ms=10.0),
                         _entry("max-autotune", "fp32", 2.5))  # no p90/p99 stored
    rec = recommend("w", records, confirmation=conf)
    by = _by_label(rec)
    tuned = by["fp32 + max-autotune"]
    assert tuned.confirmed and tuned.median_ms == 2.5
    assert (tuned.p90_ms, tuned.p99_ms) == (2.5, 2.5)
    assert rec.baseline is not None and rec.baseline.confirmed
    assert (rec.baseline.median_ms, rec.baseline.p90_ms, rec.baseline.p99_ms) == (9.0, 9.5, 10.0)


def test_a_process_life_figure_keeps_its_measured_steady_state_percentiles() -> None:
    """A process-life cost is a mean over start-up, new shapes and the steady state: a rare
    compile raises it above a true p99. The percentiles stay the steady state's, ordered against
    the steady median, never raised to a figure nobody measured."""
    stream = {"per_request_ms": [100.0, 2.0, 2.0, 2.0, 40.0, 2.0], "new_shape": [0, 4],
              "startup_s": 1.0}
    replay = {"mean_ms": 2.0, "varying_dims": ["batch"], "stream": stream, "boundaries": {}}
    records = [trial("default", "fp32", 2.0, 2.5, 3.0, replay=replay)]
    (pooled,) = recommend("w", records, calls_per_process=6).ranked
    assert pooled.figure == "process"
    assert pooled.median_ms == pytest.approx((1000 + 148) / 6)
    assert (pooled.steady_ms, pooled.p90_ms, pooled.p99_ms) == (2.0, 2.5, 3.0)
