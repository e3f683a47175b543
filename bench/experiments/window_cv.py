"""Does sampling longer settle the advisor's median? Its CV over rounds, per sampling window.

    python bench/experiments/window_cv.py --workload workloads/reranker.py --device cuda \
        --shape batch=50,seq=128 --configs fp16:eager,bf16:default --windows 1,4 \
        --repeats 10 --out bench/results

On a host whose speed moves for seconds at a time (bench/experiments/launch_noise.py), the
median of a host-bound config moves from one measurement to the next, in every harness
(bench/fidelity.py). A trial samples for at least ``SamplingPolicy.min_time_s`` (1 s on a GPU);
this asks whether a longer window would average the host's states out, and at what cost.

Each config (``dtype:mode``) is built, compiled and first-called once in this process, as
bench/fidelity.py does. Each round then times every config with the advisor's warm-up and latency
sampling (`advisor.child.measure.warm_up`, `advisor.child.measure.sample`) once per window, the
policy's
``min_time_s`` set to the window (and ``max_time_s`` to at least it); the order of the configs and
of the windows rotates every round. Per config and window: the median over rounds of the medians,
their CV (stdev / mean), the median number of samples a round took and the seconds each round's
sampling took. Results go to
``OUT/window_cv_<device>_<workload>_<UTC>.json`` and ``.md``. Bad arguments: one line on stderr,
exit code 2, nothing written.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


from advisor.config import shape_name  # noqa: E402
from advisor.errors import AdvisorError, ConfigError  # noqa: E402
from bench.common import dated, utc_stamp  # noqa: E402
from bench.fidelity import CV_LIMIT_PCT, build, check, environment  # noqa: E402


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        _fail(message)


def _fail(message: str) -> NoReturn:
    print(f"window_cv: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def parse_windows(text: str) -> list[float]:
    """``1,4`` -> [1.0, 4.0]; ConfigError unless every window is a number of seconds above 0."""
    try:
        windows = [float(part) for part in text.split(",")]
    except ValueError:
        raise ConfigError(f"bad --windows {text!r}: write seconds, e.g. 1,4") from None
    if not windows or any(w <= 0 for w in windows) or len(set(windows)) != len(windows):
        raise ConfigError(f"bad --windows {text!r}: distinct seconds above 0, e.g. 1,4")
    return windows


def measure(runner: Any, window_s: float) -> tuple[float, int, float]:
    """The advisor's warm-up and sampling with a `window_s` window: (median ms, samples, the
    seconds the sampling took)."""
    from advisor.child.measure import SamplingPolicy, sample, warm_up
    from advisor.stats import Stats

    base = SamplingPolicy.for_device("cuda" if runner.timer.cuda else "cpu")
    policy = dataclasses.replace(base, min_time_s=window_s,
                                 max_time_s=max(base.max_time_s, window_s))
    warm_up(runner.timer, runner.calls[0], policy)
    t0 = time.perf_counter()
    stats = Stats(sample(runner.timer, runner.calls[0], policy))
    return stats.median_ms, stats.n_samples, time.perf_counter() - t0


def rounds(runners: dict[str, Any], windows: list[float],
           repeats: int) -> dict[str, dict[float, list[tuple[float, int, float]]]]:
    """got[config][window][round] = `measure`'s figures; configs and windows rotate."""
    from advisor.child.prepare import set_precision

    got: dict[str, dict[float, list[tuple[float, int, float]]]] = {
        n: {w: [] for w in windows} for n in runners}
    names = list(runners)
    for r in range(repeats):
        k = r % len(names)
        for i, name in enumerate(names[k:] + names[:k]):
            set_precision(runners[name].config)
            j = (r + i) % len(windows)
            for window in windows[j:] + windows[:j]:
                got[name][window].append(measure(runners[name], window))
            print(f"round {r + 1}/{repeats} {name:36s} " + "  ".join(
                f"{w:g} s: {got[name][w][-1][0]:.4f} ms" for w in windows), flush=True)
    return got


