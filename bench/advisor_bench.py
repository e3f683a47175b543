"""Time to a right recommendation: the advisor against an exhaustive grid, in the same run.

    python bench/advisor_bench.py --workload workloads/reranker.py --device cuda \\
        --shape batch=50,seq=128 \\
        --modes eager,default,reduce-overhead,max-autotune-no-cudagraphs,max-autotune \\
        --dtypes fp32,tf32,bf16,fp16 --out bench/results \\
        [--sweep-args "--screen 0"] [--skip-grid-modes max-autotune] \\
        [--order grid-first|advisor-first] [--child-timeout 900]

    # a grid longer than one sitting: its parts, each its own run (on GPUs of one kind and
    # stack, each part alone on its GPU), then the advisor against the parts put together
    python bench/advisor_bench.py ... --grid-part 1/2     # writes ..._grid1of2_<UTC>.json
    python bench/advisor_bench.py ... --grid-part 2/2
    python bench/advisor_bench.py ... \\
        --grid-from OUT/..._grid1of2_<UTC>.json,OUT/..._grid2of2_<UTC>.json

Method.

1. Startup overhead: a child that only imports torch, loads the workload and builds the model
   in fp32 (``--startup-child``), run 3 times (``--startup-runs``); the median of its wall time
   is what every fresh process pays before it compiles anything.
2. The exhaustive grid, the way the kernel-fusion article's ``benchmark_fusion.py`` measures:
   every config of the space (each mode x each dtype, eager once per dtype, and the eager fp32
   baseline; the same space `advisor.search.space.build_space` gives the advisor) in its own fresh
   process (this file with ``--grid-child``, run with ``sys.executable``), one after another,
   each with its own empty TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR so its compile is cold.
   The child seeds torch (``manual_seed(0)`` before every build and inputs call), computes the
   fp32 eager output (``set_float32_matmul_precision("highest")``), builds the model in the
   config's dtype (tf32: fp32 with ``set_float32_matmul_precision("high")``), casts floating
   inputs to it, runs ``torch.compile(model, **CompileConfig.compile_kwargs())`` (eager: the
   model itself), times the first call to a synchronized result (the cold start), checks it
   against the fp32 eager output (max abs error; correct when every element is within the
   workload's ``tolerance(dtype)``, ``atol + rtol x |reference|``, via
   `advisor.child.trial.compare`;
   passed when also the workload's quality check passes), then times it with
   `trial_vs_plain.plain_median_ms`: 25 warm-up calls, synchronize, 100 samples each between
   two fresh CUDA events (``perf_counter`` on CPU), median; CUDA-graph modes call
   ``torch.compiler.cudagraph_mark_step_begin()`` before every call. Calls run under
   ``torch.inference_mode()`` when the workload is an inference workload. The parent times each
   child's wall and the grid's total wall. A child that fails (compile error, crash, past
   ``--child-timeout``: its process group is killed) is a row with a one-line error; the grid
   goes on. ``--skip-grid-modes`` leaves modes out of the grid (their rows say skipped).
3. The advisor with its defaults: ``python -m advisor sweep WORKLOAD --device D --shape S
   --modes M --dtypes T --db sqlite:///<tmp>/bench.db --json`` plus ``--sweep-args``, timed by
   wall clock; its JSON gives the recommendation and every trial record.

Grid then advisor by default (``--order advisor-first`` flips it). ``--grid-part K/N`` runs only
every N-th config of the grid from the K-th on (the parts balance the modes' costs) and writes
that part alone; ``--grid-from`` skips the grid and puts the parts together instead: they must
cover the space exactly once, with one device name, driver and software stack; the grid's wall
is the sum of the parts' walls (what one GPU running them one after another takes). Both measure
the same shape:
``--shape``, else on a CPU the workload's smallest traffic shape (the advisor's CPU default),
else the workload's default shape; it is passed to the advisor explicitly.

Reported (``OUT/advisor_bench_<device>_<workload>_<UTC>.json`` and ``.md``): both walls and their
ratio, the grid's configs, the advisor's trials (screened out, failed), the grid's best passed
config and median, the advisor's pick with its median in its own records and in the grid, the
regret (grid median of the pick / best grid median - 1; None with a reason when the pick has no
passing grid row), whether the sweep decided on a confirmation's paired figures (its leader and
contenders re-measured side by side), the startup overhead, and a per-config table of both sides;
bench/paired_regret.py adds the pick and the grid's best re-measured side by side. Nothing is
asserted. Bad arguments: one line on stderr, exit 2, nothing written.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from advisor.config import CompileConfig, parse_shape, shape_name  # noqa: E402
from advisor.errors import AdvisorError, ConfigError  # noqa: E402
from bench.common import dated, repo_env, utc_stamp  # noqa: E402

STARTUP_RUNS = 3
ORDERS = ("grid-first", "advisor-first")
# Flags this script sets itself on `advisor sweep`; --shapes/--traffic would replay the traffic
# instead of measuring the grid's one static shape.
RESERVED_SWEEP_FLAGS = ("--db", "--json", "--device", "--shape", "--modes", "--dtypes",
                        "--shapes", "--traffic")


# --- children (run in fresh processes) --------------------------------------------------------


def _one_line(exc: BaseException) -> str:
    """`Type: first line of the message` (plus the next line when the first only introduces it,
    as in Dynamo's ``backend='inductor' raised:``)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = " ".join(lines[:2]) if len(lines) > 1 and lines[0].endswith(":") else "".join(
        lines[:1])
    return f"{type(exc).__name__}: {text}"[:300]


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _call(fn: Any, args: Any) -> Any:
    return fn(**args) if isinstance(args, dict) else fn(*args)


