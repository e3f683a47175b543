"""Constraints a recommendation must meet: the cold compile and the peak memory."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from advisor.errors import ConfigError

if TYPE_CHECKING:
    from advisor.recommendation.evidence import Ranked

_SIZE_UNITS = {
    "": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
    "t": 10**12, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}  # fmt: skip


def parse_bytes(text: str) -> int:
    """``2GiB``, ``512MiB``, ``1.5GB``, ``1000000`` -> bytes (GiB = 2**30, GB = 10**9)."""
    found = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]*)\s*", str(text))
    unit = found.group(2).lower() if found else ""
    if not found or unit not in _SIZE_UNITS:
        raise ConfigError(
            f"bad memory size {text!r}: write a number with an optional unit, e.g. 2GiB, 512MiB"
        )
    value = float(found.group(1)) * _SIZE_UNITS[unit]
    if value <= 0:
        raise ConfigError(f"bad memory size {text!r}: it must be more than zero")
    return int(value)


@dataclass(frozen=True)
class Constraints:
    """Limits a recommended config must meet besides correctness and quality."""

    max_compile_s: float | None = None
    max_memory_bytes: int | None = None

    def __post_init__(self) -> None:
        for name, flag in (("max_compile_s", "--max-compile-s"), ("max_memory_bytes",
                                                                 "--max-memory")):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ConfigError(f"{name} ({flag}) must be more than zero, not {value!r}")

    def violation(self, r: Ranked) -> str | None:
        """Why a config's evidence breaks a limit (None: it meets them all)."""
        if self.max_compile_s is not None and r.config.compiled:
            cold = r.cold_compile_s
            if cold is None:
                return "cold compile time unknown"
            if cold > self.max_compile_s:
                return f"cold compile over {self.max_compile_s:g} s"
        if self.max_memory_bytes is not None:
            peak = r.peak_mem_bytes
            if peak is None:
                return "peak memory unknown"
            if peak > self.max_memory_bytes:
                return f"peak memory over {_fmt_bytes(self.max_memory_bytes)}"
        return None


def _fmt_bytes(n: float) -> str:
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} B"
