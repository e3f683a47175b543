"""Initial schema: devices, environments, workloads, sweeps, trials (+ details), shapes.

Revision ID: 0001
Revises:
Create Date: 2026-10-01
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _col(name: str, type_: sa.types.TypeEngine, nullable: bool = True) -> sa.Column:
    return sa.Column(name, type_, nullable=nullable)


def _key(table: str) -> list[Any]:
    return [
        sa.Column("id", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=f"pk_{table}"),
    ]


def _fk(table: str, column: str, target: str, **kw: Any) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [column], [f"{target}.id"], name=f"fk_{table}_{column}_{target}", **kw
    )


def _many(type_: sa.types.TypeEngine, *names: str) -> list[sa.Column]:
    return [_col(name, type_) for name in names]


def _devices() -> None:
    t = "advisor_devices"
    op.create_table(
        t,
        *_key(t),
        _col("device_hash", sa.String(64), nullable=False),
        _col("device_kind", sa.String(16)),
        _col("device_name", sa.String(256)),
        _col("compute_capability", sa.String(16)),
        _col("device_memory_bytes", sa.BigInteger()),
        _col("sm_count", sa.Integer()),
        _col("cpu_model", sa.String(256)),
        _col("cpu_cores", sa.Integer()),
        _col("host_memory_bytes", sa.BigInteger()),
        sa.UniqueConstraint("device_hash", name=f"uq_{t}_device_hash"),
    )


def _environments() -> None:
    t = "advisor_environments"
    versions = (
        "driver_version", "cuda_driver_version", "torch_version", "triton_version",
        "cuda_runtime_version", "cudnn_version", "python_version",
    )  # fmt: skip
    op.create_table(
        t,
        *_key(t),
        _col("env_hash", sa.String(64), nullable=False),
        *_many(sa.String(64), *versions),
        sa.UniqueConstraint("env_hash", name=f"uq_{t}_env_hash"),
    )


def _workloads() -> None:
    t = "advisor_workloads"
    op.create_table(
        t,
        *_key(t),
        _col("name", sa.String(256), nullable=False),
        _col("source_sha256", sa.String(64), nullable=False),
        _col("path", sa.Text()),
        _col("info", sa.JSON()),
        sa.UniqueConstraint("name", "source_sha256", name=f"uq_{t}_name_source_sha256"),
    )


def _sweeps() -> None:
    t = "advisor_sweeps"
    op.create_table(
        t,
        *_key(t),
        _col("uuid", sa.String(36), nullable=False),
        _col("workload_id", sa.Integer(), nullable=False),
        _col("device_id", sa.Integer(), nullable=False),
        _col("environment_id", sa.Integer(), nullable=False),
        _col("fingerprint_hash", sa.String(64)),
        _col("workload_path", sa.Text()),
        _col("fingerprint", sa.JSON()),
        _col("settings", sa.JSON()),
        _col("status", sa.String(16), nullable=False),
        _col("study_name", sa.String(512)),
        _col("planned_trials", sa.Integer()),
        _col("started_at", sa.DateTime(timezone=True), nullable=False),
        _col("finished_at", sa.DateTime(timezone=True)),
        _fk(t, "device_id", "advisor_devices"),
        _fk(t, "environment_id", "advisor_environments"),
        _fk(t, "workload_id", "advisor_workloads"),
        sa.UniqueConstraint("uuid", name=f"uq_{t}_uuid"),
    )


def _trials() -> None:
    t = "advisor_trials"
    op.create_table(
        t,
        *_key(t),
        _col("uuid", sa.String(36), nullable=False),
        _col("sweep_id", sa.Integer()),
        _col("workload_id", sa.Integer(), nullable=False),
        _col("device_id", sa.Integer(), nullable=False),
        _col("environment_id", sa.Integer(), nullable=False),
        _col("fingerprint_hash", sa.String(64)),
        _col("record_version", sa.Integer(), nullable=False),
        _col("workload_path", sa.Text()),
        _col("requested_device", sa.String(32)),
        _col("mode", sa.String(32)),
        _col("dtype", sa.String(8)),
        _col("fullgraph", sa.Boolean()),
        _col("dynamic", sa.String(8)),
        _col("config", sa.JSON()),
        _col("config_key", sa.String(256)),
        _col("status", sa.String(16), nullable=False),
        _col("failure_reason", sa.String(32)),
        *_many(sa.DateTime(timezone=True), "started_at", "finished_at"),
        _col("method", sa.String(32)),
        _col("warmup_iters", sa.Integer()),
        *_many(sa.Double(), "median_ms", "p90_ms", "p99_ms", "mean_ms"),
        _col("noisy", sa.Boolean()),
        *_many(sa.Double(), "cold_compile_s", "warm_compile_s", "eager_first_call_s"),
        _col("peak_mem_bytes", sa.BigInteger()),
        *_many(
            sa.Integer(),
            "graph_count",
            "graph_break_count",
            "recompiles",
            "generated_kernel_count",
            "kernels_per_call",
            "launches_per_call",
            "eager_kernels_per_call",
            "eager_launches_per_call",
        ),  # fmt: skip
        *_many(sa.Double(), "max_abs_err", "max_rel_err", "atol", "rtol"),
        _col("correct", sa.Boolean()),
        _col("quality_name", sa.String(128)),
        *_many(sa.Double(), "quality_value", "quality_threshold"),
        *_many(sa.Boolean(), "quality_passed", "passed"),
        _fk(t, "device_id", "advisor_devices"),
        _fk(t, "environment_id", "advisor_environments"),
        _fk(t, "sweep_id", "advisor_sweeps"),
        _fk(t, "workload_id", "advisor_workloads"),
        sa.UniqueConstraint("uuid", name=f"uq_{t}_uuid"),
    )


def _trial_details() -> None:
    t = "advisor_trial_details"
    op.create_table(
        t,
        sa.Column("trial_id", sa.Integer(), nullable=False, autoincrement=False),
        _col("error_tail", sa.Text()),
        *_many(
            sa.JSON(),
            "graph_breaks",
            "kernel_names",
            "eager_kernel_names",
            "telemetry",
            "fingerprint",
            "extra",
        ),  # fmt: skip
        _fk(t, "trial_id", "advisor_trials", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("trial_id", name=f"pk_{t}"),
    )


def _shape_measurements() -> None:
    t = "advisor_shape_measurements"
    op.create_table(
        t,
        *_key(t),
        _col("trial_id", sa.Integer(), nullable=False),
        _col("position", sa.Integer(), nullable=False),
        _col("shape", sa.String(512)),
        _col("dims", sa.JSON()),
        *_many(
            sa.Double(),
            "weight",
            "median_ms",
            "mean_ms",
            "min_ms",
            "max_ms",
            "p90_ms",
            "p99_ms",
            "stdev_ms",
            "iqr_ms",
        ),  # fmt: skip
        _col("n_samples", sa.Integer()),
        _col("noisy", sa.Boolean()),
        _col("throughput_per_s", sa.Double()),
        _col("warmup_iters", sa.Integer()),
        _fk(t, "trial_id", "advisor_trials", ondelete="CASCADE"),
        sa.UniqueConstraint("trial_id", "position", name=f"uq_{t}_trial_id_position"),
    )


def upgrade() -> None:
    _devices()
    _environments()
    _workloads()
    _sweeps()
    _trials()
    _trial_details()
    _shape_measurements()


def downgrade() -> None:
    for table in (
        "advisor_shape_measurements", "advisor_trial_details", "advisor_trials",
        "advisor_sweeps", "advisor_workloads", "advisor_environments", "advisor_devices",
    ):  # fmt: skip
        op.drop_table(table)
