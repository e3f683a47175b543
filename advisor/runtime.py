"""Apply a stored recommendation in a serving process: `apply`.

    import advisor
    model = advisor.apply(model, workload="reranker", db="postgresql+psycopg://...")
    scores = model(**inputs)          # compiled as recommended for this device and stack

`apply` collects this process's fingerprint (device, driver, CUDA, torch, triton, ...), reads the
workload's trials measured on it, and takes the recommendation (policy `latency` unless told
otherwise; a stored confirmation's paired figures when it has one). It then

- casts the model (an ``nn.Module``, in place) to the recommended dtype; the returned callable
  casts floating-point tensor inputs to it too (tf32 sets float32 matmul precision "high");
- loads the stored warm-start artifact (``torch.compiler.load_cache_artifacts``) when one was
  saved for this config on this exact fingerprint (same torch, triton, driver, device);
- compiles with the recommended mode or options, fullgraph and dynamic settings;
- warms up: calls it once per traffic shape of the workload, in traffic order, so that every
  shape is compiled before traffic arrives (needs the workload file: given, or found at the path
  its trials recorded);
- under a bucketed shape strategy (``buckets:...``), takes the bucket boundaries the trial
  measured, warms up every bucket instead, and `Applied.request` pads each request to its
  bucket and cuts the outputs back (the workload's ``pad`` and ``cut``).

Never silently: no recommendation (nothing measured, nothing passed, no database) gives the
model back uncompiled with a `RecommendationWarning`; trials measured only on another stack give
that stack's recommendation with a warning naming every field that changed (no artifact is
loaded across stacks). Imports torch, lazily, like every module that runs models.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor.answer import answer
from advisor.buckets import BucketPlan
from advisor.capture import ServingMonitor, TrafficRecorder
from advisor.config import EAGER_FP32, CompileConfig
from advisor.errors import AdvisorError, ConfigError
from advisor.prepare import cast_inputs, prepare
from advisor.recommend import (
    Constraints,
    Recommendation,
    Staleness,
    nearest_fingerprint,
)
from advisor.workload import Workload, load_workload, trusted_path


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
        return _clone(out) if self.config.uses_cudagraphs else out


def apply(
    model: Any,
    workload: str | Path | Workload,
    db: str | None = None,
    device: str | None = None,
    *,
    policy: str = "latency",
    calls_per_process: int | None = None,
    constraints: Constraints | None = None,
    warmup: bool = True,
    use_artifact: bool = True,
    record_traffic: str | Path | None = None,
) -> Applied:
    """Compile ``model`` as recommended for ``workload`` on this device and software stack.

    ``workload``: its name, its file (``.py``) or a `Workload`. ``db``: the results database
    URL (None: $ADVISOR_DB_URL, else sqlite:///advisor.db). ``device``: where ``model`` runs
    (default: cuda when available, else cpu). ``record_traffic``: a CSV path to which each
    request's dims are appended (advisor.capture; ``advisor sweep --traffic`` reads it). See
    the module docstring for what is done.
    """
    import torch

    from advisor import fingerprint
    from advisor.db.engine import display_url
    from advisor.db.store import ResultStore, database_revision

    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    wl = workload if isinstance(workload, Workload) else None
    if not isinstance(workload, Workload) and (
        str(workload).endswith(".py") or Path(workload).is_file()
    ):
        wl = load_workload(workload).workload
    name = wl.name if wl is not None else str(workload)
    fp = fingerprint.collect(device)

    def served(applied: Applied) -> Applied:
        return _serving(applied, wl, device, record_traffic)

    try:
        if database_revision(db).current is None:  # never creates a database
            return served(_eager(model, f"no advisor results database at {display_url(db)}",
                                 wl, fp))
        with ResultStore.from_url(db, create=False) as store:
            found = _lookup(store, name, fp, policy, calls_per_process, constraints, use_artifact)
    except AdvisorError as e:
        return served(_eager(model, f"cannot read recommendations for {name}: {e}", wl, fp))
    if isinstance(found, str):
        return served(_eager(model, found, wl, fp))
    rec, staleness, artifact, stored = found
    if staleness is not None:
        warnings.warn(f"advisor.apply({name}): {staleness.warning}", RecommendationWarning,
                      stacklevel=2)
    if wl is None and warmup:
        wl = _stored_workload(stored, name)
    assert rec.best is not None
    config = CompileConfig.from_dict(rec.best.config)
    plan = bucket_plan(config, rec.best.buckets, name, wl)
    loaded = _load_artifact(artifact, name, fp) if artifact is not None else None
    inference = wl.inference if wl is not None else True
    fn = prepare(model, config, device)  # an nn.Module is cast in place: `model` is the same
    applied = Applied(fn=fn, model=model, config=config, recommendation=rec,
                      fingerprint_hash=fp["fingerprint_hash"], staleness=staleness,
                      artifact=loaded, inference=inference, buckets=plan, workload=wl)
    for flag in rec.best.flags or []:
        warnings.warn(f"advisor.apply({name}): its replay flagged {flag['flag']}: "
                      f"{flag['message']}", RecommendationWarning, stacklevel=2)
    if warmup and wl is not None:
        applied.warmup_s = warm_up(applied, warmup_inputs(wl, device, plan))
    return served(applied)


def _serving(applied: Applied, wl: Workload | None, device: str,
             record_traffic: str | Path | None) -> Applied:
    """Attach the serving monitor and, when asked, the traffic recorder (advisor.capture)."""
    config = applied.config
    applied.monitor = ServingMonitor(compiled=applied.compiled, cudagraphs=config.uses_cudagraphs,
                                     bucketed=applied.buckets is not None,
                                     cuda=device.startswith("cuda"))
    applied.monitor.started()
    if record_traffic is not None:
        if wl is None:
            raise ConfigError(f"record_traffic={record_traffic}: pass workload=FILE.py (its "
                              "inputs say which tensor axes carry which dims)")
        applied.recorder = TrafficRecorder(record_traffic, wl, device)
    return applied


def bucket_plan(config: CompileConfig, buckets: dict[str, Any] | None, name: str,
                wl: Workload | None) -> BucketPlan | None:
    """The bucket plan of a bucketed recommendation (its measured boundaries), with dynamo's
    recompile limit raised to its number of buckets; None for other shape strategies."""
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
    n = len(plan.buckets(wl.traffic)) if wl is not None else 1
    limit = torch._dynamo.config.recompile_limit
    torch._dynamo.config.recompile_limit = max(limit, n)
    return plan


def _lookup(
    store: Any, name: str, fp: dict[str, Any], policy: str, calls: int | None,
    constraints: Constraints | None, use_artifact: bool,
) -> str | tuple[Recommendation, Staleness | None, dict[str, Any] | None,
                dict[str, Any] | None]:
    """The recommendation (with staleness, artifact, the trials' workload: name, path and
    source hash) or why there is none."""
    here = fp["fingerprint_hash"]
    records = store.trials(workload=name, fingerprint_hash=here)
    staleness = None
    if not records:
        measured = store.fingerprints(name)
        if not measured:
            return f"no trials of {name} in {store.masked_url}: sweep it first"
        staleness = nearest_fingerprint(fp, measured)
        if staleness.measured_hash is None:
            return f"no trials of {name} on this kind of device ({fp.get('device_kind')})"
        records = store.trials(workload=name, fingerprint_hash=staleness.measured_hash)
    used = staleness.measured_hash if staleness else here
    rec = answer(store, name, used, policy=policy, calls_per_process=calls,
                 constraints=constraints, records=records)  # the one answer (advisor.answer)
    if rec.best is None:
        return f"no recommendation for {name}: {rec.sentence}"
    key = CompileConfig.from_dict(rec.best.config).key
    artifact = None
    if use_artifact and staleness is None and rec.best.config["mode"] != "eager":
        artifact = store.get_artifact(name, here, key)
    stored = next((r["workload"] for r in reversed(records) if r.get("workload")), None)
    return rec, staleness, artifact, stored


def _eager(model: Any, reason: str, wl: Workload | None, fp: dict[str, Any]) -> Applied:
    warnings.warn(f"advisor.apply: {reason}; running the model eager", RecommendationWarning,
                  stacklevel=3)
    return Applied(fn=model, model=model, config=EAGER_FP32, fingerprint_hash=fp.get(
        "fingerprint_hash"), inference=wl.inference if wl is not None else True, reason=reason)


def _stored_workload(stored: dict[str, Any] | None, name: str) -> Workload | None:
    """The workload file the trials name, imported only when its bytes are the measured ones
    (`advisor.workload.trusted_path`: the database is not trusted to name code to run)."""
    stored = stored or {}
    path = stored.get("path")
    try:
        trusted = trusted_path(path, stored.get("source_sha256"), name)
        return load_workload(trusted).workload
    except AdvisorError as e:
        why = str(e).splitlines()[0]
    warnings.warn(f"advisor.apply({name}): {why}; no warm-up: each traffic shape compiles on "
                  "its first call. Pass workload=FILE.py", RecommendationWarning, stacklevel=3)
    return None


def _load_artifact(artifact: dict[str, Any], name: str, fp: dict[str, Any]
                   ) -> dict[str, Any] | None:
    """Load warm-start bytes into this process's compile caches; None (and a warning) when
    they cannot be used. Only an artifact saved on this very fingerprint (device, driver,
    torch, triton, ...) is loaded: compile caches are code, valid for one stack only."""
    import torch

    if artifact.get("fingerprint_hash") != fp.get("fingerprint_hash"):
        return None
    data = artifact["data"]
    if hashlib.sha256(data).hexdigest() != artifact["sha256"]:
        warnings.warn(f"advisor.apply({name}): the stored cache artifact is corrupt; "
                      "compiling cold", RecommendationWarning, stacklevel=3)
        return None
    if artifact.get("torch_version") != torch.__version__:
        return None  # another stack: its fingerprint would differ; never loaded across stacks
    t0 = time.perf_counter()
    try:
        torch.compiler.load_cache_artifacts(data)
    except Exception as e:  # noqa: BLE001 - a cold compile still works
        warnings.warn(f"advisor.apply({name}): loading the cache artifact failed ({e}); "
                      "compiling cold", RecommendationWarning, stacklevel=3)
        return None
    return {"uuid": artifact["uuid"], "size_bytes": artifact["size_bytes"],
            "load_s": time.perf_counter() - t0}


# --- what apply and the artifact child share: the same compile, the same calls -------------


def _clone(out: Any) -> Any:
    import torch

    if isinstance(out, torch.Tensor):
        return out.clone()
    if isinstance(out, dict):
        return {k: _clone(v) for k, v in out.items()}
    if isinstance(out, (list, tuple)) and not hasattr(out, "_fields"):
        return type(out)(_clone(v) for v in out)
    return out


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

    from advisor.replay import startup_calls

    t0 = time.perf_counter()
    for args in inputs:
        for _ in range(startup_calls(applied.config)):  # CUDA graphs: warm-up, record, replay
            if isinstance(args, dict):
                applied(**args)
            else:
                applied(*args)
    if str(next(_tensors(inputs), torch.empty(0)).device).startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - t0


def _tensors(data: Any) -> Any:
    import torch

    if isinstance(data, torch.Tensor):
        yield data
    elif isinstance(data, dict):
        for value in data.values():
            yield from _tensors(value)
    elif isinstance(data, (list, tuple)):
        for value in data:
            yield from _tensors(value)
