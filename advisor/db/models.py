"""The results database schema: SQLAlchemy 2 typed ORM models.

Every table is prefixed ``advisor_`` because Optuna's RDB storage lives in the same database
(its tables are ``studies``, ``trials``, ``alembic_version``, ...). Changing anything here needs
an Alembic revision in ``migrations/versions`` (``tests/db`` checks that the migrated schema and
these models agree).

    advisor_devices        one row per device identity (fingerprint ``device_hash``)
    advisor_environments   one row per software stack (fingerprint ``env_hash``)
    advisor_workloads      one row per (workload name, source sha256)
    advisor_sweeps         one search over configs of a workload on a device: an Optuna study
    advisor_trials         one measured (or failed) config: the trial record's scalars
    advisor_trial_details  the rest of a trial record (fingerprint, kernel names, error tail)
    advisor_shape_measurements   the per-shape figures of a trial, in traffic order
    advisor_trial_groups   one row per workload x device x environment with trials
    advisor_confirmations  interleaved re-measurements of a workload's leading configs (0003)
    advisor_cache_artifacts   warm-start bytes of torch.compiler.save_cache_artifacts() (0003)
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Double,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# stopped: the budget ended before every config of its space was measured (resumable)
SWEEP_STATUSES = ("running", "finished", "stopped", "interrupted", "failed")
# "Passed" trials (ok and correct): the predicate of the partial index ix_advisor_trials_best,
# written as queries render it (queries.PASSED) so that both databases use the index.
PASSED_SQL = {"sqlite": "status = 'ok' AND passed = 1", "postgresql": "status = 'ok' AND passed"}
BEST_INDEX_COLUMNS = ("workload_id", "device_id", "environment_id", "median_ms", "id", "config_key")
# advisor.records.Status; String(16), no check constraint (a new status needs no migration)
TRIAL_STATUSES = ("ok", "failed", "pruned", "stopped")

Hash = String(64)
Timestamp = DateTime(timezone=True)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {dict[str, Any]: JSON, list[Any]: JSON, datetime: Timestamp}


def table(model: type[Base]) -> Table:
    """A model's Core table (typed as the Table it is, for SQLAlchemy Core statements)."""
    return cast(Table, model.__table__)


class Device(Base):
    __tablename__ = "advisor_devices"

    id: Mapped[int] = mapped_column(primary_key=True)
    device_hash: Mapped[str] = mapped_column(Hash, unique=True)
    device_kind: Mapped[str | None] = mapped_column(String(16))
    device_name: Mapped[str | None] = mapped_column(String(256))
    compute_capability: Mapped[str | None] = mapped_column(String(16))
    device_memory_bytes: Mapped[int | None] = mapped_column(BigInteger)
    sm_count: Mapped[int | None] = mapped_column(Integer)
    cpu_model: Mapped[str | None] = mapped_column(String(256))
    cpu_cores: Mapped[int | None] = mapped_column(Integer)
    host_memory_bytes: Mapped[int | None] = mapped_column(BigInteger)
    cpu_isa: Mapped[str | None] = mapped_column(String(32))  # torch's CPU capability
    cpu_flags: Mapped[str | None] = mapped_column(String(256))  # space-separated, sorted


class Environment(Base):
    __tablename__ = "advisor_environments"

    id: Mapped[int] = mapped_column(primary_key=True)
    env_hash: Mapped[str] = mapped_column(Hash, unique=True)
    driver_version: Mapped[str | None] = mapped_column(String(64))
    cuda_driver_version: Mapped[str | None] = mapped_column(String(64))
    torch_version: Mapped[str | None] = mapped_column(String(64))
    triton_version: Mapped[str | None] = mapped_column(String(64))
    cuda_runtime_version: Mapped[str | None] = mapped_column(String(64))
    cudnn_version: Mapped[str | None] = mapped_column(String(64))
    python_version: Mapped[str | None] = mapped_column(String(64))


