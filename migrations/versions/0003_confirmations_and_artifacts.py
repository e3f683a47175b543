"""Confirmations and warm-start cache artifacts.

- ``advisor_confirmations``: one interleaved re-measurement of a workload's leading configs and
  eager fp32 in one process (`advisor.confirm`): its rounds, shapes and, per config, the paired
  figures (median, confidence interval, speedup over the same rounds) as JSON entries.
- ``advisor_cache_artifacts``: the bytes of ``torch.compiler.save_cache_artifacts()`` for one
  config of a workload on one fingerprint, with the stack they are valid for and the cold and
  artifact-warm start times measured when they were saved.

Revision ID: 0003
Revises: 0002
Create Date: 2026-10-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

DIMENSIONS = {
    "workload_id": "advisor_workloads",
    "device_id": "advisor_devices",
    "environment_id": "advisor_environments",
}


def _common(table: str) -> list[sa.SchemaItem]:
    """id, uuid, the workload/device/environment keys, fingerprint hash, host, created_at."""
    return [
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("uuid", sa.String(36), nullable=False),
        *(sa.Column(column, sa.Integer(), nullable=False) for column in DIMENSIONS),
        sa.Column("fingerprint_hash", sa.String(64), nullable=True),
        sa.Column("host", sa.String(256), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        *(
            sa.ForeignKeyConstraint([c], [f"{t}.id"], name=f"fk_{table}_{c}_{t}")
            for c, t in DIMENSIONS.items()
        ),
        sa.PrimaryKeyConstraint("id", name=f"pk_{table}"),
        sa.UniqueConstraint("uuid", name=f"uq_{table}_uuid"),
    ]


def upgrade() -> None:
    t = "advisor_confirmations"
    op.create_table(
        t,
        *_common(t),
        sa.Column("requested_device", sa.String(32), nullable=True),
        sa.Column("method", sa.String(32), nullable=True),
        sa.Column("rounds", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("shapes", sa.JSON(), nullable=True),
        sa.Column("entries", sa.JSON(), nullable=True),
        sa.Column("fingerprint", sa.JSON(), nullable=True),
        sa.Column("error_tail", sa.Text(), nullable=True),
    )
    op.create_index(
        "ix_advisor_confirmations_lookup", t, ["workload_id", "fingerprint_hash", "created_at"]
    )
    t = "advisor_cache_artifacts"
    op.create_table(
        t,
        *_common(t),
        sa.Column("config_key", sa.String(256), nullable=False),
        sa.Column("config", sa.JSON(), nullable=True),
        sa.Column("trial_uuid", sa.String(36), nullable=True),
        sa.Column("torch_version", sa.String(64), nullable=True),
        sa.Column("triton_version", sa.String(64), nullable=True),
        sa.Column("size_bytes", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("cold_start_s", sa.Double(), nullable=True),
        sa.Column("warm_start_s", sa.Double(), nullable=True),
        sa.Column("shapes", sa.JSON(), nullable=True),
        sa.Column("info", sa.JSON(), nullable=True),
        sa.Column("data", sa.LargeBinary(), nullable=False),
    )
    op.create_index(
        "ix_advisor_cache_artifacts_lookup",
        t,
        ["workload_id", "fingerprint_hash", "config_key", "created_at"],
    )


def downgrade() -> None:
    op.drop_index("ix_advisor_cache_artifacts_lookup", table_name="advisor_cache_artifacts")
    op.drop_table("advisor_cache_artifacts")
    op.drop_index("ix_advisor_confirmations_lookup", table_name="advisor_confirmations")
    op.drop_table("advisor_confirmations")
