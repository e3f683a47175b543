"""When the host or the intervals make an answer unsafe. Pure: figures in, warnings out.

`host_load_warning(load, cores)`: a 1-minute load average above `LOAD_PER_CORE` x cores means
trials compete for the CPU with other work (each interval widens, medians move between
processes); `current_load()` reads it from the OS. `interval_warning(rec)`: the recommendation
is undecided on noisy timings, or its headline's figures were noisy or wider than
`advisor.stats.WIDE_INTERVAL` of their median (`advisor.recommendation.Recommendation.doubt`).
The sweep, `recommend`, the report and the dashboard show it before the claim; `advisor doctor`
prints the host's.
"""

from __future__ import annotations

import os
from typing import Any

LOAD_PER_CORE = 1.0  # runnable processes per core above which timings are not to be trusted


def current_load() -> tuple[float, int]:
    """This host's 1-minute load average and its core count."""
    return os.getloadavg()[0], os.cpu_count() or 1


def host_load_warning(load: float, cores: int) -> str | None:
    """Why timings taken now are unsafe (None: the host is quiet enough)."""
    if load <= LOAD_PER_CORE * cores:
        return None
    return (f"host load {load:.1f} on {cores} core{'s' if cores != 1 else ''}: other work "
            "competes with the trials for the CPU, so intervals widen and medians move between "
            "processes; figures measured now may not order the configs (stop the other work, or "
            "confirm later with `advisor recommend --confirm`)")


def interval_warning(rec: Any) -> str | None:
    """Why a recommendation's figures cannot carry it (None: they can): undecided on noisy
    timings (its sentence), or its headline's figures noisy or too wide to be sure of
    (``rec.doubt``). Shown before the claim, never after it."""
    if rec.decision in ("undecided: noise", "undecided: host busy"):
        return str(rec.sentence)
    if rec.doubt:
        what = ("even re-measured side by side" if rec.paired else
                "from separate trials, not paired")
        return (f"noisy evidence: {rec.doubt} ({what}), too wide to be sure of the figures "
                "or the order; measure again on a quiet host or run `advisor recommend "
                "--confirm`")
    return None
