"""What torch processes cost when more of them run than the host has cores, with OpenMP's
default wait policy and with OMP_WAIT_POLICY=PASSIVE: each process runs the same fixed work (a
small MLP's forward, a few thousand calls, torch's default threads: one per core), alone and
with others at once, rounds in turn; its own CPU seconds and wall seconds, medians.

    python bench/experiments/omp_wait.py [--at-once 1,3] [--rounds 3] [--out bench/results]

An OpenMP thread that reaches the end of a parallel region spins, waiting for the next one
(libgomp's default); with more threads than cores, it spins on a core that another process's
thread needs, and the region it waits on ends only when that thread gets the core back. The test
suite runs three pytest workers on two cores, each with its torch children.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.common import RESULTS, host_facts, load_span, write_dated  # noqa: E402

CHILD = """
import sys, time, torch
model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.GELU(), torch.nn.Linear(256, 256))
x = torch.randn(64, 256)
with torch.inference_mode():
    model(x)
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(int(sys.argv[1])):
        model(x)
print(f"{time.process_time() - cpu:.3f} {time.perf_counter() - wall:.3f} {torch.get_num_threads()}")
"""
POLICIES = {"default": None, "PASSIVE": "PASSIVE"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--at-once", default="1,3")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    host = host_facts()
    counts = [int(n) for n in args.at_once.split(",")]
    seen: dict[tuple[str, int], list[tuple[float, float]]] = {}
    threads: set[int] = set()
    for _ in range(args.rounds):  # every case once a round, so drifts of the host hit all
        for policy, value in POLICIES.items():
            for n in counts:
                for cpu, wall, used in _at_once(n, value, args.calls):
                    seen.setdefault((policy, n), []).append((cpu, wall))
                    threads.add(used)
    rows = [f"| {policy} | {n} | {len(v)} | {statistics.median(c for c, _ in v):.2f} | "
            f"{statistics.median(w for _, w in v):.2f} |"
            for (policy, n), v in sorted(seen.items(), key=lambda kv: (kv[0][1], kv[0][0]))]
    text = "\n".join([
        "# torch processes at once, OpenMP's wait policy (bench/experiments/omp_wait.py)", "",
        f"host {host['hostname']}, {host['cores']} cores; torch {host['torch']}, Python "
        f"{host['python']}; {load_span(host)}; torch threads per process {sorted(threads)}; "
        f"{args.calls} calls of "
        f"a 256-wide two-layer MLP on a 64-row batch per process; {args.rounds} rounds, each "
        "case once a round; medians over every process of a case.", "",
        "| OMP_WAIT_POLICY | processes at once | processes measured | CPU s each | wall s each |",
        "| --- | --- | --- | --- | --- |", *rows, ""])
    write_dated(args.out, "omp_wait_cpu", text)
    return 0


def _at_once(n: int, policy: str | None, calls: int) -> list[tuple[float, float, int]]:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if policy:
        env["OMP_WAIT_POLICY"] = policy
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, str(calls)], env=env, text=True,
                              stdout=subprocess.PIPE) for _ in range(n)]
    out = []
    for p in procs:
        cpu, wall, used = p.communicate()[0].split()
        if p.returncode:
            raise SystemExit(f"a measuring process failed with exit code {p.returncode}")
        out.append((float(cpu), float(wall), int(used)))
    return out


if __name__ == "__main__":
    sys.exit(main())
