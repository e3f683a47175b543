"""What a CPU runs, on devices.

- ``cpu_isa`` on devices: the ISA torch dispatches CPU kernels to
  (``torch.backends.cpu.get_cpu_capability()``: ``AVX512``, ``AVX2``, ``DEFAULT``, ...).
- ``cpu_flags`` on devices: the CPU features that change kernels (AVX2, AVX-512 and its
  BF16/FP16, AMX; SVE, BF16, I8MM on Arm), sorted and space-separated.

Both are hashed into a CPU device's ``device_hash`` (`advisor.fingerprint`), so a CPU measured
before them is another device than the same CPU probed after; devices already stored were
probed without them and keep null.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("advisor_devices") as batch:
        batch.add_column(sa.Column("cpu_isa", sa.String(32), nullable=True))
        batch.add_column(sa.Column("cpu_flags", sa.String(256), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("advisor_devices") as batch:
        batch.drop_column("cpu_flags")
        batch.drop_column("cpu_isa")
