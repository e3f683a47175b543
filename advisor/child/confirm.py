"""The confirmation and artifact children (`advisor.search.confirm` starts them): the leaders and
eager fp32 compiled once each in ONE process and timed interleaved, round after round, each round
in a fresh seeded order (`round_orders`); the warm-start artifact compiled exactly as
`advisor.apply` compiles (`advisor.child.serve`), then saved or loaded. Entry points:
`confirm_child`, `artifact_child`.
"""

from __future__ import annotations

import base64
import contextlib
import random
import time
import traceback
from collections.abc import Iterator
from typing import Any

from advisor import settings
from advisor.config import EAGER_FP32, CompileConfig
from advisor.device_lock import DeviceLock
from advisor.protocol import (
    ArtifactResult,
    ArtifactSpec,
    ChildFailure,
    ConfirmResult,
    ConfirmSpec,
    child_failure,
)
from advisor.records import Fingerprint
from advisor.stats import Rounds


def confirm_child(spec: ConfirmSpec) -> ConfirmResult | ChildFailure:
    """Entry point of the confirmation child; a failure comes back as data."""
    try:
        return _confirm_child(spec)
    except Exception as exc:  # noqa: BLE001 - reported to the parent as data
        return child_failure(exc, traceback.format_exc())


def artifact_child(spec: ArtifactSpec) -> ArtifactResult | ChildFailure:
    """Entry point of the cache-artifact child; a failure comes back as data."""
    try:
        return _artifact_child(spec)
    except Exception as exc:  # noqa: BLE001 - reported to the parent as data
        return child_failure(exc, traceback.format_exc())


def _setup(spec: ConfirmSpec | ArtifactSpec) -> tuple[Any, str, Fingerprint]:
    """The workload, the device (set current), and this child's fingerprint."""
    import torch

    from advisor import fingerprint
    from advisor.workload import load_workload

    wl = load_workload(spec["workload_path"], spec.get("workload_sha256")).workload
    device = spec["device"]
    if device.startswith("cuda"):
        torch.cuda.set_device(fingerprint.cuda_index(device))
    return wl, device, fingerprint.collect(device)


class _Runner:
    """One config in the confirmation child: built, compiled, first-called on every shape."""

    def __init__(self, wl: Any, config: CompileConfig, device: str,
                 shapes: list[dict[str, Any]], shared: bool = False) -> None:
        """``shared``: an earlier runner compiled the same graph with the same backend, which
        this one reuses (else compiling no graph means a silent eager fallback: an error)."""
        import torch

        from advisor.child.measure import Timer
        from advisor.child.prepare import cast_inputs, prepare, torch_dtype

        self.config = config
        torch.manual_seed(0)
        model = wl.build(device, torch_dtype(config.dtype))
        self.timer = Timer(device, cudagraphs=config.uses_cudagraphs)
        # Dynamo's counters, read only where something compiles (an eager-only process never
        # imports Dynamo or Inductor: a second and more on a CPU)
        graphs = _graphs() if config.compiled else 0
        before = _cache_counts() if config.compiled else {}
        t0 = time.perf_counter()
        # the trials' settings (their kept caches then hit), cast and compiled as apply does
        fn = prepare(model, config, device)
        self.calls = []
        for shape in shapes:
            torch.manual_seed(0)
            args = cast_inputs(wl.inputs(dict(shape["dims"]), device), config)
            call = _bind(fn, args)
            self.timer.call(call)
            self.calls.append(call)
        self.timer.sync()
        self.compile_s = time.perf_counter() - t0
        self.cache: dict[str, int] = {}
        if config.compiled:
            self.cache = {k: n - before.get(k, 0) for k, n in _cache_counts().items()
                          if n != before.get(k, 0)}
            if not shared and _graphs() == graphs:
                raise RuntimeError(f"{config.label} compiled no graph (recompile limit?)")

    def time_ms(self, shape: int) -> float:
        from advisor.child.prepare import set_precision

        set_precision(self.config)
        return self.timer.time_ms(self.calls[shape])

    def call(self, shape: int) -> None:
        from advisor.child.prepare import set_precision

        set_precision(self.config)
        self.timer.call(self.calls[shape])


def _graphs() -> int:
    """The graphs Dynamo compiled in this process so far."""
    import torch._dynamo.utils

    return int(torch._dynamo.utils.counters["stats"]["unique_graphs"])


def _cache_counts() -> dict[str, int]:
    """Inductor's and AOTAutograd's cache counters in this process (hits, misses, bypasses)."""
    import torch._dynamo.utils

    counters = torch._dynamo.utils.counters
    return {k: int(v) for group in ("inductor", "aot_autograd")
            for k, v in counters[group].items() if "cache" in k}


def _bind(fn: Any, args: Any) -> Any:
    if isinstance(args, dict):
        return lambda: fn(**args)
    return lambda: fn(*args)


def _phase(name: str) -> None:
    from advisor.child.measure import phase

    phase(name)


