"""Shape strategies: the advisor's predicted cost per request against a plain serving harness.

For each generated trace (``hot``: a few hot shapes; ``longtail``: nearly every request a new
shape; ``drift``: the mix shifts half-way) the log has three parts: `fit` requests, then `serve`
requests, then `serve` more. The advisor sees the first two (``advisor sweep --traffic`` with the
second as its holdout) and predicts, per strategy, the cost per request of a process that serves
`serve` requests (`advisor.serving.process_life_ms`). The harness then serves the holdout (or
with ``--unseen`` the third part, requests neither side has seen) once per strategy in a fresh
process with a fresh Inductor cache, one process at a time (a lone server: nothing else
compiling on the host):
plain code, not the advisor's: build, cast, ``torch.compile``, warm what the strategy prepares
(its buckets of the fitted part with the advisor's boundaries, or the fitted part's 8 most
frequent shapes; three calls each under CUDA graphs), then every request in order with CUDA
events around it (perf_counter on CPU), then the same requests again as its steady state (under
CUDA graphs the pass after the one that records each new shape's graph). A bucketed server lets
dynamo compile every bucket its boundaries define (its recompile limit raised to that many, as
``advisor.apply`` does): with torch's default of 8, buckets past the eighth would run eagerly,
silently.

    python bench/shapes_bench.py --device cuda --out bench/results
    python bench/shapes_bench.py --device cpu --workload tests/workloads/tiny_seq.py \\
        --mode default --dtype fp32 --fit 40 --serve 30 --out /tmp/shapes   # a smoke run

Writes ``shapes_bench_<device>_<UTC time>.json`` and ``.md`` (never overwrites). Goal (issue):
predicted within 15% of the harness for every strategy and trace, the advisor's pick the
harness's best within 10%; misses are reported beside hits.
"""

from __future__ import annotations

import argparse
import datetime as dt
import fcntl
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import host_facts, load_span, repo_env  # noqa: E402

STARTUP_SHAPES = 8  # the fitted part's most frequent shapes an unbucketed server warms
GOAL_PREDICTION = 0.15
GOAL_PICK = 0.10
LONG_LIVED = 10_000  # requests of a long-lived process (advisor.serving's default)


# --- traces ---------------------------------------------------------------------------------


def _ranges(workload: Any) -> dict[str, tuple[int, int]]:
    """Each dim's range: the declared traffic's smallest and largest size."""
    dims = list(workload.traffic[0][0])
    return {d: (min(s[d] for s, _ in workload.traffic), max(s[d] for s, _ in workload.traffic))
            for d in dims}


def make_trace(kind: str, ranges: dict[str, tuple[int, int]], n: int, seed: int = 0
               ) -> list[dict[str, int]]:
    rng = random.Random(seed)

    def uniform() -> dict[str, int]:
        return {d: rng.randint(lo, hi) for d, (lo, hi) in ranges.items()}

    def hot_set(k: int) -> list[dict[str, int]]:
        return [uniform() for _ in range(k)]

    if kind == "longtail":
        return [uniform() for _ in range(n)]
    if kind == "hot":
        hot, weights = hot_set(4), [0.5, 0.25, 0.15, 0.10]
        return [rng.choices(hot, weights)[0] for _ in range(n)]
    if kind == "drift":  # hot shapes, then another hot set with a tail, from the middle on
        first, second = hot_set(3), hot_set(3)
        return [rng.choice(first) if i < n // 2
                else (rng.choice(second) if rng.random() < 0.8 else uniform())
                for i in range(n)]
    raise SystemExit(f"unknown trace {kind!r}: choose hot, longtail or drift")


def log_text(requests: list[dict[str, int]]) -> str:
    """Requests as a traffic log (CSV, one row a request) that ``--traffic`` reads."""
    dims = list(requests[0])
    return (",".join(dims) + "\n"
            + "".join(",".join(str(r[d]) for d in dims) + "\n" for r in requests))


def write_log(path: Path, requests: list[dict[str, int]]) -> None:
    path.write_text(log_text(requests))


