"""The sweep's heartbeat.

- ``heartbeat_at`` on sweeps: refreshed every few seconds by the process that runs the sweep
  (`advisor.search.sweep.Heartbeat`); a sweep stored as running whose heartbeat is older than
  `advisor.db.store.SWEEP_DEAD_AFTER_S` is reported as ``dead`` by every reader (computed on
  read: readers never write). Rows already there are given their ``started_at``.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("advisor_sweeps") as batch:
        batch.add_column(sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True))
    sweeps = sa.table("advisor_sweeps", sa.column("heartbeat_at", sa.DateTime(timezone=True)),
                      sa.column("started_at", sa.DateTime(timezone=True)))
    op.get_bind().execute(sa.update(sweeps).values(heartbeat_at=sweeps.c.started_at))


def downgrade() -> None:
    with op.batch_alter_table("advisor_sweeps") as batch:
        batch.drop_column("heartbeat_at")
