"""What one cold Inductor compile costs on the CPU whatever the model: a chain of N pointwise ops
compiled in a fresh process with an empty cache (as each compiling trial does), its own CPU
seconds (imports of Dynamo and Inductor, tracing, code generation) and its children's (g++,
Inductor's load probes), for a few N; each g++ call timed through a wrapper named by ``CXX``.

    python bench/experiments/compile_fixed_cost.py [--out bench/results]

The wrapper changes the compiler's path, so the precompiled header (kept across processes, keyed
by the compiler) is built again in the first process: that build is listed apart.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.common import RESULTS, host_facts, load_span, write_dated  # noqa: E402

CHILD = """
import resource, sys, time, torch
n = int(sys.argv[1])
def f(x):
    for _ in range(n):
        x = x * 0.99 + 0.01
    return torch.sigmoid(x)
cpu = lambda who: resource.getrusage(who).ru_utime + resource.getrusage(who).ru_stime
s0, t0 = cpu(resource.RUSAGE_SELF), time.time()
with torch.inference_mode():
    torch.compile(f)(torch.randn(64))
print(f"{time.time() - t0:.2f} {cpu(resource.RUSAGE_SELF) - s0:.2f} "
      f"{cpu(resource.RUSAGE_CHILDREN):.2f}")
"""

WRAPPER = """#!/bin/sh
s=$(date +%s.%N)
g++ "$@"; rc=$?
e=$(date +%s.%N)
case "$*" in
    *c++-header*) kind=header;;
    *.main.so*) kind=kernel;;
    *) kind=other;;
esac
echo "$kind $(echo "$e - $s" | bc)" >> "$GXX_LOG"
exit $rc
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--ops", default="25,100,200")
    args = parser.parse_args()
    host = host_facts()
    with tempfile.TemporaryDirectory(prefix="compile-fixed-cost-") as tmp:
        rows = _measure(Path(tmp), [int(x) for x in args.ops.split(",")])
    text = "\n".join([
        "# One cold Inductor compile on the CPU (bench/experiments/compile_fixed_cost.py)", "",
        f"torch {host['torch']}; {host['cores']} cores; {load_span(host)}; "
        "TORCHINDUCTOR_COMPILE_THREADS=1, TORCHINDUCTOR_VEC_ISA_OK=1 (as the tests run); a "
        "fresh process and an empty cache each; one run each.", "",
        "| ops | wall s | own CPU s | children CPU s | g++ kernel | other g++ calls (ISA dry "
        "compiles, version checks) | g++ precompiled header |",
        "| --- | --- | --- | --- | --- | --- | --- |", *rows, ""])
    write_dated(args.out, "compile_fixed_cost_cpu", text)
    return 0


def _measure(work: Path, ops: list[int]) -> list[str]:
    """A fresh process compiling each chain into an empty cache under `work`: a row each."""
    wrapper = work / "gxx.sh"
    wrapper.write_text(WRAPPER)
    wrapper.chmod(0o755)
    rows = []
    for n in ops:
        log = work / f"gxx-{n}.log"
        env = {**os.environ, "CXX": str(wrapper), "GXX_LOG": str(log),
               "TORCHINDUCTOR_CACHE_DIR": tempfile.mkdtemp(dir=work),
               "TORCHINDUCTOR_COMPILE_THREADS": "1", "TORCHINDUCTOR_VEC_ISA_OK": "1"}
        done = subprocess.run([sys.executable, "-c", CHILD, str(n)], env=env, text=True,
                              capture_output=True, check=True)
        wall, own, kids = done.stdout.split()
        calls: dict[str, list[float]] = {}
        for line in log.read_text().splitlines():
            kind, seconds = line.split()
            calls.setdefault(kind, []).append(float(seconds))
        rows.append(f"| {n} | {wall} | {own} | {kids} | "
                    + " | ".join(f"{len(calls.get(k, []))} x, {sum(calls.get(k, [])):.2f} s"
                                 for k in ("kernel", "other", "header")) + " |")
    return rows


if __name__ == "__main__":
    sys.exit(main())
