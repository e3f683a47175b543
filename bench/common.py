"""What the benches share: the dated name every result file gets, stored timestamps read back,
and the host a run ran on (its cores, load, GPUs, torch and triton).

A result is written under ``OUT/<stem>_<UTC yyyymmddThhmmssZ>.<ext>``, one stamp per run for all
of its files, so a later run never overwrites an earlier one (bench/results/README.md).
"""

from __future__ import annotations

import importlib.machinery
import importlib.metadata
import os
import platform
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
REPO = Path(__file__).resolve().parents[1]


def imports_this_checkout() -> bool:
    """Whether a fresh interpreter started outside this checkout imports this checkout's
    `advisor` (an editable install, as the README's set-up makes) rather than another one or
    none."""
    path = [p for p in sys.path if p and Path(p).resolve() != REPO]
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        if find is None:
            continue
        spec = find("advisor", path if finder is importlib.machinery.PathFinder else None)
        if spec is not None:
            origin = spec.origin
            return origin is not None and Path(origin).parent.resolve() == REPO / "advisor"
    return False


def repo_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment (``base``, default this one) for a process that must run this checkout's
    `advisor`: this checkout first on PYTHONPATH, unless it is what a fresh interpreter imports
    already. There the environment is left as it is: a PYTHONPATH of its own (a variable read
    at import) would keep the process's children from being forked from a fork server started
    without it (advisor.search.forkserver), each of its sweeps importing torch again."""
    env = dict(os.environ if base is None else base)
    if imports_this_checkout():
        return env
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    return env


def utc_stamp(moment: datetime | None = None) -> str:
    """``yyyymmddThhmmssZ`` of ``moment`` (now when none), in UTC."""
    return (moment or datetime.now(UTC)).astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def dated(out: Path, stem: str, stamp: str, ext: str) -> Path:
    """``out/<stem>_<stamp>.<ext>``: the run's file of that kind."""
    return Path(out) / f"{stem}_{stamp}.{ext.lstrip('.')}"


def write_dated(out: Path, stem: str, text: str, ext: str = "md") -> Path:
    """Print ``text``, write it to a new dated file (`dated`, stamped now) and say where."""
    print(text)
    path = dated(out, stem, utc_stamp(), ext)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    print(f"written {path}")
    return path


def stored_time_s(text: str) -> float:
    """A stored timestamp (ISO 8601; UTC when it names no zone) as seconds since the epoch."""
    moment = datetime.fromisoformat(text)
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def _version(*dists: str) -> str | None:
    for dist in dists:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def gpus() -> list[dict[str, str]]:
    """Each GPU nvidia-smi lists: name, driver, max SM clock (empty without nvidia-smi)."""
    try:
        out = subprocess.run(
            [
                "nvidia-smi",
                "--query-gpu=name,driver_version,clocks.max.sm",
                "--format=csv,noheader",
            ],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    rows = [[c.strip() for c in line.split(",")] for line in out.stdout.splitlines() if line]
    return [{"name": r[0], "driver": r[1], "sm_clock_max": r[2]} for r in rows if len(r) == 3]


def host_facts() -> dict[str, Any]:
    """The host a run ran on, at its start: name, cores, load, GPUs, torch, triton, Python."""
    return {
        "hostname": platform.node(),
        "cores": len(os.sched_getaffinity(0)),
        "load_at_start": [round(x, 2) for x in os.getloadavg()],
        "gpus": gpus(),
        "torch": _version("torch"),
        "triton": _version("triton", "pytorch-triton"),
        "python": platform.python_version(),
        "advisor": _version("advisor"),
    }


def load_span(host: dict[str, Any]) -> str:
    """``load A B C at the start, D E F at the end``: `host_facts`' load averages, and now's."""
    start = " ".join(f"{x:.2f}" for x in host["load_at_start"])
    return f"load {start} at the start, {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end"
