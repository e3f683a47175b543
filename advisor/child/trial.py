"""The trial child: run one config of one workload and write one record (advisor.records).

Started by `advisor.search.launcher` as ``python -m advisor.child.main SPEC.json RESULT.json`` in
a fresh process with its own empty Inductor cache dir. It reports phases on stdout as lines
``ADVISOR_PHASE <phase>`` and always writes a record, failed or not, unless the process dies.

Steps: load workload -> fp32 eager reference (outputs kept on the CPU) -> build in the config's
dtype -> torch.compile -> first call (cold start) -> accuracy and quality against the reference
-> per shape: warm-up, timed samples, throughput -> one profiled call -> compiler facts.
"""

from __future__ import annotations

import math
import time
import traceback
from collections.abc import Callable
from typing import Any

from advisor import fingerprint
from advisor.child.measure import (
    Call,
    CompilerFacts,
    HostWatch,
    KernelProfile,
    SamplingPolicy,
    Ticker,
    Timer,
    compiler_counters_reset,
    compiler_facts,
    peak_mem,
    phase,
    profile_call,
    rebind,
    sample,
    set_threads,
    throughput_per_s,
    warm_up,
)
from advisor.child.prepare import (
    cast_inputs,
    cast_model,
    compiled,
    inductor_settings,
    restore_tf32,
    set_tf32,
    torch_dtype,
)
from advisor.child.replay import replay_plan, run_replay
from advisor.child.replay import serve_alone as replay_serve_alone
from advisor.child.replay import warm_start as replay_warm_start
from advisor.child.tensors import tensors, to_cpu_fp32
from advisor.config import CompileConfig, shape_name
from advisor.device_lock import DeviceLock
from advisor.errors import TrialFailed, WorkloadError
from advisor.protocol import ERROR_TAIL_CHARS, AloneSpec, TrialSpec, WarmSpec
from advisor.records import (
    Headline,
    ShapeFigures,
    TrialRecord,
    WorkloadInfo,
    empty_record,
    weighted_headline,
)
from advisor.stats import Stats, median_ci
from advisor.workload import Workload, load_workload

SCREEN_SAMPLES = 15  # calls of the short first measurement that can screen a config out


def tail(text: str) -> str:
    return text[-ERROR_TAIL_CHARS:]


def classify(exc: BaseException, stage: str) -> str:
    """The failure reason of an exception raised during `stage` (a key of FAILURE_REASONS)."""
    import torch

    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, TrialFailed):
        return exc.reason
    if isinstance(exc, WorkloadError):
        return "workload_error"
    lowered = text.lower()
    # torch's CPU allocator says "DefaultCPUAllocator: can't allocate memory".
    if isinstance(exc, (torch.OutOfMemoryError, MemoryError)) or any(
        words in lowered for words in ("out of memory", "can't allocate memory")
    ):
        return "oom"
    if "CUDA error" in text or "AcceleratorError" in text or "cudaError" in text:
        return "cuda_error"
    if stage == "build":
        return "build_error"
    if stage == "compile":
        if _is_graph_break(exc):
            return "graph_break"
        return "compile_error"
    return "runtime_error"


def _is_graph_break(exc: BaseException) -> bool:
    import torch._dynamo.exc as dexc

    return isinstance(exc, (dexc.Unsupported, dexc.UserError)) and not isinstance(
        exc, dexc.BackendCompilerFailed
    )


