"""Figures in human units, for every surface that prints them (terminal, report, dashboard).

`duration_ms(1220.0)` is ``1.22 s``, `duration_ms(0.96)` is ``0.960 ms``, `duration_ms(0.037)`
is ``37.0 µs``: three significant figures, one unit per figure chosen by its size (ns, µs below
0.1 ms, ms, s, min from two minutes, h), never ``1.22e+03 ms``. `duration_s` does the same from
seconds (a compile time); `interval_ms` prints an interval in one unit (``0.813-1.82 s``);
`rate` prints calls per second (``0.820/s`` below one, ``1,234/s`` above a thousand); `size`
prints bytes in binary units; `column_format` gives a table column of such figures one printf
format (the dashboard's).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, TypeGuard


def _round3(value: float) -> float:
    """``value`` rounded to three significant figures (``999.95`` is ``1000.0``)."""
    return float(f"{value:.3g}")


def _three(value: float) -> str:
    """Three significant figures without an exponent (``1.22``, ``12.2``, ``122``, ``1,220``):
    rounded first, so that ``9.996`` reads ``10.0``, never ``10.00``."""
    if value == 0:
        return "0"
    rounded = _round3(value)
    if abs(rounded) >= 1000:
        return f"{value:,.0f}"
    digits = max(0, 2 - int(math.floor(math.log10(abs(rounded)))))
    return f"{rounded:.{digits}f}"


# A duration's unit: (name, its size in ms, the figure in ms from which the next unit is used).
# Below 0.1 ms a figure reads in µs; from two minutes in minutes, from an hour in hours.
_DURATION_UNITS = (
    ("ns", 1e-6, 1e-3),
    ("µs", 1e-3, 0.1),
    ("ms", 1.0, 1e3),
    ("s", 1e3, 120e3),
    ("min", 6e4, 3.6e6),
    ("h", 3.6e6, math.inf),
)


def _duration_unit(ms: float) -> tuple[str, float]:
    """The unit (name, size in ms) a duration of ``ms`` reads in, chosen after rounding to
    three significant figures (999.95 ms reads ``1.00 s``, not ``1,000 ms``); 0 reads in ms."""
    rounded = abs(_round3(ms))
    if rounded == 0:
        return "ms", 1.0
    return next((name, size) for name, size, below in _DURATION_UNITS if rounded < below)


def _known(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _finite(value: float | None) -> TypeGuard[float]:
    return value is not None and math.isfinite(value)


def duration_ms(ms: float | None) -> str:
    """A duration given in milliseconds, three significant figures in the unit its size asks
    for: ``512 ns``, ``37.0 µs``, ``0.960 ms``, ``74.4 ms``, ``1.32 s``, ``12.0 min``,
    ``2.50 h``; ``0 ms``; ``-`` when unknown or infinite. Never an exponent."""
    if not _finite(ms):
        return "-"
    unit, size = _duration_unit(ms)
    return f"{_three(_round3(ms) / size)} {unit}"


def duration_s(s: float | None) -> str:
    """A duration given in seconds, as `duration_ms` prints it: ``200 ms``, ``31.0 s``,
    ``2.50 min``, ``2.10 h``; ``-`` when unknown."""
    return "-" if s is None else duration_ms(s * 1000)


def rate(per_s: float | None) -> str:
    """Calls per second: ``0.820/s`` (a call above one second), ``41.2/s``, ``1,234/s``."""
    if not _known(per_s) or per_s is None or per_s <= 0:
        return "-"
    return f"{_three(per_s)}/s"


def size(n_bytes: float | None) -> str:
    """Bytes in binary units: ``191 MiB``, ``1.50 GiB``."""
    if not _known(n_bytes):
        return "-"
    assert n_bytes is not None
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(_round3(n_bytes / scale)) >= 1:
            return f"{_three(n_bytes / scale)} {unit}"
    return f"{n_bytes:.0f} B"


def ratio(x: float | None) -> str:
    """A speedup: ``5.21x``; ``-`` when unknown."""
    return "-" if not _known(x) or x is None else f"{x:.2f}x"


def column_format(values: Iterable[Any]) -> str:
    """A printf format for a table column of figures in one unit (``%.3f``, ``%.1f``, ``%.0f``):
    as many decimals as keep three significant figures of its smallest non-zero value (at most
    three: a microsecond of a millisecond column), never an exponent. A column from 0.037 to
    21.4 reads ``0.037`` and ``21.400``; one from 12.3 to 1,220 reads ``12.3`` and
    ``1220.0``."""
    known = [abs(float(v)) for v in values if _known(v) and float(v) != 0]
    if not known:
        return "%.3f"
    digits = min(3, max(0, 2 - int(math.floor(math.log10(min(known))))))
    return f"%.{digits}f"


def interval_ms(low: float | None, high: float | None) -> str:
    """An interval given in milliseconds, in one unit, the one of its larger end: each end to
    three significant figures (the smaller to at most one decimal more than the larger):
    ``0.950-0.970 ms``, ``36.0-38.0 µs``, ``0.813-1.82 s``; ``-`` when either end is
    unknown or infinite."""
    if not (_finite(low) and _finite(high)):
        return "-"
    high_larger = abs(high) >= abs(low)
    larger, smaller = (high, low) if high_larger else (low, high)
    unit, size = _duration_unit(larger)
    top = _three(_round3(larger) / size)
    decimals = len(top.partition(".")[2])
    bottom = _three(smaller / size)
    if len(bottom.partition(".")[2]) > decimals + 1:
        bottom = f"{smaller / size:.{decimals + 1}f}"
    first, second = (bottom, top) if high_larger else (top, bottom)
    return f"{first}-{second} {unit}"
