"""The sweep's owner: the process that runs it.

- ``owner`` on sweeps: ``{"pid", "hostname", "started"}`` of the process that created the
  sweep, or resumed it last (`advisor.lifetime.owner`; ``started``: the process's start time,
  so that a pid the kernel gave to another process since is not taken for it). A reader on that
  host sees at once that a running sweep's process is gone (kill -9, a crash) and reports it
  ``dead`` without waiting for its heartbeat to age; on another host the heartbeat rule stays.
  Rows already there have none (the heartbeat alone tells).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("advisor_sweeps") as batch:
        batch.add_column(sa.Column("owner", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("advisor_sweeps") as batch:
        batch.drop_column("owner")
