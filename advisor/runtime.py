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
loaded across stacks). A mistake in its own arguments (an unknown ``policy``, a policy without
its ``calls_per_process``) is raised, naming the argument, before anything is read. Imports
torch, lazily, like every module that runs models.
"""

from __future__ import annotations

import hashlib
import logging
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from advisor.arguments import python_arguments
from advisor.child.capture import ServingMonitor, TrafficRecorder
from advisor.child.prepare import prepare
from advisor.child.serve import (
    Applied,
    RecommendationWarning,
    bucket_plan,
    warm_up,
    warmup_inputs,
)
from advisor.config import EAGER_FP32
from advisor.errors import AdvisorError, ConfigError
from advisor.recommendation import (
    Constraints,
    Recommendation,
    Staleness,
    check_policy,
    nearest_fingerprint,
)
from advisor.recommendation.answers import answer
from advisor.records import Fingerprint
from advisor.rows import ArtifactRow
from advisor.workload import Workload, load_workload, trusted_path

if TYPE_CHECKING:
    from advisor.db.store import ResultStore

log = logging.getLogger(__name__)


# The Python arguments of `apply` that the shared checks' flags stand for (advisor.arguments).
APPLY_ARGUMENTS = {"--policy": "policy=", "--calls-per-process": "calls_per_process="}


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
    request's dims are appended (advisor.child.capture; ``advisor sweep --traffic`` reads it). See
    the module docstring for what is done. Raises ConfigError naming the argument on a
    mistake in ``policy`` or ``calls_per_process``.
    """
    with python_arguments(APPLY_ARGUMENTS):
        check_policy(policy, calls_per_process)
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
    config = rec.best.config
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
    """Attach the serving monitor and, when asked, the traffic recorder (advisor.child.capture)."""
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


def _lookup(
    store: ResultStore, name: str, fp: Fingerprint, policy: str, calls: int | None,
    constraints: Constraints | None, use_artifact: bool,
) -> str | tuple[Recommendation, Staleness | None, ArtifactRow | None,
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
    # the one answer (advisor.recommendation.answers)
    rec = answer(store, name, used, policy=policy, calls_per_process=calls,
                 constraints=constraints, records=records)
    if rec.best is None:
        return f"no recommendation for {name}: {rec.sentence}"
    if rec.decision not in ("decided", "tie", "equivalent"):  # what the pick rests on, said
        log.warning("apply(%s): the recommendation is %s: %s", name, rec.decision,
                    rec.coverage or rec.note or rec.sentence)
    key = rec.best.config_key
    artifact = None
    if use_artifact and staleness is None and rec.best.config.compiled:
        artifact = store.get_artifact(name, here, key)
    log.debug("apply(%s): %s on %s; artifact: %s", name, key, str(used)[:12],
              "found" if artifact is not None else "not looked up" if not use_artifact
              else "none for another fingerprint" if staleness is not None
              else "none for eager" if not rec.best.config.compiled else "none stored")
    stored = next((r["workload"] for r in reversed(records) if r.get("workload")), None)
    return rec, staleness, artifact, stored


def _eager(model: Any, reason: str, wl: Workload | None, fp: Fingerprint) -> Applied:
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


def _load_artifact(artifact: ArtifactRow, name: str, fp: Fingerprint
                   ) -> dict[str, Any] | None:
    """Load warm-start bytes into this process's compile caches; None (and a warning) when
    they cannot be used. Only an artifact saved on this very fingerprint (device, driver,
    torch, triton, ...) is loaded: compile caches are code, valid for one stack only."""
    import torch

    if artifact["fingerprint_hash"] != fp.get("fingerprint_hash"):
        log.debug("apply(%s): artifact %s skipped: saved on another fingerprint", name,
                  artifact["uuid"])
        return None
    data = artifact["data"]
    if hashlib.sha256(data).hexdigest() != artifact["sha256"]:
        warnings.warn(f"advisor.apply({name}): the stored cache artifact is corrupt; "
                      "compiling cold", RecommendationWarning, stacklevel=3)
        return None
    if artifact["torch_version"] != torch.__version__:
        # another stack: its fingerprint would differ; never loaded across stacks
        log.debug("apply(%s): artifact %s skipped: saved with torch %s, this is %s", name,
                  artifact["uuid"], artifact["torch_version"], torch.__version__)
        return None
    t0 = time.perf_counter()
    try:
        torch.compiler.load_cache_artifacts(data)
    except Exception as e:  # noqa: BLE001 - a cold compile still works
        warnings.warn(f"advisor.apply({name}): loading the cache artifact failed ({e}); "
                      "compiling cold", RecommendationWarning, stacklevel=3)
        return None
    log.debug("apply(%s): artifact %s loaded (%d bytes) in %.2f s", name, artifact["uuid"],
              artifact["size_bytes"], time.perf_counter() - t0)
    return {"uuid": artifact["uuid"], "size_bytes": artifact["size_bytes"],
            "load_s": time.perf_counter() - t0}


