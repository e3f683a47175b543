"""Stats against numbers computed by hand (the arithmetic is in the comments)."""

from __future__ import annotations

import math

import pytest

from advisor.stats import NOISE_IQR_RATIO, Stats, percentile

# Five samples, given out of order. Sorted: [1, 2, 3, 4, 10]; n - 1 = 4.
FIVE = [4.0, 1.0, 10.0, 3.0, 2.0]


def test_five_samples_by_hand() -> None:
    s = Stats(FIVE)
    assert s.n_samples == 5
    assert s.samples_ms == FIVE  # the original order is kept
    assert s.sorted_ms == [1.0, 2.0, 3.0, 4.0, 10.0]
    # median: rank 4 * 0.50 = 2.0 -> sorted[2] = 3
    assert s.median_ms == pytest.approx(3.0)
    # mean: (1 + 2 + 3 + 4 + 10) / 5 = 20 / 5 = 4
    assert s.mean_ms == pytest.approx(4.0)
    assert s.min_ms == 1.0
    assert s.max_ms == 10.0
    # p90: rank 4 * 0.90 = 3.6 -> sorted[3] + 0.6 * (sorted[4] - sorted[3]) = 4 + 0.6 * 6 = 7.6
    assert s.p90_ms == pytest.approx(7.6)
    # p99: rank 4 * 0.99 = 3.96 -> 4 + 0.96 * 6 = 9.76
    assert s.p99_ms == pytest.approx(9.76)
    # sample stdev: deviations from 4 are -3, -2, -1, 0, 6; squares 9 + 4 + 1 + 0 + 36 = 50;
    # 50 / (5 - 1) = 12.5; sqrt(12.5) = 3.5355339...
    assert s.stdev_ms == pytest.approx(math.sqrt(12.5))
    assert s.stdev_ms == pytest.approx(3.5355339, abs=1e-7)
    # p25: rank 1.0 -> 2; p75: rank 3.0 -> 4; IQR = 4 - 2 = 2
    assert s.iqr_ms == pytest.approx(2.0)
    # IQR / median = 2 / 3 = 0.667 > 0.10
    assert s.noisy


def test_even_count_interpolates_between_ranks() -> None:
    # Sorted [1, 2, 3, 4]; n - 1 = 3.
    s = Stats([3.0, 1.0, 4.0, 2.0])
    # median: rank 1.5 -> 2 + 0.5 * (3 - 2) = 2.5
    assert s.median_ms == pytest.approx(2.5)
    # p90: rank 2.7 -> 3 + 0.7 * (4 - 3) = 3.7
    assert s.p90_ms == pytest.approx(3.7)
    # p99: rank 2.97 -> 3 + 0.97 = 3.97
    assert s.p99_ms == pytest.approx(3.97)
    # p25: rank 0.75 -> 1.75; p75: rank 2.25 -> 3.25; IQR = 1.5
    assert s.iqr_ms == pytest.approx(1.5)
    # mean: 10 / 4 = 2.5; stdev: squares 2.25 + 0.25 + 0.25 + 2.25 = 5; 5 / 3; sqrt = 1.2909944
    assert s.mean_ms == pytest.approx(2.5)
    assert s.stdev_ms == pytest.approx(1.2909944, abs=1e-7)


def test_percentile_function_by_hand() -> None:
    data = [10.0, 20.0, 30.0]  # n - 1 = 2
    assert percentile(data, 0) == 10.0
    assert percentile(data, 100) == 30.0
    assert percentile(data, 50) == 20.0  # rank 1.0
    assert percentile(data, 25) == pytest.approx(15.0)  # rank 0.5 -> 10 + 0.5 * 10
    assert percentile(data, 90) == pytest.approx(28.0)  # rank 1.8 -> 20 + 0.8 * 10


def test_percentile_refuses_nonsense() -> None:
    with pytest.raises(ValueError):
        percentile([], 50)
    with pytest.raises(ValueError):
        percentile([1.0], 101)
    with pytest.raises(ValueError):
        percentile([1.0], -1)


