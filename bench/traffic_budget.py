"""A traffic sweep within its budget (issue 41; on a CPU, or a GPU with `--device cuda`):
`advisor sweep --traffic LOG --budget 5m` over a long-tail log, its time to the first stored
result and to its answer, and the progress it printed, beside an independent serving of every
strategy of its space over the same log.

    python bench/traffic_budget.py                                   # the reranker, 300 requests
    python bench/traffic_budget.py --workload tests/workloads/tiny_seq.py --budget 1m \\
        --requests 120 --out /tmp/tb                                 # a smoke run (2 min)
    bash bench/run_bench.sh traffic_budget.py --device cuda          # on a lent GPU machine

``--device`` (default cpu) is the sweep's ``--device`` and the device the harness builds the
model and its inputs on (on cuda each request is timed up to a synchronize, as the advisor
times it). ``--deadline S`` (bench/run_bench.sh passes it): the run ends within S seconds, the
sweep and each serving process limited to what is left (split evenly among the processes still
to serve), a process past its limit reported with what it had served.

The log: ``--requests`` long-tail requests (each dim uniform over the workload's declared range,
nearly every request a new shape: ``bench/shapes_bench.py``'s ``longtail`` trace), written beside
the results. The sweep: ``python -m advisor sweep FILE --traffic LOG --modes eager,default --dtypes
bf16 --shapes static,dynamic,buckets:fitted-2 --budget 5m --calls-per-process N`` (N: the log's
requests, so that its deciding figure prices the process the harness serves; ``--device`` as
given), a new database,
its stderr kept line by line with the time each line came (the progress, `advisor.cli.progress`).

The harness: every config of the sweep's space, the eager fp32 baseline included, served by a
fresh process each (one at a time, an empty Inductor cache), plain code: build, cast,
``torch.compile`` as the strategy asks, prepare what the strategy prepares before traffic (the
advisor's own start-up shapes and buckets for the log's first half, `advisor.child.replay.
ReplayPlan`), then **the whole log, in order**, each request timed with perf_counter. Its figure:
(start-up + every request) / the log's requests, ms per request.

Reported: the sweep's wall, exit code and stored status; its first stored result (s from its
start) and first compiled one; its answer (pick, decision, what it could not measure) and each
config's predicted figure; the longest gap between its stderr lines while trials ran; per
config, the harness's figure and the prediction's error; the pick against the harness's best
(the goal: within 10%, or the answer names the strategies it could not measure). Hits and misses
both. Results: ``OUT/traffic_budget_<device>_<UTC>.json`` and ``.md``, the log ``..._log.csv``
and the sweep's stderr ``..._sweep.txt`` (new files, never an earlier run's), with the host's
cores and load at the start and end (and the GPUs, torch, triton and ``--commit``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.common import RESULTS, dated, host_facts, load_span, repo_env, utc_stamp  # noqa: E402

GOAL_PICK = 0.10
MODES, DTYPES, SHAPES = "eager,default", "bf16", "static,dynamic,buckets:fitted-2"


def fail(message: str) -> NoReturn:
    print(f"traffic_budget: {message}", file=sys.stderr)
    raise SystemExit(2)


def _env() -> dict[str, str]:
    return repo_env()


# --- the sweep --------------------------------------------------------------------------------


def run_sweep(cmd: list[str], err_path: Path, limit_s: float) -> dict[str, Any]:
    """The sweep process: its stderr written to ``err_path`` as it comes, each line with the
    seconds since the start; its stdout (--json) parsed."""
    started_s, t0 = time.time(), time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env(), cwd=REPO)
    lines: list[tuple[float, str]] = []

    def read() -> None:
        assert proc.stderr is not None
        with err_path.open("w") as out:
            for line in proc.stderr:
                at = time.monotonic() - t0
                lines.append((at, line.rstrip("\n")))
                out.write(f"{at:7.1f} {line}")
                out.flush()

    out: list[str] = []

    def read_out() -> None:  # stdout (--json) in a thread of its own: stderr is `read`'s alone
        assert proc.stdout is not None
        out.append(proc.stdout.read())

    readers = [threading.Thread(target=f, daemon=True) for f in (read, read_out)]
    for reader in readers:
        reader.start()
    try:
        proc.wait(timeout=limit_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    for reader in readers:
        reader.join(timeout=10)
    stdout = "".join(out)
    wall = time.monotonic() - t0
    documents = [json.loads(x) for x in stdout.splitlines() if x.strip().startswith("{")]
    return {"command": " ".join(["python", *cmd[1:]]), "started_s": started_s,
            "wall_s": round(wall, 1), "rc": proc.returncode, "lines": lines,
            "outcome": documents[0] if documents else None}


def progress_gaps(lines: list[tuple[float, str]]) -> dict[str, Any]:
    """The longest silence on stderr between the sweep's first trial and its trials' end (the
    line that says the trials are planned, or queued for the pool's workers, to the last trial's
    outcome line: the bar's ``N/M done, best``, or the pool's ``sweep K: N/M trials``). Pure."""
    start = next((t for t, text in lines
                  if "trials planned" in text or re.search(r"configs? queued for", text)), None)
    ends = [t for t, text in lines
            if " done, best " in text or re.search(r"sweep \d+: \d+/\d+ trials", text)]
    if start is None:
        return {"longest_gap_s": None, "progress_lines": 0}
    end = ends[-1] if ends else lines[-1][0]
    times = [start] + [t for t, _ in lines if start < t <= end] + [end]
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    said = sum(1 for t, _ in lines if start < t <= end)
    return {"longest_gap_s": round(max(gaps), 1) if gaps else 0.0, "lines_while_trials": said}


def read_back(db: Path, started_s: float) -> dict[str, Any]:
    """The stored sweep: its status, trials (first result, first compiled), the answer."""
    from advisor.config import CompileConfig
    from advisor.db.store import ResultStore
    from advisor.recommendation import deciding_ms
    from bench.time_to_answer import first_result

    with ResultStore.from_url(f"sqlite:///{db}", read_only=True) as store:
        (sweep,) = store.sweeps()
        records = store.trials(sweep_id=sweep["id"])
    calls = (sweep.get("settings") or {}).get("calls_per_process")
    trials = []
    for r in records:
        row: dict[str, Any] = {"config": CompileConfig.from_dict(r["config"]).label,
                               "status": r["status"], "passed": r.get("passed"),
                               "phases_s": r.get("phases_s")}
        if r["status"] == "ok":
            row["predicted_ms"] = deciding_ms(r, calls)
            replay = r.get("replay") or {}
            row["steady_sample"] = replay.get("steady_sample")
            row["startup_s"] = (replay.get("stream") or {}).get("startup_s")
        for key in ("stopped", "pruned", "failure_reason"):
            if r.get(key):
                row[key] = r[key]
        trials.append(row)
    return {"sweep_status": sweep["status"], "trials": trials,
            "first_result": first_result(records, started_s),
            "first_compiled": first_result(records, started_s, compiled=True)}


# --- the harness (its own process) ------------------------------------------------------------


def serve(spec: dict[str, Any]) -> dict[str, Any]:
    """One fresh serving process: build, compile, prepare the start-up shapes, then every
    request of the log in order, each timed."""
    import torch

    from advisor.workload import load_workload

    wl = load_workload(Path(spec["workload"])).workload
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[spec["dtype"]]
    bounds = {d: sorted(b) for d, b in spec["boundaries"].items()}
    if bounds:  # every bucket the boundaries define may compile (advisor.apply does the same)
        torch._dynamo.config.recompile_limit = max(torch._dynamo.config.recompile_limit,
                                                   int(spec["grid"]))

    def bucket(dims: dict[str, int]) -> dict[str, int]:
        return {k: next((b for b in bounds[k] if b >= v), v) if k in bounds else v
                for k, v in dims.items()}

    device = spec.get("device", "cpu")
    cuda = device.startswith("cuda")

    def sync() -> None:  # a GPU request is done when the device is: timed up to a synchronize
        if cuda:
            torch.cuda.synchronize()

    torch.manual_seed(0)
    model = wl.build(device, dtype)
    fn: Any = model
    if spec["mode"] != "eager":
        kwargs: dict[str, Any] = {} if spec["mode"] == "default" else {"mode": spec["mode"]}
        if spec["strategy"] == "dynamic":
            kwargs["dynamic"] = True
        elif spec["strategy"].startswith("buckets"):
            kwargs["dynamic"] = False
        fn = torch.compile(model, **kwargs)

    def request(dims: dict[str, int]) -> tuple[dict[str, Any], dict[str, int]]:
        torch.manual_seed(0)
        args = wl.inputs(dict(dims), device)
        args = {k: (v.to(dtype) if v.is_floating_point() else v) for k, v in args.items()}
        to = bucket(dims)
        return (wl.pad(args, dict(dims), to) if to != dims else args), to

    def call(args: dict[str, Any], dims: dict[str, int], to: dict[str, int]) -> None:
        out = fn(**args)
        if to != dims:
            wl.cut(out, dims)

    partial = Path(spec["partial"]) if spec.get("partial") else None
    with torch.inference_mode():
        prepared = [request(d) for d in spec["startup"]]
        sync()
        t0 = time.perf_counter()
        for (args, to), dims in zip(prepared, spec["startup"], strict=True):
            call(args, dims, to)
        sync()
        startup_s = time.perf_counter() - t0
        costs: list[float] = []
        for dims in spec["serve"]:
            args, to = request(dims)
            sync()
            t = time.perf_counter()
            call(args, dims, to)
            sync()
            costs.append((time.perf_counter() - t) * 1000)
            if partial is not None:  # what a process stopped at the limit had served
                partial.write_text(json.dumps({"startup_s": startup_s,
                                               "per_request_ms": costs}))
    return {"startup_s": startup_s, "per_request_ms": [round(c, 3) for c in costs],
            "threads": torch.get_num_threads()}


def harness_spec(workload: Path, log: Path, config: Any, device: str = "cpu") -> dict[str, Any]:
    """What a serving process of ``config`` serves: the log's requests in order, after the
    start-up the advisor's replay gives the strategy for the log's first half."""
    from advisor.child.replay import ReplayPlan
    from advisor.traffic import load_traffic
    from advisor.workload import load_workload

    wl = load_workload(workload).workload
    traffic = load_traffic(log, list(wl.traffic[0][0]))
    strategy = config.shapes if config.compiled else "static"
    plan = ReplayPlan.build(traffic, strategy)
    assert traffic.log is not None
    return {"workload": str(workload.resolve()), "device": device, "mode": config.mode,
            "dtype": config.dtype, "strategy": strategy,
            "boundaries": {d: list(b) for d, b in plan.buckets.bounds.items()},
            "grid": plan.buckets.grid_size() if plan.buckets.pads else 0,
            "startup": [plan.shapes[i] for i in plan.startup()],
            "serve": [dict(traffic.shapes[i][0]) for i in traffic.log]}


def run_harness(spec: dict[str, Any], limit_s: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="traffic-budget-") as tmp:
        spec_file, partial = Path(tmp) / "spec.json", Path(tmp) / "partial.json"
        spec_file.write_text(json.dumps({**spec, "partial": str(partial)}))
        env = {**_env(), "TORCHINDUCTOR_CACHE_DIR": str(Path(tmp) / "cache")}
        t0 = time.monotonic()
        try:
            done = subprocess.run([sys.executable, __file__, "--serve", str(spec_file)],
                                  capture_output=True, text=True, env=env, timeout=limit_s)
        except subprocess.TimeoutExpired:  # what it served by then
            got = json.loads(partial.read_text()) if partial.exists() else {}
            costs = got.get("per_request_ms") or []
            return {"error": f"not served whole: past {limit_s:.0f} s",
                    "served": len(costs), "startup_s": got.get("startup_s"),
                    "served_mean_ms": sum(costs) / len(costs) if costs else None}
        wall = time.monotonic() - t0
    if done.returncode != 0:
        return {"error": done.stderr[-1500:]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    total = result["startup_s"] * 1000 + sum(result["per_request_ms"])
    result["per_request_total_ms"] = total / len(result["per_request_ms"])
    result["wall_s"] = round(wall, 1)
    return result


# --- the run ----------------------------------------------------------------------------------


def compare(trials: list[dict[str, Any]], served: dict[str, dict[str, Any]],
            pick: str | None) -> dict[str, Any]:
    """Each config's prediction against the harness, and the pick against the harness's best
    (among the configs the sweep measured and passed, and among all served). Pure."""
    rows = []
    for label, got in served.items():
        trial = next((t for t in trials if t["config"] == label and t["status"] == "ok"), None)
        row: dict[str, Any] = {"config": label, "harness_ms": got.get("per_request_total_ms"),
                               "harness_startup_s": got.get("startup_s"),
                               "harness_error": got.get("error"),
                               "harness_served": got.get("served"),
                               "harness_served_mean_ms": got.get("served_mean_ms"),
                               "sweep": trial["status"] if trial else next(
                                   (t["status"] for t in trials if t["config"] == label),
                                   "not run")}
        if trial is not None:
            row["predicted_ms"] = trial["predicted_ms"]
            row["passed"] = trial["passed"]
            if row["harness_ms"]:
                row["error"] = trial["predicted_ms"] / row["harness_ms"] - 1
        rows.append(row)
    measured = [r for r in rows if r.get("harness_ms")]
    best = min(measured, key=lambda r: r["harness_ms"]) if measured else None
    chosen = next((r for r in measured if r["config"] == pick), None)
    gap = chosen["harness_ms"] / best["harness_ms"] - 1 if chosen and best else None
    return {"rows": rows, "harness_best": best["config"] if best else None,
            "pick": pick, "pick_gap": gap,
            "pick_hit": gap is not None and gap <= GOAL_PICK}


def run(args: argparse.Namespace) -> dict[str, Any]:
    from advisor.config import CompileConfig
    from bench.shapes_bench import log_text, make_trace
    from bench.time_to_answer import dim_ranges

    t_end = None if args.deadline is None else time.monotonic() + args.deadline - 10

    def left(limit: float, share: int = 1) -> float:  # a limit cut to the deadline's share
        if t_end is None:
            return limit
        return max(5.0, min(limit, (t_end - time.monotonic()) / share))

    stamp = utc_stamp()
    stem = f"traffic_budget_{args.device.split(':')[0]}"
    paths = {ext: dated(args.out, stem, stamp, ext) for ext in ("json", "md")}
    log = dated(args.out, f"{stem}_{args.workload.stem}_log", stamp, "csv")
    err = dated(args.out, f"{stem}_{args.workload.stem}_sweep", stamp, "txt")
    if any(p.exists() for p in [*paths.values(), log, err]):
        fail(f"{paths['json']} exists: run again (results are never overwritten)")
    args.out.mkdir(parents=True, exist_ok=True)
    from advisor.workload import load_workload

    wl = load_workload(args.workload).workload
    requests = make_trace("longtail", dim_ranges(wl.traffic), args.requests, seed=args.seed)
    log.write_text(log_text(requests))
    host = host_facts()
    report: dict[str, Any] = {"bench": "traffic_budget", "date": stamp, "host": host,
                              "workload": str(args.workload), "log": str(log),
                              "requests": args.requests, "budget": args.budget,
                              "device": args.device, "commit": args.commit,
                              "note": args.note, "sweep_stderr": str(err)}

    def save() -> None:
        report["load_at_end"] = [round(x, 2) for x in os.getloadavg()]
        paths["json"].write_text(json.dumps(report, indent=1, default=str))
        paths["md"].write_text(markdown(report))

    with tempfile.TemporaryDirectory(prefix="traffic-budget-db-") as tmp:
        db = Path(tmp) / "sweep.db"
        cmd = [sys.executable, "-m", "advisor", "sweep", str(args.workload), "--traffic",
               str(log), "--modes", args.modes, "--dtypes", args.dtypes, "--shapes",
               args.shapes, "--budget", args.budget, "--calls-per-process",
               str(args.requests), "--device", args.device, "--db", f"sqlite:///{db}",
               "--json"]
        print(f"traffic_budget: sweeping ({args.budget}) ...", file=sys.stderr, flush=True)
        sweep = run_sweep(cmd, err, left(args.sweep_limit_s))
        lines = sweep.pop("lines")
        report["sweep"] = sweep
        report["progress"] = progress_gaps(lines)
        report["sweep_tail"] = [text for _, text in lines[-8:]]
        outcome = sweep.pop("outcome") or {}
        rec = outcome.get("recommendation") or {}
        chosen = rec.get("best") or rec.get("leader") or {}
        report["answer"] = {"pick": chosen.get("label"), "decision": rec.get("decision"),
                            "unmeasured": outcome.get("unmeasured"),
                            "stopped_by": outcome.get("stopped_by"),
                            "status": outcome.get("status")}
        report.update(read_back(db, sweep["started_s"]))
        save()
    configs = [CompileConfig(mode="eager", dtype="fp32")] + [
        CompileConfig(mode=m, dtype=d, shapes=s if m != "eager" else "static")
        for m in args.modes.split(",") for d in args.dtypes.split(",")
        for s in (args.shapes.split(",") if m != "eager" else ["static"])]
    served: dict[str, dict[str, Any]] = {}
    todo = list(dict.fromkeys(configs))
    for n, config in enumerate(todo):
        limit = left(args.serve_limit_s, len(todo) - n)
        print(f"traffic_budget: serving {config.label} (at most {limit:.0f} s) ...",
              file=sys.stderr, flush=True)
        spec = harness_spec(args.workload, log, config, args.device)
        served[config.label] = run_harness(spec, limit)
        report["served"] = {k: {kk: vv for kk, vv in v.items() if kk != "per_request_ms"}
                            for k, v in served.items()}
        report["comparison"] = compare(report["trials"], served, report["answer"]["pick"])
        save()
    report["load_span"] = load_span(host)
    save()
    print(paths["md"].read_text())
    print(f"written: {paths['json']}, {paths['md']}, {log}, {err}", file=sys.stderr)
    return report


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def markdown(report: dict[str, Any]) -> str:
    host, sweep = report["host"], report.get("sweep") or {}
    answer, progress = report.get("answer") or {}, report.get("progress") or {}
    first, compiled = report.get("first_result"), report.get("first_compiled")
    gpus = ", ".join(f"{g['name']} (driver {g['driver']})" for g in host.get("gpus") or [])
    out = [
        f"# A traffic sweep within its budget ({report['date']})", "",
        f"Host: {host['hostname']}, {host['cores']} cores, "
        + (f"device {report['device']} on {gpus}, " if gpus else
           f"device {report.get('device', 'cpu')}, ")
        + f"torch {host['torch']}, triton {host['triton']}, commit "
        f"{report.get('commit') or 'not given'}; "
        f"{report.get('load_span') or 'load ' + str(host['load_at_start']) + ' at the start'}. "
        f"{report.get('note') or ''}".rstrip(), "",
        f"Workload `{report['workload']}`, {report['requests']} long-tail requests "
        f"(`{report['log']}`), `--budget {report['budget']}`.", "",
        f"Sweep: `{sweep.get('command', '')}`", "",
        f"- wall {sweep.get('wall_s')} s, exit code {sweep.get('rc')}, stored status "
        f"{report.get('sweep_status')}",
        "- first stored result: "
        + (f"{first['t_s']} s ({first['config']})" if first else "none"),
        "- first compiled result: "
        + (f"{compiled['t_s']} s ({compiled['config']})" if compiled else "none"),
        f"- answer: {answer.get('pick')} ({answer.get('decision')}); not measured: "
        f"{', '.join(answer.get('unmeasured') or []) or 'none'}",
        f"- longest silence on stderr while trials ran: {progress.get('longest_gap_s')} s "
        f"(goal: 10 s)", "",
        "| config | sweep | predicted ms/request | harness ms/request | error | harness "
        "start-up s | steady state measured on |",
        "| --- | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    comparison = report.get("comparison") or {}
    trials = {t["config"]: t for t in report.get("trials") or []}
    for row in comparison.get("rows") or []:
        trial = trials.get(row["config"]) or {}
        sample = trial.get("steady_sample") or {}
        on = (f"{sample['shapes']} of {sample['of_shapes']} shapes, {sample['passes']} passes"
              if sample else "-")
        status = row["sweep"]
        if trial.get("stopped"):
            status += f" ({trial['stopped']['phase']}, {trial['stopped']['requests_served']}/"\
                      f"{trial['stopped']['requests_total']})"
        error = "-" if row.get("error") is None else f"{row['error']:+.1%}"
        harness = _ms(row.get("harness_ms"))
        if row.get("harness_error"):
            harness = (f"{row['harness_served']} requests served, mean "
                       f"{_ms(row.get('harness_served_mean_ms'))}"
                       if row.get("harness_served") else "not served")
        out.append(f"| {row['config']} | {status} | {_ms(row.get('predicted_ms'))} | {harness} "
                   f"| {error} | {_ms(row.get('harness_startup_s'))} | {on} |")
    gap = comparison.get("pick_gap")
    out += ["", f"Pick {comparison.get('pick')} against the harness's best "
            f"{comparison.get('harness_best')}: "
            + ("-" if gap is None else f"{gap:+.1%} ({'hit' if gap <= GOAL_PICK else 'miss'}, "
               f"goal {GOAL_PICK:.0%})"), ""]
    out += ["Sweep's last lines:", "", "```", *report.get("sweep_tail", []), "```", ""]
    return "\n".join(out)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--workload", type=Path, default=REPO / "workloads" / "reranker.py")
    p.add_argument("--requests", type=int, default=300)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--budget", default="5m")
    p.add_argument("--device", default="cpu", help="the sweep's and the harness's: cpu, cuda")
    p.add_argument("--modes", default=MODES)
    p.add_argument("--dtypes", default=DTYPES)
    p.add_argument("--shapes", default=SHAPES)
    p.add_argument("--sweep-limit-s", type=float, default=1200.0)
    p.add_argument("--serve-limit-s", type=float, default=900.0)
    p.add_argument("--deadline", type=float, default=None,
                   help="seconds the whole run may take (the sweep and the serving cut to it)")
    p.add_argument("--commit", default=os.environ.get("GIT_COMMIT", ""))
    p.add_argument("--note", default="")
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--serve", type=Path, help=argparse.SUPPRESS)  # the harness process
    args = p.parse_args(argv)
    if args.serve is None and not args.workload.is_file():
        fail(f"--workload {args.workload}: no such file")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    if args.serve is not None:
        print(json.dumps(serve(json.loads(args.serve.read_text()))))
        return
    run(args)


if __name__ == "__main__":
    main()
