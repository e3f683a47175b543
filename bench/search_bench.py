"""Best-so-far against wall time: the advisor's budgeted search against a parallel grid, Optuna
without priors and random order, each best-so-far re-measured PAIRED with the full sweep's pick.

    python bench/search_bench.py --device cuda --gpus 8 --jobs 8 --grace 10 \\
        --workloads reranker,intent,guardrail,vision_encoder,embedder,local_lm,pointwise,...
    python bench/search_bench.py --device cpu --tiny          # a small proof (minutes)

Per workload (``--workloads``: names in workloads/, paths, or ``intent``, a DistilBERT-shaped
intent classifier this file writes from the workload contract alone), each run a fresh
``advisor sweep`` process on a new SQLite file, same space (``--modes/--dtypes``, else the
sweep's defaults), same shape, same ``--jobs J``, ``--no-warm``, trials' caches kept:

    grid      the FULL sweep: every config, J trials at once (the pool, costliest compiles
              first), the leaders re-measured side by side as any full sweep does. Its pick
              is the REFERENCE; its last trial's finish is the parallel grid's wall time G.
    advisor   --budget B --jobs J                       (fleet, baseline, priors, then TPE)
    random    --budget B --jobs J --no-priors --sampler random   (baseline, then random order)
    optuna    --budget B --jobs J --no-priors --sampler tpe      (baseline, then Optuna's TPE
              as the advisor sets it up: multivariate, 5 random start-up trials, constant liar)

B is ``--budget`` seconds, else ``--budget-share`` x G (default 0.25: the goal's window). A
budgeted run starts no trial after B; the bench stops it (SIGINT) at B + ``--grace``. Each
run's best-so-far (its best passed median after each finished trial: the config it would pick
then) is a curve against seconds since its process started. Then ONE confirmation child per
workload (bench/paired_regret.py's `paired_ratios`: the child `advisor.child.confirm` that a
sweep's leaders are re-measured in) compiles eager fp32, the reference and every config that
was ever some run's best-so-far from the runs' kept caches and times them interleaved, round
after round: each config's paired ratio to the reference. Reported per run: time to a
best-so-far within 3% of the reference, paired (ratio <= 1.03) and unpaired (its median
against the reference's median in the grid, another process); that time over G; and against
the goal (within 3%, paired, in <= 25% of G): hit or miss. The trials' start and finish
times give how many ran at once (J expected).

``--gpus N``: workloads run N at once, one per GPU, each in a process of its own with the GPU
(CUDA_VISIBLE_DEVICES) and a 1/N slice of the host's cores (CPU affinity, which sets the
sweeps' compile threads) to itself; all runs of a workload share its GPU and cores, one after
another. ``--deadline`` S: a workload starts only when ``--full-estimate`` seconds fit before
it, a budgeted run only when it and the paired child fit; what did not fit is reported so.
The host's load average is recorded at the start and end.

``--reference-from PATH`` (a search bench JSON written earlier): the grid is NOT run; each
workload takes its grid run (points, pick, G) from that file's workload of the same name, and
the report names the file, its date and its GPU and stack. The budgeted runs and the paired
child run as before (the child compiles the reference from a kept cache only where a budgeted
run of this call measured it); where that file's GPU is another model than this run's, the
unpaired figures (against its grid median) are left out. Per budgeted run, its autotuning
trials (max-autotune, -no-cudagraphs): how many ran at once and which started before their
cheaper twin finished.

Results: ``OUT/search_bench_<device>_<UTC date-time>.json`` and ``.md``, written after every
workload, never overwritten. Bad arguments: one line, exit 2, nothing written.
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
from typing import Any, NoReturn

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from advisor.config import CompileConfig  # noqa: E402
from advisor.search.priors import TWINS  # noqa: E402
from bench.common import host_facts  # noqa: E402

WITHIN = 0.03
GOAL_SHARE = 0.25
GRID = "grid"
BUDGETED = {  # the budgeted strategies, in the order they run (the advisor first: the subject)
    "advisor": [],
    "random": ["--no-priors", "--sampler", "random"],
    "optuna": ["--no-priors", "--sampler", "tpe"],
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


def fail(message: str) -> NoReturn:
    print(f"search_bench: {message}", file=sys.stderr)
    raise SystemExit(2)


def write_intent(folder: Path, size: str) -> Path:
    path = folder / f"intent_{size}.py"
    path.write_text(INTENT.format(size=size, **SIZES[size]))
    return path


def resolve(name: str, folder: Path, intent_size: str) -> Path:
    """A workload file: ``intent`` (written here), a name in workloads/, or a path."""
    if name == "intent":
        return write_intent(folder, intent_size)
    path = REPO / "workloads" / f"{name}.py"
    path = path if path.is_file() else Path(name)
    if not path.is_file():
        fail(f"no workload {name!r}: give intent, a name in workloads/ or a .py file")
    return path.resolve()


# --- one sweep --------------------------------------------------------------------------------


def sweep_cmd(name: str, workload: Path, args: argparse.Namespace, db: Path, caches: Path,
              budget_s: float | None) -> list[str]:
    cmd = [sys.executable, "-m", "advisor", "sweep", str(workload), "--db", f"sqlite:///{db}",
           "--device", args.device, "--jobs", str(args.jobs), "--timeout", str(args.timeout),
           "--no-warm", "--keep-caches", str(caches), "--json"]
    for flag in ("modes", "dtypes", "shape"):
        if getattr(args, flag):
            cmd += [f"--{flag}", getattr(args, flag)]
    if name != GRID:  # the budgeted runs: the search itself, no re-measurement at the end
        cmd += ["--budget", f"{budget_s:.1f}s", "--no-confirm-leaders", *BUDGETED[name]]
    return cmd


def run_sweep(name: str, workload: Path, args: argparse.Namespace, work: Path,
              budget_s: float | None, stop_s: float | None) -> dict[str, Any]:
    """One sweep process; its trials as points (seconds since it started), its pick."""
    from advisor.db.store import ResultStore

    db, caches = work / f"{workload.stem}_{name}.db", work / f"{workload.stem}_{name}_caches"
    cmd = sweep_cmd(name, workload, args, db, caches, budget_s)
    started, t0 = time.time(), time.monotonic()
    load = os.getloadavg()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    stopped = interrupted = False
    try:
        out, err = proc.communicate(timeout=stop_s)
    except (subprocess.TimeoutExpired, KeyboardInterrupt) as e:  # the finished trials are kept
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate()
        stopped, interrupted = True, isinstance(e, KeyboardInterrupt)
    wall_s = time.monotonic() - t0
    trials: list[dict[str, Any]] = []
    if db.exists():
        with ResultStore.from_url(f"sqlite:///{db}", create=False) as store:
            trials = store.trials()
    points = []
    for r in sorted(trials, key=lambda r: r["finished_at"] or ""):
        ok = r["status"] == "ok" and r.get("passed") and not r.get("screened_out")
        points.append({
            "t_s": round(_epoch(r["finished_at"]) - started, 2),
            "start_s": round(_epoch(r["started_at"]) - started, 2) if r.get("started_at")
            else None,
            "config": r["config_key"], "label": CompileConfig.from_dict(r["config"]).label,
            "trial_uuid": r["trial_uuid"], "median_ms": r["median_ms"] if ok else None,
            "status": r["status"] if r["status"] != "ok" else "rejected" if not r.get(
                "passed") else "screened out" if r.get("screened_out") else "ok",
            "tried_because": r.get("tried_because")})
    return {"strategy": name, "command": " ".join(cmd[1:]), "rc": proc.returncode,
            "stopped_by_bench_at_s": round(wall_s, 1) if stopped else None,
            "interrupted": interrupted,
            "budget_s": None if budget_s is None else round(budget_s, 1),
            "wall_s": round(wall_s, 1), "load_at_start": [round(x, 2) for x in load],
            "points": points, "max_at_once": max_at_once(points),
            "caches": str(caches), "stderr_tail": err.splitlines()[-4:], "pick": _pick(out)}


def _epoch(iso: str) -> float:
    when = datetime.fromisoformat(iso)
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


def max_at_once(points: list[dict[str, Any]]) -> int:
    """The most trials running at one moment (from their start and finish times). Pure."""
    edges = sorted([(p["start_s"], 1) for p in points if p["start_s"] is not None]
                   + [(p["t_s"], -1) for p in points if p["start_s"] is not None],
                   key=lambda e: (e[0], e[1]))
    most = now = 0
    for _, step in edges:
        now += step
        most = max(most, now)
    return most


def autotuning(points: list[dict[str, Any]]) -> dict[str, Any]:
    """A run's autotuning trials (a mode in TWINS): how many ran at once, and each one's start
    against its cheaper twin's finish in this run (None: the twin never finished). Pure."""
    finished = {p["config"]: p["t_s"] for p in points}
    trials = []
    for p in points:
        mode = p["config"].split("/", 1)[0]
        if mode in TWINS:
            twin = finished.get(TWINS[mode] + p["config"][len(mode):])
            trials.append({"label": p["label"], "start_s": p["start_s"], "t_s": p["t_s"],
                           "twin_t_s": twin, "status": p["status"]})
    early = [t["label"] for t in trials if t["start_s"] is not None and (
        t["twin_t_s"] is None or t["start_s"] < t["twin_t_s"])]
    return {"trials": trials, "max_at_once": max_at_once(
        [p for p in points if p["config"].split("/", 1)[0] in TWINS]),
            "started_before_twin_finished": early}


