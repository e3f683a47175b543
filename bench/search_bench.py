"""Best-so-far against wall time: the advisor's budgeted search against three other orders.

    python bench/search_bench.py --device cuda --jobs 4 --budget 20 --timeout 45 \\
        --deadline 400 --modes eager,default,reduce-overhead --dtypes fp32,tf32,bf16,fp16
    python bench/search_bench.py --device cpu --tiny          # a smoke check (a few minutes)

For each workload (``--workload``, repeatable; default ``workloads/reranker.py`` and ``intent``,
a DistilBERT-shaped intent classifier this file writes from the workload contract alone, never
seen by the priors' authors) it runs four sweeps, each a fresh ``advisor sweep`` process on its
own new SQLite file, with the same space, shape and jobs:

    advisor   --budget B --jobs J                                (fleet, baseline, priors, TPE)
    grid      --jobs J, the whole space in the pool's order, stopped (SIGINT) at B + T
    optuna    --budget B --jobs J --no-priors --sampler tpe      (Optuna's sampler, no priors)
    random    --budget B --jobs J --no-priors --sampler random   (random order)

All four run with ``--no-warm --no-confirm-leaders`` (the comparison is the search itself) and
``--timeout`` T per trial (a budgeted run stops starting trials at B; those running finish,
within T, so the grid gets as long). From each run's stored trials: the best passed median so
far at each trial's finish (seconds since that sweep process started). The reference is the
best passed median over all four runs of the workload; reported per run: time to a pick within
3% of it, the final pick and its ratio to the reference, trials measured. Runs starting after
``--deadline`` seconds are recorded as not run. The reference is the union's best in separate
processes, not a paired re-measurement (bench/paired_regret.py does that for a pick).

Results: ``OUT/search_bench_<device>_<UTC date-time>.json`` and ``.md``, never overwritten.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from advisor.db.store import ResultStore  # noqa: E402

WITHIN = 0.03
STRATEGIES = {
    "advisor": [],
    "grid": None,  # the whole space, stopped at the budget
    "optuna": ["--no-priors", "--sampler", "tpe"],
    "random": ["--no-priors", "--sampler", "random"],
}
INTENT = '''"""Intent classifier, DistilBERT-shaped, written from the workload contract alone."""
import torch
from advisor import Workload

LAYERS, WIDTH, HEADS, VOCAB, CLASSES = {layers}, {width}, {heads}, 30522, 16


class Intent(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, WIDTH)
        self.pos = torch.nn.Embedding(512, WIDTH)
        layer = torch.nn.TransformerEncoderLayer(WIDTH, HEADS, 4 * WIDTH, batch_first=True,
                                                 activation="gelu")
        self.encoder = torch.nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        self.head = torch.nn.Linear(WIDTH, CLASSES)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.embed(ids) + self.pos(pos)
        return self.head(self.encoder(x).mean(dim=1))


def build(device, dtype):
    torch.manual_seed(0)
    return Intent().to(device, dtype).eval()


def inputs(shape, device):
    return (torch.randint(0, VOCAB, (shape["batch"], shape["seq"]), device=device),)


workload = Workload(name="intent-{size}", build=build, inputs=inputs,
                    traffic=[({{"batch": {batch}, "seq": {seq}}}, 1)],
                    dtypes=("fp32", "tf32", "bf16", "fp16"),
                    tolerances={{"bf16": (0.1, 0.1), "fp16": (0.05, 0.05)}})
'''
SIZES = {"full": dict(layers=6, width=768, heads=12, batch=8, seq=64),
         "tiny": dict(layers=2, width=64, heads=4, batch=2, seq=16)}


def write_intent(folder: Path, size: str) -> Path:
    path = folder / f"intent_{size}.py"
    path.write_text(INTENT.format(size=size, **SIZES[size]))
    return path


def run_sweep(name: str, workload: Path, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    db = work / f"{workload.stem}_{name}.db"
    url = f"sqlite:///{db}"
    cmd = [sys.executable, "-m", "advisor", "sweep", str(workload), "--db", url,
           "--device", args.device, "--jobs", str(args.jobs), "--timeout", str(args.timeout),
           "--no-warm", "--no-confirm-leaders", "--json"]
    for flag in ("modes", "dtypes", "shape"):
        if getattr(args, flag):
            cmd += [f"--{flag}", getattr(args, flag)]
    extra = STRATEGIES[name]
    cmd += ["--budget", f"{args.budget}s", *extra] if extra is not None else []
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:  # the grid has no budget of its own: stopped where the others have surely ended
        out, err = proc.communicate(timeout=grid_stop_s(args) if extra is None else None)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate()
    wall_s = time.monotonic() - t0
    started = datetime.now(UTC).timestamp() - wall_s
    with ResultStore.from_url(url, create=False) as store:
        trials = store.trials()
    points = []
    for r in sorted(trials, key=lambda r: r["finished_at"] or ""):
        ok = r["status"] == "ok" and r.get("passed") and not r.get("screened_out")
        done_s = datetime.fromisoformat(r["finished_at"]).timestamp() - started
        points.append({"t_s": round(done_s, 2), "config": r["config_key"],
                       "median_ms": r["median_ms"] if ok else None,
                       "tried_because": r.get("tried_because")})
    return {"strategy": name, "command": " ".join(cmd[1:]), "rc": proc.returncode,
            "wall_s": round(wall_s, 1), "points": points,
            "stderr_tail": err.splitlines()[-5:], "pick": _pick(out)}


def grid_stop_s(args: argparse.Namespace) -> float:
    return args.budget + args.timeout


def _pick(stdout: str) -> dict[str, Any] | None:
    try:
        best = json.loads(stdout)["recommendation"]["best"]
    except (json.JSONDecodeError, KeyError, TypeError):
        return None
    return None if best is None else {"config": best.get("config"),
                                      "median_ms": best.get("median_ms")}


def summarize(run: dict[str, Any], reference_ms: float) -> None:
    best, reached = math.inf, None
    for p in run["points"]:
        if p["median_ms"] is not None:
            best = min(best, p["median_ms"])
        p["best_so_far_ms"] = None if best == math.inf else best
        if reached is None and best <= reference_ms * (1 + WITHIN):
            reached = p["t_s"]
    run["time_to_within_3pct_s"] = reached
    run["final_ratio"] = None if best == math.inf else round(best / reference_ms, 4)
    run["trials"] = len(run["points"])


def markdown(report: dict[str, Any]) -> str:
    lines = [f"# search bench, {report['device']}, {report['date']}", "",
             f"budget {report['budget_s']} s per run, {report['jobs']} jobs, space "
             f"{report['modes'] or 'default'} x {report['dtypes'] or 'default'}", ""]
    for wl in report["workloads"]:
        lines += [f"## {wl['workload']} (reference {wl['reference_ms']} ms)", "",
                  "| strategy | wall s | trials | within 3% at s | final / reference | rc |",
                  "| --- | ---: | ---: | ---: | ---: | ---: |"]
        for r in wl["runs"]:
            if r.get("skipped"):
                lines.append(f"| {r['strategy']} | not run: {r['skipped']} | | | | |")
                continue
            lines.append(f"| {r['strategy']} | {r['wall_s']} | {r['trials']} | "
                         f"{r['time_to_within_3pct_s'] or 'missed'} | {r['final_ratio']} | "
                         f"{r['rc']} |")
        lines.append("")
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda")
    p.add_argument("--workload", action="append", type=Path,
                   help="workload file (repeatable); default: the reranker and intent")
    p.add_argument("--tiny", action="store_true", help="CPU smoke: tiny intent only, small space")
    p.add_argument("--modes")
    p.add_argument("--dtypes")
    p.add_argument("--shape")
    p.add_argument("--jobs", type=int, default=8)
    p.add_argument("--budget", type=float, default=40.0, help="seconds per run")
    p.add_argument("--timeout", type=float, default=90.0, help="seconds per trial")
    p.add_argument("--deadline", type=float, default=450.0, help="no run starts after this")
    p.add_argument("--strategies", default=",".join(STRATEGIES))
    p.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = p.parse_args(argv)
    bad = [s for s in args.strategies.split(",") if s not in STRATEGIES]
    if bad or args.jobs < 1 or args.budget <= 0 or args.timeout <= 0:
        print(f"search_bench: bad arguments: strategies from {', '.join(STRATEGIES)}, "
              "--jobs >= 1, --budget and --timeout > 0", file=sys.stderr)
        raise SystemExit(2)
    if args.tiny:
        args.modes = args.modes or "eager,default"
        args.dtypes = args.dtypes or "fp32,bf16"
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    t0 = time.monotonic()
    date = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    args.out.mkdir(parents=True, exist_ok=True)
    stem = args.out / f"search_bench_{args.device.split(':')[0]}_{date}"
    with tempfile.TemporaryDirectory(prefix="search-bench-") as tmp:
        work = Path(tmp)
        workloads = args.workload or (
            [write_intent(work, "tiny")] if args.tiny
            else [REPO / "workloads" / "reranker.py", write_intent(work, "full")])
        report: dict[str, Any] = {"device": args.device, "date": date, "jobs": args.jobs,
                                  "budget_s": args.budget, "grid_stop_s": grid_stop_s(args),
                                  "timeout_s": args.timeout, "modes": args.modes,
                                  "dtypes": args.dtypes, "workloads": []}
        for workload in workloads:
            runs = []
            for name in args.strategies.split(","):
                if time.monotonic() - t0 > args.deadline:
                    runs.append({"strategy": name, "skipped": "past --deadline"})
                    continue
                runs.append(run_sweep(name, workload, args, work))
                print(f"{workload.stem} {name}: {runs[-1]['wall_s']} s, "
                      f"{len(runs[-1]['points'])} trials", file=sys.stderr, flush=True)
            medians = [p["median_ms"] for r in runs for p in r.get("points", [])
                       if p["median_ms"] is not None]
            reference = min(medians) if medians else None
            for r in runs:
                if reference is not None and "points" in r:
                    summarize(r, reference)
            report["workloads"].append({"workload": workload.stem, "reference_ms": reference,
                                        "runs": runs})
            # written after every workload: a run cut short keeps what it measured
            stem.with_suffix(".json").write_text(json.dumps(report, indent=1))
            stem.with_suffix(".md").write_text(markdown(report))
    print(markdown(report))
    print(f"written: {stem}.json, {stem}.md", file=sys.stderr)


if __name__ == "__main__":
    main()
