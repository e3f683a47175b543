"""Confirmation and warm-start artifacts: what follows a sweep before a recommendation is trusted.

Confirmation (`confirm`): a sweep measures each config in its own process, minutes apart, so
clock, thermal and load drift sit between any two figures. The confirmation re-measures the
leading configs under a policy and eager fp32 in ONE child process: each is built and compiled
once, warmed up, then timed interleaved, round after round, as PyTorch's own benchmark harness
alternates eager and compiled runs. Each round takes the configs in a fresh seeded random order
(`round_orders`), and each config's timed call follows an untimed call of its own, as a serving
process's calls follow each other: a fixed order let the config timed right after eager fp32 pay
for what eager left in the GPU's caches (docs/performance.md, "Leaders re-measured side by
side"). Per config
it keeps the samples, the traffic-weighted median with its bootstrap interval and the paired
speedup over eager fp32 (the median over rounds of eager time / config time, with its interval);
the store keeps it (``advisor_confirmations``) and `advisor.recommendation.recommend` decides on it.

Warm-start artifact (`save_artifact`): the recommended config is compiled in a fresh child with
empty caches exactly as `advisor.apply` compiles it (same model build, dtype, compile call and one
call per traffic shape, in order), then ``torch.compiler.save_cache_artifacts()``; the bytes go
to the store (``advisor_cache_artifacts``). With ``verify`` a second fresh child loads them and
compiles again: the cold and artifact-warm start times are stored with the bytes.

`confirm_and_save` does both (what `advisor recommend W --confirm` and the end of a sweep run).
The children (`advisor.child.confirm`) run as ``python -m advisor.child.main SPEC RESULT`` with
``spec["kind"]`` "confirm" or "artifact" (`advisor.protocol.ConfirmSpec`, `ArtifactSpec`;
`advisor.search.launcher.Launcher.run_child`).
"""

from __future__ import annotations

import base64
import logging
import uuid
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from advisor import settings
from advisor.config import EAGER_FP32, CompileConfig
from advisor.errors import ConfigError, TrialFailed
from advisor.protocol import ArtifactSpec, ConfirmSpec
from advisor.recommendation import Constraints, Recommendation, recommend
from advisor.records import (
    Confirmation,
    ConfirmationEntry,
    Fingerprint,
    TrialRecord,
    WorkloadInfo,
)
from advisor.stats import Rounds, Stats, median_ci, paired_speedup

if TYPE_CHECKING:
    from advisor.db.store import ResultStore

log = logging.getLogger(__name__)
DEFAULT_TOP = 3  # compiled configs confirmed besides eager fp32


# --- the parent side --------------------------------------------------------------------------


@dataclass
class Outcome:
    """What `confirm_and_save` did: the stored confirmation, the recommendation decided on it
    and the warm-start artifact saved for its best config (None: not saved, see
    ``artifact_note``)."""

    confirmation: Confirmation
    recommendation: Recommendation
    artifact: dict[str, Any] | None
    artifact_note: str = ""


def _launcher(launcher: Any) -> Any:
    if launcher is not None:
        return launcher
    from advisor.search.launcher import Launcher

    return Launcher()


def _workload_of(
    records: list[TrialRecord], path: str | Path | None
) -> tuple[WorkloadInfo, str]:
    """The newest record's workload dict and the file to load (``path`` when given)."""
    workload = next((r["workload"] for r in reversed(records) if r.get("workload")), None)
    if workload is None:
        raise ConfigError("the trials carry no workload; pass the workload file")
    if path is not None:
        file = str(path)
        if not Path(file).is_file():
            raise ConfigError(f"the workload file {file} is not here; pass it with --file")
        return workload, str(Path(file).resolve())
    from advisor.errors import WorkloadError
    from advisor.workload import trusted_path

    try:  # a path read from the database: imported only with the measured bytes
        trusted = trusted_path(workload.get("path"), workload.get("source_sha256"),
                               workload["name"])
    except WorkloadError as e:
        raise ConfigError(f"{str(e).splitlines()[0]} (with --file)") from None
    return workload, str(trusted.resolve())


