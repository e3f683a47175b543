"""`advisor --help` start-up time, of the root and of every subcommand: the median wall time of N
fresh processes each, and the heavy modules each help imports.

    python bench/cli_startup.py                     # 15 runs of every command's `--help`
    python bench/cli_startup.py --runs 30 --command=--version --command="sweep --help"

The commands are discovered from the typer application (`advisor.cli.main`, every command module
registered, nested groups included): `advisor --help`, `advisor sweep --help`, ...,
`advisor db upgrade --help`. Each run is a fresh `advisor` process (the console script beside
this interpreter), timed from start to exit with `time.perf_counter` (and its CPU seconds, user
plus system, from the children's resource usage: a figure a loaded host stretches far less than
the wall, near what a quiet host's wall would be); one warm-up round first
(the OS file cache), then N rounds, each running every command once (a round robin: a change in
the host's load falls on every command alike, not on the last ones). What each help imports is
listed from a separate process per command that runs it as `advisor` does: the heavy modules it
must not import (SQLAlchemy, Alembic, Optuna, torch, pandas, numpy, Streamlit), pydantic (typer's
value coercion, which a help does not need) and the advisor modules, with their count. The
host's load average before and after is kept beside the figures, with its cores, Python, torch
(read from its installed metadata, never imported), typer and rich: on a loaded host the wall
times say more about the host than about advisor. Target: every median under 0.3 s on a quiet
2-core host. (The import budget itself is a test: tests/cli/test_cli_help_imports.py.)

Writes OUT/cli_startup_<UTC>.json and .md (``--out``, default bench/results; never overwrites).
Bad arguments: one line on stderr, exit code 2, nothing written.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `bench.common` as a script too
from bench.common import RESULTS, dated, utc_stamp  # noqa: E402

HEAVY = ("sqlalchemy", "alembic", "optuna", "torch", "pandas", "numpy", "streamlit")
WATCHED = (*HEAVY, "psycopg", "pydantic")  # pydantic: typer's coercion, not needed by a help
TARGET_S = 0.3
# Run one command as the `advisor` console script does (advisor.cli.main.main, argv from the
# command line), then print what it imported as the last line of stdout.
IMPORTS = (
    "import json, sys\n"
    "sys.argv = ['advisor', *sys.argv[1:]]\n"
    "from advisor.cli.main import main\n"
    "try:\n"
    "    main()\n"
    "except SystemExit:\n"
    "    pass\n"
    "sys.stdout.flush()\n"
    "print()\n"
    f"print(json.dumps({{'watched': [m for m in {WATCHED!r} if m in sys.modules],\n"
    "                  'advisor': sorted(m for m in sys.modules if m.split('.')[0] == 'advisor'),\n"
    "                  'modules': len(sys.modules)}))\n"
)


def fail(message: str) -> NoReturn:
    print(f"cli_startup: {message}", file=sys.stderr)
    raise SystemExit(2)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2 (argparse prints its usage)
        fail(message)


def help_commands() -> list[list[str]]:
    """Every command's help as advisor's arguments: the root's, then each subcommand's (nested
    groups and their commands too), in the application's order."""
    import typer

    from advisor.cli.app import app
    from advisor.cli.main import register

    register()
    found: list[list[str]] = []

    def walk(command: Any, path: list[str]) -> None:
        found.append([*path, "--help"])
        for name, sub in (getattr(command, "commands", None) or {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return found


def advisor_command() -> list[str]:
    script = Path(sys.executable).with_name("advisor")
    if script.exists():
        return [str(script)]
    found = shutil.which("advisor")
    return [found] if found else [sys.executable, "-m", "advisor"]


def time_once(command: list[str]) -> tuple[float, float]:
    """Wall seconds of one run, and the CPU seconds (user + system) its process used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def imports(args: list[str]) -> dict[str, Any]:
    """What `advisor ARGS` imports: the watched modules among them, the advisor modules, and how
    many modules in all."""
    done = subprocess.run([sys.executable, "-c", IMPORTS, *args], capture_output=True,
                          text=True, check=True)
    lines = done.stdout.strip().splitlines()
    found: dict[str, Any] = json.loads(lines[-1])
    return found


def heavy_imports(args: list[str]) -> list[str]:
    """The heavy modules `advisor ARGS` imports (none, for a help)."""
    return [m for m in imports(args)["watched"] if m in HEAVY]


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def host() -> dict[str, Any]:
    affinity = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    return {
        "python": platform.python_version(), "platform": platform.platform(),
        "node": platform.node(), "cpu_count": os.cpu_count(),
        "usable_cores": len(affinity) if affinity is not None else os.cpu_count(),
        "processor": platform.processor(),
        "torch": _version("torch"), "typer": _version("typer"), "rich": _version("rich"),
        "click": _version("click"), "advisor": _version("advisor"),
    }


def measure(commands: Sequence[list[str]], runs: int) -> list[list[tuple[float, float]]]:
    """(wall, CPU) seconds per run of each command: a warm-up round, then ``runs`` rounds of
    every command."""
    base = advisor_command()
    for args in commands:
        time_once([*base, *args])
    times: list[list[tuple[float, float]]] = [[] for _ in commands]
    for _ in range(runs):
        for i, args in enumerate(commands):
            times[i].append(time_once([*base, *args]))
    return times


def markdown(result: dict[str, Any]) -> str:
    m = result["machine"]
    before, after = m["load_avg_before"], m["load_avg_after"]
    lines = [
        f"# advisor start-up: every command's `--help` ({result['taken_at']})",
        "",
        f"{result['runs']} runs per command (fresh processes, round robin, after one warm-up "
        f"round); target: median under {result['target_s']} s on a quiet 2-core host. "
        f"Load average {before[0]:.2f} / {before[1]:.2f} / {before[2]:.2f} before, "
        f"{after[0]:.2f} / {after[1]:.2f} / {after[2]:.2f} after, on {m['usable_cores']} usable "
        f"cores of {m['cpu_count']} ({m['node']}); Python {m['python']}, torch {m['torch']}, "
        f"typer {m['typer']}, rich {m['rich']}. CPU: the process's user + system seconds "
        "(a loaded host stretches it far less than the wall).",
        "",
        "| command | median s | min s | max s | CPU median s | target | heavy modules | pydantic "
        "| advisor modules | modules |",
        "| --- | ---: | ---: | ---: | ---: | --- | --- | --- | ---: | ---: |",
    ]
    for row in result["commands"]:
        lines.append(
            f"| `{' '.join(row['command'])}` | {row['median_s']:.3f} | {row['min_s']:.3f} | "
            f"{row['max_s']:.3f} | {row['cpu_median_s']:.3f} | "
            f"{'hit' if row['hit'] else 'missed'} | "
            f"{', '.join(row['heavy_modules_imported']) or 'none'} | "
            f"{'yes' if row['pydantic_imported'] else 'no'} | {len(row['advisor_modules'])} | "
            f"{row['modules_imported']} |"
        )
    medians = [row["median_s"] for row in result["commands"]]
    lines += [
        "",
        f"Slowest median {max(medians):.3f} s, fastest {min(medians):.3f} s; "
        f"{sum(row['hit'] for row in result['commands'])} of {len(medians)} under the target"
        + ("." if before[0] < 1 else f" (a loaded host: load {before[0]:.2f} before; the "
           "target is for a quiet one)."),
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = _Parser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="timed runs per command")
    parser.add_argument("--command", action="append", default=None, metavar="ARGS",
                        help="advisor's arguments to time (repeatable; default: every "
                             "command's --help, discovered from the application)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results folder")
    args = parser.parse_args(argv)
    if args.runs < 1:
        fail(f"--runs {args.runs}: at least 1")
    commands = ([shlex.split(c) for c in args.command] if args.command else help_commands())
    stamp = utc_stamp()
    json_out, md_out = dated(args.out, "cli_startup", stamp, "json"), dated(
        args.out, "cli_startup", stamp, "md")
    for path in (json_out, md_out):
        if path.exists():
            fail(f"{path} exists: results are never overwritten; run again")
    load_before = os.getloadavg()
    walls = measure(commands, args.runs)
    load_after = os.getloadavg()
    rows = []
    for command, runs in zip(commands, walls, strict=True):
        found = imports(command)
        times, cpus = [wall for wall, _ in runs], [cpu for _, cpu in runs]
        median = statistics.median(times)
        rows.append({
            "command": ["advisor", *command],
            "median_s": median, "min_s": min(times), "max_s": max(times), "walls_s": times,
            "cpu_median_s": statistics.median(cpus), "cpus_s": cpus,
            "hit": median < TARGET_S,
            "heavy_modules_imported": [m for m in found["watched"] if m in HEAVY],
            "pydantic_imported": "pydantic" in found["watched"],
            "advisor_modules": found["advisor"], "modules_imported": found["modules"],
        })
    result = {
        "bench": "cli_startup", "runs": args.runs, "target_s": TARGET_S,
        "hit": all(row["hit"] for row in rows),
        "commands": rows,
        "machine": {**host(), "load_avg_before": load_before, "load_avg_after": load_after},
        "taken_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    json_out.write_text(json.dumps(result, indent=2) + "\n")
    md_out.write_text(markdown(result))
    for row in rows:
        print(f"{' '.join(row['command']):28} median {row['median_s']:.3f} s (min "
              f"{row['min_s']:.3f}, max {row['max_s']:.3f}; CPU {row['cpu_median_s']:.3f} s) "
              f"{'hit' if row['hit'] else 'MISSED'}; "
              f"heavy: {', '.join(row['heavy_modules_imported']) or 'none'}; "
              f"{len(row['advisor_modules'])} advisor modules")
    print(f"load {load_before[0]:.2f} -> {load_after[0]:.2f} on {os.cpu_count()} cores; "
          f"{args.runs} runs each; wrote {json_out} and {md_out.name}")


if __name__ == "__main__":
    main()