def grid(fit: list[dict[str, int]], served: list[dict[str, int]], strategy: str
         ) -> tuple[list[bool], int | None]:
    """Per served request, whether its shape runs inside the strategy's bucket grid (fitted on
    `fit`, as the advisor fits it), and the grid's buckets that start-up and `served` leave
    unmet (None unbucketed): what bounds a long-lived server's new shapes
    (advisor.serving.late_new_shapes_ms)."""
    from advisor.child.replay import ReplayPlan
    from advisor.traffic import parse_traffic

    traffic = parse_traffic(log_text(fit + served), "log.csv").with_holdout(
        len(served) / (len(fit) + len(served)))
    plan = ReplayPlan.build(traffic, strategy, n=len(served))
    return [plan.in_grid(i) for i in plan.request_shape], plan.grid_left()


def long_lived_ms(steady_ms: float, startup_s: float, per_request_ms: list[float],
                  new_shape: list[int], inside: list[bool], grid_left: int | None) -> float:
    """A LONG_LIVED-request process's cost per request through advisor.serving's formula."""
    from advisor.serving import process_life_ms

    life = process_life_ms({"mean_ms": steady_ms, "stream": {
        "startup_s": startup_s, "per_request_ms": per_request_ms, "new_shape": new_shape,
        "bounded_new_shape": [i for i in new_shape if inside[i]], "grid_left": grid_left}},
        LONG_LIVED)
    assert life is not None
    return life


def predicted(replay: dict[str, Any], n: int) -> dict[str, Any]:
    """The advisor's figures for a config from its trial's replay record: ms per request over a
    process serving `n` requests, start-up included (``predicted_ms``) and without it
    (``predicted_serving_ms``), and over a LONG_LIVED-request process (``predicted_long_ms``),
    all through advisor.serving's formula."""
    from advisor.serving import process_life_ms, startup_s

    life = process_life_ms(replay, n)
    return {"predicted_ms": life, "predicted_long_ms": process_life_ms(replay, LONG_LIVED),
            "predicted_serving_ms": life - startup_s(replay["stream"]) * 1000 / n}


# --- the plain harness (its own process) -------------------------------------------------------


def harness(spec: dict[str, Any]) -> dict[str, Any]:
    import torch

    from advisor.workload import load_workload

    wl = load_workload(Path(spec["workload"])).workload
    device, mode, strategy = spec["device"], spec["mode"], spec["strategy"]
    dtype = {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16,
             "fp16": torch.float16}[spec["dtype"]]
    if spec["dtype"] == "tf32":
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
    bounds = {d: sorted(b) for d, b in spec["boundaries"].items()}
    if bounds:  # every bucket the boundaries define may compile
        grid = math.prod(len(b) for b in bounds.values())
        torch._dynamo.config.recompile_limit = max(torch._dynamo.config.recompile_limit, grid)

    def bucket(dims: dict[str, int]) -> dict[str, int]:
        return dict(padded(dims, bounds))

    def make(dims: dict[str, int]) -> Any:
        args = wl.inputs(dict(dims), device)
        return {k: (v.to(dtype) if v.is_floating_point() else v) for k, v in args.items()}

    torch.manual_seed(0)
    model = wl.build(device, dtype)
    if mode == "eager":
        fn = model
    else:
        kwargs: dict[str, Any] = {} if mode == "default" else {"mode": mode}
        if strategy == "dynamic":
            kwargs["dynamic"] = True
        elif strategy.startswith("buckets"):
            kwargs["dynamic"] = False
        fn = torch.compile(model, **kwargs)
    graphs = mode in ("reduce-overhead", "max-autotune")
    cuda = device.startswith("cuda")
    varying = [d for d, (lo, hi) in spec["ranges"].items() if lo != hi]

    def mark(args: dict[str, Any], dims: dict[str, int]) -> None:
        if strategy != "mark_dynamic":
            return
        for t in args.values():
            for axis, size in enumerate(t.shape):
                for d in varying:
                    if size == dims[d] and size >= 2 and list(dims.values()).count(size) == 1:
                        lo, hi = spec["ranges"][d]
                        torch._dynamo.mark_dynamic(t, axis, min=max(2, lo), max=hi)

    def request(dims: dict[str, int]) -> Any:
        to = bucket(dims)
        args = make(dims)
        if to != dims:
            args = wl.pad(args, dict(dims), to)
        mark(args, to)
        return args, to

    def call(args: dict[str, Any], dims: dict[str, int], to: dict[str, int]) -> None:
        if graphs:
            torch.compiler.cudagraph_mark_step_begin()
        out = fn(**args)
        if to != dims:
            wl.cut(out, dims)

    with torch.inference_mode():
        prepared = [request(d) for d in spec["startup"]]
        served = [request(d) for d in spec["serve"]]
        t0 = time.perf_counter()
        for (args, to), dims in zip(prepared, spec["startup"], strict=True):
            for _ in range(3 if graphs else 1):  # CUDA-graph trees: warm-up, record, replay
                call(args, dims, to)
        if cuda:
            torch.cuda.synchronize()
        startup_s = time.perf_counter() - t0
        start = torch.cuda.Event(enable_timing=True) if cuda else None
        end = torch.cuda.Event(enable_timing=True) if cuda else None

        def timed(args: dict[str, Any], dims: dict[str, int], to: dict[str, int]) -> float:
            if cuda:
                start.record()
                call(args, dims, to)
                end.record()
                end.synchronize()
                return float(start.elapsed_time(end))
            t = time.perf_counter()
            call(args, dims, to)
            return (time.perf_counter() - t) * 1000

        seen = {tuple(to.items()) for _, to in prepared}
        new_shape = []
        with open(spec["lock"], "a") as lock:  # serve alone on the device
            fcntl.flock(lock, fcntl.LOCK_EX)
            costs = []
            for i, ((args, to), dims) in enumerate(zip(served, spec["serve"], strict=True)):
                if tuple(to.items()) not in seen:
                    new_shape.append(i)
                    seen.add(tuple(to.items()))
                costs.append(timed(args, dims, to))
            # The same requests again: under CUDA graphs a shape's second call records its
            # graph (the first was the tree's warm-up), so that pass is kept apart and the
            # steady state is the pass after it, every shape met and recorded.
            passes = [[timed(args, dims, to)
                       for (args, to), dims in zip(served, spec["serve"], strict=True)]
                      for _ in range(2 if graphs else 1)]
    return {"startup_s": startup_s, "per_request_ms": costs, "new_shape": new_shape,
            "steady_ms": passes[-1], "second_pass_ms": passes[0]}


