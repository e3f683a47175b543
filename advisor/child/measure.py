"""Timing and compiler facts. Imports torch lazily; runs inside the trial child.

Timing follows the article's rules: synchronize, warm up, CUDA events around every call on a
GPU (`time.perf_counter` on CPU, where calls are synchronous), many samples, medians and tails.
In CUDA-graph modes `torch.compiler.cudagraph_mark_step_begin()` precedes every call.
"""

from __future__ import annotations

import contextlib
import math
import resource
import statistics
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypedDict

from advisor import hostload, settings
from advisor.errors import WorkloadError
from advisor.protocol import PHASE_PREFIX, PROGRESS_PREFIX, write_whole
from advisor.records import GraphBreak, HostFigures

LAUNCH_NAMES = frozenset(
    {"cudaLaunchKernel", "cuLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernelEx",
     "cudaGraphLaunch", "cuGraphLaunch"}
)


@dataclass(frozen=True)
class SamplingPolicy:
    """How long to warm up and how many samples to take.

    Warm-up: `warmup_iters` calls, cut short after `warmup_max_s`. Sampling: until both
    `min_samples` and `min_time_s` are reached, but never past `max_time_s` (with at least
    `floor_samples`) or `max_samples`. Back to back: `throughput_calls` queued calls, fewer
    (never under 10, or `throughput_calls` if smaller) where they would take more than
    `throughput_max_s` at the sampled median.
    """

    warmup_iters: int = 25
    warmup_max_s: float = 10.0
    min_samples: int = 100
    min_time_s: float = 1.0
    max_time_s: float = 30.0
    floor_samples: int = 10
    max_samples: int = 100_000
    throughput_calls: int = 100
    throughput_max_s: float = 0.5

    @classmethod
    def for_device(cls, device: str) -> SamplingPolicy:
        """The device's policy; $ADVISOR_MEASURE_S, when set, its least sampling time."""
        if device.startswith("cuda"):
            # A GPU host's launch rate moves for seconds at a time; a 4 s window spans its
            # states where 1 s lands in one (bench/experiments/launch_noise.py, window_cv.py).
            return cls(min_time_s=settings.measure_s() or 4.0)
        # CPU calls of real models take tens to hundreds of ms: fewer, longer samples.
        return cls(warmup_iters=5, warmup_max_s=5.0, min_samples=30,
                   min_time_s=settings.measure_s() or 1.0, max_time_s=10.0, throughput_calls=5)

    def throughput_count(self, median_ms: float) -> int:
        """How many back-to-back calls to time for a call whose sampled median is `median_ms`."""
        fit = self.throughput_calls
        if median_ms > 0:
            fit = int(self.throughput_max_s * 1000 / median_ms)
        return max(min(self.throughput_calls, fit), min(10, self.throughput_calls))

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class Timer:
    """Times one call: CUDA events on a GPU, perf_counter on CPU."""

    def __init__(self, device: str, cudagraphs: bool) -> None:
        import torch

        self.torch = torch
        self.cuda = device.startswith("cuda")
        self.mark_step: Callable[[], None] | None = (
            torch.compiler.cudagraph_mark_step_begin if cudagraphs else None
        )
        self.method = "cuda_events" if self.cuda else "perf_counter"
        if self.cuda:
            self.start = torch.cuda.Event(enable_timing=True)
            self.end = torch.cuda.Event(enable_timing=True)

    def call(self, fn: Callable[[], Any]) -> Any:
        if self.mark_step is not None:
            self.mark_step()
        return fn()

    def sync(self) -> None:
        if self.cuda:
            self.torch.cuda.synchronize()

    def call_timed(self, fn: Callable[[], Any]) -> tuple[Any, float]:
        """(output, ms) of one call with everything it triggers (a compile, a CUDA-graph
        recording): CUDA events on a GPU (the host's compile time lies between them), else
        perf_counter."""
        if self.mark_step is not None:
            self.mark_step()
        if self.cuda:
            self.start.record()
            out = fn()
            self.end.record()
            self.end.synchronize()
            return out, float(self.start.elapsed_time(self.end))
        t0 = time.perf_counter()
        out = fn()
        return out, (time.perf_counter() - t0) * 1000

    def time_ms(self, fn: Callable[[], Any]) -> float:
        if self.mark_step is not None:
            self.mark_step()
        if self.cuda:
            self.start.record()
            fn()
            self.end.record()
            self.end.synchronize()
            return float(self.start.elapsed_time(self.end))
        t0 = time.perf_counter()
        fn()
        return (time.perf_counter() - t0) * 1000


