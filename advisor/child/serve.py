"""What a serving process runs: `Applied` (the callable `advisor.apply` returns), its warm-up,
and a bucketed recommendation's plan. The artifact child (`advisor.child.confirm`) compiles and
warms up through the same code, so the saved artifact is what `apply` loads."""

from __future__ import annotations

import contextlib
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from advisor.buckets import BucketPlan
from advisor.child.capture import ServingMonitor, TrafficRecorder
from advisor.child.prepare import cast_inputs
from advisor.child.tensors import clone, tensors
from advisor.config import CompileConfig
from advisor.workload import Workload

if TYPE_CHECKING:
    from advisor.recommendation import Recommendation, Staleness


class RecommendationWarning(UserWarning):
    """`apply` could not use a recommendation as measured (none, or another stack's)."""


@dataclass
class Applied:
    """The callable `apply` returns: the compiled model (or the model itself when eager)."""

    fn: Callable[..., Any]
    model: Any
    config: CompileConfig
    recommendation: Recommendation | None = None
    fingerprint_hash: str | None = None
    staleness: Staleness | None = None
    artifact: dict[str, Any] | None = None  # the artifact loaded: uuid, size_bytes, load_s
    warmup_s: float | None = None  # compile + first call of every traffic shape
    inference: bool = True
    reason: str = ""  # why the model runs eager without a recommendation
    buckets: BucketPlan | None = None  # a bucketed recommendation: how requests are padded
    workload: Workload | None = None  # its pad and cut, for `request`
    recorder: TrafficRecorder | None = None  # record_traffic: each request's dims to a CSV
    monitor: ServingMonitor | None = None  # warns when serving meets what a replay flags

    @property
    def events(self) -> list[dict[str, str]]:
        """What serving met so far that a replay flags (also given as `ServingWarning`)."""
        return list(self.monitor.events) if self.monitor is not None else []

    @property
    def compiled(self) -> bool:
        return self.config.compiled and self.recommendation is not None

    def request(self, dims: dict[str, int], *args: Any, **kwargs: Any) -> Any:
        """One request of shape ``dims`` (the workload's named dims): under a bucketed
        recommendation padded to its bucket (the workload's ``pad``), run, and cut back
        (``cut``); otherwise a plain call."""
        if self.buckets is None or self.workload is None or self.workload.pad is None:
            return self._serve(args, kwargs, dict(dims))
        inputs: Any = cast_inputs(kwargs if kwargs else args, self.config)
        padded = self.workload.pad(inputs, dict(dims), self.buckets.bucket(dict(dims)))
        if isinstance(padded, dict):
            out = self._serve((), padded, dict(dims))
        else:
            out = self._serve(tuple(padded), {}, dict(dims))
        assert self.workload.cut is not None
        return self.workload.cut(out, dict(dims))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._serve(args, kwargs, None)

    def _serve(self, args: Any, kwargs: dict[str, Any], dims: dict[str, int] | None) -> Any:
        import torch

        if self.recorder is not None:
            self.recorder.record(dims or self.recorder.dims_of((args, kwargs)))
        args, kwargs = cast_inputs((args, kwargs), self.config)
        new = self.monitor is not None and self.monitor.is_new((args, kwargs))
        ctx = torch.inference_mode() if self.inference else contextlib.nullcontext()
        with ctx:
            if self.config.uses_cudagraphs:
                torch.compiler.cudagraph_mark_step_begin()
            out = self.fn(*args, **kwargs)
        if new and self.monitor is not None:
            self.monitor.after_new_shape()
        return clone(out) if self.config.uses_cudagraphs else out


def bucket_plan(config: CompileConfig, buckets: dict[str, Any] | None, name: str,
                wl: Workload | None) -> BucketPlan | None:
    """The bucket plan of a bucketed recommendation (its measured boundaries), with dynamo's
    recompile limit raised to the number of buckets its boundaries define; None for other
    shape strategies."""
    import torch._dynamo

    strategy = config.shapes
    if strategy == "mark_dynamic":
        warnings.warn(f"advisor.apply({name}): the recommendation marks the varying dims "
                      "dynamic; mark them yourself (torch._dynamo.mark_dynamic) before the "
                      "first call", RecommendationWarning, stacklevel=3)
    if not strategy.startswith("buckets") or not buckets or not buckets.get("boundaries"):
        return None
    plan = BucketPlan(strategy, {d: tuple(b) for d, b in buckets["boundaries"].items()})
    if wl is None or wl.pad is None:
        warnings.warn(f"advisor.apply({name}): the recommendation pads requests to buckets "
                      f"{plan.to_dict()['bounds']}; without the workload's pad and cut, "
                      "`request` cannot pad them", RecommendationWarning, stacklevel=3)
    n = max(plan.grid_size(), len(plan.buckets(wl.traffic)) if wl is not None else 1)
    limit = torch._dynamo.config.recompile_limit
    torch._dynamo.config.recompile_limit = max(limit, n)
    return plan


def warmup_inputs(wl: Workload, device: str, plan: BucketPlan | None = None) -> list[Any]:
    """The workload's inputs for each traffic shape, in traffic order (each bucket's shape,
    in bucket order, under a bucket plan), seeded as trials are."""
    import torch

    shapes = [d for d, _ in plan.buckets(wl.traffic)] if plan else [d for d, _ in wl.traffic]
    found = []
    for dims in shapes:
        torch.manual_seed(0)
        found.append(wl.inputs(dict(dims), device))
    return found


def warm_up(applied: Applied, inputs: Sequence[Any]) -> float:
    """Call ``applied`` on each inputs (compiling each shape; three calls under CUDA graphs,
    which record a shape's graph on its second call); returns the seconds taken."""
    import torch

    from advisor.child.replay import startup_calls

    t0 = time.perf_counter()
    for args in inputs:
        for _ in range(startup_calls(applied.config)):  # CUDA graphs: warm-up, record, replay
            if isinstance(args, dict):
                applied(**args)
            else:
                applied(*args)
    if str(next(iter(tensors(inputs)), torch.empty(0)).device).startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - t0