def summarize(per_window: dict[float, list[tuple[float, int, float]]]) -> list[dict[str, Any]]:
    rows = []
    for window, got in per_window.items():
        medians = [m for m, _, _ in got]
        rows.append({
            "window_s": window,
            "median_ms": statistics.median(medians),
            "cv_pct": (100 * statistics.stdev(medians) / statistics.fmean(medians)
                       if len(medians) > 1 else None),
            "samples": statistics.median(n for _, n, _ in got),
            "rounds_ms": medians,
            "rounds_sampled_s": [t for _, _, t in got],
        })
    return rows


def run(wl: Any, configs: dict[str, Any], dims: dict[str, int], device: str,
        windows: list[float], repeats: int) -> dict[str, Any]:
    import torch

    from advisor import fingerprint

    if device.startswith("cuda"):
        torch.cuda.set_device(fingerprint.cuda_index(device))
    torch._dynamo.config.recompile_limit = max(64, 8 * len(configs))
    ctx = torch.inference_mode() if wl.inference else contextlib.nullcontext()
    with ctx:
        runners, failures = build(wl, configs, device, dims)
        got = rounds(runners, windows, repeats) if runners else {}
    entries = []
    for name in configs:
        if name in got:
            entries.append({"config": name, "status": "ok", "windows": summarize(got[name])})
        else:
            entries.append({"config": name, "status": "failed", "error": failures[name]})
    return {"created_at": datetime.now(UTC).isoformat(), "workload": wl.name,
            "shape": shape_name(dims), "repeats": repeats, "windows_s": windows,
            **environment(device), "cv_limit_pct": CV_LIMIT_PCT, "configs": entries}


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"# Sampling window and CV: {result['workload']} at {result['shape']} on "
        f"{result['device_name']}",
        "",
        f"torch {result['torch']}, {result['repeats']} rounds, {result['created_at']}. "
        f"Bar: CV <= {result['cv_limit_pct']} %.",
        "",
        "| config | window s | median ms | CV % | samples per round |",
        "|---|---:|---:|---:|---:|",
    ]
    for e in result["configs"]:
        if e["status"] != "ok":
            lines.append(f"| {e['config']} | failed: {e['error'].replace('|', '/')} | | | |")
            continue
        for w in e["windows"]:
            cv = "-" if w["cv_pct"] is None else f"{w['cv_pct']:.2f}"
            lines.append(f"| {e['config']} | {w['window_s']:g} | {w['median_ms']:.4f} | {cv} "
                         f"| {w['samples']:g} |")
    return "\n".join([*lines, ""])


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", required=True, help="workload file (.py)")
    parser.add_argument("--device", default=None, help="cuda, cuda:N or cpu")
    parser.add_argument("--shape", default=None, help="e.g. batch=50,seq=128")
    parser.add_argument("--configs", required=True, help="dtype:mode,... e.g. fp16:eager")
    parser.add_argument("--windows", default="1,4", help="sampling windows in seconds (1,4)")
    parser.add_argument("--repeats", type=int, default=10, help="rounds (default 10)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = parser.parse_args(argv)
    try:
        windows = parse_windows(args.windows)
        wl, configs, dims, device = check(args)
    except AdvisorError as exc:
        _fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    result = run(wl, configs, dims, device, windows, args.repeats)
    args.out.mkdir(parents=True, exist_ok=True)
    stem = f"window_cv_{result['device'].replace(':', '')}_{result['workload']}"
    path = dated(args.out, stem, utc_stamp(), "json")
    path.write_text(json.dumps(result, indent=2) + "\n")
    path.with_suffix(".md").write_text(markdown(result))
    print(markdown(result), flush=True)
    print(f"wrote {path} and .md", flush=True)
    return 0 if any(e["status"] == "ok" for e in result["configs"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