def compare(reference: Any, candidate: Any, atol: float, rtol: float) -> dict[str, Any]:
    """Element-wise check of every output tensor against the fp32 eager reference."""
    import torch

    refs, cands = tensors(reference), tensors(candidate)
    if not refs or len(refs) != len(cands):
        raise WorkloadError(
            f"the component returned {len(cands)} tensors where the reference had {len(refs)}"
        )
    max_abs = max_rel = 0.0
    correct = True
    for ref, cand in zip(refs, cands, strict=True):
        if ref.shape != cand.shape:
            raise WorkloadError(f"output shape {tuple(cand.shape)} != {tuple(ref.shape)}")
        ref64, cand64 = ref.double(), cand.double()
        if ref64.numel() == 0:
            continue
        # Equal elements (matching infinities too) and NaN where the reference has NaN agree;
        # any other non-finite element is an infinite error. Non-finite references get no slack.
        agree = (cand64 == ref64) | (cand64.isnan() & ref64.isnan())
        diff = torch.where(agree, 0.0, (cand64 - ref64).abs())
        diff = torch.nan_to_num(diff, nan=math.inf, posinf=math.inf)
        rel = torch.where(agree, 0.0, diff / ref64.abs().clamp_min(1e-12))
        rel = torch.nan_to_num(rel, nan=math.inf, posinf=math.inf)
        allowed = torch.where(ref64.isfinite(), atol + rtol * ref64.abs(), 0.0)
        max_abs = max(max_abs, float(diff.max()))
        max_rel = max(max_rel, float(rel.max()))
        correct = correct and bool((diff <= allowed).all())
    return {"max_abs_err": max_abs, "max_rel_err": max_rel, "correct": correct}


