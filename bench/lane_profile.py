"""Where a command's CPU goes, by process kind: the test lanes' CPU time on this host.

    python bench/lane_profile.py [--out DIR] [--every S] -- COMMAND [ARGS...]

runs COMMAND (e.g. README.md's test command, one lane at a time) to its end while it samples,
every ``--every`` seconds, the user + system CPU seconds of every process on the host, and
writes ``lane_profile_<UTC>.md`` and ``.json`` to ``--out`` (bench/results): the command's wall,
the host's busy CPU seconds over that wall (/proc/stat: every process, this sampler's and the
host's other services' too) against the cores' capacity, and the sampled CPU seconds per kind
of process. A process is named by what it is: advisor's children by the name they give
themselves (``advisor-server``, ``advisor-trial``... `advisor.protocol.process_name`), the
``advisor`` console script, pytest's workers (xdist starts them as ``python -u -c``), the
compiler's cc1plus and ld (Inductor's C++ kernels), PostgreSQL, Chromium, mypy. A process
shorter than one sampling interval may be missed (the command's own process is not: it is
sampled once more after it exits, before it is reaped): the sampled total falls short of the
busy total by what was missed (and by the kernel's own time), both printed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import RESULTS, dated, host_facts, load_span, utc_stamp  # noqa: E402


def kind_of(proc: psutil.Process) -> str:
    """The kind a process is counted under (see the module docstring)."""
    name = str(proc.name())
    if not name.startswith("python"):
        return name
    argv = proc.cmdline()
    line = " ".join(argv)
    if "xdist" in line or "execnet" in line or argv[1:3] == ["-u", "-c"]:
        return "pytest worker (xdist)"
    if "pytest" in line:
        return "pytest"
    if "mypy" in line:
        return "mypy"
    if "streamlit" in line:
        return "streamlit"
    if "advisor.child" in line:
        return "advisor child, a fresh interpreter"
    if "-m" in argv[1:2] and len(argv) > 2 and argv[2] == "advisor":
        return "advisor (python -m advisor)"
    if "-c" in argv[1:2]:
        return "python -c (advisor's CLI from a test, Inductor's probes)"
    return "python " + (Path(argv[1]).name if len(argv) > 1 else "")


def busy_ticks() -> int:
    """The host's non-idle CPU time so far, in clock ticks (/proc/stat)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return sum(fields) - fields[3] - fields[4]  # all but idle and iowait


def main(argv: list[str]) -> int:
    if "--" not in argv:
        print("lane_profile: give the command after --, e.g. -- python -m pytest -q -m slow",
              file=sys.stderr)
        return 2
    split = argv.index("--")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--every", type=float, default=0.5, help="seconds between samples")
    args = parser.parse_args(argv[:split])
    command = argv[split + 1:]
    if not command or args.every <= 0:
        print("lane_profile: give a command after -- and --every above 0", file=sys.stderr)
        return 2
    stamp = utc_stamp()
    host = host_facts()
    host["cpu_model"] = next((line.split(":", 1)[1].strip() for line in
                              Path("/proc/cpuinfo").read_text().splitlines()
                              if line.startswith("model name")), "unknown")
    host["commit"] = os.environ.get("GIT_COMMIT") or subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
        check=False).stdout.strip()
    # (pid, start) -> (kind, CPU seconds at the command's start, CPU seconds last seen)
    seen: dict[tuple[int, float], tuple[str, float, float]] = {}
    me = os.getpid()

    def sample(before: bool) -> None:
        for proc in psutil.process_iter():
            if proc.pid == me:
                continue
            try:
                key = (proc.pid, proc.create_time())
                times = proc.cpu_times()
            except psutil.Error:
                continue  # gone, or not ours to read
            now = times.user + times.system
            try:  # named at each sample: one seen between its fork and its exec is renamed
                kind = kind_of(proc)
            except (psutil.Error, IndexError):  # a zombie keeps its CPU but not its command
                if key not in seen:
                    continue
                kind = seen[key][0]
            # one already running counts from the command's start
            first = seen[key][1] if key in seen else (now if before else 0.0)
            seen[key] = (kind, first, now)

    sample(before=True)
    ticks0, t0 = busy_ticks(), time.monotonic()
    child = subprocess.Popen(command)
    while True:
        # whether the command has exited, without reaping it: until reaped it is a zombie whose
        # CPU seconds are final, so the sample after its exit counts all of its own
        ended = os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        sample(before=False)
        if ended:
            break
        time.sleep(args.every)
    child.wait()
    wall = time.monotonic() - t0
    busy = (busy_ticks() - ticks0) / os.sysconf("SC_CLK_TCK")
    cpu: dict[str, float] = {}
    count: Counter[str] = Counter()
    for kind, first, last in seen.values():
        if last > first:
            cpu[kind] = cpu.get(kind, 0.0) + last - first
            count[kind] += 1
    cores = len(os.sched_getaffinity(0))
    sampled = sum(cpu.values())
    ordered = sorted(cpu.items(), key=lambda item: -item[1])
    rows = [{"kind": k, "cpu_s": round(s, 1), "processes": count[k],
             "share": round(s / sampled, 3) if sampled else 0.0} for k, s in ordered]
    result = {"command": command, "exit_code": child.returncode, "wall_s": round(wall, 2),
              "cores": cores, "busy_cpu_s": round(busy, 1),
              "busy_share": round(busy / (wall * cores), 3), "sampled_cpu_s": round(sampled, 1),
              "every_s": args.every, "host": host, "kinds": rows}
    lines = [
        f"# lane profile: where `{' '.join(command)}` spent the CPU ({stamp})",
        "",
        f"Exit code {child.returncode}; wall {wall:.1f} s on {cores} cores; the host was busy "
        f"{busy:.1f} CPU-s ({busy / (wall * cores):.1%} of its capacity, every process's); "
        f"sampled every {args.every:g} s: {sampled:.1f} CPU-s by kind (a process shorter than "
        f"a sample may be missed). {load_span(host)}.",
        "",
        f"Host {host['hostname']}, CPU {host['cpu_model']}, Python {host['python']}, torch "
        f"{host['torch']}, commit {host['commit']}.",
        "",
        "| kind | CPU s | share of sampled | processes |",
        "| --- | ---: | ---: | ---: |",
        *(f"| {k} | {s:.1f} | {s / sampled:.1%} | {count[k]} |"
          for k, s in ordered if s >= 0.5),
    ]
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    dated(out, "lane_profile", stamp, "json").write_text(json.dumps(result, indent=1) + "\n")
    md = dated(out, "lane_profile", stamp, "md")
    md.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"written {md}")
    return 0 if child.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
