"""The store's inserts: devices, environments, workloads, groups and sweeps by key; trials by uuid.

Every insert is ``INSERT ... ON CONFLICT DO NOTHING`` followed by a lookup where an id is
needed, so concurrent writers (several processes, several hosts importing) never collide on a
unique key, never wait on one another's rows once those exist, and writing the same trial twice
is a no-op. Rows of these tables never change once written, so their ids are cached per store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from sqlalchemy import Table, insert, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from advisor.db import rows
from advisor.db.models import (
    Device,
    Environment,
    ShapeMeasurement,
    Sweep,
    Trial,
    TrialDetails,
    TrialGroup,
    Workload,
    table,
)
from advisor.errors import StoreError

Key = tuple[Any, ...]
GROUP_KEYS = ("workload_id", "device_id", "environment_id")
# kind -> (table, its unique key columns)
DIMENSIONS: dict[str, tuple[Table, Key]] = {
    "workload": (table(Workload), ("name", "source_sha256")),
    "device": (table(Device), ("device_hash",)),
    "env": (table(Environment), ("env_hash",)),
    "group": (table(TrialGroup), GROUP_KEYS),
}
_SWEEP_INHERITED = (
    "workload_id", "workload_path", "device_id", "environment_id", "fingerprint",
    "fingerprint_hash", "host",
)  # fmt: skip


@dataclass
class IdCache:
    """What this store wrote or looked up (ids by key, sweeps by id); new entries count only once
    their transaction committed."""

    known: dict[tuple[str, Any], Any] = field(default_factory=dict)
    pending: dict[tuple[str, Any], Any] = field(default_factory=dict)

    def commit(self) -> None:
        self.known.update(self.pending)
        self.pending.clear()

    def rollback(self) -> None:
        self.pending.clear()

    def get(self, kind: str, key: Any) -> Any:
        return self.known.get((kind, key), self.pending.get((kind, key)))


@dataclass
class PreparedTrial:
    """One record checked and split into rows, ready to insert."""

    row: dict[str, Any]
    details: dict[str, Any]
    shapes: list[dict[str, Any]]
    sweep_id: int | None
    workload: dict[str, Any] | None
    device: dict[str, Any] | None
    environment: dict[str, Any] | None

    @property
    def keys(self) -> dict[str, Key | None]:
        """The dimension keys this trial names (None: taken from its sweep)."""
        return {
            "workload": (self.workload["name"], self.workload["source_sha256"])
            if self.workload
            else None,
            "device": (self.device["device_hash"],) if self.device else None,
            "env": (self.environment["env_hash"],) if self.environment else None,
        }


def prepare(record: Any, sweep_id: int | None, index: int | None = None) -> PreparedTrial:
    """Check a record and split it into rows; raises StoreError naming what is wrong."""
    full = rows.full_record(record, index)
    what = f"trial record {full['trial_uuid'] or index or ''}".rstrip()
    if index is not None:
        what = f"trial record {index}" + (f" ({full['trial_uuid']})" if full["trial_uuid"] else "")
    fingerprint, workload = full["fingerprint"], full["workload"]
    if sweep_id is None or fingerprint is not None:
        rows.check_fingerprint(fingerprint, what)
    if sweep_id is None or workload is not None:
        rows.check_workload(workload, what)
    rows.check_record(full, what)
    return PreparedTrial(
        row=rows.trial_row(full, what),
        details=rows.details_row(full),
        shapes=rows.shape_rows(full, what),
        sweep_id=sweep_id,
        workload=rows.workload_row(workload) if workload else None,
        device=rows.device_row(fingerprint) if fingerprint else None,
        environment=rows.environment_row(fingerprint) if fingerprint else None,
    )


@cache
def _statements(dialect: str) -> dict[str, Any]:
    """The insert statements, built once per dialect (so SQLAlchemy's statement cache hits)."""
    insert_for = postgresql.insert if dialect == "postgresql" else sqlite.insert
    stmts: dict[str, Any] = {
        kind: insert_for(dimension).on_conflict_do_nothing(index_elements=list(keys))
        for kind, (dimension, keys) in DIMENSIONS.items()
    }
    trials = table(Trial)
    stmts["trial"] = (
        insert_for(trials)
        .on_conflict_do_nothing(index_elements=["uuid"])
        .returning(trials.c.uuid, trials.c.id)
    )
    stmts["sweep"] = insert_for(table(Sweep)).on_conflict_do_nothing(index_elements=["uuid"])
    stmts["details"] = insert(table(TrialDetails))
    stmts["shape"] = insert(table(ShapeMeasurement))
    return stmts


def _stmt(session: Session, kind: str) -> Any:
    return _statements(session.get_bind().dialect.name)[kind]


def ensure(
    session: Session, cache: IdCache, kind: str, found: dict[Key, dict[str, Any]]
) -> dict[Key, int]:
    """Ids of the rows of a dimension by key, inserting the missing ones."""
    ids = {key: cache.get(kind, key) for key in found}
    missing = sorted(key for key, known in ids.items() if known is None)
    if missing:
        dimension, columns = DIMENSIONS[kind]
        session.execute(_stmt(session, kind), [found[key] for key in missing])
        first = sorted({key[0] for key in missing})
        lookup = select(*(dimension.c[c] for c in columns), dimension.c.id).where(
            dimension.c[columns[0]].in_(first)
        )
        stored = {tuple(row[:-1]): row[-1] for row in session.execute(lookup)}
        for key in missing:
            ids[key] = cache.pending[(kind, key)] = stored[key]
    return ids


def _dimension_ids(
    session: Session, cache: IdCache, items: list[PreparedTrial]
) -> dict[str, dict[Key, int]]:
    parts = {"workload": "workload", "device": "device", "env": "environment"}
    found: dict[str, dict[Key, dict[str, Any]]] = {kind: {} for kind in parts}
    for item in items:
        for kind, key in item.keys.items():
            if key is not None:
                found[kind][key] = getattr(item, parts[kind])
    return {kind: ensure(session, cache, kind, rows_) for kind, rows_ in found.items()}


def _sweeps(session: Session, cache: IdCache, sweep_ids: set[int]) -> dict[int, Any]:
    """What trials of these sweeps take from them when their records lack it."""
    found = {i: cache.get("sweep", i) for i in sweep_ids}
    wanted = [i for i, known in found.items() if known is None]
    if wanted:
        t = table(Sweep)
        query = select(t.c.id, *(t.c[c] for c in _SWEEP_INHERITED)).where(t.c.id.in_(wanted))
        for row in session.execute(query).mappings():
            found[row["id"]] = cache.pending[("sweep", row["id"])] = dict(row)
    missing = [i for i, known in found.items() if known is None]
    if missing:
        raise StoreError(f"no sweep with id {min(missing)} in this database")
    return found


def insert_trials(session: Session, cache: IdCache, items: list[PreparedTrial]) -> set[str]:
    """Insert the trials not stored yet (by uuid) with their details and shapes; returns the
    uuids added."""
    ids = _dimension_ids(session, cache, items)
    sweeps = _sweeps(session, cache, {i.sweep_id for i in items if i.sweep_id is not None})
    trial_rows: dict[str, dict[str, Any]] = {}
    for item in items:
        sweep = sweeps[item.sweep_id] if item.sweep_id is not None else None
        trial_rows.setdefault(item.row["uuid"], _with_keys(item, sweep, ids))
    added = dict(session.execute(_stmt(session, "trial"), list(trial_rows.values())).all())
    new = {uuid: item for item in items if (uuid := item.row["uuid"]) in added}
    if not new:
        return set()
    groups = {tuple(trial_rows[u][c] for c in GROUP_KEYS) for u in new}
    ensure(session, cache, "group", {g: dict(zip(GROUP_KEYS, g, strict=True)) for g in groups})
    details = [{**item.details, "trial_id": added[uuid]} for uuid, item in new.items()]
    session.execute(_stmt(session, "details"), details)
    shapes = [{**s, "trial_id": added[uuid]} for uuid, item in new.items() for s in item.shapes]
    if shapes:
        session.execute(_stmt(session, "shape"), shapes)
    return set(added)


def _with_keys(item: PreparedTrial, sweep: Any, ids: dict[str, dict[Key, int]]) -> dict[str, Any]:
    """The trial row with its foreign keys; what the record lacks comes from its sweep."""
    row = {**item.row, "sweep_id": item.sweep_id}
    keys = item.keys
    if keys["workload"] is not None:
        row["workload_id"] = ids["workload"][keys["workload"]]
    else:
        row.update(workload_id=sweep["workload_id"], workload_path=sweep["workload_path"])
    if keys["device"] is not None and keys["env"] is not None:
        row["device_id"] = ids["device"][keys["device"]]
        row["environment_id"] = ids["env"][keys["env"]]
    else:
        row.update({k: sweep[k] for k in ("device_id", "environment_id", "fingerprint_hash")})
        row["host"] = sweep["host"]
        item.details["fingerprint"] = sweep["fingerprint"]
    return row


def insert_sweep(session: Session, cache: IdCache, sweep: dict[str, Any]) -> int:
    """Insert a sweep unless its uuid is stored already; returns its id.

    ``sweep`` holds uuid, workload (record form), fingerprint, settings, status, study_name,
    planned_trials, started_at, finished_at.
    """
    what = f"sweep {sweep['uuid']}"
    rows.check_workload(sweep["workload"], what)
    rows.check_fingerprint(sweep["fingerprint"], what)
    fingerprint, workload = sweep["fingerprint"], sweep["workload"]
    item = PreparedTrial(
        row={},
        details={},
        shapes=[],
        sweep_id=None,
        workload=rows.workload_row(workload),
        device=rows.device_row(fingerprint),
        environment=rows.environment_row(fingerprint),
    )
    ids = _dimension_ids(session, cache, [item])
    keys = item.keys
    row = {
        "uuid": sweep["uuid"],
        "workload_id": ids["workload"][keys["workload"]],  # type: ignore[index]
        "device_id": ids["device"][keys["device"]],  # type: ignore[index]
        "environment_id": ids["env"][keys["env"]],  # type: ignore[index]
        "fingerprint_hash": fingerprint.get("fingerprint_hash"),
        "host": rows.host_of(fingerprint),
        "workload_path": workload.get("path"),
        "fingerprint": fingerprint,
        "settings": sweep.get("settings"),
        "status": sweep["status"],
        "study_name": sweep.get("study_name"),
        "planned_trials": sweep.get("planned_trials"),
        "started_at": rows.to_datetime(sweep["started_at"], f"{what}: started_at"),
        "finished_at": rows.to_datetime(sweep.get("finished_at"), f"{what}: finished_at"),
        "owner": sweep.get("owner"),  # this host's process; never carried by an export
    }
    row["heartbeat_at"] = (rows.to_datetime(sweep.get("heartbeat_at"), f"{what}: heartbeat_at")
                           or row["started_at"])
    session.execute(_stmt(session, "sweep"), row)
    sweeps = table(Sweep)
    sweep_id: int | None = session.scalar(select(sweeps.c.id).where(sweeps.c.uuid == sweep["uuid"]))
    assert sweep_id is not None
    return sweep_id
