"""A CPU sweep with its children forked from the fork server against the same sweep with each
child a fresh interpreter (``ADVISOR_FORK_SERVER=1`` / ``0``): side by side, round robin, each
run on its own empty database and caches; every run's wall and CPU seconds (the sweep and every
process under it), its trial count and its answer line, then the medians and their ratio.

    python bench/experiments/fork_server.py --repeats 3
    python bench/experiments/fork_server.py --workload workloads/reranker.py \\
        --sweep-args "--device cuda --modes eager --dtypes fp32,bf16"

The file is named by the sweep's --device (fork_server_cpu_*.md, fork_server_cuda_*.md).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.common import RESULTS, host_facts, load_span, write_dated  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
WORKLOAD = REPO / "tests" / "workloads" / "four_dtypes.py"
SWEEP_ARGS = "--device cpu --modes eager --dtypes fp32,tf32,bf16,fp16 --no-warm"


def one_sweep(workload: Path, sweep_args: list[str], fork: str) -> dict[str, object]:
    """One `advisor sweep --json` with ADVISOR_FORK_SERVER=`fork` in a fresh folder: wall and
    CPU seconds (the sweep and the processes it waited for, the fork server and what it forked
    included), the trials stored and the answer."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "ADVISOR_FORK_SERVER": fork, "TMPDIR": tmp}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "advisor", "sweep", str(workload), "--db",
             f"sqlite:///{tmp}/advisor.db", *sweep_args, "--json"],
            env=env, cwd=tmp, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"fork_server: the sweep failed (exit {done.returncode}): "
                         f"{done.stderr.strip().splitlines()[-1:]}")
    report = json.loads(done.stdout)
    trials = report.get("trials") or []
    rec = report.get("recommendation") or {}
    return {"fork": fork, "wall_s": round(wall, 2),
            "cpu_s": round(after.ru_utime - before.ru_utime
                           + after.ru_stime - before.ru_stime, 2),
            "trials": len(trials), "ok": sum(t.get("status") == "ok" for t in trials),
            "answer": rec.get("sentence")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workload", type=Path, default=WORKLOAD)
    ap.add_argument("--sweep-args", default=SWEEP_ARGS)
    ap.add_argument("--out", type=Path, default=RESULTS)
    a = ap.parse_args()
    if a.repeats < 1 or not a.workload.is_file():
        raise SystemExit(f"fork_server: need --repeats >= 1 and a workload file, not "
                         f"{a.repeats} and {a.workload}")
    host = host_facts()
    runs = [one_sweep(a.workload.resolve(), shlex.split(a.sweep_args), fork)
            for _ in range(a.repeats) for fork in ("0", "1")]
    med = {fork: {k: statistics.median(float(str(r[k])) for r in runs if r["fork"] == fork)
                  for k in ("wall_s", "cpu_s")} for fork in ("0", "1")}
    gpu = "; ".join(f"{g['name']} (driver {g['driver']})" for g in host["gpus"]) or "none"
    lines = [f"# fork server, side by side: host {host['hostname']}, {host['cores']} cores, "
             f"{load_span(host)}; GPU {gpu}; torch {host['torch']}, triton {host['triton']}, "
             f"python {host['python']}",
             f"# `advisor sweep {a.workload} {a.sweep_args}`, {a.repeats} repeats round robin "
             "(ADVISOR_FORK_SERVER=0 then 1), each on an empty database and caches", "",
             "| run | ADVISOR_FORK_SERVER | wall s | CPU s | trials ok | answer |",
             "| --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {i + 1} | {r['fork']} | {r['wall_s']} | {r['cpu_s']} | {r['ok']}/{r['trials']} "
              f"| {r['answer']} |" for i, r in enumerate(runs)]
    lines += ["", "| median | wall s | CPU s |", "| --- | --- | --- |"]
    lines += [f"| ADVISOR_FORK_SERVER={f} | {m['wall_s']:.2f} | {m['cpu_s']:.2f} |"
              for f, m in med.items()]
    lines.append(f"| forked / fresh | {med['1']['wall_s'] / med['0']['wall_s']:.2f} | "
                 f"{med['1']['cpu_s'] / med['0']['cpu_s']:.2f} |")
    args = shlex.split(a.sweep_args)
    device = args[args.index("--device") + 1] if "--device" in args[:-1] else "auto"
    write_dated(a.out, f"fork_server_{device}", "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