def _confirm_child(spec: ConfirmSpec) -> ConfirmResult:
    import torch

    from advisor.child.measure import HostWatch, set_threads

    wl, device, fp = _setup(spec)
    threads = set_threads(device)
    configs = [CompileConfig.from_dict(c) for c in spec["configs"]]
    shapes = spec["shapes"]
    given = spec.get("rounds")
    rounds = Rounds(**given) if given else Rounds.for_device(device, settings.measure_s())
    if any(config.compiled for config in configs):
        import torch._dynamo

        # Every config compiles the same forward: room for all of them, no silent eager
        # fallback.
        torch._dynamo.config.recompile_limit = max(64, 8 * len(configs) * len(shapes))
    runners: list[_Runner] = []
    failures: dict[str, str] = {}
    ctx = torch.inference_mode() if wl.inference else contextlib.nullcontext()
    lock = DeviceLock.from_env()  # compile beside other trials, measure alone
    lock.hold("work")
    backends: set[str] = set()
    with ctx:
        for config in configs:
            _phase(f"compiling {config.label}")
            # Configs that differ only in fullgraph share Dynamo's compiled code in one process
            # (the same backend and graph): the second compiles no graph of its own.
            kwargs = {k: v for k, v in config.compile_kwargs().items() if k != "fullgraph"}
            backend = f"{config.dtype} {sorted(kwargs.items())}"
            try:
                runners.append(_Runner(wl, config, device, shapes,
                                       shared=config.compiled and backend in backends))
                if config.compiled:
                    backends.add(backend)
            except Exception as exc:  # noqa: BLE001 - one config failing is data
                if config == EAGER_FP32:
                    raise
                failures[config.key] = f"{type(exc).__name__}: {exc}"[:500]
        lock.hold("measure")
        _phase("warming up")
        for shape in range(len(shapes)):
            for _ in range(rounds.warmup_rounds):
                for runner in runners:
                    runner.call(shape)
        runners[0].timer.sync()
        watch = HostWatch(device, threads)
        watch.quiet_first()
        _phase("measuring")
        with watch:
            samples = _interleaved(runners, len(shapes), rounds)
    return {
        "host": watch.figures,
        "status": "ok", "fingerprint": fp, "method": runners[0].timer.method,
        "rounds": len(samples[0][0]),
        "samples_ms": {r.config.key: s for r, s in zip(runners, samples, strict=True)},
        "compile_s": {r.config.key: r.compile_s for r in runners}, "failures": failures,
        "compile_cache": {r.config.key: r.cache for r in runners if r.config.compiled},
    }


def round_orders(n: int, seed: int = 0) -> Iterator[list[int]]:
    """The order of ``n`` configs in each round: a fresh permutation per round from a seeded
    generator, so that over many rounds every config takes every place and follows every other
    config about equally often. Pure."""
    rng = random.Random(seed)
    order = list(range(n))
    while True:
        rng.shuffle(order)
        yield list(order)


def _interleaved(
    runners: list[_Runner], n_shapes: int, rounds: Rounds
) -> list[list[list[float]]]:
    """samples[config][shape][round]: each round times every shape of every config, the configs
    in a fresh order (`round_orders`), each timed call right after an untimed one of its own."""
    samples: list[list[list[float]]] = [[[] for _ in range(n_shapes)] for _ in runners]
    orders = round_orders(len(runners))
    started = time.perf_counter()
    done = 0
    while done < rounds.max_rounds:
        for shape in range(n_shapes):
            for i in next(orders):
                runners[i].call(shape)
                runners[i].timer.sync()
                samples[i][shape].append(runners[i].time_ms(shape))
        done += 1
        elapsed = time.perf_counter() - started
        if done >= rounds.min_rounds and elapsed >= rounds.min_time_s:
            break
        if elapsed >= rounds.max_time_s and done >= rounds.floor_rounds:
            break
    return samples


def _artifact_child(spec: ArtifactSpec) -> ArtifactResult:
    """Compile as `advisor.apply` does (after loading the given artifact, for "load"), and for
    "save" return ``torch.compiler.save_cache_artifacts()`` as base64."""
    import torch
    import torch._dynamo.utils

    from advisor.child.prepare import prepare, torch_dtype
    from advisor.child.serve import Applied, bucket_plan, warm_up, warmup_inputs

    wl, device, fp = _setup(spec)
    config = CompileConfig.from_dict(spec["config"])
    load_s = None
    if spec["action"] == "load":
        t0 = time.perf_counter()
        torch.compiler.load_cache_artifacts(base64.b64decode(spec["artifact_b64"]))
        load_s = time.perf_counter() - t0
    torch.manual_seed(0)
    model = wl.build(device, torch_dtype(config.dtype))
    plan = bucket_plan(config, spec.get("buckets"), wl.name, wl)
    inputs = warmup_inputs(wl, device, plan)
    _phase("compiling")
    torch._dynamo.utils.counters.clear()
    t0 = time.perf_counter()
    fn = prepare(model, config, device)
    warm_up(Applied(fn=fn, model=model, config=config, inference=wl.inference, buckets=plan,
                    workload=wl), inputs)
    shapes = plan.buckets(wl.traffic) if plan else wl.traffic
    out: ArtifactResult = {
        "status": "ok", "fingerprint": fp, "start_s": time.perf_counter() - t0,
        "cache": _cache_counts(), "shapes": [{"dims": dict(d), "weight": w} for d, w in shapes]}
    if load_s is not None:
        out["load_s"] = load_s
    if spec["action"] == "save":
        saved = torch.compiler.save_cache_artifacts()
        if saved is None:
            out["reason"] = "torch.compiler.save_cache_artifacts() returned nothing on this stack"
        else:
            data, info = saved
            out["artifact_b64"] = base64.b64encode(data).decode()
            out["artifacts"] = {k: len(v) for k, v in info.artifacts.items()}
    return out
