"""How steady is this host's kernel-launch rate? The floor under every launch-bound median.

    python bench/experiments/launch_noise.py --device cuda --seconds 6 --cores 0,1,8 \\
        --out bench/results

A launch-bound config (eager, or compiled without CUDA graphs) is timed by how fast the host's
CPU issues its launches, not by the GPU. When that rate moves, every harness's median moves
with it, and no timing method can agree with another closer than the host allows. This bench
measures the rate directly, with no model and no compiler: windows of `--launches` tiny
launches (an add on a one-element tensor) then a synchronize, timed with perf_counter, back to
back for `--seconds`; and the same windows of pure Python work (no GPU), which tells the CPU's
own speed apart from the driver's. It does so unpinned (the scheduler may move the thread) and
pinned to each core of `--cores` (``os.sched_setaffinity``), one after another in one process.

Per setting: the median window in microseconds per launch, the CV over windows, and the CV of
the medians of consecutive half-second blocks (the time scale of one harness's round, where
round-to-round swings show), with the slowest block over the fastest. The host's steal time
(``/proc/stat``, a virtual machine's time taken by its hypervisor) over each setting is read
too. Results: ``OUT/launch_noise_<device>_<UTC>.json`` and ``.md``. Bad arguments: one line, exit 2.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.common import RESULTS, dated, utc_stamp  # noqa: E402

BLOCK_S = 0.5


def fail(message: str) -> NoReturn:
    print(f"launch_noise: {message}", file=sys.stderr)
    sys.exit(2)


def steal_jiffies() -> int | None:
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()
    except OSError:
        return None
    return int(fields[8]) if len(fields) > 8 else None


def python_window(n: int) -> None:
    total = 0
    for i in range(n * 20):
        total += i * i
    del total


def windows(work: Any, seconds: float) -> list[tuple[float, float]]:
    """(end time, window seconds) for back-to-back windows of `work` for `seconds`."""
    out: list[tuple[float, float]] = []
    t_end = time.perf_counter() + seconds
    while True:
        t0 = time.perf_counter()
        work()
        t1 = time.perf_counter()
        out.append((t1, t1 - t0))
        if t1 >= t_end:
            return out


def summarize(samples: list[tuple[float, float]], per: int) -> dict[str, Any]:
    us = [s * 1e6 / per for _, s in samples]
    blocks: list[list[float]] = []
    start = samples[0][0]
    for (t, _), v in zip(samples, us, strict=True):
        index = int((t - start) / BLOCK_S)
        while len(blocks) <= index:
            blocks.append([])
        blocks[index].append(v)
    medians = [statistics.median(b) for b in blocks if len(b) >= 5]
    return {
        "windows": len(us),
        "median_us": statistics.median(us),
        "cv_windows_pct": 100 * statistics.stdev(us) / statistics.fmean(us),
        "blocks": len(medians),
        "cv_blocks_pct": (100 * statistics.stdev(medians) / statistics.fmean(medians)
                          if len(medians) > 1 else None),
        "slowest_over_fastest_block": max(medians) / min(medians) if medians else None,
        "block_medians_us": medians,
    }


def measure(setting: str, cores: set[int] | None, device: str, seconds: float,
            launches: int) -> dict[str, Any]:
    import torch

    if cores is not None:
        os.sched_setaffinity(0, cores)
    x = torch.zeros(1, device=device)

    def gpu() -> None:
        for _ in range(launches):
            x.add_(1.0)
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    gpu()  # warm
    steal0, t0 = steal_jiffies(), time.perf_counter()
    row: dict[str, Any] = {"setting": setting, "launch": summarize(windows(gpu, seconds), launches),
           "python": summarize(windows(lambda: python_window(launches), seconds / 2), launches)}
    steal1, wall = steal_jiffies(), time.perf_counter() - t0
    hz = os.sysconf("SC_CLK_TCK")
    if steal0 is not None and steal1 is not None:
        ncpu = os.cpu_count() or 1  # /proc/stat's first line sums every CPU
        row["steal_pct_of_host"] = 100 * (steal1 - steal0) / hz / (wall * ncpu)
    return row


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"# Launch-rate noise on {result['device_name']}",
        "",
        f"torch {result['torch']}, {result['cpus']} CPUs ({result['cpu_model']}), "
        f"{result['launches']} launches per window, {result['seconds']} s per setting, "
        f"{result['created_at']}.",
        "",
        "| setting | us per launch | CV windows % | CV of 0.5 s blocks % | slowest / fastest block "
        "| python us per unit | python CV blocks % | steal % |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["rows"]:
        la, py = r["launch"], r["python"]
        steal = r.get("steal_pct_of_host")
        lines.append(
            f"| {r['setting']} | {la['median_us']:.2f} | {la['cv_windows_pct']:.1f} "
            f"| {la['cv_blocks_pct'] or 0:.1f} | {la['slowest_over_fastest_block'] or 0:.2f} "
            f"| {py['median_us']:.3f} | {py['cv_blocks_pct'] or 0:.1f} "
            f"| {'' if steal is None else f'{steal:.2f}'} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None, help="cuda, cuda:N or cpu (default: cuda if "
                        "present, else cpu)")
    parser.add_argument("--seconds", type=float, default=6.0, help="per setting (default 6)")
    parser.add_argument("--launches", type=int, default=100, help="per window (default 100)")
    parser.add_argument("--cores", default="", help="cores to pin to, one setting each, e.g. "
                        "0,1,8 (default: none, unpinned only)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.seconds <= 0 or args.launches <= 0:
        fail("--seconds and --launches must be positive")
    allowed = os.sched_getaffinity(0)
    try:
        cores = [int(c) for c in args.cores.split(",") if c.strip()]
    except ValueError:
        fail(f"--cores {args.cores!r} is not a comma-separated list of core numbers, e.g. 0,1,8")
    bad = [c for c in cores if c not in allowed]
    if bad:
        fail(f"--cores {bad} not available to this process (it may use {sorted(allowed)})")

    import torch

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        fail("--device cuda asked but this machine has no CUDA device; use --device cpu")
    rows = [measure("unpinned", None, device, args.seconds, args.launches)]
    os.sched_setaffinity(0, allowed)
    rows += [measure(f"core {c}", {c}, device, args.seconds, args.launches) for c in cores]
    os.sched_setaffinity(0, allowed)
    rows.append(measure("unpinned again", None, device, args.seconds, args.launches))
    cpu_model = next((line.split(":", 1)[1].strip() for line in
                      Path("/proc/cpuinfo").read_text().splitlines()
                      if line.startswith("model name")), "unknown")
    result = {
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "device": device,
        "device_name": (torch.cuda.get_device_name(device) if device.startswith("cuda")
                        else "CPU"),
        "torch": torch.__version__, "cpus": len(allowed), "cpu_model": cpu_model,
        "launches": args.launches, "seconds": args.seconds, "rows": rows,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    path = dated(args.out, f"launch_noise_{device.split(':')[0]}", utc_stamp(), "json")
    path.write_text(json.dumps(result, indent=2) + "\n")
    text = markdown(result)
    path.with_suffix(".md").write_text(text)
    print(text)
    print(f"wrote {path} and .md")


if __name__ == "__main__":
    main()
