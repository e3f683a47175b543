"""The rows the store's reads return, typed: a sweep, a device, a fingerprint, a group summary,
a cache artifact, and the dashboard's narrow rows (`advisor.db.ResultStore` builds them).

Beside `advisor.records`, not in it: a record is what one trial measured and what crosses
between processes; a row is what a read of the store gives back, often a count or an aggregate
over many records, and never leaves the parent. The store builds each row as its type, so a key
the builder and its readers disagree on is a ``mypy --strict`` error at both
(tests/core/test_row_types.py renames a field of each and counts the errors).

What the types cannot say:

- Timestamps are ISO 8601 text in UTC (``datetime.isoformat()``), as in the records.
- A device's and a stack's fields are the fingerprint's (`advisor.protocol.DEVICE_FIELDS`,
  `advisor.protocol.ENV_FIELDS`), None where the fingerprint could not tell.
- Counts are of trials; ``n_passed`` counts the ok trials that passed their accuracy and quality
  checks.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

from advisor.config import ConfigDict
from advisor.records import DeviceColumns as DeviceColumns  # a row's device: the fingerprint's
from advisor.records import EnvColumns as EnvColumns  # a row's stack: the fingerprint's
from advisor.records import (
    Fingerprint,
    HostFigures,
    Pruned,
    ReplayFigures,
    ScreenedOut,
    Status,
    Stopped,
    WorkloadInfo,
)

# running: its process measures it (or joins it); finished, stopped (its budget ended: resumable),
# interrupted and failed as it ended (advisor.db.models.SWEEP_STATUSES)
StoredSweepStatus = Literal["running", "finished", "stopped", "interrupted", "failed"]
# dead: stored as running, but its heartbeat is stale or its process is gone (computed on read)
SweepStatus = Literal["running", "finished", "stopped", "interrupted", "failed", "dead"]


class SweepRow(TypedDict):
    """One sweep (`ResultStore.get_sweep`, `sweeps`, `sweep_of_study`) with its trial counts."""

    id: int
    uuid: str
    workload: WorkloadInfo
    fingerprint: Fingerprint  # the full fingerprint the sweep was started on
    device_hash: str
    device_name: str | None
    env_hash: str
    fingerprint_hash: str | None
    host: str | None  # the host that started it
    # `advisor.search.request.SweepSettings.to_dict()` with ``space`` (every config of its space)
    # and ``flags`` (its command line); None for a sweep imported without them
    settings: dict[str, Any] | None
    status: SweepStatus  # as stored, or ``dead`` (see stored_status)
    study_name: str | None  # its Optuna study, in the same database
    planned_trials: int | None
    started_at: str
    finished_at: str | None
    heartbeat_at: str | None  # its process's last beat (`ResultStore.beat`)
    owner: dict[str, Any] | None  # host, pid, started of its process (`advisor.lifetime.owner`)
    n_trials: int
    n_ok: int
    n_failed: int
    n_pruned: int  # replays stopped once proven worse: not failures
    n_stopped: int  # stopped by the budget: not measured
    best_median_ms: float | None  # the lowest median of its passed trials
    stored_status: StoredSweepStatus  # the status as stored: "running" for a dead sweep


class DeviceRow(DeviceColumns):
    """One device (`ResultStore.devices`)."""

    n_trials: int


class GroupSummaryRow(DeviceColumns, EnvColumns):
    """One workload x device x stack with trials (`ResultStore.group_summaries`)."""

    workload: str  # its name
    n_trials: int
    n_ok: int
    n_passed: int
    n_failed: int
    n_pruned: int
    first_started_at: str | None
    last_started_at: str | None


class FingerprintRow(DeviceColumns, EnvColumns):
    """One fingerprint a workload was measured on (`ResultStore.fingerprints`)."""

    fingerprint_hash: str
    n_trials: int
    n_passed: int
    last_started_at: str | None


class BestRow(DeviceColumns, EnvColumns):
    """The passed trial with the lowest median of one workload x device x stack
    (`ResultStore.best_per_workload_device`)."""

    workload: str
    source_sha256: str | None  # of the workload file the best trial measured
    trial_uuid: str
    sweep_id: int | None
    config_key: str | None
    config: ConfigDict
    mode: str | None
    dtype: str | None
    median_ms: float
    p90_ms: float | None
    p99_ms: float | None
    cold_compile_s: float | None
    peak_mem_bytes: int | None
    started_at: str | None
    eager_median_ms: float | None  # the best eager fp32 median of the same group
    speedup: float | None  # eager_median_ms / median_ms; None without an eager baseline


class DeviceComparisonRow(DeviceColumns, EnvColumns):
    """One config of a workload on one device x stack (`ResultStore.device_comparison`)."""

    config_key: str | None
    n_trials: int
    n_passed: int
    best_median_ms: float | None  # the lowest median of its passed trials


class NearBestRow(TypedDict):
    """A narrow trial row (`ResultStore.near_best_trials`): a record's scalars, no shapes,
    kernel names or error tail; the record's keys beyond `advisor.records.empty_record` come
    with it when it has them (those below, and any other a record carried)."""

    trial_uuid: str
    sweep_id: int | None
    workload: str  # its name
    device_hash: str
    env_hash: str
    config: ConfigDict
    config_key: str | None
    mode: str | None
    dtype: str | None
    status: Status
    failure_reason: str | None
    started_at: str | None
    median_ms: float | None
    p90_ms: float | None
    p99_ms: float | None
    mean_ms: float | None
    cold_compile_s: float | None
    warm_compile_s: float | None
    peak_mem_bytes: int | None
    kernels_per_call: int | None
    launches_per_call: int | None
    eager_kernels_per_call: int | None
    eager_launches_per_call: int | None
    max_abs_err: float | None
    correct: bool | None
    quality_name: str | None
    quality_value: float | None
    quality_passed: bool | None
    passed: bool | None
    # the record's keys beyond empty_record, as `advisor.records.TrialRecord` declares them
    median_ci_ms: NotRequired[list[float]]
    quality_combine: NotRequired[str]
    quality_worst: NotRequired[float]
    quality_advisory: NotRequired[str]
    screened_out: NotRequired[ScreenedOut]
    pruned: NotRequired[Pruned]
    stopped: NotRequired[Stopped]
    replay: NotRequired[ReplayFigures]
    device_wait_s: NotRequired[float]
    phases_s: NotRequired[dict[str, float]]
    measured_alone: NotRequired[list[list[float]]]
    tried_because: NotRequired[str]
    gpu_busy_share: NotRequired[float]
    host: NotRequired[HostFigures]


class MeasuredShapeRow(TypedDict):
    """A traffic shape one workload's ok trials measured on a device x stack
    (`ResultStore.measured_shapes`)."""

    device_hash: str
    env_hash: str
    shape: str | None  # its name, ``batch=50,seq=128`` (None: a shape stored without one)


class ArtifactRow(TypedDict):
    """A stored warm-start artifact (`ResultStore.artifacts`, `get_artifact`)."""

    uuid: str
    fingerprint_hash: str | None
    host: str | None  # the host that stored it
    created_at: str
    config_key: str
    config: ConfigDict
    trial_uuid: str | None  # the trial whose config it compiled
    torch_version: str | None  # it is valid only for the same torch and triton
    triton_version: str | None
    size_bytes: int
    sha256: str  # of ``data``
    cold_start_s: float | None  # the compile without it, and with it
    warm_start_s: float | None
    shapes: list[Any] | None  # the shapes it was compiled for
    info: dict[str, Any] | None
    workload: str  # its name
    data: NotRequired[bytes]  # the bytes (``torch.compiler.save_cache_artifacts()``): get_artifact
