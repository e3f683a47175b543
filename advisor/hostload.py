"""The host's conditions while a figure is measured: is another process taking the CPU?

Pure Linux reads, no torch: the child of a trial (or of a paired re-measurement) takes a
`Snapshot` when it starts measuring and another when it ends, and `between` turns the two into
the `HostFigures` stored with the figure. What decides is the CPU other processes used over the
measurement, in cores (`others_cores`: the host's busy time from /proc/stat less this process's
own CPU time, over the wall time): a figure is **contended** when the others took more than the
cores this measurement left free (the allowed cores less the threads it runs, one on a GPU)
by $ADVISOR_BUSY_SLACK_CORES (0.5: the sweep's own parent, its fork server and the
kernel's threads wake now and then). The load average and Linux's CPU pressure (PSI,
/proc/pressure/cpu, where the kernel has it: the share of the time some runnable task waited
for a CPU) are stored
beside it, as the host described itself; neither decides (the load average lags by a minute,
and PSI counts waits among other processes on other cores too).

A contended figure never decides, screens out another config nor gives a headline
(`advisor.recommendation`); before measuring, a child waits for quiet, bounded
(`wait_for_quiet`: $ADVISOR_QUIET_WAIT_S), and says so in its progress.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass

from advisor import settings
from advisor.records import HostFigures

QUIET_PROBE_S = 0.5  # one look at the host before measuring


@dataclass(frozen=True)
class Snapshot:
    at: float  # time.monotonic()
    host_busy_s: float  # /proc/stat: every CPU's non-idle time
    own_s: float  # this process's user + system time, every thread
    load: float
    psi_total_us: int | None


def _host_busy_s() -> float:
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
    except OSError:
        return 0.0
    ticks = [int(v) for v in fields[1:9]]  # user nice system idle iowait irq softirq steal
    busy = sum(ticks) - ticks[3] - ticks[4]
    return busy / float(os.sysconf("SC_CLK_TCK"))


def _psi_total_us() -> int | None:
    try:
        with open("/proc/pressure/cpu") as f:
            some = f.readline().split()
    except OSError:
        return None
    found = [int(p.split("=", 1)[1]) for p in some if p.startswith("total=")]
    return found[0] if found else None


def snapshot() -> Snapshot:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return Snapshot(at=time.monotonic(), host_busy_s=_host_busy_s(),
                    own_s=usage.ru_utime + usage.ru_stime, load=os.getloadavg()[0],
                    psi_total_us=_psi_total_us())


def allowed_cores() -> int:
    return len(os.sched_getaffinity(0))


def free_cores(threads: int) -> float:
    """The cores a measurement running ``threads`` leaves the rest of the host."""
    return max(0.0, float((os.cpu_count() or 1) - threads))


def between(start: Snapshot, end: Snapshot, threads: int, waited_s: float = 0.0) -> HostFigures:
    """The host's figures over [start, end] for a measurement running ``threads`` threads."""
    wall = max(end.at - start.at, 1e-9)
    others = max(0.0, (end.host_busy_s - start.host_busy_s) - (end.own_s - start.own_s)) / wall
    psi = None
    if start.psi_total_us is not None and end.psi_total_us is not None:
        psi = round(min(1.0, (end.psi_total_us - start.psi_total_us) / (wall * 1e6)), 4)
    return {
        "cores": allowed_cores(), "online_cores": os.cpu_count() or 1, "threads": threads,
        "others_cores": round(others, 3), "load_start": round(start.load, 2),
        "load_end": round(end.load, 2), "psi_some": psi, "wall_s": round(wall, 3),
        "contended": contended(others, threads), "waited_s": round(waited_s, 3),
    }


def contended(others_cores: float, threads: int) -> bool:
    """Whether other processes took more CPU than a measurement running ``threads`` left free."""
    return others_cores > free_cores(threads) + settings.busy_slack_cores()


def others_now(threads: int, probe_s: float = QUIET_PROBE_S) -> float:
    """The CPU other processes use now, in cores, over ``probe_s`` while this one waits."""
    start = snapshot()
    time.sleep(probe_s)  # the window of the reading: this process idle, the others measured
    return between(start, snapshot(), threads)["others_cores"]


def wait_for_quiet(threads: int, limit_s: float,
                   say: Callable[[str], None] | None = None) -> tuple[float, bool]:
    """Wait, at most ``limit_s``, until other processes leave the CPU this measurement needs:
    (seconds waited, whether the host was quiet at the last reading). The caller measures
    then either way; its `HostFigures` say whether the host was contended. ``say`` reports
    the wait in progress, once per reading."""
    start = time.monotonic()
    while True:
        others = others_now(threads, QUIET_PROBE_S if limit_s > 0 else 0.1)
        waited = time.monotonic() - start
        quiet = not contended(others, threads)
        if quiet or waited >= limit_s:
            return waited, quiet
        if say is not None:
            say(f"waiting for a quiet host: other processes use {others:.1f} of "
                f"{os.cpu_count() or 1} cores ({waited:.0f} of {limit_s:.0f} s)")


def describe(host: HostFigures) -> str:
    """``others used 1.8 of 2 cores (load 5.5)``: the host as one figure saw it."""
    return (f"other processes used {host['others_cores']:.1f} of {host['online_cores']} cores, "
            f"load {max(host['load_start'], host['load_end']):.1f}")