def warm_up(timer: Timer, fn: Callable[[], Any], policy: SamplingPolicy) -> int:
    """Call `fn` up to `warmup_iters` times or until `warmup_max_s`; returns calls made."""
    deadline = time.perf_counter() + policy.warmup_max_s
    done = 0
    while done < policy.warmup_iters and (done == 0 or time.perf_counter() < deadline):
        timer.call(fn)
        done += 1
    timer.sync()
    return done


def sample(timer: Timer, fn: Callable[[], Any], policy: SamplingPolicy) -> list[float]:
    """Timed samples until both the minimum count and the minimum time are reached."""
    samples: list[float] = []
    started = time.perf_counter()
    while len(samples) < policy.max_samples:
        samples.append(timer.time_ms(fn))
        elapsed = time.perf_counter() - started
        if len(samples) >= policy.min_samples and elapsed >= policy.min_time_s:
            break
        if elapsed >= policy.max_time_s and len(samples) >= policy.floor_samples:
            break
    return samples


def back_to_back_ms(timer: Timer, fn: Callable[[], Any], calls: int) -> list[float]:
    """Per-call times of `calls` calls queued back to back, with one synchronize at the end.

    GPU: one CUDA event before the first call and one after each, recorded without waiting, so
    each call's time runs from the end of the one before: the GPU time it takes while the host
    keeps ahead, the launch time where the host cannot (what `triton.testing.do_bench` reads,
    without its L2 flush). CPU: calls are synchronous, so each is timed with perf_counter.
    """
    if not timer.cuda:
        times = []
        for _ in range(calls):
            t0 = time.perf_counter()
            timer.call(fn)
            times.append((time.perf_counter() - t0) * 1000)
        return times
    events = [timer.torch.cuda.Event(enable_timing=True) for _ in range(calls + 1)]
    timer.sync()
    events[0].record()
    for event in events[1:]:
        timer.call(fn)
        event.record()
    timer.sync()
    return [float(a.elapsed_time(b)) for a, b in zip(events[:-1], events[1:], strict=True)]


def throughput_per_s(timer: Timer, fn: Callable[[], Any], calls: int) -> float:
    """Calls per second back to back: 1000 / the median of `back_to_back_ms`."""
    median_ms = statistics.median(back_to_back_ms(timer, fn, calls))
    return 1000 / median_ms if median_ms > 0 else math.inf


class KernelProfile(TypedDict):
    kernels_per_call: int
    launches_per_call: int | None
    kernel_names: list[str]


def profile_call(timer: Timer, fn: Callable[[], Any]) -> KernelProfile:
    """Kernels executed and launch calls made by one call, with the kernels' names.

    GPU: device-side events are kernels (and copies); launches are the CPU-side launch API calls
    (`cudaGraphLaunch` under CUDA graphs). CPU: kernels are the top-level ATen ops and Inductor's
    generated C++ kernels (visible through `cpp.enable_kernel_profile`); there are no launches.
    """
    import torch
    from torch.profiler import DeviceType, ProfilerActivity, profile

    timer.sync()
    if timer.cuda:
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            timer.call(fn)
            timer.sync()
        events = list(prof.events())
    else:
        # The autograd profiler that torch.profiler wraps, with the same CPU events: the wrapper's
        # first use imports torch._dynamo (a `hasattr(torch, "_inductor")` check), over a second
        # of every eager trial on a CPU.
        with torch.autograd.profiler.profile(use_cpu=True, use_kineto=True) as cpu_prof:
            timer.call(fn)
        events = list(cpu_prof.function_events)
    if timer.cuda:
        kernels = [e.name for e in events if e.device_type == DeviceType.CUDA]
        launches: int | None = sum(1 for e in events if e.name in LAUNCH_NAMES)
    else:
        kernels = [e.name for e in events if _is_cpu_kernel(e)]
        launches = None
    del torch
    return {
        "kernels_per_call": len(kernels),
        "launches_per_call": launches,
        "kernel_names": list(dict.fromkeys(kernels)),
    }


