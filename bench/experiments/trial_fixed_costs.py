"""What a trial process costs besides its measurement, on this machine: fresh processes, round
robin, medians of wall and CPU seconds.

- ``import torch``; ``torch._inductor.compile_fx`` imported after it (every compiling process
  imports it); Inductor's vector-ISA dry compiles (`valid_vec_isa_list`) into an empty cache;
- an eager and a compiled (default) trial of a tiny workload through the launcher, for the code
  of each ``--src`` folder given (a checkout of another commit: ``git worktree add``), side by side.

    python bench/experiments/trial_fixed_costs.py --repeats 5 --src . --src /tmp/old
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.common import RESULTS, write_dated  # noqa: E402

WORKLOAD = Path(__file__).resolve().parents[2] / "tests" / "workloads" / "four_dtypes.py"
IMPORTS = {
    "import torch": "import torch",
    "import torch + inductor": "import torch, torch._inductor.compile_fx",
    "import torch + inductor + ISA probe": (
        "import torch, torch._inductor.compile_fx\n"
        "from torch._inductor import cpu_vec_isa\ncpu_vec_isa.valid_vec_isa_list()"),
}
TRIAL = """
import sys
from advisor.config import CompileConfig
from advisor.search.launcher import Launcher
rec = Launcher(timeout_s=300).run(sys.argv[1], CompileConfig(mode=sys.argv[2]), "cpu", None,
                                  measure_warm=False)
assert rec["status"] == "ok", rec.get("error_tail")
"""


def timed(args: list[str], env: dict[str, str], cwd: str) -> tuple[float, float]:
    """Wall and CPU seconds (the process and the children it waited for) of one command, run
    in `cwd` (not the repository: `python -c` and `-m` put the working folder first on the path,
    ahead of PYTHONPATH's checkout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(args, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--src", action="append", default=[], help="a folder holding advisor/")
    ap.add_argument("--out", type=Path, default=RESULTS)
    a = ap.parse_args()
    srcs = [Path(s).resolve() for s in (a.src or ["."])]
    base = {**os.environ, "TORCHINDUCTOR_COMPILE_THREADS": "1"}
    for name in ("ADVISOR_MEASURE_S", "TORCHINDUCTOR_VEC_ISA_OK"):  # a user's defaults
        base.pop(name, None)
    cases: list[tuple[str, list[str], dict[str, str]]] = []
    for name, code in IMPORTS.items():
        cases.append((name, [sys.executable, "-c", code], base))
    # the tests' setting (tests/conftest.py): the ISAs taken as listed, AMX and AVX512-BF16 still
    # dry-compiled
    cases.append(("import torch + inductor + ISA probe, TORCHINDUCTOR_VEC_ISA_OK=1",
                  [sys.executable, "-c", IMPORTS["import torch + inductor + ISA probe"]],
                  {**base, "TORCHINDUCTOR_VEC_ISA_OK": "1"}))
    for src in srcs:
        env = {**base, "PYTHONPATH": str(src)}
        for mode in ("eager", "default"):
            cases.append((f"{mode} trial, {src}", [sys.executable, "-c", TRIAL, str(WORKLOAD),
                                                   mode], env))
    seen: dict[str, list[tuple[float, float]]] = {name: [] for name, _, _ in cases}
    for _ in range(a.repeats):
        for name, args, env in cases:
            with tempfile.TemporaryDirectory() as cache:  # every case starts on an empty cache
                seen[name].append(timed(args, {**env, "TORCHINDUCTOR_CACHE_DIR": cache}, cache))
    lines = [f"# trial fixed costs: {os.cpu_count()} cores, load {os.getloadavg()}, python "
             f"{sys.version.split()[0]}, {a.repeats} repeats round robin, medians",
             "| case | wall s | CPU s |", "| --- | --- | --- |"]
    for name, values in seen.items():
        lines.append(f"| {name} | {statistics.median(v[0] for v in values):.2f} | "
                     f"{statistics.median(v[1] for v in values):.2f} |")
    write_dated(a.out, "trial_fixed_costs_cpu", "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
