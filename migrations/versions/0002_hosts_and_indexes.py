"""Hosts, trial groups and the query indexes.

- ``host`` on sweeps and trials: which machine ran it (backfilled from the fingerprint).
- ``advisor_trial_groups``: one row per workload x device x environment with trials
  (backfilled), so the best config of every group is one index probe per group.
- Indexes for what the recommender and the dashboard ask: the best passed trial of a group (a
  partial index over passed trials in median order), trials by workload, device, sweep,
  status, time and fingerprint; sweeps by workload, device, status and time.

Revision ID: 0002
Revises: 0001
Create Date: 2026-10-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

BATCH = 1000
PASSED_SQL = {"sqlite": "status = 'ok' AND passed = 1", "postgresql": "status = 'ok' AND passed"}

INDEXES: dict[str, dict[str, list[str]]] = {
    "advisor_sweeps": {
        "ix_advisor_sweeps_workload": ["workload_id", "started_at"],
        "ix_advisor_sweeps_device": ["device_id", "started_at"],
        "ix_advisor_sweeps_status": ["status", "started_at"],
        "ix_advisor_sweeps_started_at": ["started_at"],
    },
    "advisor_trials": {
        "ix_advisor_trials_workload": ["workload_id", "device_id", "environment_id", "config_key"],
        "ix_advisor_trials_device": ["device_id", "started_at"],
        "ix_advisor_trials_sweep": ["sweep_id", "config_key"],
        "ix_advisor_trials_status": ["status", "started_at"],
        "ix_advisor_trials_started_at": ["started_at"],
        "ix_advisor_trials_fingerprint": ["fingerprint_hash"],
    },
}
BEST_INDEX = "ix_advisor_trials_best"
BEST_COLUMNS = ["workload_id", "device_id", "environment_id", "median_ms", "id", "config_key"]


def _hosts(bind: sa.Connection, table: str, after: int) -> list[tuple[int, object]]:
    """(id, fingerprint) of the next rows of a table with a host column, in id order."""
    if table == "advisor_trials":
        source = sa.table(
            "advisor_trial_details", sa.column("trial_id", sa.Integer()),
            sa.column("fingerprint", sa.JSON()),
        )  # fmt: skip
        key = source.c.trial_id
    else:
        source = sa.table(table, sa.column("id", sa.Integer()), sa.column("fingerprint", sa.JSON()))
        key = source.c.id
    query = sa.select(key, source.c.fingerprint).where(key > after).order_by(key).limit(BATCH)
    return [tuple(row) for row in bind.execute(query)]


def _backfill_host(table_name: str) -> None:
    """host = fingerprint["hostname"] for the rows already there."""
    table = sa.table(table_name, sa.column("id", sa.Integer()), sa.column("host", sa.String(256)))
    bind = op.get_bind()
    update = (
        sa.update(table).where(table.c.id == sa.bindparam("row_id"))
        .values(host=sa.bindparam("row_host"))
    )  # fmt: skip
    last = 0
    while chunk := _hosts(bind, table_name, last):
        last = chunk[-1][0]
        params = [
            {"row_id": row_id, "row_host": str(fp["hostname"])[:256]}
            for row_id, fp in chunk
            if isinstance(fp, dict) and fp.get("hostname") is not None
        ]
        if params:
            bind.execute(update, params)


GROUPS = "advisor_trial_groups"
GROUP_KEYS = {
    "workload_id": "advisor_workloads",
    "device_id": "advisor_devices",
    "environment_id": "advisor_environments",
}


def _create_groups() -> None:
    op.create_table(
        GROUPS,
        sa.Column("id", sa.Integer(), nullable=False),
        *(sa.Column(column, sa.Integer(), nullable=False) for column in GROUP_KEYS),
        *(
            sa.ForeignKeyConstraint([c], [f"{t}.id"], name=f"fk_{GROUPS}_{c}_{t}")
            for c, t in GROUP_KEYS.items()
        ),
        sa.PrimaryKeyConstraint("id", name=f"pk_{GROUPS}"),
        sa.UniqueConstraint(*GROUP_KEYS, name=f"uq_{GROUPS}_{'_'.join(GROUP_KEYS)}"),
    )


def _backfill_groups() -> None:
    """One group per workload x device x environment of the trials already there."""
    trials = sa.table("advisor_trials", *(sa.column(c, sa.Integer()) for c in GROUP_KEYS))
    groups = sa.table(GROUPS, *(sa.column(c, sa.Integer()) for c in GROUP_KEYS))
    found = sa.select(*(trials.c[c] for c in GROUP_KEYS)).distinct()
    op.execute(groups.insert().from_select(list(GROUP_KEYS), found))


def upgrade() -> None:
    for table, indexes in INDEXES.items():
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("host", sa.String(256), nullable=True))
            for name, columns in indexes.items():
                batch.create_index(name, columns, unique=False)
        _backfill_host(table)
    _create_groups()
    _backfill_groups()
    op.create_index(
        BEST_INDEX,
        "advisor_trials",
        BEST_COLUMNS,
        unique=False,
        sqlite_where=sa.text(PASSED_SQL["sqlite"]),
        postgresql_where=sa.text(PASSED_SQL["postgresql"]),
    )


def downgrade() -> None:
    op.drop_index(BEST_INDEX, table_name="advisor_trials")
    op.drop_table(GROUPS)
    for table, indexes in INDEXES.items():
        with op.batch_alter_table(table) as batch:
            for name in indexes:
                batch.drop_index(name)
            batch.drop_column("host")
