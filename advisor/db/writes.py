"""The store's inserts: devices, environments, workloads and sweeps by key; trials by uuid.

Every insert is ``INSERT ... ON CONFLICT DO NOTHING`` followed by a lookup, so concurrent writers
(several processes, several hosts importing) never collide on a unique key, and writing the
same trial twice is a no-op.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Table, insert, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from advisor.db import rows
from advisor.db.models import Device, Environment, ShapeMeasurement, Sweep, Trial, Workload
from advisor.errors import StoreError

Key = tuple[Any, ...]


@dataclass
class IdCache:
    """Ids of devices, environments and workloads; new ones count only once committed."""

    known: dict[tuple[str, Key], int] = field(default_factory=dict)
    pending: dict[tuple[str, Key], int] = field(default_factory=dict)

    def commit(self) -> None:
        self.known.update(self.pending)
        self.pending.clear()

    def rollback(self) -> None:
        self.pending.clear()

    def get(self, kind: str, key: Key) -> int | None:
        return self.known.get((kind, key), self.pending.get((kind, key)))


@dataclass
class PreparedTrial:
    """One record checked and split into rows, ready to insert."""

    row: dict[str, Any]
    shapes: list[dict[str, Any]]
    sweep_id: int | None
    workload: dict[str, Any] | None
    device: dict[str, Any] | None
    environment: dict[str, Any] | None


def prepare(record: Any, sweep_id: int | None, index: int | None = None) -> PreparedTrial:
    """Check a record and split it into rows; raises StoreError naming what is wrong."""
    full = rows.full_record(record, index)
    what = f"trial record {full['trial_uuid'] or index or ''}".rstrip()
    fingerprint, workload = full["fingerprint"], full["workload"]
    if sweep_id is None:
        rows.check_fingerprint(fingerprint, what)
        rows.check_workload(workload, what)
    has_fp = isinstance(fingerprint, dict) and fingerprint.get("device_hash")
    if has_fp:
        rows.check_fingerprint(fingerprint, what)
    if workload is not None:
        rows.check_workload(workload, what)
    return PreparedTrial(
        row=rows.trial_row(full, what),
        shapes=rows.shape_rows(full, what),
        sweep_id=sweep_id,
        workload=rows.workload_row(workload) if workload else None,
        device=rows.device_row(fingerprint) if has_fp else None,
        environment=rows.environment_row(fingerprint) if has_fp else None,
    )


def _insert(session: Session, table: Table) -> Any:
    if session.get_bind().dialect.name == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)


def _ensure(
    session: Session, cache: IdCache, kind: str, table: Table, keys: Key, found: dict[Key, dict]
) -> dict[Key, int]:
    """Ids of rows by key (``keys``: the unique columns), inserting the missing ones."""
    ids = {key: cache.get(kind, key) for key in found}
    missing = sorted(key for key, known in ids.items() if known is None)
    if missing:
        stmt = _insert(session, table).on_conflict_do_nothing(index_elements=list(keys))
        session.execute(stmt, [found[key] for key in missing])
        first = sorted({key[0] for key in missing})
        lookup = select(*(table.c[c] for c in keys), table.c.id).where(table.c[keys[0]].in_(first))
        stored = {tuple(row[:-1]): row[-1] for row in session.execute(lookup)}
        for key in missing:
            ids[key] = cache.pending[(kind, key)] = stored[key]
    return {key: value for key, value in ids.items() if value is not None}


def ensure_dimensions(
    session: Session, cache: IdCache, items: list[PreparedTrial]
) -> tuple[dict[Key, int], dict[Key, int], dict[Key, int]]:
    """Ids of the workloads, devices and environments the items name."""
    workloads = {(w["name"], w["source_sha256"]): w for i in items if (w := i.workload)}
    devices = {(d["device_hash"],): d for i in items if (d := i.device)}
    envs = {(e["env_hash"],): e for i in items if (e := i.environment)}
    return (
        _ensure(
            session, cache, "workload", Workload.__table__, ("name", "source_sha256"), workloads
        ),
        _ensure(session, cache, "device", Device.__table__, ("device_hash",), devices),
        _ensure(session, cache, "env", Environment.__table__, ("env_hash",), envs),
    )


def _sweep_dimensions(session: Session, sweep_ids: set[int]) -> dict[int, tuple[int, int, int]]:
    if not sweep_ids:
        return {}
    sweeps = Sweep.__table__
    query = select(sweeps.c.id, sweeps.c.workload_id, sweeps.c.device_id, sweeps.c.environment_id)
    found = {
        row[0]: tuple(row[1:]) for row in session.execute(query.where(sweeps.c.id.in_(sweep_ids)))
    }
    missing = sweep_ids - set(found)
    if missing:
        raise StoreError(f"no sweep with id {min(missing)} in this database")
    return found  # type: ignore[return-value]


def insert_trials(session: Session, cache: IdCache, items: list[PreparedTrial]) -> set[str]:
    """Insert the trials not stored yet (by uuid) with their shapes; returns the added uuids."""
    workload_ids, device_ids, env_ids = ensure_dimensions(session, cache, items)
    sweeps = _sweep_dimensions(session, {i.sweep_id for i in items if i.sweep_id is not None})
    trial_rows: dict[str, dict[str, Any]] = {}
    for item in items:
        from_sweep = sweeps.get(item.sweep_id) if item.sweep_id is not None else None
        trial_rows.setdefault(
            item.row["uuid"], _with_keys(item, from_sweep, workload_ids, device_ids, env_ids)
        )
    table = Trial.__table__
    stmt = _insert(session, table).on_conflict_do_nothing(index_elements=["uuid"])
    added = dict(
        session.execute(stmt.returning(table.c.uuid, table.c.id), list(trial_rows.values())).all()
    )
    shapes = [
        {**shape, "trial_id": added[item.row["uuid"]]}
        for item in items
        if item.row["uuid"] in added
        for shape in item.shapes
    ]
    if shapes:
        session.execute(insert(ShapeMeasurement.__table__), shapes)
    return set(added)


def _with_keys(
    item: PreparedTrial,
    from_sweep: tuple[int, int, int] | None,
    workload_ids: dict[Key, int],
    device_ids: dict[Key, int],
    env_ids: dict[Key, int],
) -> dict[str, Any]:
    """The trial row with its foreign keys; what the record lacks comes from its sweep."""
    workload_id, device_id, env_id = from_sweep or (None, None, None)
    if item.workload:
        workload_id = workload_ids[(item.workload["name"], item.workload["source_sha256"])]
    if item.device and item.environment:
        device_id = device_ids[(item.device["device_hash"],)]
        env_id = env_ids[(item.environment["env_hash"],)]
    return {
        **item.row,
        "sweep_id": item.sweep_id,
        "workload_id": workload_id,
        "device_id": device_id,
        "environment_id": env_id,
    }


def insert_sweep(session: Session, cache: IdCache, sweep: dict[str, Any]) -> int:
    """Insert a sweep unless its uuid is stored already; returns its id.

    ``sweep`` holds uuid, workload (record form), fingerprint, settings, status, study_name,
    planned_trials, started_at, finished_at.
    """
    what = f"sweep {sweep['uuid']}"
    rows.check_workload(sweep["workload"], what)
    rows.check_fingerprint(sweep["fingerprint"], what)
    fingerprint = sweep["fingerprint"]
    item = PreparedTrial(
        row={},
        shapes=[],
        sweep_id=None,
        workload=rows.workload_row(sweep["workload"]),
        device=rows.device_row(fingerprint),
        environment=rows.environment_row(fingerprint),
    )
    workload_ids, device_ids, env_ids = ensure_dimensions(session, cache, [item])
    assert item.workload and item.device and item.environment
    row = {
        "uuid": sweep["uuid"],
        "workload_id": workload_ids[(item.workload["name"], item.workload["source_sha256"])],
        "device_id": device_ids[(item.device["device_hash"],)],
        "environment_id": env_ids[(item.environment["env_hash"],)],
        "fingerprint_hash": fingerprint.get("fingerprint_hash"),
        "host": rows.host_of(fingerprint),
        "workload_path": sweep["workload"].get("path"),
        "fingerprint": fingerprint,
        "settings": sweep.get("settings"),
        "status": sweep["status"],
        "study_name": sweep.get("study_name"),
        "planned_trials": sweep.get("planned_trials"),
        "started_at": rows.to_datetime(sweep["started_at"], f"{what}: started_at"),
        "finished_at": rows.to_datetime(sweep.get("finished_at"), f"{what}: finished_at"),
    }
    table = Sweep.__table__
    session.execute(_insert(session, table).on_conflict_do_nothing(index_elements=["uuid"]), row)
    sweep_id = session.scalar(select(table.c.id).where(table.c.uuid == sweep["uuid"]))
    assert sweep_id is not None
    return sweep_id
