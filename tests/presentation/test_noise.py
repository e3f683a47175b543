"""When the host or the intervals make the answer unsafe: pure functions, figures injected."""

from __future__ import annotations

from support.records import eager_fp32, trial

from advisor.presentation.noise import LOAD_PER_CORE, host_load_warning, interval_warning
from advisor.recommendation import recommend


def test_a_loaded_host_is_named_with_its_load_and_cores() -> None:
    warning = host_load_warning(8.0, 2)
    assert warning is not None and warning.startswith("host load 8.0 on 2 cores")
    assert host_load_warning(1.5, 2) is None
    assert host_load_warning(LOAD_PER_CORE * 4, 4) is None
    assert host_load_warning(1.1, 1) is not None


def test_undecided_noise_and_wide_intervals_are_unsafe() -> None:
    noisy = recommend("w", [eager_fp32(10.0, median_ci_ms=[9, 11]),
                            trial("default", median_ms=2.0, median_ci_ms=[1.2, 2.9], noisy=True),
                            trial("max-autotune", median_ms=1.8, median_ci_ms=[1.1, 2.6])])
    # both clearly beat eager fp32: equivalent, a pick whose own interval is still too wide
    assert noisy.decision == "equivalent"
    assert "spans 1.20-2.90 ms, 85% of its 2.00 ms (noisy)" in (interval_warning(noisy) or "")
    open_ = recommend("w", [eager_fp32(2.0, median_ci_ms=[1.8, 2.2]),
                            trial("default", median_ms=1.9, median_ci_ms=[1.2, 2.9], noisy=True)])
    assert interval_warning(open_) == open_.sentence and "undecided: noise" in open_.sentence
    wide = recommend("w", [eager_fp32(10.0), trial("default", median_ms=2.0,
                                                   median_ci_ms=[1.7, 2.3])])
    assert "spans 1.70-2.30 ms, 30% of its 2.00 ms" in (interval_warning(wide) or "")
    tight = recommend("w", [eager_fp32(10.0), trial("default", median_ms=2.0,
                                                    median_ci_ms=[1.99, 2.01])])
    assert interval_warning(tight) is None