def padded(dims: dict[str, int], bounds: dict[str, list[int]]) -> tuple[tuple[str, int], ...]:
    """The shape a request runs at: each bounded dim up to its smallest boundary at or above
    it (above every boundary: unpadded)."""
    return tuple((k, next((b for b in sorted(bounds[k]) if b >= v), v) if k in bounds else v)
                 for k, v in dims.items())


def startup_shapes(fit: list[dict[str, int]], bounds: dict[str, list[int]]) -> list[dict]:
    counts = Counter(tuple(d.items()) for d in fit)
    heaviest = [dict(k) for k, _ in counts.most_common()]
    if not bounds:
        return heaviest[:STARTUP_SHAPES]
    first: dict[tuple, dict[str, int]] = {}
    for d in heaviest:
        first.setdefault(padded(d, bounds), d)
    return list(first.values())


def harness_new_shapes(fit: list[dict[str, int]], served: list[dict[str, int]],
                       bounds: dict[str, list[int]]) -> list[int]:
    """The served requests that met a shape the harness had not run (its start-up's, then the
    requests before), as the harness counts them: for runs that did not record them."""
    met = {padded(d, bounds) for d in startup_shapes(fit, bounds)}
    new = []
    for i, d in enumerate(served):
        if padded(d, bounds) not in met:
            new.append(i)
            met.add(padded(d, bounds))
    return new