def test_noise_flag_at_the_ten_percent_boundary() -> None:
    assert NOISE_IQR_RATIO == 0.10
    # [9, 10, 11]: p25 rank 0.5 -> 9.5; p75 rank 1.5 -> 10.5; IQR 1.0; median 10; 1.0 / 10 = 0.10
    # exactly: not above 10%, so not noisy.
    at = Stats([9.0, 10.0, 11.0])
    assert at.iqr_ms == pytest.approx(1.0)
    assert at.iqr_ms / at.median_ms == pytest.approx(0.10)
    assert not at.noisy
    # [9, 10, 11.02]: p75 = 10 + 0.5 * 1.02 = 10.51; IQR = 1.01; 1.01 / 10 = 0.101 > 0.10
    above = Stats([9.0, 10.0, 11.02])
    assert above.iqr_ms == pytest.approx(1.01)
    assert above.noisy
    # [9.2, 10, 10.8]: IQR = 10.4 - 9.6 = 0.8; 0.8 / 10 = 0.08
    assert not Stats([9.2, 10.0, 10.8]).noisy


def test_one_sample() -> None:
    s = Stats([5.0])
    assert s.n_samples == 1
    for value in (s.median_ms, s.mean_ms, s.min_ms, s.max_ms, s.p90_ms, s.p99_ms):
        assert value == 5.0
    assert s.stdev_ms == 0.0
    assert s.iqr_ms == 0.0
    assert not s.noisy
    assert s.median_ci_ms() == (5.0, 5.0)


def test_no_samples_is_an_error() -> None:
    with pytest.raises(ValueError):
        Stats([])


def test_zero_median_is_not_noisy() -> None:
    assert not Stats([0.0, 0.0, 0.0]).noisy


def test_bootstrap_ci_contains_the_median_and_is_seeded() -> None:
    samples = [1.0 + 0.01 * ((i * 37) % 101) for i in range(200)]  # 1.00 .. 2.00, spread out
    s = Stats(samples)
    low, high = s.median_ci_ms()
    assert low <= s.median_ms <= high
    assert low < high
    assert s.min_ms <= low and high <= s.max_ms
    assert s.median_ci_ms() == (low, high)  # same seed, same interval
    assert Stats(samples).median_ci_ms(seed=0) == (low, high)  # not tied to the instance
    assert s.median_ci_ms(seed=1) != (low, high)
    # A lower confidence gives an interval inside the higher one.
    low80, high80 = s.median_ci_ms(confidence=0.80)
    assert low <= low80 <= high80 <= high


def test_to_dict_has_every_figure() -> None:
    data = Stats(FIVE).to_dict()
    assert data == {
        "median_ms": pytest.approx(3.0),
        "mean_ms": pytest.approx(4.0),
        "min_ms": 1.0,
        "max_ms": 10.0,
        "p90_ms": pytest.approx(7.6),
        "p99_ms": pytest.approx(9.76),
        "stdev_ms": pytest.approx(math.sqrt(12.5)),
        "iqr_ms": pytest.approx(2.0),
        "n_samples": 5,
        "noisy": True,
    }


# --- the median's bootstrap interval (advisor.stats.median_ci) -----------------------------------


def test_resampled_medians_follow_the_resampling_distribution_by_hand() -> None:
    from advisor.stats import median_ci

    # [1, 3]: a resample of 2 is (1, 1), (3, 3) or mixed: medians 1, 3 with 1/4 each, 2 with 1/2.
    # Central 40% (30th to 70th percentile): 2 both; central 60% (20th to 80th): 1 to 3.
    assert median_ci([[1.0, 3.0]], confidence=0.4) == (2.0, 2.0)
    assert median_ci([[1.0, 3.0]], confidence=0.6) == (1.0, 3.0)
    # [1, 2, 3]: the median is 1 when 2 or 3 of the 3 draws are 1: 3 * (1/3)^2 * (2/3) + (1/3)^3
    # = 7/27 = 0.26; 3 likewise; 2 with 13/27. The 20th percentile is 1, the 30th already 2.
    assert median_ci([[1.0, 2.0, 3.0]], confidence=0.4) == (2.0, 2.0)
    assert median_ci([[3.0, 1.0, 2.0]], confidence=0.6) == (1.0, 3.0)


def test_the_median_interval_matches_resampling_every_sample() -> None:
    import numpy as np

    from advisor.stats import median_ci

    rng = np.random.default_rng(11)
    for n in (31, 200, 1000):  # odd and even counts
        data = rng.lognormal(0.0, 0.5, n)
        # the bootstrap done the long way: 4000 resamples of all n samples, their medians
        medians = np.median(data[rng.integers(0, n, size=(4000, n))], axis=1)
        low, high = np.percentile(medians, [2.5, 97.5])
        got_low, got_high = median_ci([data.tolist()], resamples=4000)
        width = high - low
        assert got_low == pytest.approx(low, abs=0.1 * width)
        assert got_high == pytest.approx(high, abs=0.1 * width)