def _is_cpu_kernel(event: Any) -> bool:
    name = event.name
    if "cpp_fused" in name:
        return True
    parent = event.cpu_parent
    return name.startswith("aten::") and (parent is None or not parent.name.startswith("aten::"))


def compiler_counters_reset() -> None:
    if "torch._dynamo" not in sys.modules:
        return  # nothing compiled in this process yet: no counters to clear (or to import)
    import torch._dynamo.utils
    import torch._inductor.metrics

    torch._dynamo.utils.counters.clear()
    torch._inductor.metrics.reset()


class CompilerFacts(TypedDict):
    graph_count: int
    graph_break_count: int
    graph_breaks: list[GraphBreak]
    frames_compiled: int
    generated_kernel_count: int


def compiler_facts() -> CompilerFacts:
    """Graphs, graph breaks (with reasons), frames compiled and kernels generated so far."""
    if "torch._dynamo" not in sys.modules:  # an eager process: nothing compiled, none imported
        return {"graph_count": 0, "graph_break_count": 0, "graph_breaks": [],
                "frames_compiled": 0, "generated_kernel_count": 0}
    import torch._dynamo.utils
    import torch._inductor.metrics

    counters = torch._dynamo.utils.counters
    breaks: list[GraphBreak] = [
        {"reason": str(reason), "count": int(count)}
        for reason, count in counters["graph_break"].items()
    ]
    return {
        "graph_count": int(counters["stats"]["unique_graphs"]),
        "graph_break_count": sum(b["count"] for b in breaks),
        "graph_breaks": breaks,
        "frames_compiled": int(counters["frames"]["total"]),
        "generated_kernel_count": int(torch._inductor.metrics.generated_kernel_count),
    }


def phase(name: str) -> None:
    """Tell the parent this child's new phase (a `PHASE_PREFIX` line; advisor.search.launcher
    reads them); the running `Ticker` counts from it."""
    if _ticker is not None:
        _ticker.enter(name)
    _say(PHASE_PREFIX + name)


def count(done: int, total: int, unit: str) -> None:
    """How far the current phase got (`Ticker.count`), when a ticker runs."""
    if _ticker is not None:
        _ticker.count(done, total, unit)


def keep_state(state: Callable[[], Any] | None) -> None:
    """What the running ticker writes as ``stopped`` to its progress file (`Ticker`)."""
    if _ticker is not None:
        _ticker.state = state


PROGRESS_EVERY_S = 4.0  # a progress line this often (the CLI prints one at least every 10 s)
_out = threading.Lock()  # one line at a time on stdout: the ticker's thread writes there too
_ticker: Ticker | None = None


def _say(line: str) -> None:
    with _out:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


