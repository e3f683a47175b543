"""`advisor --help` start-up time: the median wall time of N runs, and what the help imports.

    python bench/cli_startup.py                 # 15 runs of `advisor --help`
    python bench/cli_startup.py --runs 30 --command "--version"

Each run is a fresh `advisor` process (the console script beside this interpreter), timed from
start to exit with `time.perf_counter`; one warm-up run first (the OS file cache). The heavy
modules a command must not import for its help (SQLAlchemy, Alembic, Optuna, torch, pandas) are
listed from a separate process that registers every command as `advisor` does. The host's load
average before and after is kept beside the figures: on a loaded host the wall times say more
about the host than about advisor. Target: under 0.3 s on a quiet machine.

Writes OUT/cli_startup_<UTC timestamp>.json (``--out``, default bench/results; never overwrites).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

HEAVY = ("sqlalchemy", "alembic", "optuna", "torch", "pandas", "numpy", "streamlit")
TARGET_S = 0.3
RESULTS = Path(__file__).resolve().parent / "results"
IMPORTS = (
    "import sys\n"
    "from typer.testing import CliRunner\n"
    "from advisor.cli.main import app, register\n"
    "register()\n"
    "CliRunner().invoke(app, sys.argv[1:])\n"
    f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
)


def advisor_command() -> list[str]:
    script = Path(sys.executable).with_name("advisor")
    if script.exists():
        return [str(script)]
    found = shutil.which("advisor")
    return [found] if found else [sys.executable, "-m", "advisor"]


def time_once(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def heavy_imports(args: list[str]) -> list[str]:
    done = subprocess.run([sys.executable, "-c", IMPORTS, *args], capture_output=True,
                          text=True, check=True)
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    return [m for m in last.split(",") if m]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--command", default="--help", help="advisor's arguments to time")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results folder")
    args = parser.parse_args()
    argv = shlex.split(args.command)
    command = [*advisor_command(), *argv]
    load_before = os.getloadavg()
    time_once(command)  # warm-up: the file cache
    walls = [time_once(command) for _ in range(args.runs)]
    load_after = os.getloadavg()
    median = statistics.median(walls)
    result = {
        "command": ["advisor", *argv],
        "runs": args.runs,
        "median_s": median,
        "min_s": min(walls),
        "max_s": max(walls),
        "walls_s": walls,
        "target_s": TARGET_S,
        "hit": median < TARGET_S,
        "heavy_modules_imported": heavy_imports(argv),
        "machine": {
            "python": platform.python_version(), "platform": platform.platform(),
            "cpu_count": os.cpu_count(), "processor": platform.processor(),
            "load_avg_before": load_before, "load_avg_after": load_after,
        },
        "taken_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / f"cli_startup_{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    if out.exists():
        raise SystemExit(f"{out} exists: results are never overwritten; run again")
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"advisor {args.command}: median {median:.3f} s over {args.runs} runs "
          f"(min {min(walls):.3f}, max {max(walls):.3f}; target {TARGET_S} s: "
          f"{'hit' if result['hit'] else 'missed'}); load {load_before[0]:.1f} -> "
          f"{load_after[0]:.1f} on {os.cpu_count()} cores; heavy modules imported: "
          f"{', '.join(result['heavy_modules_imported']) or 'none'}; wrote {out}")


if __name__ == "__main__":
    main()