class GridChild:
    """One config in this fresh process: cold first call, correctness, plain median."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.stage = "import"

    def run(self) -> dict[str, Any]:
        import torch

        from advisor.child.prepare import cast_inputs, torch_dtype
        from advisor.child.tensors import to_cpu_fp32
        from advisor.child.trial import compare
        from advisor.workload import load_workload
        from bench.trial_vs_plain import plain_median_ms

        spec, device = self.spec, self.spec["device"]
        config = CompileConfig.from_dict(spec["config"])
        self.stage = "load"
        wl = load_workload(spec["workload"]).workload
        if ":" in device:
            torch.cuda.set_device(torch.device(device))
        grad = torch.inference_mode if wl.inference else contextlib.nullcontext
        self.stage = "reference"
        torch.set_float32_matmul_precision("highest")
        with grad():
            reference = to_cpu_fp32(_call(self._build(wl, torch.float32), self._inputs(wl)))
        if device.startswith("cuda"):
            torch.cuda.empty_cache()
        self.stage = "build"
        if config.dtype == "tf32":
            torch.set_float32_matmul_precision("high")
            torch.backends.cudnn.allow_tf32 = True
        dtype = torch_dtype(config.dtype)
        model = self._build(wl, dtype)
        args = cast_inputs(self._inputs(wl), config)
        with grad():
            self.stage = "compile"
            t0 = time.perf_counter()
            fn = torch.compile(model, **config.compile_kwargs()) if config.compiled else model
            if config.uses_cudagraphs:
                torch.compiler.cudagraph_mark_step_begin()
            out = to_cpu_fp32(_call(fn, args))
            _sync(device)
            cold_s = time.perf_counter() - t0
            self.stage = "accuracy"
            result = {"cold_s": cold_s, **self._check(wl, config.dtype, reference, out, compare)}
            self.stage = "measure"
            result["median_ms"] = plain_median_ms(fn, args, device, config.uses_cudagraphs)
        return {"status": "ok", **result, **_stack(device)}

    def _build(self, wl: Any, dtype: Any) -> Any:
        import torch

        torch.manual_seed(0)
        return wl.build(self.spec["device"], dtype)

    def _inputs(self, wl: Any) -> Any:
        import torch

        torch.manual_seed(0)
        return wl.inputs(dict(self.spec["dims"]), self.spec["device"])

    def _check(self, wl: Any, dtype: str, reference: Any, out: Any, compare: Any) -> dict:
        atol, rtol = wl.tolerance(dtype)
        check = compare(reference, out, atol, rtol)
        passed = check["correct"]
        if wl.quality is not None:
            passed = passed and wl.quality.passes(float(wl.quality.fn(reference, out)))
        return {"max_abs_err": check["max_abs_err"], "atol": atol, "rtol": rtol,
                "correct": check["correct"], "passed": passed}


def _stack(device: str) -> dict[str, Any]:
    """Device and software identity, collected after everything timed."""
    from advisor import fingerprint

    fp = fingerprint.collect(device)
    return {k: fp.get(k) for k in ("device_name", "torch_version", "triton_version",
                                   "driver_version", "cuda_runtime_version")}


def startup_child(spec: dict[str, Any]) -> dict[str, Any]:
    """Import torch, load the workload, build the model: what any fresh process pays."""
    t0 = time.perf_counter()
    import torch

    from advisor.workload import load_workload

    import_s = time.perf_counter() - t0
    wl = load_workload(spec["workload"]).workload
    torch.manual_seed(0)
    wl.build(spec["device"], torch.float32)
    _sync(spec["device"])
    return {"status": "ok", "import_s": import_s, "to_built_s": time.perf_counter() - t0}


def child_main(spec_text: str, kind: str) -> int:
    spec = json.loads(spec_text)
    runner = GridChild(spec) if kind == "grid" else None
    try:
        result = runner.run() if runner is not None else startup_child(spec)
    except Exception as exc:  # noqa: BLE001 - every failure becomes a row with its reason
        import traceback

        traceback.print_exc()
        stage = runner.stage if runner is not None else "startup"
        result = {"status": "failed", "stage": stage, "error": f"{stage}: {_one_line(exc)}"}
    Path(spec["result"]).write_text(json.dumps(result))
    return 0 if result["status"] == "ok" else 1


# --- the parent --------------------------------------------------------------------------------


@dataclass
class Plan:
    workload_path: Path
    workload_name: str
    device: str
    dims: dict[str, int]
    modes: list[str] | None
    dtypes: list[str] | None
    configs: list[CompileConfig]
    skip_grid_modes: list[str]
    sweep_args: list[str]
    order: str
    child_timeout_s: float
    out: Path
    keep_db: Path | None = None
    grid_part: tuple[int, int] | None = None  # (K, N): only the K-th of N parts of the grid
    grid_from: list[Path] | None = None  # parts run earlier, instead of the grid
    startup_runs: int = STARTUP_RUNS
    stamp: str = field(default_factory=utc_stamp)  # this run's files: <stem>_<stamp>.<ext>


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        fail(message)


def fail(message: str) -> None:
    print(f"advisor_bench: {message}", file=sys.stderr, flush=True)
    sys.exit(2)


def say(text: str) -> None:
    print(text, flush=True)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = _Parser(description=__doc__.splitlines()[0])
    p.add_argument("--workload", type=Path, help="workload file (.py)")
    p.add_argument("--device", help="cuda, cuda:N or cpu (default: cuda when present)")
    p.add_argument("--shape", help="e.g. batch=50,seq=128 (default: as the advisor on CPU, "
                   "else the workload's default shape)")
    p.add_argument("--modes", help="comma-separated modes (default: the advisor's)")
    p.add_argument("--dtypes", help="comma-separated dtypes (default: the advisor's)")
    p.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    p.add_argument("--sweep-args", default="", help="more arguments for `advisor sweep`")
    p.add_argument("--keep-db", type=Path, help="the advisor's results database (SQLite "
                   "file; default: a temporary one), kept for a later `advisor recommend`")
    p.add_argument("--skip-grid-modes", default="", help="modes left out of the grid")
    p.add_argument("--order", choices=ORDERS, default="grid-first")
    p.add_argument("--child-timeout", type=float, default=900.0,
                   help="seconds before a grid child is killed")
    p.add_argument("--grid-part", help="K/N: run only the K-th of N parts of the grid, write it "
                   "and stop (no advisor)")
    p.add_argument("--grid-from", help="comma-separated grid parts written by --grid-part: "
                   "the grid, put together, instead of running it")
    p.add_argument("--startup-runs", type=int, default=STARTUP_RUNS,
                   help=f"startup-overhead children to time (default {STARTUP_RUNS})")
    p.add_argument("--grid-child", help=argparse.SUPPRESS)
    p.add_argument("--startup-child", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def make_plan(args: argparse.Namespace) -> Plan:
    """Every argument checked before anything runs or is written."""
    from advisor.config import MODES
    from advisor.devices import resolve_device
    from advisor.search.space import build_space, parse_list
    from advisor.workload import load_workload

    if args.workload is None:
        raise ConfigError("--workload is required: the path of a workload .py file")
    if args.startup_runs < 1:
        raise ConfigError("--startup-runs must be at least 1")
    if not args.child_timeout > 0:
        raise ConfigError("--child-timeout must be more than zero seconds")
    if args.out.exists() and not args.out.is_dir():
        raise ConfigError(f"--out {args.out} is a file; give a directory")
    try:
        sweep_args = shlex.split(args.sweep_args)
    except ValueError as e:
        raise ConfigError(f"--sweep-args cannot be split like a shell line: {e}") from None
    reserved = [a for a in sweep_args if a.split("=")[0] in RESERVED_SWEEP_FLAGS]
    if reserved:
        raise ConfigError(f"--sweep-args may not set {reserved[0].split('=')[0]}: this script "
                          "sets it (use its own option)")
    skip = parse_list(args.skip_grid_modes) if args.skip_grid_modes else []
    unknown = [m for m in skip if m not in MODES]
    if unknown:
        raise ConfigError(f"--skip-grid-modes: unknown mode {unknown[0]!r}; choose from "
                          f"{', '.join(MODES)}")
    if args.grid_part and args.grid_from:
        raise ConfigError("--grid-part runs a part of the grid and --grid-from reads parts: "
                          "give one of them")
    grid_part = _part(args.grid_part) if args.grid_part else None
    grid_from = [Path(f) for f in args.grid_from.split(",") if f] if args.grid_from else None
    for f in grid_from or []:
        if not f.is_file():
            raise ConfigError(f"--grid-from: no file {f}; write it with --grid-part")
    device = resolve_device(args.device)
    loaded = load_workload(args.workload)
    wl = loaded.workload
    modes, dtypes = parse_list(args.modes), parse_list(args.dtypes)
    space = build_space(wl.dtypes, device, {"mode": modes, "dtype": dtypes})
    return Plan(
        workload_path=loaded.path.resolve(), workload_name=wl.name, device=device,
        dims=_dims(args.shape, wl, device), modes=modes, dtypes=dtypes,
        configs=list(space.configs), skip_grid_modes=skip, sweep_args=sweep_args,
        order=args.order, child_timeout_s=args.child_timeout, out=args.out,
        keep_db=args.keep_db.resolve() if args.keep_db else None,
        grid_part=grid_part, grid_from=grid_from, startup_runs=args.startup_runs,
    )


def _part(text: str) -> tuple[int, int]:
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise ConfigError(f"--grid-part {text!r}: write it as K/N, e.g. 1/2") from None
    if not 1 <= k <= n:
        raise ConfigError(f"--grid-part {text!r}: K must be between 1 and N")
    return k, n


def _dims(shape: str | None, wl: Any, device: str) -> dict[str, int]:
    """The one shape both sides measure: as `advisor sweep` picks it when none is given."""
    if shape is None:
        if device == "cpu":
            return dict(min((s for s, _ in wl.traffic), key=lambda s: _numel(s)))
        return wl.shape
    dims = parse_shape(shape)
    if set(dims) != set(wl.shape):
        raise ConfigError(f"--shape dims {', '.join(dims)} do not match the workload's dims "
                          f"{', '.join(wl.shape)}; e.g. --shape {shape_name(wl.shape)}")
    return dims


def _numel(dims: dict[str, int]) -> int:
    n = 1
    for v in dims.values():
        n *= v
    return n


def run_child(kind: str, spec: dict[str, Any], tmp: Path, timeout_s: float) -> dict[str, Any]:
    """This file as a fresh child with empty Inductor/Triton caches; its result and wall."""
    work = Path(tempfile.mkdtemp(prefix=f"{kind}-", dir=tmp))
    result_path = work / "result.json"
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(work / "inductor"),
               TRITON_CACHE_DIR=str(work / "triton"), PYTHONUNBUFFERED="1")
    env.pop("TORCHINDUCTOR_FORCE_DISABLE_CACHES", None)
    cmd = [sys.executable, str(Path(__file__).resolve()), f"--{kind}-child",
           json.dumps({**spec, "result": str(result_path)})]
    timed_out = False
    t0 = time.perf_counter()
    with open(work / "output.txt", "wb") as output:
        proc = subprocess.Popen(cmd, stdout=output, stderr=output, env=env,
                                start_new_session=True)
        try:
            code = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc.pid)
            code = proc.wait()
        _kill_group(proc.pid)  # compile workers die with the child
    wall_s = time.perf_counter() - t0
    if result_path.exists():
        result = json.loads(result_path.read_text())
    else:
        result = {"status": "failed", "error": _crash_line(work / "output.txt", code, timed_out,
                                                           timeout_s)}
    shutil.rmtree(work, ignore_errors=True)
    return {**result, "wall_s": wall_s}


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _crash_line(output: Path, code: int, timed_out: bool, timeout_s: float) -> str:
    if timed_out:
        return f"timeout: killed after {timeout_s:g} s (--child-timeout)"
    lines = [x.strip() for x in output.read_text(errors="replace").splitlines() if x.strip()]
    last = lines[-1][:300] if lines else "no output"
    if code < 0:
        return f"crash: killed by signal {-code}; last output: {last}"
    return f"crash: exit code {code} without a result; last output: {last}"


def measure_startup(plan: Plan, tmp: Path) -> dict[str, Any]:
    runs: list[dict[str, Any]] = []
    spec = {"workload": str(plan.workload_path), "device": plan.device}
    for i in range(plan.startup_runs):
        r = run_child("startup", spec, tmp, plan.child_timeout_s)
        if r["status"] != "ok":
            say(f"startup {i + 1}/{plan.startup_runs}: failed: {r['error']}")
            return {"runs": runs, "median_s": None, "error": r["error"]}
        runs.append(r)
        say(f"startup {i + 1}/{plan.startup_runs}: {r['wall_s']:.2f} s wall (import torch "
            f"{r['import_s']:.2f} s, to a built model {r['to_built_s']:.2f} s)")
    return {
        "runs_wall_s": [r["wall_s"] for r in runs],
        "median_s": statistics.median(r["wall_s"] for r in runs),
        "median_import_torch_s": statistics.median(r["import_s"] for r in runs),
        "median_to_built_s": statistics.median(r["to_built_s"] for r in runs),
    }


def grid_configs(plan: Plan) -> list[CompileConfig]:
    """The configs this run's grid measures: all, or every N-th from the K-th (a part)."""
    if plan.grid_part is None:
        return plan.configs
    k, n = plan.grid_part
    return plan.configs[k - 1::n]


