"""The advisor's pick against the grid's best, re-measured side by side in one process.

    python bench/paired_regret.py bench/results/advisor_bench_cuda_reranker_<UTC>.json

`bench/advisor_bench.py`'s regret compares two medians of the grid, each taken in its own
process minutes apart. Where the host's launch rate moves between such windows (see
bench/experiments/launch_noise.py), two configs that run alike can differ there by tens of
percent, and the regret measures the host, not the pick. This script measures the same
quantity (how much slower the pick is than the grid's best) the way `advisor.search.confirm`
compares leaders: both configs and eager fp32 are built and compiled in ONE fresh child (the
confirmation child, ``advisor.search.confirm``), warmed up, then timed interleaved round after
round at the report's shape (each round in a fresh seeded random order, each timed call after
an untimed one of its own: the fixed order eager, best, pick of the runs before 2026-12-01
favoured the config timed last, see docs/performance.md). The paired regret is the median over
rounds of pick time / best time, minus 1, with its bootstrap interval
(`advisor.stats.paired_speedup`).

It reads the report (workload file, device, shape, pick, grid best), adds ``paired`` to it and
rewrites the report's JSON and markdown in place. When the pick is the grid's best there is
nothing to re-measure: the paired regret is 0. Bad arguments: one line, exit 2, nothing written.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from advisor.config import EAGER_FP32, CompileConfig, parse_shape  # noqa: E402
from advisor.errors import AdvisorError  # noqa: E402


def fail(message: str) -> NoReturn:
    print(f"paired_regret: {message}", file=sys.stderr)
    sys.exit(2)


def read_report(path: Path, workload: Path | None) -> dict[str, Any]:
    try:
        report = json.loads(path.read_text())
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror}; give a report written by bench/advisor_bench.py")
    except ValueError:
        fail(f"{path} is not JSON; give a report written by bench/advisor_bench.py")
    missing = [k for k in ("workload_path", "device", "shape", "pick", "grid_best")
               if k not in report]
    if missing:
        fail(f"{path} lacks {', '.join(missing)}: not a report of bench/advisor_bench.py")
    if workload is not None:
        report["workload_path"] = str(workload.resolve())
    if not Path(report["workload_path"]).is_file():
        fail(f"the workload file {report['workload_path']} is not here; give it with --workload")
    return report


SAME = "the pick is the grid's best"


def configs_of(report: dict[str, Any]) -> tuple[CompileConfig, CompileConfig] | str:
    """(grid best, pick), or why there is nothing to re-measure."""
    if not report["pick"]:
        return "the advisor recommended nothing"
    if not report["grid_best"]:
        return "no grid config ran and passed"
    best = CompileConfig.from_dict(report["grid_best"]["config"])
    pick = CompileConfig.from_dict(report["pick"]["config"])
    return SAME if best.key == pick.key else (best, pick)


def paired_ratios(workload_path: str, device: str, shapes: list[dict[str, Any]],
                  reference: CompileConfig, others: list[CompileConfig], timeout_s: float,
                  seed: list[Path] | None = None) -> dict[str, Any]:
    """``others`` re-measured against ``reference`` in ONE confirmation child (with eager fp32,
    the paired oracle), interleaved round after round at ``shapes`` (each ``{"shape", "dims",
    "weight"}``). ``seed``: kept Inductor caches the child compiles from. Returns the status and,
    per config key, the median over rounds of its time / the reference's with its bootstrap
    interval (``ratios``), its median and compile time; a config that failed to compile is
    named in ``failures``."""
    from advisor.errors import TrialFailed
    from advisor.search.launcher import Launcher
    from advisor.stats import Rounds, paired_speedup

    configs = list({c.key: c for c in (EAGER_FP32, reference, *others)}.values())
    weights = [s["weight"] for s in shapes]
    spec = {"kind": "confirm", "workload_path": workload_path, "device": device,
            "configs": [c.to_dict() for c in configs], "shapes": shapes,
            "rounds": Rounds.for_device(device).to_dict()}
    try:
        result = Launcher(timeout_s=timeout_s).run_child(spec, lambda p: print(f"  {p}"),
                                                         seed=seed)
    except TrialFailed as e:
        return {"status": "failed", "error": str(e).splitlines()[0]}
    samples = result.get("samples_ms") or {}
    if result.get("status") != "ok" or reference.key not in samples:
        tail = (result.get("error_tail") or "").strip().splitlines()[-1:]
        why = ((result.get("failures") or {}).get(reference.key)
               or (tail[0] if tail else "no samples"))
        return {"status": "failed", "error": why}
    ratios = {}
    for c in configs:
        if c.key in samples:
            ratio, (low, high) = paired_speedup(samples[c.key], samples[reference.key], weights)
            ratios[c.key] = {"label": c.label, "ratio": ratio, "ci": [low, high]}
    return {
        "status": "ok", "method": result.get("method"), "rounds": result.get("rounds"),
        "ratios": ratios, "failures": result.get("failures") or {},
        "medians_ms": {c.label: statistics.median(samples[c.key][0]) for c in configs
                       if c.key in samples},
        "compile_s": {c.label: (result.get("compile_s") or {}).get(c.key) for c in configs},
        "stack": {k: (result.get("fingerprint") or {}).get(k) for k in
                  ("device_name", "driver_version", "torch_version", "triton_version")},
    }


def measure(report: dict[str, Any], best: CompileConfig, pick: CompileConfig,
            timeout_s: float) -> dict[str, Any]:
    shapes = [{"shape": report["shape"], "dims": parse_shape(report["shape"]), "weight": 1.0}]
    out = paired_ratios(report["workload_path"], report["device"], shapes, best, [pick],
                        timeout_s)
    if out["status"] != "ok":
        return out
    ratios = out.pop("ratios")
    if pick.key not in ratios:
        return {"status": "failed", "error": out["failures"].get(pick.key) or "no samples"}
    out.pop("failures")
    ratio, (low, high) = ratios[pick.key]["ratio"], ratios[pick.key]["ci"]
    return {**out, "regret": ratio - 1, "regret_ci": [low - 1, high - 1]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="advisor_bench_<device>_<workload>.json")
    parser.add_argument("--workload", type=Path, help="the workload file (default: the "
                        "report's, which names a path on the machine that wrote it)")
    parser.add_argument("--timeout", type=float, default=900.0,
                        help="seconds before the child is killed (default 900)")
    args = parser.parse_args(argv)
    if not args.timeout > 0:
        fail("--timeout must be more than zero seconds")
    report = read_report(args.report, args.workload)
    try:
        pair = configs_of(report)
    except AdvisorError as e:
        fail(f"the report's configs do not load: {str(e).splitlines()[0]}")
    paired: dict[str, Any] = {"created_at": datetime.now(UTC).isoformat(timespec="seconds")}
    if isinstance(pair, str):
        paired.update(status="skipped", note=pair, regret=0.0 if pair == SAME else None)
    else:
        best, pick = pair
        print(f"paired_regret: {pick.label} (pick) against {best.label} (grid best), "
              f"interleaved in one process on {report['device']}")
        paired.update(measure(report, best, pick, args.timeout),
                      pick=pick.label, grid_best=best.label)
    report["paired"] = paired
    from bench.advisor_bench import markdown

    path = args.report
    path.write_text(json.dumps(report, indent=2, default=str) + "\n")
    path.with_suffix(".md").write_text(markdown(report))
    if paired.get("regret") is None:
        print(f"paired_regret: no paired regret: {paired.get('note') or paired.get('error')}")
    else:
        ci = paired.get("regret_ci")
        print(f"paired_regret: {paired['regret'] * 100:+.1f}%"
              + (f" (95% CI {ci[0] * 100:+.1f}% .. {ci[1] * 100:+.1f}%, "
                 f"{paired['rounds']} rounds)" if ci else f" ({paired['note']})"))
    print(f"paired_regret: wrote {path} and {path.with_suffix('.md')}")


if __name__ == "__main__":
    main()