class Ticker:
    """How far the child got, told every `PROGRESS_EVERY_S` from a thread of its own while it
    runs (``with Ticker(...)``): a `PROGRESS_PREFIX` line, JSON ``{"phase", "done", "total",
    "unit", "phase_s", "elapsed_s"}`` (the phase as `phase` last named it, ``done`` of
    ``total`` units of it so far as `count` says, seconds in the phase and since the start),
    and, when ``path`` is given, the same written whole to that file with ``stopped``: what the
    trial would store if it were stopped now (``state()``, set by the replay: advisor.records
    .Stopped), which the launcher reads when it kills the child at its time limit."""

    def __init__(self, path: str | None = None, every_s: float = PROGRESS_EVERY_S) -> None:
        self.path, self.every_s = path, every_s
        self.state: Callable[[], Any] | None = None
        self.started = time.monotonic()
        self.phase, self.done, self.total, self.unit = "start", 0, 0, ""
        self.phase_started = self.started
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="progress", daemon=True)

    def __enter__(self) -> Ticker:
        global _ticker
        _ticker = self
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        global _ticker
        self._stop.set()
        self._thread.join()
        _ticker = None

    def enter(self, name: str) -> None:
        """A new phase: its counts start again."""
        self.phase, self.done, self.total, self.unit = name, 0, 0, ""
        self.phase_started = time.monotonic()

    def count(self, done: int, total: int, unit: str) -> None:
        """``done`` of ``total`` ``unit``s of the phase so far (requests, shapes, passes)."""
        self.done, self.total, self.unit = done, total, unit

    def snapshot(self) -> dict[str, Any]:
        now = time.monotonic()
        return {"phase": self.phase, "done": self.done, "total": self.total, "unit": self.unit,
                "phase_s": round(now - self.phase_started, 1),
                "elapsed_s": round(now - self.started, 1)}

    def emit(self) -> None:
        import json

        snapshot = self.snapshot()
        _say(PROGRESS_PREFIX + json.dumps(snapshot))
        if self.path:
            with contextlib.suppress(OSError):  # the next tick writes it again
                write_whole(self.path, {**snapshot,
                                        "stopped": self.state() if self.state else None})

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            self.emit()


def set_threads(device: str) -> int:
    """torch's intra-op threads for a measurement on ``device``, set explicitly on a CPU (to
    $ADVISOR_CPU_THREADS, else the cores this process may use) and returned: the threads a
    figure ran with (1 on a GPU: the thread that launches its kernels)."""
    import torch

    if device.startswith("cuda"):
        return 1
    torch.set_num_threads(settings.cpu_threads() or hostload.allowed_cores())
    return int(torch.get_num_threads())


class HostWatch:
    """The host around one measurement (`advisor.hostload`): waits for quiet first (bounded,
    said as a phase), then reads the host at the start and the end; `figures` is what the
    record stores as ``host``."""

    def __init__(self, device: str, threads: int) -> None:
        self.device, self.threads = device, threads
        self.waited_s = 0.0
        self.start: hostload.Snapshot | None = None
        self.figures: HostFigures | None = None

    def quiet_first(self, most_s: float | None = None) -> bool:
        """Wait for quiet (`settings.quiet_wait_s`, at most ``most_s`` when given: a budgeted
        trial's share); True when the host is quiet now."""
        limit = settings.quiet_wait_s(self.device)
        if most_s is not None:
            limit = max(0.0, min(limit, most_s))
        waited, quiet = hostload.wait_for_quiet(self.threads, limit, phase)
        self.waited_s += waited
        return quiet

    def begin(self) -> None:
        self.start = hostload.snapshot()

    def end(self) -> HostFigures:
        assert self.start is not None
        self.figures = hostload.between(self.start, hostload.snapshot(), self.threads,
                                        self.waited_s)
        return self.figures

    def __enter__(self) -> HostWatch:
        self.begin()
        return self

    def __exit__(self, *exc: object) -> None:
        self.end()


class Call:
    """A call of some callable on fixed arguments; `rebind` swaps the callable."""

    def __init__(self, fn: Any, args: Any) -> None:
        if not isinstance(args, (tuple, dict)):
            raise WorkloadError(
                f"inputs() returned {type(args).__name__}; return a tuple or a dict"
            )
        self.fn, self.args = fn, args

    def __call__(self) -> Any:
        if isinstance(self.args, dict):
            return self.fn(**self.args)
        return self.fn(*self.args)


def rebind(call: Call, fn: Any) -> Call:
    return Call(fn, call.args)


def peak_mem(device: str) -> int:
    if device.startswith("cuda"):
        import torch

        return int(torch.cuda.max_memory_allocated())
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