def run_grid(plan: Plan, tmp: Path) -> dict[str, Any]:
    rows = []
    configs = grid_configs(plan)
    n = len(configs)
    started = datetime.now().astimezone().isoformat(timespec="seconds")
    t0 = time.perf_counter()
    for i, config in enumerate(configs, 1):
        row: dict[str, Any] = {"key": config.key, "label": config.label,
                               "config": config.to_dict()}
        if config.mode in plan.skip_grid_modes:
            rows.append({**row, "status": "skipped"})
            say(f"grid {i}/{n} {config.label}: skipped (--skip-grid-modes)")
            continue
        spec = {"workload": str(plan.workload_path), "device": plan.device,
                "dims": plan.dims, "config": config.to_dict()}
        rows.append({**row, **run_child("grid", spec, tmp, plan.child_timeout_s)})
        say(f"grid {i}/{n} {config.label}: {_grid_line(rows[-1])}")
        if plan.grid_part is not None and i < n:  # so far: stopped midway, a part keeps these
            write_grid_part(plan, {"started": started, "rows": rows,
                                   "wall_s": time.perf_counter() - t0})
    wall_s = time.perf_counter() - t0
    best = _best(rows)
    ran = [r for r in rows if r["status"] != "skipped"]
    say(f"grid: {len(ran)} configs in {wall_s:.1f} s; best "
        + (f"{best['label']} {best['median_ms']:.4f} ms" if best else "none (no config passed)"))
    return {"wall_s": wall_s, "rows": rows, "best": best, "started": started}


