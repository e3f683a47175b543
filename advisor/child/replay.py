"""Replay measurement: a trial that serves a trace of requests sampled from the traffic.

A trial replays instead of timing one shape at a time when its config has a shape strategy other
than ``static`` or when its spec carries traffic (``advisor sweep --traffic requests.csv``, or any
sweep that compares shape strategies: every config of it, the eager baseline included, replays the
same trace). `replay_plan` (pure) decides; `run_replay` (in the trial child) measures; how, what
it records and the recompile limit: its docstring.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from advisor import settings
from advisor.buckets import BucketPlan
from advisor.child.tensors import tensors
from advisor.config import CompileConfig, shape_name, shape_strategy
from advisor.errors import WorkloadError
from advisor.protocol import AloneSpec, TrialSpec, WarmSpec
from advisor.records import (
    BucketFigures,
    Flag,
    PruneBar,
    Pruned,
    ReplayFigures,
    ShapeFigures,
    SteadySample,
    Stopped,
    StreamFigures,
    StreamSample,
    TelemetryFigures,
    TrialRecord,
)
from advisor.sizing import (
    MIN_DRAWS,
    SAMPLE_SEED,
    SteadyPlan,
    coverage,
    first_at,
    mean_interval,
    stream_stride,
)
from advisor.traffic import TRACE_SEED, Traffic

if TYPE_CHECKING:
    from advisor.child.measure import CompilerFacts

LIMIT_HIT = "Dynamo recompile limit exceeded"


STARTUP_SHAPES = 8  # unpadded strategies warm at most this many known shapes (torch's limit)
# Calls per prepared shape at start-up: CUDA-graph trees run a new shape once to warm up, record
# its graph on the next call and replay it from the third; a server prepares all three.
CUDAGRAPH_STARTUP_CALLS = 3
# The steady state's warm-up of a shape: one call (the stream ran every shape at least once
# already; it compiled there), three under CUDA graphs (warm-up, recording, a replay).
REPLAY_WARMUP_CALLS = 1
# The fp32 eager reference's call of a shape, in calls of the config measured (its steady cost),
# as the steady state's sizing counts it: 1 for eager fp32 itself, else this (a lower precision
# or a compiled call is cheaper than fp32 eager; the reference is unpadded, so this is generous).
REFERENCE_FACTOR = 2.0
# A budgeted trial stops itself this long before its time limit (or this share of the limit, if
# longer): the time to write its record and exit before the launcher kills it.
STOP_MARGIN_S = 3.0
STOP_MARGIN_SHARE = 0.03
# A budgeted trial waits for a quiet host at most this share of its time (advisor.hostload).
QUIET_WAIT_SHARE = 0.1


@dataclass(frozen=True)
class TrialClock:
    """A budgeted trial's time (the spec's ``time_budget_s`` and ``time_limit_s``, from its
    ``started_at``), on this process's monotonic clock: ``share_end``, when its share of the
    budget ends (what its steady state and reference are sized to); ``stop_at``, when it must
    stop (its limit, less `STOP_MARGIN_S`); None for both without a budget."""

    started: float
    share_end: float | None = None
    stop_at: float | None = None
    share_s: float | None = None

    @classmethod
    def of(cls, spec: Any) -> TrialClock:
        now = time.monotonic()
        started_at = spec.get("started_at")
        started = now
        if started_at:
            with_zone = datetime.fromisoformat(started_at)
            started = now - max(0.0, time.time() - with_zone.timestamp())
        limit, share = spec.get("time_limit_s"), spec.get("time_budget_s")
        stop_at = (None if limit is None
                   else started + limit - max(STOP_MARGIN_S, STOP_MARGIN_SHARE * limit))
        share_end = stop_at if share is None else started + share
        if stop_at is not None and share_end is not None:
            share_end = min(share_end, stop_at)
        return cls(started, share_end, stop_at, share)

    def left(self) -> float | None:
        """Seconds left of the share (None: no budget)."""
        return None if self.share_end is None else self.share_end - time.monotonic()

    def elapsed_s(self) -> float:
        return time.monotonic() - self.started

    def quiet_wait_s(self) -> float | None:
        """The most a wait for a quiet host may take (None: the setting's own)."""
        left = self.left()
        return None if left is None else max(0.0, QUIET_WAIT_SHARE * left)


def startup_calls(config: CompileConfig) -> int:
    """How many times start-up calls each prepared shape."""
    return CUDAGRAPH_STARTUP_CALLS if config.uses_cudagraphs else 1


@dataclass(frozen=True)
class ReplayPlan:
    """What a replay trial serves: the traffic, the stream of requests, the strategy's buckets
    and the shapes it prepares at start-up. Pure.

    `shapes` are the distinct shapes the replay executes (the stream's, then the start-up's that
    the stream never meets); `request_shape` maps each request of the stream to one of them."""

    traffic: Traffic
    trace: list[int]  # the stream: indices into traffic.shapes, in order
    buckets: BucketPlan
    shapes: list[dict[str, int]] = field(default_factory=list)
    weights: list[float] = field(default_factory=list)  # share of the stream, summing to 1
    request_shape: list[int] = field(default_factory=list)  # stream -> index into `shapes`
    startup_shapes: list[int] = field(default_factory=list)  # indices into `shapes`
    split: int = 0  # where the holdout starts in the log (0: declared traffic, no holdout)
    fit_requests: int = 0  # requests the plan was fitted on (0: declared traffic)

    @classmethod
    def build(cls, traffic: Traffic, strategy: str, n: int | None = None) -> ReplayPlan:
        fit, trace, split = traffic.split(n or settings.replay_requests())
        buckets = BucketPlan.for_strategy(strategy, fit)
        known = _startup_dims(fit, buckets)
        used = list(dict.fromkeys(trace))
        dims = [dict(traffic.shapes[t][0]) for t in used]
        position = {t: i for i, t in enumerate(used)}
        for d in known:
            if d not in dims:
                dims.append(dict(d))
        counts = [0] * len(dims)
        for t in trace:
            counts[position[t]] += 1
        return cls(
            traffic=traffic,
            trace=trace,
            buckets=buckets,
            shapes=dims,
            weights=[c / len(trace) for c in counts],
            request_shape=[position[t] for t in trace],
            startup_shapes=[dims.index(d) for d in known],
            split=split,
            fit_requests=int(sum(w for _, w in fit)) if split else 0,
        )

    def weight(self, i: int) -> float:
        """The share of the stream's requests that have distinct shape `i`."""
        return self.weights[i]

    def new_positions(self) -> list[int]:
        """The stream's positions that meet a shape (bucket) executed neither at start-up nor
        earlier in the stream, when the whole stream is served in order."""
        keys = self.bucket_keys()
        seen = {keys[i] for i in self.startup_shapes}
        new = []
        for n, i in enumerate(self.request_shape):
            if keys[i] not in seen:
                new.append(n)
                seen.add(keys[i])
        return new

    def served_part(self, positions: list[int]) -> ReplayPlan:
        """This plan with its stream cut to the requests at ``positions`` (ascending, from 0),
        each weighted by the requests it stands for (`advisor.sizing.coverage`): what a sampled
        stream's steady state and reference work on. The shapes and their indices stay."""
        weights = [0.0] * len(self.shapes)
        total = len(self.request_shape)
        for p, w in zip(positions, coverage(positions, total), strict=True):
            weights[self.request_shape[p]] += w / total
        return replace(self, weights=weights,
                       request_shape=[self.request_shape[p] for p in positions])

    def reference_shapes(self) -> list[dict[str, Any]]:
        """The shapes the trial's fp32 eager reference runs (unpadded, one per distinct shape)."""
        return [{"dims": dict(d), "weight": self.weight(i)} for i, d in enumerate(self.shapes)]

    def bucket_keys(self) -> list[str]:
        """Per distinct shape: the name of the bucket (padded shape) it runs at."""
        return [shape_name(self.buckets.bucket(d)) for d in self.shapes]

    def startup(self) -> list[int]:
        """Distinct shapes called at start-up (before the stream), in order."""
        return list(self.startup_shapes)

    def padding_waste(self) -> float:
        """The share of the stream's computed elements that are padding."""
        return self.buckets.padding_waste([(self.shapes[i], 1.0) for i in self.request_shape])

    def in_grid(self, i: int) -> bool:
        """Whether distinct shape `i` runs in one of a bucketed plan's buckets: every padded dim
        at or under its top boundary (above it, a size passes unpadded) and every other dim as
        fitted (as the start-up's first shape has it). False for a plan that pads nothing."""
        if not self.buckets.pads or not self.startup_shapes:
            return False
        bounds, fitted = self.buckets.bounds, self.shapes[self.startup_shapes[0]]
        return all(v <= max(bounds[d]) if d in bounds else v == fitted.get(d)
                   for d, v in self.shapes[i].items())

    def grid_left(self) -> int | None:
        """The buckets of a bucketed plan's grid (`BucketPlan.grid_size`) that neither its
        start-up nor its stream met: the most new shapes inside the grid a longer-lived server
        can still meet. None for a plan that pads nothing."""
        if not self.buckets.pads:
            return None
        keys = self.bucket_keys()
        met = {keys[i] for i in {*self.startup_shapes, *self.request_shape} if self.in_grid(i)}
        return max(0, self.buckets.grid_size() - len(met))


def _startup_dims(
    fit: list[tuple[dict[str, int], float]], buckets: BucketPlan
) -> list[dict[str, int]]:
    """What a strategy prepares before traffic, from what it was fitted on: one shape per bucket
    the fitted traffic uses (bucketed), or its `STARTUP_SHAPES` most frequent shapes (ties: the
    first seen first)."""
    heaviest = sorted(fit, key=lambda pair: -pair[1])
    if not buckets.pads:
        return [dict(d) for d, _ in heaviest[:STARTUP_SHAPES]]
    first: dict[str, dict[str, int]] = {}
    for d, _ in heaviest:
        first.setdefault(shape_name(buckets.bucket(d)), dict(d))
    return list(first.values())


def replay_plan(spec: TrialSpec | WarmSpec | AloneSpec, config: CompileConfig, workload: Any
                ) -> ReplayPlan | None:
    """The replay a trial spec asks for, or None for the usual per-shape trial."""
    traffic = Traffic.from_spec(spec.get("shapes"))
    if traffic is None and config.shapes == "static":
        return None
    if traffic is None:
        traffic = Traffic.from_pairs(workload.traffic)
    if shape_strategy(config.shapes)[0] == "buckets" and workload.pad is None:
        raise WorkloadError(
            f"shape strategy {config.shapes} pads inputs, but workload {workload.name} has no "
            "pad() and cut(); add them (see advisor.workload) or choose static, dynamic or "
            "mark_dynamic"
        )
    return ReplayPlan.build(traffic, config.shapes)


def _limit_hits() -> int:
    import torch._dynamo.utils as dynamo_utils

    return sum(
        v for k, v in dynamo_utils.counters["unimplemented"].items() if str(k).startswith(LIMIT_HIT)
    )


def _frames_ok() -> int:
    import torch._dynamo.utils as dynamo_utils

    return int(dynamo_utils.counters["frames"]["ok"])


class _Replay:
    """The torch side of one replay; `run()` fills the trial's record."""

    def __init__(
        self, run: Any, workload: Any, plan: ReplayPlan,
        reference: Callable[[list[int]], list[Any]]
    ) -> None:
        self.run, self.wl, self.plan, self.reference = run, workload, plan, reference
        self.outs: dict[int, Any] = {}  # the first output of every distinct shape, on the CPU
        self.config: CompileConfig = run.config
        self.kind = shape_strategy(self.config.shapes)[0]
        self.limit_hit = False
        self.eager: set[str] = set()  # buckets that run eagerly
        self.recompiles = 0
        self.compile_s = 0.0
        self.startup_s = 0.0
        self.startup_wall_s = 0.0
        self.stream_ms: list[float] = []  # each stream request's cost, in order
        self.stream_new: list[bool] = []  # whether it met a shape not executed before
        self.last_new_s: float | None = None  # from the stream's start to its last new shape
        self.mem_startup = self.mem_stream = 0
        self.warmups: list[int] = []
        # the sweep's bar (``spec["prune"]``): the stream stops once the process is proven above it
        self.prune: PruneBar | None = None
        self._bar_mtime: int | None = None  # the bar file's, when last read (`_reread_bar`)
        self.pruned: Pruned | None = None
        # a budgeted trial's time (`TrialClock`), and what it kept when stopped by it
        self.clock = TrialClock.of(run.spec)
        self.stopped: Stopped | None = None
        self.where = "preparing"  # the replay's phase, as a stopped record names it
        self.calls: int = int(run.spec.get("calls_per_process") or 0) or _default_calls()
        self.build_s = 0.0  # building the model in the config's dtype
        self.startup_t0: float | None = None
        self.startup_done = False  # its wall time (`startup_wall_s`) is known
        self.stream_t0: float | None = None
        self.stream_s: float | None = None  # the stream's wall time, once served
        self.stream_compiled: list[bool] = []  # whether each stream request compiled
        self.steady: SteadyPlan | None = None  # what the steady state measures (`_plan_steady`)
        # the stream's positions served (all of them, or a sample: advisor.sizing.stream_stride)
        # and, once it is served, the sample's figures (None: served whole)
        self.positions: list[int] = []
        self.stride = 1
        self.fixed_positions: list[int] | None = None  # serving alone: the trial's sample
        self.whole_plan = plan  # the plan before its stream was cut to a sample
        self.whole_new = set(plan.new_positions())
        self.sample: StreamSample | None = None

    # -- set-up -------------------------------------------------------------------------------
    def _limit(self) -> int:
        import torch._dynamo.config as dynamo_config

        limit = settings.recompile_limit() or int(dynamo_config.recompile_limit)
        if self.plan.buckets.pads:  # every bucket the boundaries define, as a server must
            limit = max(limit, self.plan.buckets.grid_size(), len(set(self.plan.bucket_keys())))
        dynamo_config.recompile_limit = limit
        return limit

    def _prepare(self, dtype: Any) -> list[Any]:
        """Per distinct shape: its arguments (cast, marked dynamic when asked)."""
        from advisor.child.tensors import cast_floating

        args = [cast_floating(self.run._inputs(self.wl, d), dtype) for d in self.plan.shapes]
        if self.kind == "mark_dynamic":
            _mark_dynamic(
                args, self.plan, lambda d: cast_floating(self.run._inputs(self.wl, d), dtype)
            )
        return args

    def _serve_fns(self, fn: Any, args: list[Any]) -> list[Callable[[], Any]]:
        """Per distinct shape: one request, as served (pad, call, cut)."""
        from advisor.child.measure import Call

        fns: list[Callable[[], Any]] = []
        for dims, a in zip(self.plan.shapes, args, strict=True):
            to = self.plan.buckets.bucket(dims)
            if to == dims:
                fns.append(Call(fn, a))
            else:
                fns.append(_padded(fn, self.wl, a, dict(dims), to))
        return fns

    # -- phases -------------------------------------------------------------------------------
    def _call(
        self, timer: Any, i: int, fns: list[Callable[[], Any]], keys: list[str], seen: set[str]
    ) -> tuple[Any, bool, float]:
        """One request as a server meets it: (output, compiled?, its cost in ms, everything it
        triggered included); tracks recompiles and eager fallbacks."""
        frames, hits = _frames_ok(), _limit_hits()
        out, elapsed_ms = timer.call_timed(fns[i])
        compiled = _frames_ok() > frames
        if compiled:
            self.compile_s += elapsed_ms / 1000
        new_bucket = keys[i] not in seen
        if _limit_hits() > hits:
            self.limit_hit = True
        if new_bucket and self.config.compiled and not compiled and self.limit_hit:
            self.eager.add(keys[i])
        seen.add(keys[i])
        return out, compiled, elapsed_ms

    def _stance(self) -> Any:
        import contextlib

        import torch

        if self.plan.buckets.pads and self.config.compiled:
            return torch.compiler.set_stance("fail_on_recompile")
        return contextlib.nullcontext()

    def run_replay(self) -> None:

        from advisor.child.measure import (
            HostWatch,
            Timer,
            compiler_counters_reset,
            compiler_facts,
            keep_state,
            phase,
            profile_call,
        )
        from advisor.child.prepare import cast_model, compiled, input_dtype

        run, cfg = self.run, self.config
        keep_state(self._stopped_state)  # what a kill at the time limit keeps (the launcher)
        limit = self._limit()
        t0 = time.perf_counter()
        model = cast_model(run._build(self.wl, cfg.dtype), cfg)
        self.build_s = time.perf_counter() - t0
        timer = Timer(run.device, cudagraphs=cfg.uses_cudagraphs)
        with run._grad_mode(self.wl):
            # Made inside the grad mode, like the padded ones: inference tensors and normal
            # tensors differ in dispatch keys, which dynamo guards on (a recompile).
            args = self._prepare(input_dtype(cfg))
            run.stage = "compile"
            phase("compiling")
            compiler_counters_reset()
            mem0 = _reserved(run.device)
            fn = compiled(model, cfg)
            fns = self._serve_fns(fn, args)
            # the host over the stream and the steady state (advisor.hostload): a stream served
            # beside other processes' CPU work is stored as contended, which never decides, and
            # a stream started on a busy host is not stopped by the sweep's bar
            watch = HostWatch(run.device, run.threads)
            run.quiet = watch.quiet_first(self.clock.quiet_wait_s())
            self.prune = run.spec.get("prune") if run.quiet else None
            watch.begin()
            phase("compiling")  # again after any wait for quiet: the start-up compiles
            self._serve_untimed(timer, fns)
            if self.pruned is None and self.stopped is None:
                run.stage = "measure"
                self.where = "measuring"
                phase("measuring")
                self.steady = self._plan_steady()  # None: stopped, no time for a steady state
            if self.pruned is not None or self.stopped is not None:
                # proven worse than the sweep's best, or out of time: no steady state
                if self.pruned is not None:
                    run.record["pruned"] = self.pruned
                elif self.stopped is not None:
                    run.record["stopped"] = self.stopped
                run.record.update({"method": timer.method, "host": watch.end()})
                return
            steady = self.steady
            assert steady is not None
            with self._stance():
                frames = _frames_ok()
                per_request, passes, telemetry = self._timed(timer, fns)
                run.record["host"] = watch.end()
                self.recompiles += _frames_ok() - frames  # none expected once every shape ran
                mem1 = _reserved(run.device)
                facts = compiler_facts()
                rows = self._bucket_rows(per_request, timer, fns)
                self.where = "profiling"
                phase("profiling")
                weights = self._weights()
                heaviest = max(weights, key=lambda i: weights[i])
                profile = profile_call(timer, fns[heaviest])
        self._fill(per_request, passes, rows, facts, limit, timer.method, telemetry.summary())
        self.run.keep_profile(profile)
        replay: ReplayFigures = self.run.record["replay"]
        replay["cudagraph_mem_bytes"] = (
            (mem1 - mem0) if run.device.startswith("cuda") and cfg.uses_cudagraphs else None
        )
        replay["stream"] = self._stream(mem0)
        replay["steady_sample"] = self._sample_figures(per_request)
        self._check()
        replay["flags"] = self._flags(replay)

    def _check(self) -> None:
        """The fp32 eager reference of the shapes the steady state measured (every distinct
        shape, or its sample), run now, after the stream; then the accuracy of the stream's
        first output of each, weighted as the steady state weights them."""
        run = self.run
        self.where = "reference"
        chosen, weights = self._checked()
        refs = [self.outs[i] for i in chosen] if self._own_reference() else self.reference(chosen)
        run.stage = "accuracy"
        run._accuracy(self.wl, refs, [self.outs[i] for i in chosen], weights)
        if self.eager:
            run.record["passed"] = False  # right results, but eager speed: not a candidate

    def _checked(self) -> tuple[list[int], list[float]]:
        """The distinct shapes the reference checks and their weights: every one (the start-up's
        too) when the steady state timed every one, else its sample's."""
        if self.steady is None or not self.steady.sampled:
            # every shape executed (a sampled stream's: those it served, and the start-up's)
            chosen = [i for i in range(len(self.plan.shapes)) if i in self.outs]
            return chosen, [self.plan.weights[i] for i in chosen]
        weights = self.steady.weights()
        return list(weights), list(weights.values())

    def _weights(self) -> dict[int, float]:
        """Each shape the steady state timed, with its share of the traffic (the stream's
        exactly, or as the sample's draws estimate it)."""
        assert self.steady is not None
        if not self.steady.sampled:
            return {i: self.plan.weight(i) for i in sorted(set(self.plan.request_shape))}
        return self.steady.weights()

    # -- a budgeted replay's time (`TrialClock`) ----------------------------------------------
    def _call_costs(self) -> dict[int, float]:
        """Each distinct shape of the stream's cost of one call (ms), from the stream: the
        cheapest of its requests that compiled nothing; for a shape whose every request
        compiled, the median cost per element of the others times its (padded) size, or its
        own cost when none is known."""
        plan = self.plan
        plain: dict[int, list[float]] = {}
        paid: dict[int, list[float]] = {}
        for ms, i, compiled_ in zip(self.stream_ms, plan.request_shape, self.stream_compiled,
                                    strict=False):
            paid.setdefault(i, []).append(ms)
            if not compiled_:
                plain.setdefault(i, []).append(ms)
        per_element = [min(v) / _padded_size(plan, i) for i, v in plain.items()]
        rate = statistics.median(per_element) if per_element else None
        costs = {}
        for i, seen in paid.items():
            if i in plain:
                costs[i] = min(plain[i])
            else:
                costs[i] = rate * _padded_size(plan, i) if rate is not None else min(seen)
        return costs

    def _own_reference(self) -> bool:
        """Whether this config is the fp32 eager reference itself (its outputs are the
        reference's: nothing to run again)."""
        return not self.config.compiled and self.config.dtype == "fp32"

    def _reference_factor(self) -> float:
        return 0.0 if self._own_reference() else REFERENCE_FACTOR

    def _warm_calls(self) -> int:
        """The steady state's warm-up calls of a timed shape: `REPLAY_WARMUP_CALLS`
        (`CUDAGRAPH_STARTUP_CALLS` under CUDA graphs); none for an eager config, whose stream
        already called every shape the steady state times and which has nothing to compile."""
        if self.config.uses_cudagraphs:
            return CUDAGRAPH_STARTUP_CALLS
        return REPLAY_WARMUP_CALLS if self.config.compiled else 0

    def _fixed_calls(self) -> float:
        """Calls of each timed shape besides the passes: its warm-up, the reference's call (in
        calls of this config), and on a GPU the back-to-back calls of its throughput."""
        warm = self._warm_calls()
        back_to_back = self.run.policy.throughput_calls if self.run.device.startswith("cuda") \
            else 0
        return warm + self._reference_factor() + back_to_back

    def _overhead_s(self, costs: dict[int, float]) -> float:
        """What a replay does after its stream besides the timed shapes: the reference's model
        built (as long as this config's took) and two profiled calls of the heaviest shape."""
        return self.build_s + 2 * max(costs.values()) * (1 + self._reference_factor()) / 1000

    def _plan_steady(self) -> SteadyPlan | None:
        """The steady state this replay can afford (advisor.sizing.plan_steady): every shape,
        or a sample, sized to what is left of its share once the stream is served; None, and
        the trial stopped, when not even the smallest fits before its time limit."""
        from advisor.sizing import plan_steady

        plan, costs = self.plan, self._call_costs()
        sizes = {i: float(math.prod(plan.shapes[i].values())) for i in costs}
        overhead = self._overhead_s(costs)
        left = self.clock.left()
        steady = plan_steady(costs, sizes, plan.request_shape,
                             None if left is None else left - overhead,
                             fixed_calls=self._fixed_calls(),
                             stream_weights=None if self.sample is None
                             else self.sample["weights"])
        stop_at = self.clock.stop_at
        if not steady.fits and stop_at is not None and (
                time.monotonic() + steady.estimated_s + overhead > stop_at):
            self.stopped = self._stopped_state(
                f"the stream was served whole, but no steady state fits in what is left of its "
                f"time ({max(0.0, stop_at - time.monotonic()):.0f} s; the least, "
                f"{min(MIN_DRAWS, steady.of_shapes)} shapes, needs about "
                f"{steady.estimated_s + overhead:.0f} s)")
            return None
        return steady

    def _out_of_time(self) -> bool:
        """Whether the stream stops now: past its time limit, or past its share and, at the
        stream's typical request so far, not projected to serve the rest and measure the
        smallest steady state (`MIN_DRAWS` shapes, `MIN_PASSES` passes) before the limit."""
        clock = self.clock
        if clock.stop_at is None:
            return False
        now = time.monotonic()
        if now >= clock.stop_at:
            return True
        if clock.share_end is None or now < clock.share_end or not self.stream_ms:
            return False
        typical_s = statistics.median(self.stream_ms) / 1000
        left = self._left_to_serve()
        return now + typical_s * (left + self._least_steady_calls()) + self.build_s \
            > clock.stop_at

    def _least_steady_calls(self) -> float:
        """The calls of the smallest steady state (advisor.sizing.plan_steady's floor): at most
        `MIN_DRAWS` of the shapes the stream serves at its current stride, each warmed up,
        referenced and timed once."""
        total = len(self.whole_plan.request_shape)
        start = self.positions[-1] + 1 if self.positions else 0
        ahead = (self.fixed_positions[len(self.positions):] if self.fixed_positions is not None
                 else range(first_at(start, self.stride), total, self.stride))
        shapes = {self.whole_plan.request_shape[p] for p in [*self.positions, *ahead]}
        return min(MIN_DRAWS, len(shapes)) * (self._fixed_calls() + 1)

    def _left_to_serve(self) -> int:
        """Requests of the stream still to serve at the current stride."""
        total = len(self.whole_plan.request_shape)
        if self.fixed_positions is not None:
            return len(self.fixed_positions) - len(self.positions)
        start = self.positions[-1] + 1 if self.positions else 0
        return len(range(first_at(start, self.stride), total, self.stride))

    def _sizes(self) -> list[float]:
        """Every stream request's size (elements computed, padded), in order."""
        plan = self.whole_plan
        return [_padded_size(plan, i) for i in plan.request_shape]

    def _next_stride(self, sizes: list[float]) -> int:
        """The stride the stream goes on at (advisor.sizing.stream_stride): a budgeted trial's
        stream sized to what is left of its share once the smallest steady state and the
        reference are set aside, priced per element at what it served so far."""
        left = self.clock.left()
        if left is None or self.fixed_positions is not None or not self.stream_ms:
            return self.stride
        paid = sum(sizes[p] for p in self.positions)
        rate = sum(self.stream_ms) / paid if paid > 0 else 0.0
        typical_ms = rate * statistics.median(sizes)
        reserve_s = self._least_steady_calls() * typical_ms / 1000 + self.build_s
        start = self.positions[-1] + 1
        return stream_stride(self.stride, start, sizes, rate, left - reserve_s)

    def _bound_costs(self) -> list[float]:
        """The served costs a lower bound may use (advisor.serving.bound_costs)."""
        from advisor.serving import bound_costs

        new_in_run = [j for j, n in enumerate(self.stream_new) if n]
        if len(self.positions) == len(self.whole_plan.request_shape):
            return list(self.stream_ms)
        return bound_costs(self.stream_ms, new_in_run, self._sample_of(self.positions))

    def _sample_of(self, positions: list[int]) -> StreamSample:
        """The sample's figures (advisor.records.StreamSample) for the positions served."""
        plan = self.whole_plan
        total = len(plan.request_shape)
        new = sorted(self.whole_new)
        return {
            "of_requests": total, "positions": list(positions),
            "weights": coverage(positions, total) if positions else [],
            "new_positions": new,
            "bounded_new_positions": [p for p in new if plan.in_grid(plan.request_shape[p])],
        }

    def _stopped_state(self, reason: str | None = None) -> Stopped:
        """What the trial keeps if it is stopped now (advisor.records.Stopped): how far it got
        and, where what it paid proves one, a lower bound of its process-life cost
        (advisor.serving.process_life_lower_bound_ms: the start-up so far, or all of it and the
        requests served). No bound on a busy host (a contended figure bounds nothing), nor for
        traffic whose dims never vary (its steady state decides, not the process)."""
        from advisor.serving import process_life_lower_bound_ms

        served, total = len(self.stream_ms), len(self.whole_plan.request_shape)
        startup: float | None = self.startup_wall_s if self.startup_done else None
        if startup is None and self.startup_t0 is not None:
            startup = time.perf_counter() - self.startup_t0  # start-up so far: at least this
        bound = None
        if (startup is not None and getattr(self.run, "quiet", True)
                and self.plan.traffic.varying_dims()):
            bound = process_life_lower_bound_ms(startup, self._bound_costs(), self.calls)
        stream_s = self.stream_s
        if stream_s is None and self.stream_t0 is not None:
            stream_s = time.perf_counter() - self.stream_t0
        share = self.clock.share_s
        where = {"start-up": "in its start-up", "replaying": "while serving its stream"}.get(
            self.where, f"while {self.where}")
        return {
            "lower_bound_ms": bound, "requests_served": served, "requests_total": total,
            "phase": self.where,
            "reason": reason or (f"its time ({share:.0f} s of the budget) ended {where}, "
                                 f"after {served} of {total} requests" if share is not None
                                 else f"stopped {where}, after {served} of {total} requests"),
            "elapsed_s": round(self.clock.elapsed_s(), 3),
            "stream_s": None if stream_s is None else round(stream_s, 3),
            "share_s": share, "calls_per_process": self.calls,
        }

    def _serve_untimed(self, timer: Any, fns: list[Callable[[], Any]]) -> None:
        """Start-up, then the stream: the trace once, in order, every request timed with what it
        triggers (no stance: a shape the strategy did not prepare is met as a server meets it)."""
        from advisor.child.measure import count, phase
        from advisor.child.tensors import to_cpu_fp32

        run, plan = self.run, self.plan
        rec: TrialRecord = run.record
        keys, seen = plan.bucket_keys(), set[str]()
        outs: dict[int, Any] = {}
        t0 = self.startup_t0 = time.perf_counter()
        self.where = "start-up"
        prepared = plan.startup()
        for n, i in enumerate(prepared):
            if self._out_of_time():
                self.stopped = self._stopped_state()
                return
            count(n, len(prepared), "start-up shape")
            for _ in range(startup_calls(self.config)):
                out, _, _ = self._call(timer, i, fns, keys, seen)
            outs[i] = to_cpu_fp32(out)
        timer.sync()
        self.startup_wall_s = time.perf_counter() - t0
        self.startup_done = True
        self.startup_s = self.compile_s
        self.mem_startup = _reserved(run.device)
        rec["cold_compile_s"] = self.startup_s if self.config.compiled else None
        run.lock.hold("measure")  # the stream is timed: alone on the device, like any sample
        run.stage = "replay"
        self.where = "replaying"
        phase("replaying")
        started = self.stream_t0 = time.perf_counter()
        total = len(plan.request_shape)
        sizes = self._sizes()
        fixed = None if self.fixed_positions is None else set(self.fixed_positions)
        for n, i in enumerate(plan.request_shape):
            # a sampled stream (`_next_stride`) serves every stride-th request; serving alone,
            # the trial's own sample
            if (n % self.stride) if fixed is None else (n not in fixed):
                continue
            # after start-up and after each request: stop once proven above the sweep's bar,
            # or once the trial's time is up (a budgeted sweep: `_out_of_time`)
            self._reread_bar()
            if self.prune is not None and self._proven_above(self.prune):
                break
            if self._out_of_time():
                self.stopped = self._stopped_state()
                break
            served = len(self.positions)
            count(served, served + self._left_to_serve(),
                  "request" if self.stride == 1 and fixed is None else "sampled request")
            new = keys[i] not in seen
            out, compiled, ms = self._call(timer, i, fns, keys, seen)
            self.recompiles += int(compiled)
            self.stream_ms.append(ms)
            self.stream_new.append(new)
            self.stream_compiled.append(compiled)
            self.positions.append(n)
            if new:
                self.last_new_s = time.perf_counter() - started
            if i not in outs:
                outs[i] = to_cpu_fp32(out)
            self.stride = self._next_stride(sizes)
        self.stream_s = time.perf_counter() - started
        if self.stopped is None and self.pruned is None and len(self.positions) < total:
            # served in part: what follows works on the sample, each request weighted by the
            # requests it stands for
            self.sample = self._sample_of(self.positions)
            self.plan = plan.served_part(self.positions)
        self.mem_stream = _reserved(run.device)
        self.outs = outs

    def _reread_bar(self) -> None:
        """The sweep's bar as its parent last wrote it (``spec["prune_file"]``, rewritten while
        other trials finish: a pooled sweep's first wave starts before any bar exists); read
        again only when the file changed."""
        import json
        import os

        path = self.run.spec.get("prune_file")
        if not path:
            return
        try:
            changed = os.stat(path).st_mtime_ns
        except OSError:
            return
        if changed == self._bar_mtime:
            return
        self._bar_mtime = changed
        try:
            with open(path) as f:
                bar = json.load(f)
        except (OSError, ValueError):
            return
        if bar:
            self.prune = bar

    def _proven_above(self, bar: PruneBar) -> bool:
        """Whether what the process paid so far proves its process-life cost above the sweep's
        bar (advisor.serving.process_life_lower_bound_ms); if so, keeps the proof (`pruned`)."""
        from advisor.serving import process_life_lower_bound_ms

        calls, served = bar["calls_per_process"], len(self.stream_ms)
        total = len(self.whole_plan.request_shape)
        bound = process_life_lower_bound_ms(self.startup_wall_s, self._bound_costs(), calls)
        if bound <= bar["above_ms"]:
            return False
        self.pruned = {
            "lower_bound_ms": bound, "above_ms": bar["above_ms"], "requests_served": served,
            "requests_total": total, "calls_per_process": calls,
            "reason": (f"after {served} of {total} requests (start-up {self.startup_wall_s:.3g} s "
                       f"+ {sum(self.stream_ms[:calls]):.4g} ms served), a {calls:,}-request "
                       f"process costs at least {bound:.4g} ms a request, above "
                       f"{bar['above_ms']:.4g} ms: the best finished trial's process-life cost "
                       f"+ {bar['margin']:.0%}"),
        }
        return True

    def _stream(self, mem0: int) -> StreamFigures:
        """The stream's figures (see `run_replay`)."""
        plan, costs, new = self.plan, self.stream_ms, self.stream_new
        new_costs = [ms for ms, n in zip(costs, new, strict=True) if n]
        half = len(costs) // 2
        figures: StreamFigures = {
            "requests": len(costs),
            "split": plan.split,
            "fit_requests": plan.fit_requests,
            "startup_shapes": len(plan.startup()),
            "startup_s": self.startup_wall_s,
            "per_request_ms": [round(ms, 4) for ms in costs],
            "new_shape": [i for i, n in enumerate(new) if n],
            "bounded_new_shape": [i for i, n in enumerate(new)
                                  if n and plan.in_grid(plan.request_shape[i])],
            "grid_left": plan.grid_left(),
            "mean_ms": statistics.fmean(costs),
            "new_shape_events": len(new_costs),
            "new_shape_mean_ms": statistics.fmean(new_costs) if new_costs else None,
            "new_shape_share": len(new_costs) / len(costs),
            "late_new_shape_share": sum(new[half:]) / max(1, len(costs) - half),
            "last_new_shape_s": self.last_new_s,
            "mem_startup_bytes": self.mem_startup - mem0 if self.mem_startup else None,
            "mem_growth_bytes": self.mem_stream - self.mem_startup if self.mem_stream else None,
        }
        if self.sample is not None:
            figures["sample"] = self.sample
        return figures

    def _flags(self, replay: ReplayFigures) -> list[Flag]:
        """What a serving process of this config meets that it should be told (never silent)."""
        from advisor.serving import flags

        return flags(replay, cudagraphs=self.config.uses_cudagraphs, compiled=self.config.compiled)

    def _timed(self, timer: Any, fns: list[Callable[[], Any]]) -> tuple[list[float], int, Any]:
        """Warm-up of every timed shape (`REPLAY_WARMUP_CALLS`; under CUDA graphs
        `CUDAGRAPH_STARTUP_CALLS`), then timed passes over the steady plan's draws (the
        stream's requests in order, or the sample's draws): (each draw's latency, passes,
        telemetry). A draw's latency is the median of its passes (a stray OS hiccup is not a
        tail). The passes stop at the plan's, after the policy's ``max_time_s``, or (a budgeted
        trial) when another would leave too little of its share for the reference; one at
        least."""
        from advisor import fingerprint
        from advisor.child.measure import count, warm_up

        plan, policy, steady = self.plan, self.run.policy, self.steady
        assert steady is not None
        warming = replace(policy, warmup_iters=min(policy.warmup_iters, self._warm_calls()))
        self.warmups = [0] * len(plan.shapes)
        for n, i in enumerate(steady.shapes):
            count(n, len(steady.shapes), "shape warmed")
            self.warmups[i] = warm_up(timer, fns[i], warming)
        timings: list[list[float]] = [[] for _ in steady.draws]
        costs = self._call_costs()
        reserve_s = (self._overhead_s(costs) + self._reference_factor()
                     * sum(costs[i] for i in steady.shapes) / 1000)
        passes = 0
        with fingerprint.Telemetry(self.run.device) as telemetry:
            started = time.perf_counter()
            while passes < steady.passes:
                count(passes, steady.passes, "timed pass")
                pass_t0 = time.perf_counter()
                for r, i in enumerate(steady.draws):
                    timings[r].append(timer.time_ms(fns[i]))
                passes += 1
                now = time.perf_counter()
                left = self.clock.left()
                if now - started >= policy.max_time_s or (
                        left is not None and left - reserve_s < now - pass_t0):
                    break
        return [statistics.median(t) for t in timings], passes, telemetry

    def _samples(self, per_request: list[float]) -> list[list[float]]:
        """Per distinct shape: the latencies of its timed draws (its stream requests, when
        every shape was timed)."""
        assert self.steady is not None
        samples: list[list[float]] = [[] for _ in self.plan.shapes]
        for r, i in enumerate(self.steady.draws):
            samples[i].append(per_request[r])
        return samples

    def _sample_figures(self, per_request: list[float]) -> SteadySample:
        """What the steady state was measured on (advisor.records.SteadySample)."""
        steady = self.steady
        assert steady is not None
        interval = mean_interval(per_request) if steady.sampled else None
        passes = self.run.record["replay"]["passes"]
        return {
            "shapes": len(steady.shapes), "of_shapes": steady.of_shapes,
            "draws": len(steady.draws), "passes": passes, "sampled": steady.sampled,
            "seed": SAMPLE_SEED,
            "mean_ci_ms": None if interval is None else [round(v, 6) for v in interval],
            "time_share_s": self.clock.share_s,
        }

    def _fill(
        self,
        per_request: list[float],
        passes: int,
        rows: list[ShapeFigures],
        facts: CompilerFacts,
        limit: int,
        method: str,
        telemetry: TelemetryFigures,
    ) -> None:
        from advisor.child.measure import peak_mem
        from advisor.stats import Stats

        rec: TrialRecord = self.run.record
        cfg, plan = self.config, self.plan
        self.run.keep_compiler_facts(facts)
        stats = Stats(per_request)
        rec.update({
            "shapes": rows, "telemetry": telemetry, "method": method,
            "recompiles": self.recompiles, "median_ms": stats.median_ms, "p90_ms": stats.p90_ms,
            "p99_ms": stats.p99_ms, "mean_ms": stats.mean_ms, "noisy": stats.noisy,
            "warmup_iters": max(self.warmups), "peak_mem_bytes": peak_mem(self.run.device),
        })  # fmt: skip
        samples, weights = self._samples(per_request), self._weights()
        # Each shape's typical (median) request, weighted by how often the traffic sends it.
        expected = sum(weights[i] * statistics.median(s) for i, s in enumerate(samples) if s)
        keys = plan.bucket_keys()
        eager_requests = sum(1 for i in plan.request_shape if keys[i] in self.eager)
        rec["replay"] = {
            "strategy": cfg.shapes,
            "traffic_source": plan.traffic.source,
            "traffic_shapes": len(plan.traffic.shapes),
            "varying_dims": plan.traffic.varying_dims(),
            "requests": len(self.whole_plan.request_shape),
            "trace_shapes": len(set(plan.request_shape)),
            "holdout": plan.traffic.holdout if plan.split else None,
            "split": plan.split,
            "seed": TRACE_SEED,
            "passes": passes,
            "boundaries": {d: list(b) for d, b in plan.buckets.bounds.items()},
            "buckets": len(set(keys)),
            "expected_ms": expected,
            "mean_ms": stats.mean_ms,
            "p50_ms": stats.median_ms,
            "p90_ms": stats.p90_ms,
            "p99_ms": stats.p99_ms,
            "padding_waste": plan.padding_waste(),
            "graphs": facts["graph_count"] if cfg.compiled else 0,
            "startup_compile_s": self.startup_s if cfg.compiled else 0.0,
            "compile_s_total": self.compile_s if cfg.compiled else 0.0,
            "recompiles": self.recompiles,
            "stance": "fail_on_recompile" if plan.buckets.pads and cfg.compiled else None,
            "recompile_limit": limit,
            "recompile_limit_hit": self.limit_hit,
            "eager_fallbacks": len(self.eager),
            "eager_fallback_buckets": sorted(self.eager),
            "eager_fallback_requests": eager_requests / len(plan.request_shape),
            "cudagraph_mem_bytes": None,
        }

    def _bucket_rows(
        self, per_request: list[float], timer: Any, fns: list[Callable[[], Any]]
    ) -> list[ShapeFigures]:
        """One `shapes` entry per bucket: its traffic weight and its requests' latencies."""
        from advisor.child.measure import throughput_per_s
        from advisor.stats import Stats

        plan, keys = self.plan, self.plan.bucket_keys()
        rows: list[ShapeFigures] = []
        samples, weights = self._samples(per_request), self._weights()
        for key in sorted(set(keys), key=lambda k: _size_key(plan, keys, k)):
            members = [i for i, k in enumerate(keys) if k == key]
            bucket_samples = [ms for i in members for ms in samples[i]]
            if not bucket_samples:
                continue
            timed = [i for i in members if i in weights]
            heaviest = max(timed, key=lambda i: weights[i])
            stats = Stats(bucket_samples)
            if timer.cuda:  # calls queued back to back: what the GPU sustains
                rate = throughput_per_s(timer, fns[heaviest],
                                        self.run.policy.throughput_count(stats.median_ms))
            else:  # CPU calls are synchronous: back to back is one call after another
                rate = 1000 / stats.median_ms if stats.median_ms > 0 else math.inf
            row: BucketFigures = {
                "shape": key,
                "dims": plan.buckets.bucket(plan.shapes[members[0]]),
                "weight": sum(weights[i] for i in timed),
                **stats.to_dict(),
                "throughput_per_s": rate,
                "warmup_iters": max(self.warmups[i] for i in members),
                "requests": sum(1 for i in plan.request_shape if i in members),
                "shapes_served": len(members),
                "eager": key in self.eager,
            }
            rows.append(row)
        return rows


def _reserved(device: str) -> int:
    """GPU memory reserved by torch's caching allocator (0 off a GPU)."""
    import torch

    return int(torch.cuda.memory_reserved()) if device.startswith("cuda") else 0


def _default_calls() -> int:
    from advisor.serving import DEFAULT_CALLS_PER_PROCESS

    return DEFAULT_CALLS_PER_PROCESS


def _padded_size(plan: ReplayPlan, i: int) -> float:
    """The elements distinct shape ``i`` computes, padded to its bucket."""
    return float(math.prod(plan.buckets.bucket(plan.shapes[i]).values()))


def _size_key(plan: ReplayPlan, keys: list[str], key: str) -> tuple[int, ...]:
    i = keys.index(key)
    return tuple(plan.buckets.bucket(plan.shapes[i]).values())


class _padded:
    """A request padded to its bucket: pad, call, cut."""

    def __init__(
        self, fn: Any, wl: Any, args: Any, from_dims: dict[str, int], to_dims: dict[str, int]
    ) -> None:
        self.fn, self.wl, self.args = fn, wl, args
        self.from_dims, self.to_dims = from_dims, to_dims

    def __call__(self) -> Any:
        padded = self.wl.pad(self.args, self.from_dims, self.to_dims)
        out = self.fn(**padded) if isinstance(padded, dict) else self.fn(*padded)
        return self.wl.cut(out, self.from_dims)


def _dim_axes(
    plan: ReplayPlan, make: Callable[[dict[str, int]], Any]
) -> dict[str, list[tuple[int, int]]]:
    """For every varying dim: the (tensor position, axis) pairs whose size is that dim.

    Found by building the inputs of two shapes that differ only in that dim and keeping the
    axes whose size changed from one size of the dim to the other.
    """
    base = dict(plan.shapes[0])
    base_tensors = tensors(make(base))
    axes: dict[str, list[tuple[int, int]]] = {}
    for dim in plan.traffic.varying_dims():
        other = next(v for v in plan.traffic.values(dim) if v != base[dim])
        probe = tensors(make({**base, dim: other}))
        axes[dim] = [
            (t, a)
            for t, (x, y) in enumerate(zip(base_tensors, probe, strict=True))
            for a in range(x.dim())
            if x.shape[a] == base[dim] and y.shape[a] == other
        ]
    return axes


def _mark_dynamic(args: list[Any], plan: ReplayPlan, make: Callable[[dict[str, int]], Any]) -> None:
    """mark_dynamic: the axes of every varying dim, with the range the traffic spans."""
    import torch

    axes = _dim_axes(plan, make)
    for a in args:
        found = tensors(a)
        for dim, pairs in axes.items():
            values = plan.traffic.values(dim)
            low, high = max(2, values[0]), values[-1]
            for t, axis in pairs:
                if found[t].shape[axis] >= 2:  # sizes 0 and 1 always specialise
                    torch._dynamo.mark_dynamic(found[t], axis, min=low, max=max(high, low))


def run_replay(
    run: Any, workload: Any, plan: ReplayPlan, reference: Callable[[list[int]], list[Any]]
) -> None:
    """Measure a replay inside the trial child and fill ``run.record``; ``reference(chosen)``
    gives the fp32 eager outputs of ``plan.shapes[i]`` for ``i`` in ``chosen``, run after the
    stream.

    1. Stream: a log (``--traffic``) is split in order (`Traffic.split`): what the strategy learns
       (bucket boundaries, the shapes it warms) is fitted on the earlier part, and the replay serves
       the first ``$ADVISOR_REPLAY_REQUESTS`` requests (300) of the later part, the
       holdout, in order. Declared traffic: as many requests sampled by weight with a fixed seed,
       the same for every config of the same traffic, fitted on the declared shapes.
    2. Reference: fp32 eager outputs of every distinct shape executed (or of the steady state's
       sample, 5), unpadded (the trial's usual reference step), computed after the stream and the
       timed passes, so that it warms nothing the stream meets (a fresh serving process runs no
       reference first).
    3. Start-up: compile, then calls of each shape the strategy prepares before traffic (three in
       CUDA-graph modes: warm-up, recording, a replay; else one): every bucket
       the fitted traffic uses (bucketed strategies, one of its requests padded to it), or the
       fitted traffic's `STARTUP_SHAPES` most frequent shapes, ties in order of first appearance
       (static, dynamic, mark_dynamic). Its
       compile time is `cold_compile_s` (empty caches); the warm start (second process, same cache
       dir) repeats it.
    4. The stream, timed: each request once, in order, as a fresh server meets it, timed with
       everything it triggers (CUDA events around it on a GPU, the host's compile and CUDA-graph
       recording inside them; perf_counter on CPU), under the device lock like every measurement. A
       request whose shape (bucket) was not executed before is a new-shape event. A call that
       compiles is a recompile (counted, its time added to ``compile_s_total``); a shape first met
       after dynamo hit ``torch._dynamo.config.recompile_limit`` without being compiled runs
       eagerly: an eager fallback. The first output of every distinct shape, cut back, is checked
       against its reference (tolerance and quality, as in every trial). Pruning: when the spec
       carries the sweep's bar (``prune``: advisor.records.PruneBar), before each request the
       process-life cost's lower bound from what was paid so far
       (advisor.serving.process_life_lower_bound_ms) is checked against it; once above, the
       stream stops, nothing more is measured (no steady state, no reference), and the record
       holds ``pruned`` (advisor.records.Pruned) and no figure: its status is "pruned".
    5. Steady state: warm-up of every executed shape (one call; three in CUDA-graph modes: each
       ran in the stream already), then up to `advisor.sizing.MAX_PASSES` timed passes over the
       stream (fewer if they outlast the sampling policy's ``max_time_s``), every request timed
       on its own, padding and cutting included (``cudagraph_mark_step_begin`` before each call
       in CUDA-graph modes). A request's latency is the median of its passes, so the tail is the
       tail of the traffic (big buckets, eager shapes), not one stray OS hiccup. Bucketed
       strategies run these passes under ``torch.compiler.set_stance("fail_on_recompile")``.
       A budgeted trial (its spec's ``time_budget_s``) sizes the steady state and the reference
       to what is left of its share once the stream is served (advisor.sizing.plan_steady, from
       each shape's measured cost of one call): every shape when they fit, else a sample of
       the distinct shapes stratified by size and weighted by the traffic, timed as its draws
       (``replay.steady_sample`` says which: N of M shapes, passes, the mean's interval).
       A budgeted trial's stream is itself sampled when serving all of it would not leave
       time for the smallest steady state within its share (advisor.sizing.stream_stride):
       every stride-th request, in order, from the first; the stride doubles (a power of two,
       never narrowed, never so wide that fewer than `advisor.sizing.MIN_STREAM` requests
       spread over the stream) whenever the rest, priced per element at what was served so
       far, would not fit. ``stream.sample`` (advisor.records.StreamSample) then says which
       requests were served and what each stands for; the steady state and the reference work
       on the served shapes, weighted so; advisor.serving prices the whole stream from the
       sample, new shapes and repeats apart. A serving process measured alone serves the
       same positions.
    6. Time: a budgeted trial stops itself (status "stopped", advisor.records.Stopped: how far it
       got, a lower bound of its process-life cost where what it paid proves one, no figure)
       at its time limit, less `STOP_MARGIN_S`, or, past its share, once the rest of the stream
       and the smallest steady state are not projected to end before that limit. While it
       runs, its progress goes to the parent (advisor.child.measure.Ticker).

    The record: ``median_ms``, ``p90_ms``, ``p99_ms``, ``mean_ms`` are per-request figures over the
    timed passes; ``shapes`` holds one entry per bucket (per distinct shape when nothing is padded)
    with its share of the stream and the latencies of its requests; ``recompiles`` counts the
    recompiles after start-up; ``cold_compile_s`` is the start-up compile. The ``replay`` key holds
    the rest (see `run_replay`), its ``stream`` the stream's figures and ``flags`` what a serving
    process meets (advisor.serving turns them into the process-life cost that decides). A replay
    with eager fallbacks is not a candidate: its ``passed`` is False (``replay.eager_fallbacks``
    says why), so a sweep never recommends a config whose speed comes from silently running eager.

    Recompile limit: ``ADVISOR_RECOMPILE_LIMIT`` (env) sets ``torch._dynamo.config.recompile_limit``
    in the child (default: torch's own, 8); a bucketed strategy raises it to the number of buckets
    its boundaries define (`BucketPlan.grid_size`), as its deployment must: not to the buckets
    the trace happens to use, which a server cannot know (the value used is recorded).

    ``record["replay"]``: strategy, traffic_source, traffic_shapes, varying_dims, requests,
    trace_shapes, seed, passes, boundaries (per padded dim), buckets, expected_ms (the
    traffic-weighted mean latency: each distinct shape's median request latency times its traffic
    weight, summed), mean_ms, p50_ms, p90_ms, p99_ms (per request), padding_waste,
    graphs, startup_compile_s, compile_s_total (start-up + compiles met while serving),
    recompiles (after start-up), stance, recompile_limit, recompile_limit_hit, eager_fallbacks,
    eager_fallback_buckets, eager_fallback_requests (share of the trace), cudagraph_mem_bytes
    (GPU memory reserved by the compiled graphs, CUDA-graph modes only), holdout and split (a
    log's holdout share and where it starts; None and 0 for declared traffic), flags
    (advisor.serving.flags), and stream: requests, split, fit_requests, startup_shapes,
    startup_s (start-up wall time), per_request_ms (each stream request's cost, in order),
    new_shape (positions of the requests that met a shape not executed before),
    bounded_new_shape (those of them inside a bucketed plan's grid) and grid_left (the grid's
    buckets neither start-up nor stream met; None unbucketed), mean_ms,
    new_shape_events, new_shape_mean_ms, new_shape_share, late_new_shape_share (in the later
    half), last_new_shape_s (from the stream's start), mem_startup_bytes and mem_growth_bytes
    (GPU memory reserved by start-up, and its growth over the stream; None off a GPU).
    """
    _Replay(run, workload, plan, reference).run_replay()


class _ServingRun:
    """The little of a TrialRun that a replay's start-up and stream need, for the children that
    repeat them outside a trial (a warm start; a serving process alone)."""

    def __init__(self, config: CompileConfig, device: str) -> None:
        from advisor.device_lock import DeviceLock

        self.config, self.device = config, device
        self.record: dict[str, Any] = {}
        self.spec: dict[str, Any] = {}  # no sweep's bar: served in full (`_Replay._reread_bar`)
        self.lock = DeviceLock.from_env()
        self.stage = "start-up"

    def _inputs(self, wl: Any, dims: dict[str, int]) -> Any:
        import torch

        torch.manual_seed(0)
        return wl.inputs(dict(dims), self.device)

    def _grad_mode(self, wl: Any) -> Any:
        import contextlib

        import torch

        return torch.inference_mode() if wl.inference else contextlib.nullcontext()


def _served(config: CompileConfig, workload: Any, plan: ReplayPlan, device: str
            ) -> tuple[_Replay, Any, list[Callable[[], Any]], Any]:
    """A replay outside a trial: (its _Replay, the timer, each distinct shape's served call,
    the grad mode to call them in); the model built, cast and wrapped in torch.compile."""
    import torch

    from advisor.child.measure import Timer
    from advisor.child.prepare import cast_model, compiled, input_dtype, torch_dtype

    run = _ServingRun(config, device)
    replay = _Replay(run, workload, plan, _no_reference)
    replay._limit()
    torch.manual_seed(0)
    model = cast_model(workload.build(device, torch_dtype(config.dtype)), config)
    timer = Timer(device, cudagraphs=config.uses_cudagraphs)
    mode = run._grad_mode(workload)
    with mode:
        args = replay._prepare(input_dtype(config))
    return replay, timer, replay._serve_fns(compiled(model, config), args), mode


def _no_reference(chosen: list[int]) -> list[Any]:
    return []  # a serving process alone or a warm start checks nothing


def warm_start(
    spec: WarmSpec, config: CompileConfig, workload: Any, plan: ReplayPlan, device: str
) -> dict[str, Any]:
    """The replay's start-up (compile + the start-up calls) on a warm cache dir."""
    from advisor.child.measure import phase

    replay, timer, fns, mode = _served(config, workload, plan, device)
    with mode:
        phase("warm-start")
        t0 = time.perf_counter()
        for i in plan.startup():
            for _ in range(startup_calls(config)):
                timer.call(fns[i])
        timer.sync()
        return {"warm_compile_s": time.perf_counter() - t0}


def serve_alone(
    spec: AloneSpec, config: CompileConfig, workload: Any, plan: ReplayPlan, device: str
) -> dict[str, Any]:
    """A serving process again, alone: the replay's start-up and its stream (each request
    timed with what it triggers, as in the trial), in a fresh process on an empty cache dir,
    nothing else (no steady state, no reference). A sweep whose trials ran at once runs this
    for its leaders afterwards, one at a time (advisor.search.sweep): their trials' start-ups
    and new shapes were paid beside other trials' compiles, on a share of the host's cores.
    Returns ``{"startup_s", "per_request_ms", "new_shape"}`` (the stream's figures' names)."""
    from advisor.child.measure import phase

    replay, timer, fns, mode = _served(config, workload, plan, device)
    positions = spec.get("positions")
    if positions:
        replay.fixed_positions = sorted(int(p) for p in positions)
    with mode:
        phase("serving alone")
        replay._serve_untimed(timer, fns)
    return {
        "startup_s": replay.startup_wall_s,
        "per_request_ms": [round(ms, 4) for ms in replay.stream_ms],
        "new_shape": [i for i, new in enumerate(replay.stream_new) if new],
    }