class TrialRun:
    """One trial inside the child; `run()` returns the record."""

    def __init__(self, spec: TrialSpec) -> None:
        self.spec = spec
        self.config = CompileConfig.from_dict(spec["config"])
        self.device: str = spec["device"]
        policy = spec.get("policy")
        self.policy = SamplingPolicy(**policy) if policy else SamplingPolicy.for_device(self.device)
        self.record = empty_record()
        self.stage = "load"
        self._samples: list[list[float]] = []
        self.threads = 1  # torch's intra-op threads, set when the child starts (`set_threads`)
        self.quiet = True  # the host was quiet when measuring began (else: no screening)
        self.lock = DeviceLock.from_env()  # trials sharing the device take turns to measure

    def run(self) -> TrialRecord:
        rec = self.record
        rec.update({
            "trial_uuid": self.spec["trial_uuid"], "config": self.config.to_dict(),
            "config_key": self.config.key, "device": self.device,
            "started_at": self.spec.get("started_at"),
        })
        try:
            with Ticker(self.spec.get("progress_file")):  # its progress, told every few s
                self._run()
            # a replay proven worse than the sweep's best, or stopped by its time
            # (advisor.child.replay): no figure
            rec["status"] = ("pruned" if rec.get("pruned") else
                             "stopped" if rec.get("stopped") else "ok")
        except BaseException as exc:  # noqa: BLE001 - every failure becomes a classified record
            if isinstance(exc, KeyboardInterrupt):
                raise
            rec["status"] = "failed"
            rec["failure_reason"] = classify(exc, self.stage)
            rec["error_tail"] = tail(
                f"[{self.stage}] " + "".join(traceback.format_exception(exc))
            )
        finally:
            self.lock.release()
            if self.lock.enabled:  # the turns it took on a shared device (advisor.device_lock)
                rec["device_wait_s"] = round(self.lock.waited_s, 3)
                rec["measured_alone"] = [list(w) for w in self.lock.windows]
        return rec

    def _run(self) -> None:
        import torch

        rec = self.record
        self.threads = set_threads(self.device)
        phase("loading")
        # the bytes the parent checked, or nothing (advisor.workload.checked_sha256)
        loaded = load_workload(self.spec["workload_path"], self.spec.get("workload_sha256"))
        wl = loaded.workload
        workload: WorkloadInfo = {
            "name": wl.name, "path": str(loaded.path), "source_sha256": loaded.source_sha256,
            "info": {},
        }
        rec["workload"] = workload
        # From here on this child touches the device: imports and loading above overlap other
        # trials' measurements, everything below waits while one runs (advisor.device_lock).
        self.lock.hold("work")
        phase("preparing")
        rec["fingerprint"] = fingerprint.collect(self.device)
        if self.config.dtype not in wl.dtypes:
            raise WorkloadError(
                f"dtype {self.config.dtype} is not allowed by workload {wl.name} "
                f"(allowed: {', '.join(wl.dtypes)})"
            )
        shapes = self.spec.get("shapes") or [{"dims": wl.shape, "weight": 1.0}]
        replay = replay_plan(self.spec, self.config, wl)  # shape strategy or traffic: a replay
        if replay is not None:
            shapes = replay.reference_shapes()
        if self.device.startswith("cuda"):
            torch.cuda.set_device(fingerprint.cuda_index(self.device))
        inductor_settings(self.device, self.config)
        set_tf32(False)  # the fp32 oracle: no TF32 in matmuls nor convolutions
        workload["info"] = dict(wl.info()) if wl.info else {}
        if replay is not None:
            # A replay prices a fresh serving process: the fp32 eager reference runs after the
            # stream, so that nothing of it (first calls, allocations) warms the stream.
            run_replay(self, wl, replay,
                       lambda chosen: self._reference_record(wl, [shapes[i] for i in chosen]))
            return
        refs, eager_profile = self._reference(wl, shapes)
        self.keep_eager_profile(eager_profile)
        self._candidate(wl, shapes, refs)

    def _reference_record(self, wl: Workload, shapes: list[dict[str, Any]]) -> list[Any]:
        """The reference outputs, the eager profile kept in the record (fp32 matmuls and
        convolutions)."""
        before = set_tf32(False)
        try:
            refs, eager_profile = self._reference(wl, shapes)
        finally:
            restore_tf32(before)
        self.keep_eager_profile(eager_profile)
        return refs

    def _inputs(self, wl: Workload, dims: dict[str, int]) -> Any:
        import torch

        torch.manual_seed(0)
        args = wl.inputs(dict(dims), self.device)
        if not isinstance(args, (tuple, dict)):
            raise WorkloadError(
                f"inputs() returned {type(args).__name__}; return a tuple or a dict"
            )
        return args

    def _build(self, wl: Workload, dtype_name: str) -> Any:
        import torch

        self.stage = "build"
        torch.manual_seed(0)
        model = wl.build(self.device, torch_dtype(dtype_name))
        if not callable(model):
            raise WorkloadError(f"build() returned {type(model).__name__}, which is not callable")
        return model

    def _reference(
        self, wl: Workload, shapes: list[dict[str, Any]]
    ) -> tuple[list[Any], KernelProfile]:
        """fp32 eager outputs for every shape (on the CPU), and the eager kernel profile."""
        import torch

        phase("reference")
        model = self._build(wl, "fp32")
        self.stage = "reference"
        timer = Timer(self.device, cudagraphs=False)
        refs = []
        with self._grad_mode(wl):
            for i, shape in enumerate(shapes):
                call = Call(model, self._inputs(wl, shape["dims"]))
                t0 = time.perf_counter()
                out = call()
                timer.sync()
                if i == 0:
                    self.record["eager_first_call_s"] = time.perf_counter() - t0
                refs.append(to_cpu_fp32(out))
            prof = profile_call(timer, Call(model, self._inputs(wl, shapes[0]["dims"])))
        del model
        if self.device.startswith("cuda"):
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
        return refs, prof

    def keep_eager_profile(self, prof: KernelProfile) -> None:
        """The fp32 eager reference's kernel profile, into the record."""
        self.record.update({
            "eager_kernels_per_call": prof["kernels_per_call"],
            "eager_launches_per_call": prof["launches_per_call"],
            "eager_kernel_names": prof["kernel_names"],
        })

    def keep_profile(self, prof: KernelProfile) -> None:
        """The candidate's kernel profile (`profile_call`), into the record."""
        self.record.update({
            "kernels_per_call": prof["kernels_per_call"],
            "launches_per_call": prof["launches_per_call"],
            "kernel_names": prof["kernel_names"],
        })

    def keep_compiler_facts(self, facts: CompilerFacts) -> None:
        """Graphs, graph breaks and kernels generated (none if eager), into the record."""
        if self.config.compiled:
            self.record.update({
                "graph_count": facts["graph_count"],
                "graph_break_count": facts["graph_break_count"],
                "graph_breaks": facts["graph_breaks"],
                "generated_kernel_count": facts["generated_kernel_count"],
            })
        else:
            self.record.update({"graph_count": 0, "graph_break_count": 0,
                                "generated_kernel_count": 0})

    def keep_headline(self, headline: Headline) -> None:
        self.record.update({
            "median_ms": headline["median_ms"], "p90_ms": headline["p90_ms"],
            "p99_ms": headline["p99_ms"], "mean_ms": headline["mean_ms"],
            "noisy": headline["noisy"],
        })

    def _grad_mode(self, wl: Workload) -> Any:
        import contextlib

        import torch

        return torch.inference_mode() if wl.inference else contextlib.nullcontext()

    def _candidate(self, wl: Workload, shapes: list[dict[str, Any]], refs: list[Any]) -> None:

        rec, cfg = self.record, self.config
        model = cast_model(self._build(wl, cfg.dtype), cfg)
        calls = [Call(model, cast_inputs(self._inputs(wl, s["dims"]), cfg)) for s in shapes]
        timer = Timer(self.device, cudagraphs=cfg.uses_cudagraphs)
        with self._grad_mode(wl):
            # an eager config compiles nothing: its first call failing is the component's own
            # error (runtime_error), not a compile error
            self.stage = "compile" if cfg.compiled else "run"
            phase("compiling")
            compiler_counters_reset()
            t0 = time.perf_counter()
            fn = compiled(model, cfg)
            outs = [to_cpu_fp32(timer.call(rebind(calls[0], fn)))]
            timer.sync()
            rec["cold_compile_s"] = time.perf_counter() - t0
            outs += [to_cpu_fp32(timer.call(rebind(call, fn))) for call in calls[1:]]
            self.stage = "accuracy"
            self._accuracy(wl, refs, outs, [float(s["weight"]) for s in shapes])
            self.lock.hold("measure")
            self.stage = "measure"
            watch = HostWatch(self.device, self.threads)
            self.quiet = watch.quiet_first()
            phase("measuring")
            frames_before = compiler_facts()["frames_compiled"]
            with fingerprint.Telemetry(self.device) as telemetry, watch:
                rec["shapes"] = [
                    self._measure(shape, rebind(call, fn), timer)
                    for shape, call in zip(shapes, calls, strict=True)
                ]
            if watch.figures is not None:
                rec["host"] = watch.figures
            facts = compiler_facts()
            rec["recompiles"] = facts["frames_compiled"] - frames_before
            self.keep_compiler_facts(facts)
            rec["telemetry"] = telemetry.summary()
            if self.lock.measure_core is not None:  # the host core kept for measurements
                rec["telemetry"]["measure_core"] = self.lock.measure_core
            phase("profiling")
            self.keep_profile(profile_call(timer, rebind(calls[0], fn)))
        self.keep_headline(weighted_headline(rec["shapes"]))
        rec["median_ci_ms"] = list(median_ci(self._samples, [s["weight"] for s in rec["shapes"]]))
        rec["method"] = timer.method
        rec["warmup_iters"] = rec["shapes"][0]["warmup_iters"]
        rec["peak_mem_bytes"] = peak_mem(self.device)

    def _accuracy(
        self, wl: Workload, refs: list[Any], outs: list[Any],
        weights: list[float] | None = None,
    ) -> None:
        """Correctness of every output against the reference, and the workload's quality
        check: per request, combined as its `Quality` says over the requests' traffic
        ``weights`` (equal when None); an advisory check is recorded but rejects nothing."""
        atol, rtol = wl.tolerance(self.config.dtype)
        checks = [compare(ref, out, atol, rtol) for ref, out in zip(refs, outs, strict=True)]
        rec = self.record
        rec.update({
            "atol": atol, "rtol": rtol,
            "max_abs_err": max(c["max_abs_err"] for c in checks),
            "max_rel_err": max(c["max_rel_err"] for c in checks),
            "correct": all(c["correct"] for c in checks),
        })
        rejects = False
        if (q := wl.quality) is not None:
            values = [float(q.fn(r, o)) for r, o in zip(refs, outs, strict=True)]
            value, worst = q.combined(values, weights)
            quality_passed = q.passes(value)
            rejects = not quality_passed and q.advisory is None
            rec.update({
                "quality_name": q.name, "quality_value": value, "quality_combine": q.rule,
                "quality_threshold": q.threshold, "quality_passed": quality_passed,
            })
            if not math.isnan(worst):  # NaN is no JSON a store can keep
                rec["quality_worst"] = worst
            if q.advisory is not None:
                rec["quality_advisory"] = q.advisory
        rec["passed"] = rec["correct"] and not rejects

    def _measure(
        self, shape: dict[str, Any], call: Callable[[], Any], timer: Timer
    ) -> ShapeFigures:
        warmups = warm_up(timer, call, self.policy)
        stats = self._screen(timer, call) or Stats(sample(timer, call, self.policy))
        self._samples.append(stats.samples_ms)  # for the median's confidence interval
        calls = self.policy.throughput_count(stats.median_ms)
        return {
            "shape": shape_name(shape["dims"]), "dims": dict(shape["dims"]),
            "weight": float(shape["weight"]), **stats.to_dict(),
            "throughput_per_s": throughput_per_s(timer, call, calls), "warmup_iters": warmups,
        }

    def _screen(self, timer: Timer, call: Callable[[], Any]) -> Stats | None:
        """A short first measurement; its stats when it shows the config clearly dominated.

        The sweep passes ``screen_above_ms`` (a multiple of the best median measured so far):
        a config whose first SCREEN_SAMPLES calls have a median above it cannot win, so the
        full sampling is skipped and the record says so (``screened_out``)."""
        above = self.spec.get("screen_above_ms")
        if above is None or len(self.spec.get("shapes") or [{}]) != 1 or not self.quiet:
            return None  # screened: single-shape trials only, on a quiet host
        first = Stats([timer.time_ms(call) for _ in range(SCREEN_SAMPLES)])
        if first.median_ms <= above:
            return None
        self.record["screened_out"] = {"median_ms": first.median_ms, "above_ms": above,
                                       "samples": SCREEN_SAMPLES}
        return first