def _pick(stdout: str) -> dict[str, Any] | None:
    """The sweep's recommended config (its --json document), or None."""
    try:
        rec = json.loads(stdout.strip().splitlines()[-1])["recommendation"]
    except (json.JSONDecodeError, KeyError, TypeError, IndexError):
        return None
    best = rec.get("best") or (rec.get("ranked") or [None])[0]
    if best is None:
        return None
    config = CompileConfig.from_dict(best["config"])
    return {"config": config.key, "config_dict": best["config"], "label": config.label,
            "median_ms": best.get("median_ms"), "trial_uuid": best.get("trial_uuid"),
            "decided_by": rec.get("decided_by")}


# --- curves and the paired re-measurement -----------------------------------------------------


def best_so_far(points: list[dict[str, Any]]) -> None:
    """Adds to each point the run's best passed config and median so far. Pure."""
    best: dict[str, Any] | None = None
    for p in points:
        if p["median_ms"] is not None and (best is None or p["median_ms"] < best["median_ms"]):
            best = p
        p["best_config"] = None if best is None else best["config"]
        p["best_ms"] = None if best is None else best["median_ms"]


def first_within(points: list[dict[str, Any]], ok: Any) -> float | None:
    """The first finish time at which ``ok(point)`` holds for the best so far. Pure."""
    return next((p["t_s"] for p in points if p.get("best_config") and ok(p)), None)