def confirm(
    store: ResultStore,
    workload: str,
    fingerprint: Fingerprint,
    device: str,
    *,
    policy: str = "latency",
    calls_per_process: int | None = None,
    constraints: Constraints | None = None,
    top: int = DEFAULT_TOP,
    workload_path: str | Path | None = None,
    rounds: Rounds | None = None,
    launcher: Any = None,
    on_phase: Any = None,
    records: list[TrialRecord] | None = None,
    keys: list[str] | None = None,
) -> tuple[Confirmation, Recommendation]:
    """Re-measure the policy's `top` configs (or the configs of ``keys``) and eager fp32 of
    ``workload`` on ``device`` (whose fingerprint is ``fingerprint``) interleaved in one
    process; store the confirmation and return it with the recommendation decided on it.

    ``records``: the trials to decide among (default: every trial of the workload on this
    fingerprint). The child compiles from the trials' caches where ``launcher`` kept them (a
    sweep's launcher does, until the sweep ends): each entry says whether it did."""
    here = fingerprint["fingerprint_hash"]
    if records is None:
        records = store.trials(workload=workload, fingerprint_hash=here)
    if not records:
        raise ConfigError(f"no trials of {workload} on this device and stack (fingerprint "
                          f"{here}) to confirm; sweep it here first")
    kwargs = {"policy": policy, "calls_per_process": calls_per_process,
              "constraints": constraints}
    before = recommend(workload, records, here, **kwargs)  # type: ignore[arg-type]
    if before.leader is None or before.baseline is None:  # undecided on noise: confirm it
        raise ConfigError(f"nothing to confirm for {workload}: {before.sentence}"
                          if before.leader is None else
                          f"no eager fp32 baseline of {workload} here to confirm against")
    compiled = [r for r in before.ranked if r.config_key != EAGER_FP32.key]
    picks = ([r for r in compiled if r.config_key in keys] if keys is not None
             else compiled[: max(top, 1)])
    if not picks:
        raise ConfigError(f"nothing to confirm for {workload}: no compiled config among "
                          f"{', '.join(keys or [])}")
    by_uuid = {r["trial_uuid"]: r for r in records}
    leader = by_uuid[before.ranked[0].trial_uuid]
    shapes = [{"shape": s["shape"], "dims": s["dims"], "weight": s["weight"]}
              for s in leader["shapes"]]
    wl_dict, path = _workload_of(records, workload_path)
    configs = [EAGER_FP32, *(r.config for r in picks)]
    spec: ConfirmSpec = {
        "kind": "confirm", "workload_path": path, "device": device,
        "configs": [c.to_dict() for c in configs], "shapes": shapes,
        "rounds": (rounds or Rounds.for_device(device, settings.measure_s())).to_dict(),
    }
    trials = {before.baseline.config_key: before.baseline.trial_uuid}
    trials |= {r.config_key: r.trial_uuid for r in picks}
    launcher = _launcher(launcher)
    kept = launcher.kept_caches(trials)
    result = launcher.run_child(spec, on_phase, seed=list(kept.values()))
    confirmation = summarize(result, configs, shapes, trials, set(kept))
    fingerprint_here = cast(Fingerprint, result.get("fingerprint") or fingerprint)
    confirmation.update({"workload": wl_dict, "device": device, "fingerprint": fingerprint_here})
    if confirmation["fingerprint"]["fingerprint_hash"] != here:
        raise ConfigError(
            f"this device's fingerprint ({confirmation['fingerprint']['fingerprint_hash']}) is "
            f"not the trials' ({here}): confirm on the device and stack that was swept")
    store.add_confirmation(confirmation)
    if confirmation["status"] != "ok":
        raise TrialFailed("runtime_error", f"the confirmation of {workload} failed: "
                          f"{_last_line(confirmation['error_tail'])}")
    return confirmation, recommend(workload, records, here, confirmation=confirmation, **kwargs)  # type: ignore[arg-type]


def summarize(
    result: dict[str, Any],
    configs: list[CompileConfig],
    shapes: list[dict[str, Any]],
    trials: dict[str, str],
    kept: Collection[str] = (),
) -> Confirmation:
    """A confirmation (the store's form) from a confirmation child's result; ``kept``: the
    config keys whose trial caches seeded the child's (their ``compile_s`` is a warm start).
    Pure."""
    out: Confirmation = {
        "uuid": str(uuid.uuid4()), "created_at": datetime.now(UTC).isoformat(),
        "method": result.get("method"), "rounds": result.get("rounds"),
        "status": result.get("status", "failed"), "shapes": shapes, "entries": [],
        "error_tail": result.get("error_tail"),
    }
    samples = result.get("samples_ms") or {}
    if out["status"] != "ok" or EAGER_FP32.key not in samples:
        out["status"] = "failed"
        return out
    weights = [s["weight"] for s in shapes]
    eager = samples[EAGER_FP32.key]
    for config in configs:
        entry: ConfirmationEntry = {
            "config": config.to_dict(), "config_key": config.key, "label": config.label,
            "trial_uuid": trials.get(config.key),
            "compile_s": (result.get("compile_s") or {}).get(config.key),
            "compiled_from_kept_cache": config.compiled and config.key in kept,
            "compile_cache": (result.get("compile_cache") or {}).get(config.key),
        }
        if result.get("host"):
            entry["host"] = result["host"]
        mine = samples.get(config.key)
        if mine is None:
            entry["failure"] = (result.get("failures") or {}).get(config.key, "not measured")
            out["entries"].append(entry)
            continue
        stats = [Stats(s) for s in mine]
        medians = [s.median_ms for s in stats]
        speedup, speedup_ci = paired_speedup(eager, mine, weights)
        entry.update({
            "median_ms": _weighted(medians, weights),
            "p90_ms": _weighted([s.p90_ms for s in stats], weights),
            "p99_ms": _weighted([s.p99_ms for s in stats], weights),
            "median_ci_ms": list(median_ci(mine, weights)),
            "shape_medians_ms": medians, "speedup": speedup, "speedup_ci": list(speedup_ci),
            "samples_ms": mine,
        })
        out["entries"].append(entry)
    return out