def _second_process(spec: WarmSpec | AloneSpec) -> tuple[CompileConfig, str, Any, Any]:
    """A trial's second process set up as its first was: (config, device, workload, replay
    plan or None), holding the device lock's work share."""
    config = CompileConfig.from_dict(spec["config"])
    device = spec["device"]
    inductor_settings(device, config)
    wl = load_workload(spec["workload_path"], spec.get("workload_sha256")).workload
    DeviceLock.from_env().hold("work")  # building and compiling overlap others, not measuring
    return config, device, wl, replay_plan(spec, config, wl)


def warm_start(spec: WarmSpec) -> dict[str, Any]:
    """Second process on the same cache dir: time from torch.compile to the first result."""
    import torch

    config, device, wl, replay = _second_process(spec)
    if replay is not None:
        return replay_warm_start(spec, config, wl, replay, device)
    torch.manual_seed(0)
    model = cast_model(wl.build(device, torch_dtype(config.dtype)), config)
    torch.manual_seed(0)
    dims = (spec.get("shapes") or [{"dims": wl.shape}])[0]["dims"]
    args = cast_inputs(wl.inputs(dict(dims), device), config)
    timer = Timer(device, cudagraphs=config.uses_cudagraphs)
    ctx = torch.inference_mode() if wl.inference else torch.enable_grad()
    with ctx:
        phase("warm-start")
        t0 = time.perf_counter()
        fn = compiled(model, config)
        timer.call(Call(fn, args))
        timer.sync()
        return {"warm_compile_s": time.perf_counter() - t0}


def serving_alone(spec: AloneSpec) -> dict[str, Any]:
    """A replay trial's serving process again, alone (advisor.child.replay.serve_alone)."""
    config, device, wl, replay = _second_process(spec)
    if replay is None:
        raise WorkloadError("serving alone replays traffic, and the spec holds none")
    return replay_serve_alone(spec, config, wl, replay, device)