def summarize(run: dict[str, Any], reference: dict[str, Any], ratios: dict[str, Any] | None,
              grid_wall_s: float, within: float = WITHIN, goal_share: float = GOAL_SHARE,
              other_gpu: str | None = None) -> None:
    """Times to within ``within`` of the reference (paired when ``ratios`` has the config's
    paired ratio; unpaired against the reference's grid median), over the grid's wall, and
    the goal's hit or miss. ``other_gpu``: the grid ran on that GPU, not this one: no unpaired
    figures. Pure."""
    points = run["points"]
    best_so_far(points)
    ref_ms = reference["median_ms"]
    for p in points:
        paired = (ratios or {}).get(p["best_config"] or "")
        p["paired_ratio"] = None if paired is None else round(paired["ratio"], 4)
    unpaired = first_within(points, lambda p: p["best_ms"] <= ref_ms * (1 + within))
    if ratios is None:
        paired_t = None
    else:
        paired_t = first_within(points, lambda p: p["paired_ratio"] is not None
                                and p["paired_ratio"] <= 1 + within)
    last = points[-1] if points else {}
    run.update(
        trials=len(points), time_within_paired_s=paired_t, time_within_unpaired_s=unpaired,
        share_of_grid_paired=None if paired_t is None else round(paired_t / grid_wall_s, 3),
        share_of_grid_unpaired=None if unpaired is None else round(unpaired / grid_wall_s, 3),
        final_config=last.get("best_config"), final_paired_ratio=last.get("paired_ratio"),
        final_unpaired_ratio=None if not last.get("best_ms") else round(
            last["best_ms"] / ref_ms, 4))
    if other_gpu is not None:
        run.update(time_within_unpaired_s=None, share_of_grid_unpaired=None,
                   final_unpaired_ratio=None, unpaired_left_out=f"the grid's median is from "
                   f"another GPU ({other_gpu})")
    if ratios is None:
        run["goal"] = "undecided: no paired figures"
    else:
        hit = paired_t is not None and paired_t <= goal_share * grid_wall_s
        run["goal"] = "hit" if hit else "miss"


def paired_set(runs: list[dict[str, Any]], reference: str) -> list[str]:
    """Every config that was some run's best so far, the reference first. Pure."""
    keys = [reference]
    for run in runs:
        best_so_far(run.get("points", []))
        keys += [p["best_config"] for p in run.get("points", []) if p["best_config"]]
    return list(dict.fromkeys(keys))


