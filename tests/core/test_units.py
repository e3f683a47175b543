"""advisor.units: figures a person reads, against hand-written strings."""

from __future__ import annotations

import pytest

from advisor import units


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (0.0, "0 ms"),
        (0.000512, "512 ns"),
        (0.00099996, "1.00 µs"),  # rounds up into the next unit
        (0.0867, "86.7 µs"),
        (0.08665, "86.7 µs"),  # was 0.08665 ms beside 86.7 us
        (0.09996, "0.100 ms"),
        (0.96, "0.960 ms"),
        (0.9996, "1.00 ms"),
        (9.996, "10.0 ms"),  # three figures after rounding, not 10.00
        (74.4, "74.4 ms"),
        (100.0, "100 ms"),
        (999.4, "999 ms"),
        (999.95, "1.00 s"),  # not 1,000 ms
        (1320.0, "1.32 s"),  # was 1.32e+03 ms
        (31_040.0, "31.0 s"),
        (96_000.0, "96.0 s"),
        (119_960.0, "2.00 min"),
        (720_000.0, "12.0 min"),
        (3_600_000.0, "1.00 h"),
        (9_000_000.0, "2.50 h"),
        (1e10, "2,778 h"),  # no exponent however long
        (-5.0, "-5.00 ms"),
        (None, "-"),
        (float("nan"), "-"),
        (float("inf"), "-"),
    ],
)
def test_duration_ms(ms: float | None, text: str) -> None:
    assert units.duration_ms(ms) == text


@pytest.mark.parametrize(
    ("s", "text"),
    [(0.2, "200 ms"), (31.04, "31.0 s"), (150.0, "2.50 min"), (0.0, "0 ms"), (None, "-"),
     (7560.0, "2.10 h"), (0.00004, "40.0 µs")],
)  # fmt: skip
def test_duration_s(s: float | None, text: str) -> None:
    assert units.duration_s(s) == text


@pytest.mark.parametrize(
    ("low", "high", "text"),
    [
        (813.0, 1820.0, "0.813-1.82 s"),  # was 813-1.82e+03 ms: one unit, the larger end's
        (0.95, 0.97, "0.950-0.970 ms"),
        (0.036, 0.038, "36.0-38.0 µs"),
        (0.08, 0.12, "0.0800-0.120 ms"),
        (1210.0, 1240.0, "1.21-1.24 s"),
        (1.0, 1820.0, "0.001-1.82 s"),  # the smaller end: one decimal more at most
        (0.0, 5.0, "0-5.00 ms"),
        (999.9, 999.96, "1.00-1.00 s"),
        (60_000.0, 150_000.0, "1.00-2.50 min"),
        (None, 1.0, "-"),
        (1.0, float("inf"), "-"),
    ],
)
def test_interval_ms(low: float | None, high: float | None, text: str) -> None:
    assert units.interval_ms(low, high) == text


def test_no_exponent_anywhere() -> None:
    figures = [10.0**k * m for k in range(-7, 12) for m in (1.0, 1.234, 9.9996)]
    for ms in figures:  # no unit name holds an "e"
        assert "e" not in units.duration_ms(ms) + units.interval_ms(ms / 3, ms), ms
    assert units.size(1023.99 * 2**20) == "1.00 GiB" and units.size(200_000_000) == "191 MiB"
    assert units.rate(12345.6) == "12,346/s" and units.rate(1000 / 1220.0) == "0.820/s"