def run_harness(spec: dict[str, Any], out: Path) -> dict[str, Any]:
    spec_file = out / f"spec_{os.getpid()}_{time.monotonic_ns()}.json"
    spec_file.write_text(json.dumps(spec))
    with tempfile.TemporaryDirectory() as cache:
        env = repo_env({**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache})
        done = subprocess.run([sys.executable, __file__, "--harness", str(spec_file)],
                              capture_output=True, text=True, env=env, timeout=900)
    spec_file.unlink()
    if done.returncode != 0:
        return {"error": done.stderr[-2000:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- the advisor's side -----------------------------------------------------------------------


def advisor_sweep(args: argparse.Namespace, log: Path, holdout: float, serve: int, out: Path
                  ) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "advisor", "sweep", args.workload, "--traffic", str(log),
           "--holdout", f"{holdout:.6f}", "--modes", args.mode, "--dtypes", args.dtype,
           "--shapes", args.strategies, "--device", args.device, "--no-warm",
           "--no-confirm-leaders", "--calls-per-process", str(serve), "--json",
           "--db", f"sqlite:///{out / 'shapes_bench.db'}"]
    if args.jobs:
        cmd += ["--jobs", str(args.jobs)]
    env = repo_env({**os.environ, "ADVISOR_REPLAY_REQUESTS": str(serve)})
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
    if done.returncode not in (0, 1) or not done.stdout.strip():
        raise SystemExit(f"advisor sweep failed ({done.returncode}): {done.stderr[-3000:]}")
    return json.loads(done.stdout)


def one_trace(args: argparse.Namespace, kind: str, out: Path,
              save: Callable[[dict[str, Any]], None] = lambda result: None) -> dict[str, Any]:
    """One trace: the advisor's sweep, then the harness per config; ``save`` gets the trace's
    result after the sweep and after each harness process (a run cut short keeps them)."""
    from advisor.config import CompileConfig
    from advisor.serving import served, startup_s
    from advisor.workload import load_workload

    wl = load_workload(Path(args.workload)).workload
    ranges = _ranges(wl)
    trace = make_trace(kind, ranges, args.fit + 2 * args.serve, seed=args.seed)
    fit, seen, later = (trace[: args.fit], trace[args.fit: args.fit + args.serve],
                        trace[args.fit + args.serve:])
    # The harness serves the advisor's holdout (the same requests, fitted on neither side), or
    # with --unseen the requests after it, which the advisor never saw.
    unseen = later if args.unseen else seen
    log = out / f"log_{kind}.csv"
    write_log(log, fit + seen)
    t0 = time.perf_counter()
    outcome = advisor_sweep(args, log, args.serve / (args.fit + args.serve), args.serve, out)
    sweep_s = time.perf_counter() - t0
    best = (outcome["recommendation"].get("best") or {}).get("label")
    rows, specs = [], []
    for rec in outcome["trials"]:
        if rec["status"] != "ok" or not rec.get("replay"):
            rows.append({"config": CompileConfig.from_dict(rec["config"]).label,
                         "status": rec["status"], "reason": rec.get("failure_reason")})
            continue
        cfg = CompileConfig.from_dict(rec["config"])
        rp = rec["replay"]
        price = predicted(rp, len(unseen))
        row = {"config": cfg.label, "strategy": cfg.shapes if cfg.compiled else "eager",
               "passed": rec.get("passed"), "predicted_ms": price["predicted_ms"],
               "predicted_long_ms": price["predicted_long_ms"],
               "grid": grid(fit, unseen, cfg.shapes),
               "predicted_serving_ms": price["predicted_serving_ms"],
               "steady_ms": rp["mean_ms"], "stream_mean_ms": rp["stream"]["mean_ms"],
               "new_shape_share": rp["stream"]["new_shape_share"],
               "flags": [f["flag"] for f in rp.get("flags") or []],
               "boundaries": rp["boundaries"], "startup_s": startup_s(rp["stream"]),
               "trial_startup_s": rp["stream"]["startup_s"],
               "startup_alone": bool(rp["stream"].get("alone")),
               "per_request_ms": served(rp["stream"])["per_request_ms"],
               "new_shape": served(rp["stream"])["new_shape"]}
        rows.append(row)
        specs.append((row, {
            "workload": str(Path(args.workload).resolve()), "device": args.device,
            "mode": cfg.mode, "dtype": cfg.dtype, "strategy": cfg.shapes,
            "boundaries": rp["boundaries"], "ranges": ranges, "serve": unseen,
            "startup": startup_shapes(fit, rp["boundaries"]), "lock": str(out / "serve.lock"),
        }))

    def result() -> dict[str, Any]:
        return {"trace": kind, "fit": args.fit, "seen": args.serve, "unseen": len(unseen),
                "served": "after the holdout" if args.unseen else "the holdout",
                "distinct_unseen": len({tuple(d.items()) for d in unseen}), "sweep_s": sweep_s,
                "advisor_pick": best, **picks(rows, best)}

    save(result())
    # One server at a time: a lone process on the host, as the advisor's start-ups measured
    # alone are (a pooled sweep re-measures its leaders' after the trials).
    for row, spec in specs:
        compare(row, run_harness(spec, out))
        save(result())
    return result()


def compare(row: dict[str, Any], got: dict[str, Any]) -> None:
    """The harness's figures for one config (`got`, from `harness`) beside the advisor's in
    `row`, and the errors (predicted / harness - 1): over the served requests with start-up
    (``error``), without it (``serving_error``) and over a LONG_LIVED-request process
    (``long_error``, both sides through advisor.serving's formula)."""
    if "error" in got:
        row["harness_error"] = got["error"]
        return
    total = got["startup_s"] * 1000 + sum(got["per_request_ms"])
    row["harness_ms"] = total / len(got["per_request_ms"])
    row["harness_serving_ms"] = sum(got["per_request_ms"]) / len(got["per_request_ms"])
    row["harness_startup_s"] = got["startup_s"]
    row["harness_per_request_ms"] = [round(ms, 4) for ms in got["per_request_ms"]]
    row["error"] = row["predicted_ms"] / row["harness_ms"] - 1
    row["serving_error"] = row["predicted_serving_ms"] / row["harness_serving_ms"] - 1
    # The same formula on the harness's own figures: its start-up, its stream, its steady
    # pass (the holdout again, every shape met) and the new shapes it met.
    row["harness_steady_ms"] = statistics.fmean(got["steady_ms"])
    row["harness_second_pass_ms"] = statistics.fmean(got["second_pass_ms"])
    row["harness_new_shape"] = got["new_shape"]
    row["harness_long_ms"] = long_lived_ms(
        row["harness_steady_ms"], got["startup_s"], got["per_request_ms"],
        got["new_shape"], *row["grid"])
    row["long_error"] = row["predicted_long_ms"] / row["harness_long_ms"] - 1


def within_goal(error: float, goal: float = GOAL_PREDICTION) -> bool:
    """A prediction's error (predicted / harness - 1) within the goal, either way."""
    return abs(error) <= goal


def picks(rows: list[dict[str, Any]], best: str | None) -> dict[str, Any]:
    """The advisor's picks against the harness's best: over the served part (start-up
    included) and over a long-lived process (LONG_LIVED requests, the sweep's default; both
    sides' figures through the same formula)."""
    measured = [r for r in rows if "harness_ms" in r and r.get("passed")]
    harness_best = min(measured, key=lambda r: r["harness_ms"]) if measured else None
    pick = next((r for r in measured if r["config"] == best), None)
    long_pick = min(measured, key=lambda r: r["predicted_long_ms"]) if measured else None
    long_best = min(measured, key=lambda r: r["harness_long_ms"]) if measured else None
    return {"long_pick": long_pick and long_pick["config"],
            "long_best": long_best and long_best["config"],
            "long_pick_gap": (long_pick["harness_long_ms"] / long_best["harness_long_ms"] - 1)
            if long_pick and long_best else None,
            "harness_best": harness_best and harness_best["config"],
            "pick_gap": (pick["harness_ms"] / harness_best["harness_ms"] - 1)
            if pick and harness_best else None, "rows": rows}


def reprice(src: Path, args: argparse.Namespace, out: Path) -> None:
    """A kept run's long-lived figures again, through today's advisor.serving (both sides,
    from the run's own per-request figures; a run before the bucket grid was recorded gets its
    grid from the trace, regenerated from the run's seed), written under a new dated name."""
    from advisor.workload import load_workload

    kept = json.loads(src.read_text())
    meta = {**kept["meta"], "repriced_from": src.name,
            "when": dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ"),
            "command": " ".join(["python", "bench/shapes_bench.py", *sys.argv[1:]])}
    ranges = _ranges(load_workload(Path(args.workload)).workload)
    fit_n, serve_n = meta["fit"], meta["serve"]
    for res in kept["traces"]:
        if res.get("served") != "the holdout":
            raise SystemExit(f"{src}: only runs that served the holdout can be repriced")
        trace = make_trace(res["trace"], ranges, fit_n + 2 * serve_n, seed=meta.get("seed", 0))
        fit, seen = trace[:fit_n], trace[fit_n: fit_n + serve_n]
        for row in res["rows"]:
            if "harness_ms" not in row:
                continue
            inside, left = grid(fit, seen, row["strategy"] if row["strategy"] != "eager"
                                else "static")
            row["predicted_long_ms"] = long_lived_ms(
                row["steady_ms"], row["startup_s"], row["per_request_ms"], row["new_shape"],
                inside, left)
            new = row.get("harness_new_shape")
            if new is None:
                new = harness_new_shapes(fit, seen, row["boundaries"])
            row["harness_long_ms"] = long_lived_ms(
                row["harness_steady_ms"], row["harness_startup_s"],
                row["harness_per_request_ms"], new, inside, left)
            row["long_error"] = row["predicted_long_ms"] / row["harness_long_ms"] - 1
        res.update(picks(res["rows"], res["advisor_pick"]))
    stem = out / f"{src.stem}_repriced_{meta['when']}"
    stem.with_suffix(".json").write_text(json.dumps({"meta": meta, "traces": kept["traces"]},
                                                    indent=1))
    stem.with_suffix(".md").write_text(report(kept["traces"], meta))
    print(stem.with_suffix(".md").read_text())


def _host_line(host: dict[str, Any]) -> str:
    """The host the run ran on, as every kept result names it: load, GPU, torch, triton."""
    gpus = ", ".join(f"{g['name']} (driver {g['driver']})" for g in host["gpus"]) or "no GPU"
    return (f"Host {host['hostname']}, {host['cores']} cores, {gpus}; torch {host['torch']}, "
            f"triton {host['triton']}, Python {host['python']}; {load_span(host)}.")


def report(results: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = [f"# Shape strategies: predicted vs served ({meta['device']}, {meta['when']})", "",
             f"`{meta['command']}`", "",
             *([_host_line(meta["host"]), ""] if meta.get("host") else []),
             *([f"Repriced from {meta['repriced_from']}: its measured figures, the "
                f"{LONG_LIVED:,}-request process's through today's advisor.serving.", ""]
               if meta.get("repriced_from") else []),
             f"Workload {meta['workload']}, {meta['mode']} {meta['dtype']}; fit {meta['fit']}, "
             f"holdout {meta['serve']}, served unseen {meta['serve']} requests per trace. "
             "ms per request over a process serving the unseen part, start-up included "
             "('serving': without start-up), and over a long-lived process. "
             "Error = predicted / harness - 1.", ""]
    for res in results:
        lines += [f"## {res['trace']} ({res['distinct_unseen']} distinct shapes in "
                  f"{res['unseen']} unseen requests; sweep {res['sweep_s']:.0f} s)", "",
                  f"Served by the harness: {res.get('served', 'after the holdout')}.", "",
                  f"Process of {LONG_LIVED:,} requests (both sides through "
                  "advisor.serving.process_life_ms): advisor's pick "
                  f"{res.get('long_pick')}, harness's best {res.get('long_best')}, gap "
                  + ("-" if res.get("long_pick_gap") is None
                     else f"{res['long_pick_gap']:+.1%}")
                  + (" (hit)" if res.get("long_pick_gap") is not None
                     and res["long_pick_gap"] <= GOAL_PICK else " (miss)"), "",
                  f"Process of {res['unseen']} requests: advisor's pick: {res['advisor_pick']}; "
                  "harness's best: "
                  f"{res['harness_best']}; pick's gap: "
                  + ("-" if res["pick_gap"] is None else f"{res['pick_gap']:+.1%}")
                  + (" (hit)" if res["pick_gap"] is not None and res["pick_gap"] <= GOAL_PICK
                     else " (miss)"), "",
                  "| config | predicted | harness | error | predicted serving | harness serving "
                  f"| error | {LONG_LIVED:,}-request process: predicted | harness | error "
                  "| start-up s (trial, alone, harness) | steady | new shapes | flags |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
                  "| ---: | ---: | --- |"]
        for r in res["rows"]:
            if "predicted_ms" not in r or "harness_ms" not in r:
                why = r.get("reason") or r.get("harness_error", "")[-80:] or (
                    "(not served: the run stopped first)" if "predicted_ms" in r else "")
                lines.append(f"| {r['config']} | {r.get('status', 'ok')} {why} |")
                continue
            hit = "" if within_goal(r["error"]) else " **miss**"
            lines.append(
                f"| {r['config']} | {r['predicted_ms']:.3f} | {r['harness_ms']:.3f} | "
                f"{r['error']:+.1%}{hit} | {r['predicted_serving_ms']:.3f} | "
                f"{r['harness_serving_ms']:.3f} | {r['serving_error']:+.1%} | "
                f"{r['predicted_long_ms']:.3f} | {r['harness_long_ms']:.3f} | "
                f"{r['long_error']:+.1%} | {_startups(r)} | {r['steady_ms']:.3f} | "
                f"{r['new_shape_share']:.0%} | "
                f"{', '.join(r['flags']) or '-'} |")
        lines.append("")
    if meta.get("not_started"):
        lines.append(f"Not started (deadline): {', '.join(meta['not_started'])}.")
    return "\n".join(lines)


def _startups(row: dict[str, Any]) -> str:
    """The trial's start-up, the one measured alone (- when not re-measured), the harness's."""
    trial = row.get("trial_startup_s", row["startup_s"])
    alone = f"{row['startup_s']:.1f}" if row.get("startup_alone") else "-"
    return f"{trial:.1f}, {alone}, {row['harness_startup_s']:.1f}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--harness", help=argparse.SUPPRESS)
    p.add_argument("--device", default="cuda")
    p.add_argument("--workload", default=str(ROOT / "workloads" / "reranker.py"))
    p.add_argument("--mode", default="reduce-overhead")
    p.add_argument("--dtype", default="bf16")
    p.add_argument("--strategies", default="static,mark_dynamic,buckets:fitted-2,buckets:pow2")
    p.add_argument("--traces", default="hot,longtail,drift")
    p.add_argument("--fit", type=int, default=200)
    p.add_argument("--serve", type=int, default=200)
    p.add_argument("--jobs", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--unseen", action="store_true",
                   help="the harness serves the requests after the holdout, not the holdout")
    p.add_argument("--out", default=str(ROOT / "bench" / "results"))
    p.add_argument("--reprice", metavar="RUN.json",
                   help="a kept run's long-lived figures again through today's advisor.serving")
    p.add_argument("--deadline", type=float, default=None,
                   help="seconds: start no trace that the last one's duration says would end "
                        "past this (what was measured is written)")
    args = p.parse_args()
    if args.harness:
        print(json.dumps(harness(json.loads(Path(args.harness).read_text()))))
        return
    if args.reprice:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        reprice(Path(args.reprice), args, Path(args.out))
        return
    if args.fit < 2 or args.serve < 2:
        print("shapes_bench: --fit and --serve must be at least 2", file=sys.stderr)
        raise SystemExit(2)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    when = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    work = Path(tempfile.mkdtemp(prefix="shapes_bench_"))
    meta = {"device": args.device, "when": when, "workload": Path(args.workload).name,
            "mode": args.mode, "dtype": args.dtype, "fit": args.fit, "serve": args.serve,
            "seed": args.seed, "host": host_facts(),
            "command": " ".join(["python", "bench/shapes_bench.py", *sys.argv[1:]])}
    stem = out / f"shapes_bench_{args.device.split(':')[0]}_{when}"
    results: list[dict[str, Any]] = []
    started, last_s = time.monotonic(), 0.0

    def write(traces: list[dict[str, Any]]) -> None:
        stem.with_suffix(".json").write_text(json.dumps({"meta": meta, "traces": traces},
                                                        indent=1))
        stem.with_suffix(".md").write_text(report(traces, meta))

    for kind in args.traces.split(","):
        left = args.deadline - (time.monotonic() - started) if args.deadline else None
        if left is not None and left < last_s:
            print(f"{kind}: not started, {left:.0f} s left of the deadline and the last trace "
                  f"took {last_s:.0f} s", file=sys.stderr)
            meta.setdefault("not_started", []).append(kind)
            continue
        t0 = time.monotonic()
        # this run's files grow trace by trace and, within one, config by config: a run cut
        # short keeps what it measured
        results.append(one_trace(args, kind, work, lambda r: write([*results, r])))
        last_s = time.monotonic() - t0
        print(f"{kind}: pick {results[-1]['advisor_pick']}, harness best "
              f"{results[-1]['harness_best']}", file=sys.stderr)
        write(results)
    print(stem.with_suffix(".md").read_text())


if __name__ == "__main__":
    main()