def _best(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The grid row with the lowest median among those that ran and passed."""
    passing = [r for r in rows if r["status"] == "ok" and r["passed"]]
    return min(passing, key=lambda r: r["median_ms"]) if passing else None


STACK_KEYS = ("device_name", "driver_version", "torch_version", "triton_version",
              "cuda_runtime_version")


def grid_from_parts(plan: Plan) -> dict[str, Any]:
    """The grid put together from its parts (see --grid-part): every config exactly once, one
    device and stack; the wall is the sum of the parts' walls."""
    parts = []
    for f in plan.grid_from or []:
        try:
            parts.append(json.loads(f.read_text()))
        except ValueError:
            raise ConfigError(f"--grid-from: {f} is not JSON; write it with --grid-part") from None
    by_key: dict[str, dict[str, Any]] = {}
    for f, part in zip(plan.grid_from or [], parts, strict=True):
        if part.get("kind") != "grid-part" or part.get("workload") != plan.workload_name or (
                part.get("shape") != shape_name(plan.dims)):
            raise ConfigError(f"--grid-from: {f} is not a grid part of {plan.workload_name} at "
                              f"{shape_name(plan.dims)}")
        for row in part["rows"]:
            if row["key"] in by_key:
                raise ConfigError(f"--grid-from: {row['label']} is in two parts")
            by_key[row["key"]] = row
    missing = [c.label for c in plan.configs if c.key not in by_key]
    if missing or len(by_key) != len(plan.configs):
        raise ConfigError(f"--grid-from: the parts do not cover the space (missing: "
                          f"{', '.join(missing) or 'none'}; {len(by_key)} configs in the parts)")
    stacks = {tuple(r.get(k) for k in STACK_KEYS) for r in by_key.values() if r["status"] == "ok"}
    if len(stacks) > 1:
        raise ConfigError(f"--grid-from: the parts ran on different devices or stacks: {stacks}")
    rows = [by_key[c.key] for c in plan.configs]
    return {"wall_s": sum(p["wall_s"] for p in parts), "rows": rows, "best": _best(rows),
            "parts": [{"file": str(f), "part": p["part"], "wall_s": p["wall_s"],
                       "started": p.get("started"), "configs": len(p["rows"])}
                      for f, p in zip(plan.grid_from or [], parts, strict=True)]}


def write_grid_part(plan: Plan, grid: dict[str, Any]) -> Path:
    assert plan.grid_part is not None
    k, n = plan.grid_part
    plan.out.mkdir(parents=True, exist_ok=True)
    stem = f"advisor_bench_{plan.device.replace(':', '')}_{plan.workload_name}_grid{k}of{n}"
    path = dated(plan.out, stem, plan.stamp, "json")
    path.write_text(json.dumps({
        "kind": "grid-part", "part": [k, n], "workload": plan.workload_name,
        "shape": shape_name(plan.dims), "device": plan.device, "started": grid["started"],
        "wall_s": grid["wall_s"], "rows": grid["rows"]}, indent=2, default=str) + "\n")
    return path


def _grid_line(r: dict[str, Any]) -> str:
    if r["status"] != "ok":
        return f"FAILED ({r['wall_s']:.1f} s): {r['error']}"
    verdict = "correct" if r["correct"] else "WRONG"
    if r["correct"] and not r["passed"]:
        verdict = "correct, quality FAILED"
    return (f"median {r['median_ms']:.4f} ms, cold {r['cold_s']:.2f} s, child wall "
            f"{r['wall_s']:.1f} s, max err {r['max_abs_err']:.1e} ({verdict})")


def run_advisor(plan: Plan, tmp: Path) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "advisor", "sweep", str(plan.workload_path),
           "--device", plan.device, "--shape", shape_name(plan.dims),
           "--db", f"sqlite:///{plan.keep_db or tmp / 'bench.db'}", "--json"]
    if plan.modes:
        cmd += ["--modes", ",".join(plan.modes)]
    if plan.dtypes:
        cmd += ["--dtypes", ",".join(plan.dtypes)]
    cmd += plan.sweep_args
    say(f"advisor: {shlex.join(cmd)}")
    env = repo_env()
    tail: deque[str] = deque(maxlen=5)
    stdout_path = tmp / "advisor-stdout.json"
    t0 = time.perf_counter()
    with open(stdout_path, "wb") as stdout:
        proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, text=True, env=env,
                                cwd=tmp)
        assert proc.stderr is not None
        for line in proc.stderr:
            if line.strip():
                tail.append(line.strip())
                say(f"  advisor| {line.rstrip()}")
        code = proc.wait()
    wall_s = time.perf_counter() - t0
    try:
        doc = json.loads(stdout_path.read_text())
    except ValueError:
        error = tail[-1] if tail else "no output"
        say(f"advisor: exit code {code} without JSON after {wall_s:.1f} s: {error}")
        return {"wall_s": wall_s, "exit_code": code, "error": error, "trials": [],
                "recommendation": None}
    return {"wall_s": wall_s, "exit_code": code, "error": None, "status": doc.get("status"),
            "trials": doc.get("trials") or [], "recommendation": doc.get("recommendation"),
            "fingerprint": doc.get("fingerprint") or {}}