class Workload(Base):
    """A workload file's identity; ``source_sha256`` is '' when the record had none."""

    __tablename__ = "advisor_workloads"
    __table_args__ = (UniqueConstraint("name", "source_sha256"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(256))
    source_sha256: Mapped[str] = mapped_column(Hash)
    path: Mapped[str | None] = mapped_column(Text)
    info: Mapped[dict[str, Any] | None]


class Sweep(Base):
    __tablename__ = "advisor_sweeps"
    __table_args__ = (
        Index("ix_advisor_sweeps_workload", "workload_id", "started_at"),
        Index("ix_advisor_sweeps_device", "device_id", "started_at"),
        Index("ix_advisor_sweeps_status", "status", "started_at"),
        Index("ix_advisor_sweeps_started_at", "started_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    uuid: Mapped[str] = mapped_column(String(36), unique=True)
    workload_id: Mapped[int] = mapped_column(ForeignKey("advisor_workloads.id"))
    device_id: Mapped[int] = mapped_column(ForeignKey("advisor_devices.id"))
    environment_id: Mapped[int] = mapped_column(ForeignKey("advisor_environments.id"))
    fingerprint_hash: Mapped[str | None] = mapped_column(Hash)
    host: Mapped[str | None] = mapped_column(String(256))
    workload_path: Mapped[str | None] = mapped_column(Text)
    fingerprint: Mapped[dict[str, Any] | None]
    settings: Mapped[dict[str, Any] | None]
    status: Mapped[str] = mapped_column(String(16))
    study_name: Mapped[str | None] = mapped_column(String(512))
    planned_trials: Mapped[int | None] = mapped_column(Integer)
    started_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]
    # refreshed by the running sweep's process (migration 0004): a running sweep whose
    # heartbeat is stale is reported dead
    heartbeat_at: Mapped[datetime | None]
    # the process that runs it (migration 0006; `advisor.lifetime.owner`): a running sweep
    # whose owner on the reader's host is gone is reported dead at once
    owner: Mapped[dict[str, Any] | None]

    workload: Mapped[Workload] = relationship()
    device: Mapped[Device] = relationship()
    environment: Mapped[Environment] = relationship()


class Trial(Base):
    """One trial record (`advisor.records`), its scalar figures as columns, lists as JSON."""

    __tablename__ = "advisor_trials"
    __table_args__ = (
        Index(
            "ix_advisor_trials_best",
            *BEST_INDEX_COLUMNS,
            sqlite_where=text(PASSED_SQL["sqlite"]),
            postgresql_where=text(PASSED_SQL["postgresql"]),
        ),
        Index(
            "ix_advisor_trials_workload", "workload_id", "device_id", "environment_id", "config_key"
        ),
        Index("ix_advisor_trials_device", "device_id", "started_at"),
        Index("ix_advisor_trials_sweep", "sweep_id", "config_key"),
        Index("ix_advisor_trials_status", "status", "started_at"),
        Index("ix_advisor_trials_started_at", "started_at"),
        Index("ix_advisor_trials_fingerprint", "fingerprint_hash"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    uuid: Mapped[str] = mapped_column(String(36), unique=True)
    sweep_id: Mapped[int | None] = mapped_column(ForeignKey("advisor_sweeps.id"))
    workload_id: Mapped[int] = mapped_column(ForeignKey("advisor_workloads.id"))
    device_id: Mapped[int] = mapped_column(ForeignKey("advisor_devices.id"))
    environment_id: Mapped[int] = mapped_column(ForeignKey("advisor_environments.id"))
    fingerprint_hash: Mapped[str | None] = mapped_column(Hash)
    host: Mapped[str | None] = mapped_column(String(256))
    record_version: Mapped[int] = mapped_column(Integer)
    workload_path: Mapped[str | None] = mapped_column(Text)
    requested_device: Mapped[str | None] = mapped_column(String(32))

    # the compile config, as columns to filter on and as the exact dict
    mode: Mapped[str | None] = mapped_column(String(32))
    dtype: Mapped[str | None] = mapped_column(String(8))
    fullgraph: Mapped[bool | None] = mapped_column(Boolean)
    dynamic: Mapped[str | None] = mapped_column(String(8))
    config: Mapped[dict[str, Any] | None]
    config_key: Mapped[str | None] = mapped_column(String(256))

    status: Mapped[str] = mapped_column(String(16))
    failure_reason: Mapped[str | None] = mapped_column(String(32))
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]

    # measurement (record.METRIC_KEYS, same names)
    method: Mapped[str | None] = mapped_column(String(32))
    warmup_iters: Mapped[int | None] = mapped_column(Integer)
    median_ms: Mapped[float | None] = mapped_column(Double)
    p90_ms: Mapped[float | None] = mapped_column(Double)
    p99_ms: Mapped[float | None] = mapped_column(Double)
    mean_ms: Mapped[float | None] = mapped_column(Double)
    noisy: Mapped[bool | None] = mapped_column(Boolean)
    cold_compile_s: Mapped[float | None] = mapped_column(Double)
    warm_compile_s: Mapped[float | None] = mapped_column(Double)
    eager_first_call_s: Mapped[float | None] = mapped_column(Double)
    peak_mem_bytes: Mapped[int | None] = mapped_column(BigInteger)

    # compiler facts
    graph_count: Mapped[int | None] = mapped_column(Integer)
    graph_break_count: Mapped[int | None] = mapped_column(Integer)
    recompiles: Mapped[int | None] = mapped_column(Integer)
    generated_kernel_count: Mapped[int | None] = mapped_column(Integer)
    kernels_per_call: Mapped[int | None] = mapped_column(Integer)
    launches_per_call: Mapped[int | None] = mapped_column(Integer)
    eager_kernels_per_call: Mapped[int | None] = mapped_column(Integer)
    eager_launches_per_call: Mapped[int | None] = mapped_column(Integer)

    # accuracy
    max_abs_err: Mapped[float | None] = mapped_column(Double)
    max_rel_err: Mapped[float | None] = mapped_column(Double)
    atol: Mapped[float | None] = mapped_column(Double)
    rtol: Mapped[float | None] = mapped_column(Double)
    correct: Mapped[bool | None] = mapped_column(Boolean)
    quality_name: Mapped[str | None] = mapped_column(String(128))
    quality_value: Mapped[float | None] = mapped_column(Double)
    quality_threshold: Mapped[float | None] = mapped_column(Double)
    quality_passed: Mapped[bool | None] = mapped_column(Boolean)
    passed: Mapped[bool | None] = mapped_column(Boolean)

    sweep: Mapped[Sweep | None] = relationship()
    workload: Mapped[Workload] = relationship()
    device: Mapped[Device] = relationship()
    environment: Mapped[Environment] = relationship()
    details: Mapped[TrialDetails] = relationship(cascade="all, delete-orphan")
    shapes: Mapped[list[ShapeMeasurement]] = relationship(
        order_by="ShapeMeasurement.position", cascade="all, delete-orphan"
    )


class TrialDetails(Base):
    """The bulky part of a trial record, kept apart so that scans of trials stay narrow."""

    __tablename__ = "advisor_trial_details"

    trial_id: Mapped[int] = mapped_column(
        ForeignKey("advisor_trials.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    error_tail: Mapped[str | None] = mapped_column(Text)
    graph_breaks: Mapped[list[Any] | None]
    kernel_names: Mapped[list[Any] | None]
    eager_kernel_names: Mapped[list[Any] | None]
    telemetry: Mapped[dict[str, Any] | None]
    fingerprint: Mapped[dict[str, Any] | None]
    # keys a record had beyond advisor.records's, kept so that nothing is lost
    extra: Mapped[dict[str, Any] | None]


class TrialGroup(Base):
    """A workload on a device with a software stack: what a best config is chosen within.

    The store adds a group with its first trial, so that "the best config of every group" is
    one probe of ix_advisor_trials_best per group instead of a scan of every trial.
    """

    __tablename__ = "advisor_trial_groups"
    __table_args__ = (UniqueConstraint("workload_id", "device_id", "environment_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    workload_id: Mapped[int] = mapped_column(ForeignKey("advisor_workloads.id"))
    device_id: Mapped[int] = mapped_column(ForeignKey("advisor_devices.id"))
    environment_id: Mapped[int] = mapped_column(ForeignKey("advisor_environments.id"))


class ShapeMeasurement(Base):
    """The figures of one traffic shape of a trial (record.SHAPE_KEYS, same names)."""

    __tablename__ = "advisor_shape_measurements"
    __table_args__ = (UniqueConstraint("trial_id", "position"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    trial_id: Mapped[int] = mapped_column(ForeignKey("advisor_trials.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    shape: Mapped[str | None] = mapped_column(String(512))
    dims: Mapped[dict[str, Any] | None]
    weight: Mapped[float | None] = mapped_column(Double)
    median_ms: Mapped[float | None] = mapped_column(Double)
    mean_ms: Mapped[float | None] = mapped_column(Double)
    min_ms: Mapped[float | None] = mapped_column(Double)
    max_ms: Mapped[float | None] = mapped_column(Double)
    p90_ms: Mapped[float | None] = mapped_column(Double)
    p99_ms: Mapped[float | None] = mapped_column(Double)
    stdev_ms: Mapped[float | None] = mapped_column(Double)
    iqr_ms: Mapped[float | None] = mapped_column(Double)
    n_samples: Mapped[int | None] = mapped_column(Integer)
    noisy: Mapped[bool | None] = mapped_column(Boolean)
    throughput_per_s: Mapped[float | None] = mapped_column(Double)
    warmup_iters: Mapped[int | None] = mapped_column(Integer)


class Confirmation(Base):
    """One interleaved re-measurement of a workload's leading configs and eager fp32, in one
    process (`advisor.search.confirm`); ``entries`` holds the paired figures of each config."""

    __tablename__ = "advisor_confirmations"
    __table_args__ = (
        Index("ix_advisor_confirmations_lookup", "workload_id", "fingerprint_hash", "created_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    uuid: Mapped[str] = mapped_column(String(36), unique=True)
    workload_id: Mapped[int] = mapped_column(ForeignKey("advisor_workloads.id"))
    device_id: Mapped[int] = mapped_column(ForeignKey("advisor_devices.id"))
    environment_id: Mapped[int] = mapped_column(ForeignKey("advisor_environments.id"))
    fingerprint_hash: Mapped[str | None] = mapped_column(Hash)
    host: Mapped[str | None] = mapped_column(String(256))
    created_at: Mapped[datetime]
    requested_device: Mapped[str | None] = mapped_column(String(32))
    method: Mapped[str | None] = mapped_column(String(32))
    rounds: Mapped[int | None] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16))
    shapes: Mapped[list[Any] | None]
    entries: Mapped[list[Any] | None]
    fingerprint: Mapped[dict[str, Any] | None]
    error_tail: Mapped[str | None] = mapped_column(Text)


class CacheArtifact(Base):
    """Warm-start bytes (``torch.compiler.save_cache_artifacts()``) of one config of a workload
    on one fingerprint; valid only for the same torch, triton and device."""

    __tablename__ = "advisor_cache_artifacts"
    __table_args__ = (
        Index(
            "ix_advisor_cache_artifacts_lookup",
            "workload_id", "fingerprint_hash", "config_key", "created_at",
        ),
    )  # fmt: skip

    id: Mapped[int] = mapped_column(primary_key=True)
    uuid: Mapped[str] = mapped_column(String(36), unique=True)
    workload_id: Mapped[int] = mapped_column(ForeignKey("advisor_workloads.id"))
    device_id: Mapped[int] = mapped_column(ForeignKey("advisor_devices.id"))
    environment_id: Mapped[int] = mapped_column(ForeignKey("advisor_environments.id"))
    fingerprint_hash: Mapped[str | None] = mapped_column(Hash)
    host: Mapped[str | None] = mapped_column(String(256))
    created_at: Mapped[datetime]
    config_key: Mapped[str] = mapped_column(String(256))
    config: Mapped[dict[str, Any] | None]
    trial_uuid: Mapped[str | None] = mapped_column(String(36))
    torch_version: Mapped[str | None] = mapped_column(String(64))
    triton_version: Mapped[str | None] = mapped_column(String(64))
    size_bytes: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(Hash)
    cold_start_s: Mapped[float | None] = mapped_column(Double)
    warm_start_s: Mapped[float | None] = mapped_column(Double)
    shapes: Mapped[list[Any] | None]
    info: Mapped[dict[str, Any] | None]
    data: Mapped[bytes] = mapped_column(LargeBinary)