def measure_paired(workload: Path, args: argparse.Namespace, runs: list[dict[str, Any]],
                   grid: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    """The reference and every best-so-far config, re-measured interleaved in one child."""
    from advisor.search.launcher import Launcher
    from bench.paired_regret import paired_ratios

    ref = grid["pick"]
    keys = paired_set(runs, ref["config"])
    dicts = {p["config"]: p for r in runs for p in r.get("points", [])}
    configs = {k: CompileConfig.from_dict(ref["config_dict"] if k == ref["config"]
                                          else _config_dict(runs, k)) for k in keys}
    seeds = []
    for key in keys:  # each config's kept cache, from the first run that measured it
        for run in runs:
            uuid_ = next((p["trial_uuid"] for p in run.get("points", []) if p["config"] == key),
                         None)
            kept = Launcher(cache_root=run["caches"]).kept_caches({key: uuid_})
            if kept:
                seeds.append(kept[key])
                break
    shapes = _shapes(runs, ref)  # the grid's own record, else (a stored grid) this call's
    if shapes is None:
        return {"status": "not run", "error": "no trial stored in this call: no shapes to "
                "measure the reference at"}
    print(f"{workload.stem}: paired re-measurement of {len(keys)} configs against "
          f"{ref['label']}", file=sys.stderr, flush=True)
    out = paired_ratios(str(workload), args.device, shapes, configs[ref["config"]],
                        [configs[k] for k in keys[1:]], timeout_s, seed=seeds)
    out["configs"] = {k: dicts[k]["label"] if k in dicts else k for k in keys}
    out["configs"][ref["config"]] = ref["label"]
    out["seeded_from_kept_caches"] = len(seeds)
    return out


def _config_dict(runs: list[dict[str, Any]], key: str) -> dict[str, Any]:
    from advisor.db.store import ResultStore

    for run in runs:
        db = Path(run["caches"][: -len("_caches")] + ".db")
        if not db.exists():
            continue
        with ResultStore.from_url(f"sqlite:///{db}", create=False) as store:
            found = next((r["config"] for r in store.trials() if r["config_key"] == key), None)
        if found is not None:
            return found
    raise KeyError(key)


def _shapes(runs: list[dict[str, Any]], ref: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The shapes the reference's trial measured (weights included), as
    `advisor.search.confirm` takes them from the leader's record; a grid from a stored file
    (no database here): those of this call's first trial with the reference's shape strategy
    (a sweep's trials measure the same shapes)."""
    from advisor.db.store import ResultStore

    records: list[dict[str, Any]] = []
    for run in runs:
        db = Path(run["caches"][: -len("_caches")] + ".db") if "caches" in run else None
        if db is not None and db.exists():
            with ResultStore.from_url(f"sqlite:///{db}", create=False) as store:
                records += store.trials()
    same = [r for r in records if r["config"].get("shapes", "static")
            == ref["config_dict"].get("shapes", "static") and r["shapes"]]
    record = next((r for r in records if r["trial_uuid"] == ref["trial_uuid"]),
                  same[0] if same else None)
    if record is None:
        return None
    return [{"shape": s["shape"], "dims": s["dims"], "weight": s["weight"]}
            for s in record["shapes"]]


# --- one workload (a process of its own: its GPU and cores) -----------------------------------


def run_workload(workload: Path, args: argparse.Namespace, deadline_at: float,
                 part: Path) -> None:
    """Every run of one workload, then the paired child; ``part`` rewritten after each step."""
    out: dict[str, Any] = {"workload": workload.stem, "path": str(workload),
                           "gpu": os.environ.get("CUDA_VISIBLE_DEVICES"),
                           "cores": len(os.sched_getaffinity(0)), "runs": []}

    def save() -> None:
        part.write_text(json.dumps(out, indent=1, default=str))

    def left() -> float:
        return deadline_at - time.time()

    other_gpu = None
    with tempfile.TemporaryDirectory(prefix=f"search-bench-{workload.stem}-") as tmp:
        work = Path(tmp)
        if args.reference is not None:  # the grid of an earlier call, NOT re-run here
            stored = args.reference["workloads"][workload.stem]
            grid = stored_grid(stored, args.reference["from"])
            grid_wall = stored["grid_wall_s"]
            other_gpu = other_gpu_than(args.reference["gpus"], host_facts()["gpus"])
            out.update(reference_from=args.reference["from"], reference_other_gpu=other_gpu)
            out["runs"].append(grid)
            save()
            print(f"{workload.stem} grid: taken from {args.reference['from']['path']} "
                  f"({args.reference['from']['date']}), not re-run", file=sys.stderr, flush=True)
        else:
            grid = run_sweep(GRID, workload, args, work, None,
                             max(1.0, left() - 5) if math.isfinite(left()) else None)
            out["runs"].append(grid)
            save()
            log(workload, grid)
            finished = [p["t_s"] for p in grid["points"]]
            if grid["pick"] is None or grid["stopped_by_bench_at_s"] is not None or (
                    not finished):
                out["note"] = "the full sweep did not finish with a pick: no reference"
                save()
                return
            grid_wall = max(finished)
            # the unpaired reference: the pick's own trial in the grid (the recommendation's
            # median may be its side-by-side re-measurement's, another kind of figure)
            mine = next((p for p in grid["points"] if p["config"] == grid["pick"]["config"]),
                        None)
            grid["pick"]["recommended_ms"] = grid["pick"]["median_ms"]
            grid["pick"]["median_ms"] = mine["median_ms"] if mine else grid["pick"]["median_ms"]
        budget = args.budget or args.budget_share * grid_wall
        out.update(grid_wall_s=grid_wall, budget_s=round(budget, 1),
                   goal_s=round(args.goal_share * grid_wall, 1), reference=grid["pick"])
        for name in args.strategies:
            need = budget + args.grace + args.paired_timeout
            if left() < need:
                out["runs"].append({"strategy": name, "skipped":
                                    f"not run: {left():.0f} s left, {need:.0f} s needed"})
                continue
            out["runs"].append(run_sweep(name, workload, args, work, budget,
                                         budget + args.grace))
            out["runs"][-1]["autotuning"] = autotuning(out["runs"][-1]["points"])
            save()
            log(workload, out["runs"][-1])
            if out["runs"][-1]["interrupted"]:
                out["note"] = "interrupted: no paired re-measurement"
                save()
                return
        ran = [r for r in out["runs"] if "points" in r and "stored_from" not in r]
        timeout = min(args.paired_timeout, left() - 5)
        if timeout < 10:
            out["paired"] = {"status": "not run", "error": "past the deadline"}
        else:
            out["paired"] = measure_paired(workload, args, ran, grid, timeout)
        ratios = out["paired"].get("ratios") if out["paired"]["status"] == "ok" else None
        for run in ran:
            summarize(run, grid["pick"], ratios, grid_wall, args.within, args.goal_share,
                      other_gpu)
        save()


def stored_grid(stored: dict[str, Any], source: dict[str, Any]) -> dict[str, Any]:
    """A stored workload's grid run, marked as taken from ``source`` (not this call's). Pure."""
    grid = next(r for r in stored["runs"] if r.get("strategy") == GRID and "points" in r)
    grid = {k: v for k, v in grid.items() if k != "caches"}  # its caches: another machine's
    grid["pick"] = dict(stored["reference"])
    grid["stored_from"] = source
    return grid


def other_gpu_than(stored: list[dict[str, Any]], here: list[dict[str, Any]]) -> str | None:
    """The stored grid's GPU model(s) when they are not this host's, else None. Pure."""
    theirs = sorted({g["name"] for g in stored})
    return None if theirs == sorted({g["name"] for g in here}) else ", ".join(
        theirs) or "no GPU"


def load_reference(path: Path, stems: list[str], args: argparse.Namespace) -> dict[str, Any]:
    """An earlier search bench JSON: its grid run for each of ``stems`` (workload names), its
    date and stack; anything else is one line on stderr, exit 2."""
    try:
        report = json.loads(path.read_text())
        by_name = {w["workload"]: w for w in report["workloads"]}
        date = report["date"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail(f"--reference-from {path}: not a search bench JSON ({type(e).__name__}: {e})")
    for stem in stems:
        wl = by_name.get(stem)
        if wl is None or "reference" not in wl or "grid_wall_s" not in wl or not any(
                r.get("strategy") == GRID and "points" in r for r in wl.get("runs", [])):
            fail(f"--reference-from {path}: no grid run with a reference for workload "
                 f"{stem!r} in it (it has: {', '.join(by_name) or 'none'})")
    for flag in ("modes", "dtypes", "shape"):
        if report.get(flag) != getattr(args, flag):
            fail(f"--reference-from {path}: its --{flag} was {report.get(flag)!r}, this run's "
                 f"{getattr(args, flag)!r}: another space")
    if report.get("device", "").split(":")[0] != args.device.split(":")[0]:
        fail(f"--reference-from {path}: its device was {report.get('device')!r}, this run's "
             f"{args.device!r}")
    source = {"path": str(path), "date": date, "stack": _stack_line(report),
              "grid": "NOT re-run in this call: taken from this file"}
    return {"from": source, "gpus": (report.get("stack") or {}).get("gpus", []),
            "workloads": {s: by_name[s] for s in stems}}


def log(workload: Path, run: dict[str, Any]) -> None:
    print(f"{workload.stem} {run['strategy']}: {run['wall_s']} s, {len(run['points'])} trials, "
          f"at most {run['max_at_once']} at once", file=sys.stderr, flush=True)


def stem_of(name: str, intent_size: str) -> str:
    """The workload's name in a report (its file's stem), as `resolve` will give it. Pure."""
    if name == "intent":
        return f"intent_{intent_size}"
    return name if (REPO / "workloads" / f"{name}.py").is_file() else Path(name).stem


# --- the whole bench: workloads on GPU slots --------------------------------------------------


def slots(n: int) -> list[tuple[str | None, list[int]]]:
    """Each slot's GPU (its CUDA_VISIBLE_DEVICES entry; None on the CPU) and its cores."""
    cores = sorted(os.sched_getaffinity(0))
    visible = [d for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
    out = []
    for k in range(n):
        gpu = None if n == 1 and not visible else (visible[k] if k < len(visible) else str(k))
        out.append((gpu, cores[k * len(cores) // n:(k + 1) * len(cores) // n]))
    return out


def start_workload(workload: Path, argv: list[str], deadline_at: float, part: Path,
                   slot: tuple[str | None, list[int]]) -> subprocess.Popen[bytes]:
    gpu, cores = slot
    env = dict(os.environ)
    if gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = gpu
    cmd = [sys.executable, __file__, *argv, "--one", str(workload), "--part", str(part),
           "--deadline-at", str(deadline_at)]
    return subprocess.Popen(cmd, env=env, start_new_session=True,
                            preexec_fn=lambda: os.sched_setaffinity(0, cores))


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.one is not None:  # one workload, in this process (started by the bench below)
        run_workload(args.one, args, args.deadline_at, args.part)
        return
    t0 = time.time()
    deadline_at = t0 + args.deadline
    date = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    args.out.mkdir(parents=True, exist_ok=True)
    stem = args.out / f"search_bench_{args.device.split(':')[0]}_{date}"
    report: dict[str, Any] = {
        "device": args.device, "date": date, "jobs": args.jobs, "gpus": args.gpus,
        "budget": f"{args.budget} s" if args.budget else f"{args.budget_share} x grid wall",
        "grace_s": args.grace, "goal": f"within {args.within:.0%} paired in <= "
        f"{args.goal_share:.0%} of the grid's wall", "timeout_s": args.timeout,
        "modes": args.modes, "dtypes": args.dtypes, "shape": args.shape,
        "host": os.uname().nodename, "cores": len(os.sched_getaffinity(0)),
        "load_at_start": [round(x, 2) for x in os.getloadavg()], "note": args.note,
        # the stack it ran on, in the file itself: GPUs and driver, torch, triton, Python
        "stack": {k: v for k, v in host_facts().items()
                  if k in ("gpus", "torch", "triton", "python")},
        "commit": os.environ.get("GIT_COMMIT", ""), "workloads": []}
    if args.reference is not None:
        report["reference_from"] = args.reference["from"]
    with tempfile.TemporaryDirectory(prefix="search-bench-") as tmp:
        work = Path(tmp)
        queue = [resolve(name, work, args.intent_size) for name in args.workloads]
        free = slots(args.gpus)
        running: dict[int, tuple[subprocess.Popen[bytes], Path, tuple]] = {}
        parts: list[Path] = []
        skipped: list[str] = []

        def collect() -> None:
            done = [json.loads(p.read_text()) for p in parts if p.exists()]
            report["workloads"] = done + [{"workload": w, "note": "not run: past --deadline"}
                                          for w in skipped]
            report["load_at_end"] = [round(x, 2) for x in os.getloadavg()]
            report["wall_s"] = round(time.time() - t0, 1)
            stem.with_suffix(".json").write_text(json.dumps(report, indent=1, default=str))
            stem.with_suffix(".md").write_text(markdown(report))

        try:
            while queue or running:
                while queue and free:
                    workload = queue.pop(0)
                    if time.time() + args.full_estimate > deadline_at:
                        skipped.append(workload.stem)
                        continue
                    part = work / f"part_{len(parts)}_{workload.stem}.json"
                    parts.append(part)
                    slot = free.pop(0)
                    running[len(parts)] = (start_workload(workload, argv, deadline_at, part,
                                                          slot), part, slot)
                for key, (proc, part, slot) in list(running.items()):
                    if proc.poll() is not None:
                        del running[key]
                        if proc.returncode:  # said in the report, beside what it wrote
                            wl = json.loads(part.read_text()) if part.exists() else {
                                "workload": part.stem.split("_", 2)[2], "runs": []}
                            wl["note"] = (wl.get("note", "") + f" its process exited with "
                                          f"{proc.returncode}").strip()
                            part.write_text(json.dumps(wl, indent=1, default=str))
                        free.append(slot)
                        collect()
                time.sleep(1.0)
        except KeyboardInterrupt:  # stopped: every workload process stops, what ran is kept
            for proc, _, _ in running.values():
                os.killpg(proc.pid, signal.SIGINT)
            for proc, _, _ in running.values():
                proc.wait()
        collect()
    print(markdown(report))
    print(f"written: {stem}.json, {stem}.md", file=sys.stderr)


# --- the report -------------------------------------------------------------------------------


def _s(value: float | None) -> str:
    return "missed" if value is None else f"{value:.1f}"


def _stack_line(report: dict[str, Any]) -> str:
    """GPUs (driver), torch, triton, Python and the commit ("not recorded": an older report)."""
    stack = report.get("stack")
    if not stack:
        return "stack: not recorded"
    gpus = ", ".join(f"{g['name']} (driver {g['driver']})" for g in stack["gpus"]) or "none"
    triton = stack["triton"] or "not installed"
    return (f"GPUs: {gpus}; torch {stack['torch']}, triton {triton}, Python {stack['python']}; "
            f"commit {report.get('commit') or 'not given'}")


def markdown(report: dict[str, Any]) -> str:
    lines = [f"# search bench, {report['device']}, {report['date']}", "",
             f"host {report['host']}, {report['cores']} cores, {report['gpus']} workload(s) at "
             f"once; load average at start {report['load_at_start']}, at end "
             f"{report.get('load_at_end')}; {report['jobs']} jobs per sweep; space "
             f"{report['modes'] or 'default modes'} x {report['dtypes'] or 'allowed dtypes'}, "
             f"shape {report['shape'] or 'the workload default'}; budget {report['budget']} "
             f"(+{report['grace_s']} s grace); goal: {report['goal']}.", "",
             _stack_line(report), ""]
    if report.get("note"):
        lines += [f"Note: {report['note']}", ""]
    source = report.get("reference_from")
    if source:
        lines += [f"Reference: the grid runs of {source['path']} ({source['date']}; "
                  f"{source['stack']}); the grid was NOT re-run in this call.", ""]
    for wl in report["workloads"]:
        lines.append(f"## {wl['workload']}")
        lines.append("")
        if "reference" not in wl:
            lines += [wl.get("note", "no reference"), ""]
            continue
        if wl.get("note"):
            lines += [f"Note: {wl['note']}", ""]
        if wl.get("reference_other_gpu"):
            lines += [f"The stored grid ran on another GPU ({wl['reference_other_gpu']}): no "
                      "unpaired figures (they would compare medians of two GPUs); the paired "
                      "ratios are this call's.", ""]
        ref, paired = wl["reference"], wl.get("paired") or {}
        stored = (f", stored {wl['reference_from']['date']}, not re-run"
                  if wl.get("reference_from") else "")
        lines += [f"reference: the full sweep's pick {ref['label']} ({ref['median_ms']:.4g} ms "
                  f"in the grid{stored}); grid wall G = {wl['grid_wall_s']:.1f} s (last trial's "
                  f"finish); budget {wl['budget_s']} s; goal window {wl['goal_s']} s; paired "
                  f"re-measurement: {paired.get('status')}"
                  + (f", {paired.get('rounds')} rounds ({paired.get('method')})"
                     if paired.get("status") == "ok" else f" ({paired.get('error')})"), "",
                  "| strategy | wall s | trials | at once | within 3% paired at s | / G | goal "
                  "| unpaired at s | / G | final: config, paired ratio |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | --- |"]
        labels = {p["config"]: p.get("label", p["config"]) for r in wl["runs"]
                  for p in r.get("points", [])}
        labels.update(paired.get("configs") or {})
        for r in wl["runs"]:
            name = r["strategy"] + (" (stored, not re-run)" if r.get("stored_from") else "")
            if "points" not in r:
                lines.append(f"| {r['strategy']} | {r.get('skipped', 'not run')} "
                             "| | | | | | | | |")
                continue
            if "goal" not in r:
                lines.append(f"| {name} | {r['wall_s']} | {len(r['points'])} | "
                             f"{r['max_at_once']} | not summarized | | | | | |")
                continue
            final = labels.get(r["final_config"], r["final_config"])
            unpaired = ("other GPU | -" if r.get("unpaired_left_out") else
                        f"{_s(r['time_within_unpaired_s'])} | {r['share_of_grid_unpaired'] or '-'}")
            lines.append(
                f"| {name} | {r['wall_s']} | {r['trials']} | {r['max_at_once']} | "
                f"{_s(r['time_within_paired_s'])} | {r['share_of_grid_paired'] or '-'} | "
                f"{r['goal']} | {unpaired} | {final}, {r['final_paired_ratio']} |")
        if paired.get("status") == "ok":
            ratios = ", ".join(f"{v['label']} {v['ratio']:.3f} [{v['ci'][0]:.3f}, "
                               f"{v['ci'][1]:.3f}]" for v in paired["ratios"].values())
            lines += ["", f"paired ratios to the reference (time / reference's, 95% CI): "
                      f"{ratios}"]
            if paired.get("failures"):
                lines.append(f"failed in the paired child: {paired['failures']}")
        lines.append("")
        for r in wl["runs"]:
            if r.get("points"):
                steps = [f"{p['t_s']:.0f}s {labels.get(p['best_config'], p['best_config'])}"
                         for i, p in enumerate(r["points"]) if p.get("best_config") and (
                             i == 0 or p["best_config"] != r["points"][i - 1].get("best_config"))]
                lines.append(f"- {r['strategy']} best so far: {'; '.join(steps) or 'none'}")
        for r in wl["runs"]:
            if "autotuning" in r:
                at = r["autotuning"]
                early = ", ".join(at["started_before_twin_finished"]) or "none"
                lines.append(f"- {r['strategy']} autotuning trials: {len(at['trials'])}, at most "
                             f"{at['max_at_once']} at once; started before their cheaper twin "
                             f"finished: {early}")
        lines.append("")
    return "\n".join(lines)


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda")
    p.add_argument("--workloads", help="comma-separated: intent, names in workloads/, paths "
                   "(default: reranker,intent; with --tiny: intent)")
    p.add_argument("--tiny", action="store_true",
                   help="a CPU proof: the tiny intent classifier, eager/default x fp32/bf16")
    p.add_argument("--intent-size", choices=sorted(SIZES))
    p.add_argument("--modes")
    p.add_argument("--dtypes")
    p.add_argument("--shape")
    p.add_argument("--jobs", type=int, default=8)
    p.add_argument("--gpus", type=int, default=1, help="workloads at once, one per GPU")
    p.add_argument("--budget", type=float, help="seconds per budgeted run (default: "
                   "--budget-share x the grid's wall)")
    p.add_argument("--budget-share", type=float, default=GOAL_SHARE)
    p.add_argument("--goal-share", type=float, default=GOAL_SHARE)
    p.add_argument("--within", type=float, default=WITHIN)
    p.add_argument("--grace", type=float, help="seconds past the budget before a budgeted run "
                   "is stopped (default: --timeout: trials in flight finish)")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per trial")
    p.add_argument("--paired-timeout", type=float, default=180.0,
                   help="seconds for the paired child (kept free before each budgeted run)")
    p.add_argument("--deadline", type=float, default=math.inf,
                   help="seconds for the whole bench (default: none)")
    p.add_argument("--full-estimate", type=float, default=0.0,
                   help="seconds a workload needs at least; it starts only when they fit")
    p.add_argument("--strategies", default=",".join(BUDGETED),
                   help="budgeted strategies (the full sweep runs too, unless --reference-from)")
    p.add_argument("--reference-from", type=Path, metavar="PATH",
                   help="an earlier search bench JSON: its grid runs are the reference, the "
                   "grid is not re-run")
    p.add_argument("--note", default="", help="written into the report")
    p.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    p.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--part", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--deadline-at", type=float, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.strategies = [s for s in args.strategies.split(",") if s]
    bad = [s for s in args.strategies if s not in BUDGETED]
    if bad:
        fail(f"unknown strategy {bad[0]!r}: choose from {', '.join(BUDGETED)}")
    if args.jobs < 1 or args.gpus < 1 or args.timeout <= 0 or args.paired_timeout <= 0:
        fail("--jobs and --gpus must be at least 1, --timeout and --paired-timeout above 0")
    if args.gpus > 1 and not args.device.startswith("cuda"):
        fail("--gpus N needs --device cuda: one workload per GPU")
    if args.budget is not None and args.budget <= 0 or not 0 < args.budget_share <= 1:
        fail("--budget must be above 0 seconds and --budget-share in (0, 1]")
    args.grace = args.timeout if args.grace is None else args.grace
    args.intent_size = args.intent_size or ("tiny" if args.tiny else "full")
    args.workloads = (args.workloads or ("intent" if args.tiny else "reranker,intent")).split(",")
    for name in args.workloads:
        if name != "intent" and not (REPO / "workloads" / f"{name}.py").is_file() and not (
                Path(name).is_file()):
            fail(f"no workload {name!r}: give intent, a name in workloads/ or a .py file")
    if args.tiny:
        args.modes = args.modes or "eager,default"
        args.dtypes = args.dtypes or "fp32,bf16"
    if not args.deadline > 0:
        fail("--deadline must be a positive number of seconds")
    args.reference = None if args.reference_from is None else load_reference(
        args.reference_from, [stem_of(n, args.intent_size) for n in args.workloads], args)
    return args


if __name__ == "__main__":
    main()