# --- the report --------------------------------------------------------------------------------


def _key(config: dict[str, Any]) -> str:
    return CompileConfig.from_dict(config).key


def _trial_wall_s(t: dict[str, Any]) -> float | None:
    try:
        start = datetime.fromisoformat(str(t["started_at"]))
        end = datetime.fromisoformat(str(t["finished_at"]))
    except (KeyError, TypeError, ValueError):
        return None
    return (end - start).total_seconds()


def config_rows(grid: dict[str, Any], advisor: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per config of either side: grid order first, then configs only the advisor ran."""
    trials = {_key(t["config"]): t for t in advisor["trials"]}
    rows = []
    seen = set()
    for g in grid["rows"]:
        seen.add(g["key"])
        rows.append(_row(g["label"], g, trials.get(g["key"])))
    for key, t in trials.items():
        if key not in seen:
            rows.append(_row(CompileConfig.from_dict(t["config"]).label, None, t))
    return rows


def _row(label: str, g: dict[str, Any] | None, t: dict[str, Any] | None) -> dict[str, Any]:
    row: dict[str, Any] = {"config": label}
    if g is None:
        row.update(grid_status="not in grid")
    else:
        row.update(grid_status=g["status"], grid_median_ms=g.get("median_ms"),
                   grid_cold_s=g.get("cold_s"), grid_child_wall_s=g.get("wall_s"),
                   grid_correct=g.get("correct"), grid_passed=g.get("passed"),
                   grid_max_abs_err=g.get("max_abs_err"), grid_error=g.get("error"))
    if t is None:
        row.update(advisor_status="not run")
    else:
        row.update(advisor_status=t.get("status"), advisor_median_ms=t.get("median_ms"),
                   advisor_cold_s=t.get("cold_compile_s"), advisor_trial_wall_s=_trial_wall_s(t),
                   advisor_passed=t.get("passed"), screened=bool(t.get("screened_out")),
                   advisor_error=t.get("failure_reason"))
    return row


def verdict(grid: dict[str, Any], advisor: dict[str, Any]) -> dict[str, Any]:
    """The advisor's pick, its medians on both sides, and the regret against the grid's best."""
    best = (advisor.get("recommendation") or {}).get("best")
    if best is None:
        return {"pick": None, "regret": None, "regret_note": "the advisor recommended nothing"}
    key = _key(best["config"])
    own = next((t for t in advisor["trials"] if _key(t["config"]) == key
                and t.get("status") == "ok"), None)
    g = next((r for r in grid["rows"] if r["key"] == key), None)
    pick = {"config": best["config"], "label": CompileConfig.from_dict(best["config"]).label,
            "advisor_median_ms": own["median_ms"] if own else best.get("median_ms"),
            "grid_median_ms": g.get("median_ms") if g else None,
            "grid_passed": g.get("passed") if g else None}
    out: dict[str, Any] = {"pick": pick, "regret": None, "regret_note": None}
    gbest = grid["best"]
    if gbest is None:
        out["regret_note"] = "no grid config ran and passed"
    elif g is None or g["status"] == "skipped":
        out["regret_note"] = "the advisor's pick was not run in the grid"
    elif g["status"] != "ok":
        out["regret_note"] = f"the advisor's pick failed in the grid: {g['error']}"
    elif not g["passed"]:
        out["regret_note"] = "the advisor's pick did not pass the grid's correctness check"
    else:
        out["regret"] = g["median_ms"] / gbest["median_ms"] - 1
        out["pick_is_grid_best"] = key == gbest["key"]
    return out


def build_report(plan: Plan, startup: dict[str, Any], grid: dict[str, Any],
                 advisor: dict[str, Any]) -> dict[str, Any]:
    stack = next((r for r in grid["rows"] if r["status"] == "ok"), None) or advisor.get(
        "fingerprint") or {}
    trials = advisor["trials"]
    ran = [r for r in grid["rows"] if r["status"] != "skipped"]
    gbest = grid["best"]
    walls = [w for w in map(_trial_wall_s, trials) if w is not None]
    return {
        "workload": plan.workload_name, "workload_path": str(plan.workload_path),
        "device": plan.device, "device_name": stack.get("device_name"),
        "torch_version": stack.get("torch_version"),
        "triton_version": stack.get("triton_version"), "shape": shape_name(plan.dims),
        "modes": plan.modes, "dtypes": plan.dtypes, "order": plan.order,
        "sweep_args": plan.sweep_args, "skip_grid_modes": plan.skip_grid_modes,
        "child_timeout_s": plan.child_timeout_s,
        "method": {"grid": "one fresh process per config, empty Inductor/Triton caches; cold = "
                   "torch.compile to the first synchronized result; median of 100 samples "
                   "after 25 warm-ups (trial_vs_plain.plain_median_ms)",
                   "timer": "cuda_events" if plan.device.startswith("cuda") else "perf_counter",
                   "advisor": "python -m advisor sweep (defaults), wall clock"},
        "startup": startup,
        "grid_wall_s": grid["wall_s"], "advisor_wall_s": advisor["wall_s"],
        "grid_parts": grid.get("parts"),
        "ratio_advisor_to_grid": advisor["wall_s"] / grid["wall_s"] if grid["wall_s"] else None,
        "grid_configs": len(plan.configs), "grid_ran": len(ran),
        "grid_failed": sum(r["status"] == "failed" for r in ran),
        "grid_skipped": len(plan.configs) - len(ran),
        "grid_best": None if gbest is None else {
            "config": gbest["config"], "label": gbest["label"], "median_ms": gbest["median_ms"]},
        "advisor_exit_code": advisor["exit_code"], "advisor_error": advisor["error"],
        "advisor_sweep_status": advisor.get("status"),
        "advisor_trials": len(trials),
        "advisor_screened_out": sum(bool(t.get("screened_out")) for t in trials),
        "advisor_failed": sum(t.get("status") != "ok" for t in trials),
        "advisor_trials_wall_s": sum(walls) if walls else None,
        "advisor_sentence": (advisor.get("recommendation") or {}).get("sentence"),
        "advisor_note": (advisor.get("recommendation") or {}).get("note"),
        "advisor_confirmation": (advisor.get("recommendation") or {}).get("confirmation"),
        **verdict(grid, advisor),
        "configs": config_rows(grid, advisor),
        "grid_rows": grid["rows"],
    }


def _f(value: Any, spec: str = ".4f") -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return format(value, spec) if isinstance(value, (int, float)) else str(value)


def _correct(c: dict[str, Any]) -> str:
    if c.get("grid_correct") and not c.get("grid_passed"):
        return "yes (quality failed)"
    return _f(c.get("grid_correct"))


def _confirmed(c: dict[str, Any] | None) -> str:
    if not c or not c.get("used"):
        return "no"
    return f"yes: {', '.join(c.get('configs') or [])} over {c.get('rounds')} rounds"


def _paired_lines(p: dict[str, Any] | None) -> list[str]:
    """The rows bench/paired_regret.py adds: the pick and the grid's best side by side."""
    if not p:
        return []
    if p.get("status") != "ok":
        value = "0.0%" if p.get("regret") == 0 else "-"
        return [f"| regret, paired re-measure | {value} ({p.get('note') or p.get('error')}) |"]
    low, high = p["regret_ci"]
    medians = ", ".join(f"{label} {ms:.4f} ms" for label, ms in p["medians_ms"].items())
    return [f"| regret, paired re-measure (pick {p['pick']} and grid best {p['grid_best']} "
            f"interleaved in one process, {p['rounds']} rounds) | {p['regret'] * 100:+.1f}% "
            f"(95% CI {low * 100:+.1f}% .. {high * 100:+.1f}%) |",
            f"| medians in that process | {medians} |"]


def markdown(r: dict[str, Any]) -> str:
    pick = r["pick"] or {}
    best = r["grid_best"] or {}
    regret = "-" if r["regret"] is None else f"{r['regret'] * 100:.1f}%"
    startup = r["startup"].get("median_s")
    lines = [
        f"# advisor vs exhaustive grid: {r['workload']} on {r['device_name']} ({r['device']})",
        "",
        f"torch {r['torch_version']}, triton {r['triton_version']}, shape {r['shape']}, "
        f"order {r['order']}, sweep args `{shlex.join(r['sweep_args']) or '(none)'}`, "
        f"grid timer {r['method']['timer']}.",
        "",
        "| figure | value |", "|---|---|",
        f"| grid wall s | {_f(r['grid_wall_s'], '.1f')} |",
        *(["| grid parts (one after another: the sum) | " + ", ".join(
            f"{p['part'][0]}/{p['part'][1]}: {p['wall_s']:.1f} s ({p['configs']} configs)"
            for p in r["grid_parts"]) + " |"] if r.get("grid_parts") else []),
        f"| advisor wall s | {_f(r['advisor_wall_s'], '.1f')} |",
        f"| ratio advisor / grid | {_f(r['ratio_advisor_to_grid'], '.3f')} |",
        f"| configs in the grid (ran, failed, skipped) | {r['grid_configs']} ({r['grid_ran']}, "
        f"{r['grid_failed']}, {r['grid_skipped']}) |",
        f"| advisor trials (screened out, failed) | {r['advisor_trials']} "
        f"({r['advisor_screened_out']}, {r['advisor_failed']}) |",
        f"| grid best | {best.get('label', '-')}: {_f(best.get('median_ms'))} ms |",
        f"| advisor pick | {pick.get('label', '-')} |",
        f"| decided on paired figures (leaders re-measured side by side) | "
        f"{_confirmed(r.get('advisor_confirmation'))} |",
        f"| pick median, advisor's records | {_f(pick.get('advisor_median_ms'))} ms |",
        f"| pick median, grid | {_f(pick.get('grid_median_ms'))} ms |",
        f"| regret | {regret}{' (' + r['regret_note'] + ')' if r['regret_note'] else ''} |",
        *_paired_lines(r.get("paired")),
        f"| process startup (import torch + load + build), median of "
        f"{len(r['startup'].get('runs_wall_s') or []) or STARTUP_RUNS} | "
        f"{_f(startup, '.2f')} s |",
        "", "| config | grid median ms | grid cold s | grid child wall s | grid correct "
        "| advisor median ms | advisor cold s | advisor trial wall s | screened |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in r["configs"]:
        grid_median = _f(c.get("grid_median_ms")) if c["grid_status"] == "ok" else c.get(
            "grid_error") or c["grid_status"]
        own_median = _f(c.get("advisor_median_ms")) if c["advisor_status"] == "ok" else c.get(
            "advisor_error") or c["advisor_status"]
        lines.append(
            f"| {c['config']} | {grid_median} | {_f(c.get('grid_cold_s'), '.2f')} | "
            f"{_f(c.get('grid_child_wall_s'), '.1f')} | {_correct(c)} | "
            f"{own_median} | {_f(c.get('advisor_cold_s'), '.2f')} | "
            f"{_f(c.get('advisor_trial_wall_s'), '.1f')} | {_f(c.get('screened'))} |")
    return "\n".join(lines) + "\n"


def write_report(report: dict[str, Any], out: Path, stamp: str) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    stem = f"advisor_bench_{report['device'].replace(':', '')}_{report['workload']}"
    path = dated(out, stem, stamp, "json")
    path.write_text(json.dumps(report, indent=2, default=str) + "\n")
    path.with_suffix(".md").write_text(markdown(report))
    return path


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.grid_child or args.startup_child:
        sys.exit(child_main(args.grid_child or args.startup_child,
                            "grid" if args.grid_child else "startup"))
    try:
        plan = make_plan(args)
        parts = grid_from_parts(plan) if plan.grid_from else None
    except AdvisorError as e:
        fail(str(e).splitlines()[0])
    say(f"{plan.workload_name} on {plan.device}, shape {shape_name(plan.dims)}: "
        f"{len(plan.configs)} configs in the space; {plan.order}")
    with tempfile.TemporaryDirectory(prefix="advisor-bench-") as name:
        tmp = Path(name)
        if plan.grid_part is not None:
            part = write_grid_part(plan, run_grid(plan, tmp))
            say(f"wrote {part}")
            return
        startup = measure_startup(plan, tmp)
        steps = {"grid": run_grid, "advisor": run_advisor}
        if parts is not None:
            steps["grid"] = lambda plan, tmp: parts
        order = ["grid", "advisor"] if plan.order == "grid-first" else ["advisor", "grid"]
        done = {step: steps[step](plan, tmp) for step in order}
    report = build_report(plan, startup, done["grid"], done["advisor"])
    path = write_report(report, plan.out, plan.stamp)
    regret = "-" if report["regret"] is None else f"{report['regret'] * 100:.1f}%"
    ratio = report["ratio_advisor_to_grid"]
    say(f"grid {report['grid_wall_s']:.1f} s, advisor {report['advisor_wall_s']:.1f} s "
        f"(ratio {_f(ratio, '.3f')}); pick {(report['pick'] or {}).get('label', '-')}, "
        f"regret {regret}{' (' + report['regret_note'] + ')' if report['regret_note'] else ''}")
    say(f"wrote {path} and {path.with_suffix('.md')}")


if __name__ == "__main__":
    main()
