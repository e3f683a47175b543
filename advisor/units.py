"""Figures in human units, for every surface that prints them (terminal, report, dashboard).

`duration_ms(1220.0)` is ``1.22 s``, `duration_ms(0.96)` is ``0.960 ms``, `duration_ms(0.037)`
is ``37.0 µs``: three significant figures, the unit chosen so the number reads at a glance,
never ``1.22e+03 ms``. `duration_s` does the same from seconds; `rate` prints calls per second
(``0.82/s`` below one, ``1,234/s`` above a thousand); `size` prints bytes in binary units;
`column_format` gives a table column of such figures one printf format (the dashboard's).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any


def _three(value: float) -> str:
    """Three significant figures without an exponent (``1.22``, ``12.2``, ``122``, ``1,220``)."""
    if value == 0:
        return "0"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    digits = max(0, 2 - int(math.floor(math.log10(abs(value)))))
    return f"{value:.{digits}f}"


def _known(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def duration_ms(ms: float | None) -> str:
    """A duration given in milliseconds: ``37.0 µs``, ``0.960 ms``, ``12.3 ms``, ``1.22 s``,
    ``2.5 min``; ``-`` when unknown."""
    if not _known(ms):
        return "-"
    assert ms is not None
    if abs(ms) >= 1000:
        return duration_s(ms / 1000)
    if 0 < abs(ms) < 0.1:
        return f"{_three(ms * 1000)} µs"
    if abs(ms) < 1:
        return f"{ms:.3f} ms"
    return f"{_three(ms)} ms"


def duration_s(s: float | None) -> str:
    """A duration given in seconds: ``0.2 s``, ``31.0 s``, ``1.6 min``, ``2.1 h``."""
    if not _known(s):
        return "-"
    assert s is not None
    if abs(s) < 1e-3 and s != 0:
        return duration_ms(s * 1000)
    if abs(s) >= 3600:
        return f"{s / 3600:.1f} h"
    if abs(s) >= 120:
        return f"{s / 60:.1f} min"
    if abs(s) >= 10:
        return f"{s:.1f} s"
    return f"{_three(s)} s"


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
        if abs(n_bytes) >= scale:
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
    """An interval given in milliseconds, in the unit of its upper end: ``0.950-0.970 ms``,
    ``36.0-38.0 µs``, ``1.21-1.24 s``; ``-`` when either end is unknown."""
    if not (_known(low) and _known(high)):
        return "-"
    assert low is not None and high is not None
    number, unit = duration_ms(high).split(" ", 1)
    scale = {"µs": 1e-3, "ms": 1.0, "s": 1e3, "min": 6e4, "h": 3.6e6}[unit]
    decimals = len(number.partition(".")[2])
    return f"{low / scale:.{decimals}f}-{number} {unit}"
