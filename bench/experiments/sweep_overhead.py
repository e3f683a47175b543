"""A sweep's time outside its trials: two checkouts of advisor side by side, on one machine.

    python bench/experiments/sweep_overhead.py --before /tmp/advisor-before --after . \\
        [--workload tests/workloads/fixed_cost.py] [--device cpu] [--runs 3] \\
        [--sweep-args "--jobs 2 --modes default --dtypes fp32 --fullgraph both"] \\
        [--out bench/results]

Each run is ``python -m advisor sweep WORKLOAD --device D --db sqlite:///<tmp>/run.db --json
ARGS`` from one checkout (its directory first on PYTHONPATH, so the sweep and every child it
starts run that checkout's code), the checkouts alternating (before, after, after, before,
...) so that a drift of the machine's speed falls on both. Each run is timed by wall clock from
its launch to its exit; the run's database splits that wall into:

- start: the launch to the sweep's row (imports, loading the workload, migrations, the probe);
- to the first trial: the row to the first trial's start (the workers' own start);
- trials: the first trial's start to the last trial's end;
- end: the last trial's end to the exit (workers leaving, the leaders' re-measurement, the warm
  start, the report).

Reported: each run's phases, and per checkout the median of each phase and of the wall, with
the after / before ratio of the medians. Results:
``OUT/sweep_overhead_<device>_<workload>_<UTC>.json`` and ``.md``. Nothing is asserted: the
figures are for reading side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NoReturn

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench.common import dated, stored_time_s, utc_stamp  # noqa: E402

PHASES = ("start_s", "to_first_trial_s", "trials_s", "end_s", "wall_s")


def fail(message: str) -> NoReturn:
    """Bad arguments: one line, exit 2, nothing written."""
    print(f"sweep_overhead: {message}", file=sys.stderr)
    sys.exit(2)


def one_run(checkout: Path, workload: Path, sweep_args: list[str], tmp: Path,
            timeout_s: float) -> dict[str, Any]:
    db = tmp / f"run-{time.monotonic_ns()}.db"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(checkout), *filter(None, [os.environ.get("PYTHONPATH")])])}
    cmd = [sys.executable, "-m", "advisor", "sweep", str(workload), "--db",
           f"sqlite:///{db}", "--json", *sweep_args]
    launched = time.time()
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=tmp, capture_output=True, text=True,
                          timeout=timeout_s, check=False)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"sweep_overhead: the sweep from {checkout} exited with "
                         f"{done.returncode}: {done.stderr.strip().splitlines()[-1:]}")
    with sqlite3.connect(db) as con:
        (row,) = con.execute("SELECT started_at FROM advisor_sweeps").fetchall()
        spans = con.execute("SELECT started_at, finished_at FROM advisor_trials").fetchall()
    first = min(stored_time_s(s) for s, _ in spans)
    last = max(stored_time_s(f) for _, f in spans)
    return {"wall_s": wall, "start_s": stored_time_s(row[0]) - launched,
            "to_first_trial_s": first - stored_time_s(row[0]), "trials_s": last - first,
            "end_s": launched + wall - last, "trials": len(spans)}


def revision(checkout: Path) -> str:
    """The checkout's commit (short), "+changes" when its working tree differs from it."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(checkout), *args], capture_output=True,
                              text=True, check=False).stdout.strip()
    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    return commit + ("+changes" if git("status", "--porcelain", "--untracked-files=no") else "")


def summarize(runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    medians = {name: {p: statistics.median(r[p] for r in rs) for p in PHASES}
               for name, rs in runs.items()}
    ratios = {p: medians["after"][p] / medians["before"][p] if medians["before"][p] else None
              for p in PHASES}
    return {"medians": medians, "after_over_before": ratios}


def write(report: dict[str, Any], out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = dated(out, f"sweep_overhead_{report['device']}_{report['workload']}", utc_stamp(),
                 "json")
    path.write_text(json.dumps(report, indent=2) + "\n")
    m, r = report["medians"], report["after_over_before"]
    lines = [f"# A sweep's time outside its trials: {report['workload']} on {report['device']}",
             "", f"`advisor sweep {report['workload_file']} {' '.join(report['sweep_args'])}`, "
             f"{report['runs_each']} runs of each checkout, alternating; {report['machine']}.",
             f"before: commit {report['before']}; after: commit {report['after']}.", "",
             "| median, s | before | after | after / before |", "|---|---:|---:|---:|"]
    for p in PHASES:
        ratio = "-" if r[p] is None else f"{r[p]:.2f}"
        lines.append(f"| {p.removesuffix('_s').replace('_', ' ')} | {m['before'][p]:.1f} | "
                     f"{m['after'][p]:.1f} | {ratio} |")
    lines += ["", "| run | checkout | " + " | ".join(p.removesuffix("_s").replace("_", " ")
                                                      for p in PHASES) + " |",
              "|---|---|" + "---:|" * len(PHASES)]
    for i, (name, run) in enumerate(report["order"], 1):
        lines.append(f"| {i} | {name} | " + " | ".join(f"{run[p]:.1f}" for p in PHASES) + " |")
    path.with_suffix(".md").write_text("\n".join(lines) + "\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="a checkout of advisor")
    parser.add_argument("--after", type=Path, default=REPO, help="another (default: this one)")
    parser.add_argument("--workload", type=Path,
                        default=REPO / "tests" / "workloads" / "fixed_cost.py")
    parser.add_argument("--device", default="cpu", help="the sweep's --device")
    parser.add_argument("--runs", type=int, default=3, help="runs of each checkout")
    parser.add_argument("--sweep-args",
                        default="--jobs 2 --modes default --dtypes fp32 --fullgraph both")
    parser.add_argument("--timeout", type=float, default=900.0, help="per run, seconds")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = parser.parse_args()
    for name in ("before", "after"):
        if not (getattr(args, name) / "advisor" / "__init__.py").is_file():
            fail(f"--{name} {getattr(args, name)} is no checkout of advisor (no "
                 "advisor/__init__.py there); pass a checkout's directory")
    if not args.workload.is_file() or args.runs < 1:
        fail("--workload must be a workload file and --runs at least 1")
    sweep_args = ["--device", args.device, *shlex.split(args.sweep_args)]
    checkouts = {"before": args.before.resolve(), "after": args.after.resolve()}
    runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    order = []
    with tempfile.TemporaryDirectory(prefix="advisor-overhead-") as name:
        for i in range(args.runs):
            for which in (("before", "after") if i % 2 == 0 else ("after", "before")):
                run = one_run(checkouts[which], args.workload.resolve(), sweep_args, Path(name),
                              args.timeout)
                runs[which].append(run)
                order.append((which, run))
                print(f"run {len(order)} {which}: " + ", ".join(
                    f"{p} {run[p]:.1f}" for p in PHASES), flush=True)
    device = args.device.replace(":", "")
    workload = args.workload.resolve()
    report = {"workload": args.workload.stem.replace("_", "-"),
              "workload_file": str(workload.relative_to(REPO) if workload.is_relative_to(REPO)
                                   else workload.name), "device": device, "sweep_args": sweep_args,
              "runs_each": args.runs, "machine": f"{os.cpu_count()} cores",
              "before": revision(checkouts["before"]), "after": revision(checkouts["after"]),
              "order": order, **summarize(runs)}
    path = write(report, args.out)
    print(f"wrote {path} and {path.with_suffix('.md')}")


if __name__ == "__main__":
    main()