def _weighted(values: list[float], weights: list[float]) -> float:
    return sum(v * w for v, w in zip(values, weights, strict=True)) / sum(weights)


def save_artifact(
    store: ResultStore,
    workload: WorkloadInfo,
    fingerprint: Fingerprint,
    device: str,
    config: CompileConfig,
    workload_path: str | Path,
    *,
    trial_uuid: str | None = None,
    buckets: dict[str, Any] | None = None,
    verify: bool = True,
    launcher: Any = None,
    on_phase: Any = None,
) -> tuple[dict[str, Any] | None, str]:
    """Compile ``config`` cold in a fresh child as `advisor.apply` does, save its cache
    artifacts into the store; returns (the artifact's facts, "") or (None, why not)."""
    if not config.compiled:
        return None, "eager needs no warm-start artifact"
    launcher = _launcher(launcher)
    spec: ArtifactSpec = {"kind": "artifact", "action": "save", "workload_path": str(workload_path),
                          "device": device, "config": config.to_dict(), "buckets": buckets}
    saved = launcher.run_child(spec, on_phase)
    if saved.get("status") != "ok":
        return None, f"saving the cache artifact failed: {_last_line(saved.get('error_tail'))}"
    if not saved.get("artifact_b64"):
        return None, saved.get("reason") or "this stack saved no cache artifacts"
    here, made = fingerprint["fingerprint_hash"], saved["fingerprint"]["fingerprint_hash"]
    if made != here:
        return None, f"the artifact was made on fingerprint {made}, not {here}: not stored"
    data = base64.b64decode(saved["artifact_b64"])
    warm, info = None, {"artifacts": saved.get("artifacts"), "cold": saved.get("cache")}
    if verify:
        load: ArtifactSpec = {**spec, "action": "load", "artifact_b64": saved["artifact_b64"]}
        loaded = launcher.run_child(load, on_phase)
        if loaded.get("status") != "ok":
            return None, f"the saved artifact did not load: {_last_line(loaded.get('error_tail'))}"
        warm = loaded["start_s"]
        info.update(warm=loaded.get("cache"), load_s=loaded.get("load_s"))
    facts = {"trial_uuid": trial_uuid, "cold_start_s": saved["start_s"], "warm_start_s": warm,
             "shapes": saved.get("shapes"), "info": info}
    artifact_uuid = store.put_artifact(workload, fingerprint, config.to_dict(), data, **facts)
    return {"uuid": artifact_uuid, "config_key": config.key, "size_bytes": len(data),
            **{k: v for k, v in facts.items() if k != "info"}}, ""


def confirm_and_save(
    store: ResultStore,
    workload: str,
    fingerprint: Fingerprint,
    device: str,
    *,
    save: bool = True,
    verify: bool = True,
    **kwargs: Any,
) -> Outcome:
    """`confirm`, then `save_artifact` for the recommendation's best config (when compiled).
    ``kwargs`` go to `confirm` (policy, calls_per_process, constraints, top, workload_path,
    rounds, launcher, on_phase)."""
    confirmation, rec = confirm(store, workload, fingerprint, device, **kwargs)
    artifact, note = None, "not asked to save a warm-start artifact"
    if save and rec.best is not None:
        records = store.trials(workload=workload, fingerprint_hash=fingerprint["fingerprint_hash"])
        wl_dict, path = _workload_of(records, kwargs.get("workload_path"))
        artifact, note = save_artifact(
            store, wl_dict, fingerprint, device, rec.best.config, path,
            trial_uuid=rec.best.trial_uuid, buckets=rec.best.buckets, verify=verify,
            launcher=kwargs.get("launcher"),
            on_phase=kwargs.get("on_phase"),
        )
    log.info("warm-start artifact of %s: %s", workload,
             f"saved ({artifact['size_bytes']} bytes)" if artifact else f"none ({note})")
    return Outcome(confirmation, rec, artifact, note)


def _last_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[-1] if lines else "no error text"
