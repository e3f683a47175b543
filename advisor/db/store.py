"""The one store API: every read and write of advisor's results goes through `ResultStore`.

    store = ResultStore.from_url()            # $ADVISOR_DB_URL, else sqlite:///advisor.db
    sweep_id = store.create_sweep(workload, fingerprint, settings, study_name, planned_trials=20)
    store.add_trial(record, sweep_id)         # idempotent by record["trial_uuid"]
    store.finish_sweep(sweep_id, "finished")
    store.trials(workload="my-reranker")      # records exactly as advisor.records describes them

A new database is created at the newest schema on first use; one at an older schema revision
raises `SchemaOutdated` (run ``advisor db upgrade``). Every database error surfaces as a
one-line `StoreError` with the password masked. ``store.url`` is the real URL, for Optuna's
RDB storage to share the database; ``store.masked_url`` is the one to print.
"""

from __future__ import annotations

import hashlib
import uuid as uuidlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, insert, select, text, update
from sqlalchemy.engine import URL
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from advisor import lifetime
from advisor import settings as env_settings
from advisor.config import ConfigDict
from advisor.db import queries, rows, schema, writes
from advisor.db.engine import (
    WRITE_OPTION,
    check_sqlite_path,
    connect_error,
    immutable_url,
    make_engine,
    masked_url,
    parse_url,
    resolve_url,
    translated,
)
from advisor.db.models import SWEEP_STATUSES, TRIAL_STATUSES, Sweep
from advisor.errors import StoreError
from advisor.records import Confirmation, TrialRecord
from advisor.rows import (
    ArtifactRow,
    BestRow,
    DeviceComparisonRow,
    DeviceRow,
    FingerprintRow,
    GroupSummaryRow,
    MeasuredShapeRow,
    NearBestRow,
    SweepRow,
)

ANALYZE_AFTER = 1000  # an import that adds this many trials refreshes the planner statistics


def sweep_dead_after_s() -> float:
    """Seconds without a heartbeat after which a running sweep is dead: its process is gone
    (kill -9, a crash, a lost host). A sweep beats (`ResultStore.beat`) every
    $ADVISOR_SWEEP_HEARTBEAT_S; this is $ADVISOR_SWEEP_DEAD_AFTER_S, else 120 (read at each
    call: a long-lived reader follows a change). Computed on read; no reader writes."""
    return env_settings.sweep_dead_after_s()


def _open_engine(url: str | None, read_only: bool = False) -> tuple[Engine, URL]:
    parsed = parse_url(resolve_url(url))
    check_sqlite_path(parsed)
    if read_only and parsed.get_backend_name() == "sqlite" and not _sqlite_file_exists(parsed):
        raise StoreError(missing_database(parsed))
    engine = make_engine(parsed, read_only=read_only)
    try:
        with engine.connect():
            pass
    except SQLAlchemyError as e:
        engine.dispose()
        fallback = immutable_url(parsed) if read_only else None  # a WAL file, a read-only folder
        if fallback is None:
            raise connect_error(e, parsed) from e
        engine = make_engine(fallback, read_only=True)
        try:
            with engine.connect():
                pass
        except SQLAlchemyError:
            engine.dispose()
            raise connect_error(e, parsed) from e
    return engine, parsed


def upgrade_database(url: str | None = None) -> schema.Revision:
    """Upgrade (or create) the advisor schema to head, and create Optuna's tables if they are
    missing (sweeps keep their studies there); returns where advisor's schema stood before."""
    engine, parsed = _open_engine(url)
    try:
        with translated(parsed, "upgrading the advisor schema"):
            before = schema.upgrade(engine)
        with translated(parsed, "creating Optuna's tables"):
            schema.ensure_optuna(engine, parsed.render_as_string(hide_password=False))
        return before
    finally:
        engine.dispose()


def prepare_optuna(url: str) -> None:
    """Create Optuna's tables in the database at ``url`` once, under a lock that spans
    processes (`advisor.db.schema.ensure_optuna`); call before Optuna opens a study there."""
    engine, parsed = _open_engine(url)
    try:
        with translated(parsed, "creating Optuna's tables"):
            schema.ensure_optuna(engine, parsed.render_as_string(hide_password=False))
    finally:
        engine.dispose()


def database_revision(url: str | None = None) -> schema.Revision:
    """The advisor schema revision of a database (current None: no advisor schema yet)."""
    parsed = parse_url(resolve_url(url))
    if parsed.get_backend_name() == "sqlite" and not _sqlite_file_exists(parsed):
        return schema.Revision(None, schema.head_revision())
    engine, parsed = _open_engine(url, read_only=True)
    try:
        with translated(parsed, "reading the schema revision"), engine.connect() as connection:
            found = schema.revision_of(connection)
        if found.current is None:  # a first sweep may be creating it: its lock is waited for
            schema.wait_for_schema(engine)
            with translated(parsed, "reading the schema revision"), engine.connect() as c:
                found = schema.revision_of(c)
        return found
    finally:
        engine.dispose()


class DatabaseVanished(StoreError):
    """The SQLite file a store opened was removed (or another file put at its path) while the
    store was in use: a write now would go to a file nobody can open again, so none is made."""


def _file_identity(url: URL) -> tuple[Path, int, int] | None:
    """A SQLite database file's path, device and inode (None: not a file, or not there)."""
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    path = Path(str(url.database)).absolute()
    try:
        found = path.stat()
    except OSError:
        return None
    return path, found.st_dev, found.st_ino


def _sqlite_file_exists(url: URL) -> bool:
    check_sqlite_path(url)
    return not url.database or url.database == ":memory:" or Path(url.database).exists()


def missing_database(url: URL) -> str:
    """The one line for a reader pointed at a SQLite file that does not exist."""
    where = masked_url(url)
    return (f"no results database at {url.database} ({where}): check the path, or create it "
            f"with `advisor sweep FILE --db {where}` or `advisor db upgrade --db {where}`")


class ResultStore:
    """advisor's results database: trials, sweeps, devices, environments and workloads."""

    def __init__(self, engine: Engine, url: URL) -> None:
        self._engine = engine
        self._url = url
        self._reading = sessionmaker(engine)
        self._writing = sessionmaker(engine.execution_options(**{WRITE_OPTION: True}))
        self._ids = writes.IdCache()
        self._file = _file_identity(url)  # a SQLite file: checked before every write

    @classmethod
    def from_url(
        cls, url: str | None = None, *, create: bool = True, read_only: bool = False
    ) -> ResultStore:
        """Open the database at ``url`` (None: $ADVISOR_DB_URL, else sqlite:///advisor.db).

        A database without advisor's tables is given them (unless ``create`` is False); one at
        an older schema revision raises SchemaOutdated; anything unusable raises StoreError.
        ``read_only``: a reader's store, which never creates or converts a database: a SQLite
        file that does not exist raises StoreError (nothing is created), a database without
        advisor's tables raises SchemaOutdated, and a SQLite file keeps its journal mode.
        """
        engine, parsed = _open_engine(url, read_only)
        try:
            with translated(parsed, "preparing the advisor schema"):
                schema.check(engine, create=create and not read_only)
        except BaseException:
            engine.dispose()
            raise
        return cls(engine, parsed)

    @property
    def url(self) -> str:
        """The real database URL, password included: for Optuna's RDBStorage, never to print."""
        return self._url.render_as_string(hide_password=False)

    @property
    def masked_url(self) -> str:
        """The database URL with its password replaced by ``***``."""
        return masked_url(self._url)

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self._engine.dialect.name

    def revision(self) -> str:
        """The database's schema revision (this advisor's head: older ones do not open)."""
        with translated(self._url, "reading the schema revision"), self._engine.connect() as c:
            return schema.revision_of(c).current or "none"

    def analyze(self) -> None:
        """Refresh the database's query-planner statistics of advisor's tables. Worth it after a
        large import, and on a PostgreSQL server whose autovacuum is off."""
        with translated(self._url, "analyzing the tables"):
            schema.analyze(self._engine)

    def server_time(self) -> datetime:
        """The database server's clock (UTC), to check the skew between hosts of a fleet."""
        with translated(self._url, "reading the server clock"), self._engine.connect() as c:
            return queries.server_time(c, self.dialect)

    @contextmanager
    def advisory_lock(self, name: str) -> Iterator[None]:
        """On PostgreSQL, hold the session advisory lock named ``name`` (processes and hosts
        sharing this database take turns) until the block ends; elsewhere a no-op (SQLite's
        users lock a file beside the database)."""
        if self.dialect != "postgresql":
            yield
            return
        key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)
        with translated(self._url, f"taking the lock {name!r}"):
            connection = self._engine.connect()
            connection.execute(text("SELECT pg_advisory_lock(:k)"), {"k": key})
            connection.commit()
        try:
            yield
        finally:
            try:
                connection.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": key})
                connection.commit()
            finally:
                connection.close()  # a session lock ends with its session in any case

    def close(self) -> None:
        self._engine.dispose()

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResultStore({self.masked_url!r})"

    def _check_file(self, doing: str) -> None:
        """Raise DatabaseVanished when the SQLite file this store opened is gone from its path
        (removed, or another file put there): its open connections would still write into the
        removed file, and every such write would be lost with it."""
        if self._file is None:
            return
        path, device, inode = self._file
        try:
            found = path.stat()
        except FileNotFoundError:
            found = None
        except OSError:
            return  # not readable now (a permission changed): the write itself will say
        if found is None or (found.st_dev, found.st_ino) != (device, inode):
            what = "removed" if found is None else "replaced by another file"
            raise DatabaseVanished(f"{doing} failed: the SQLite database {path} was {what} "
                                   "while advisor was using it")

    @contextmanager
    def _write(self, doing: str) -> Iterator[Session]:
        """A write transaction; values the driver cannot store (not plain data) are StoreErrors."""
        self._check_file(doing)
        try:
            with translated(self._url, doing), self._writing.begin() as session:
                yield session
        except (TypeError, ValueError) as e:
            self._ids.rollback()
            raise StoreError(f"{doing} failed on {self.masked_url}: {e}") from e
        except BaseException:
            self._ids.rollback()
            raise
        self._ids.commit()

    @contextmanager
    def _read(self, doing: str) -> Iterator[Session]:
        with translated(self._url, doing), self._reading() as session:
            yield session

    # writing

    def add_trial(self, record: Mapping[str, Any], sweep_id: int | None = None) -> str:
        """Store one trial record; returns its uuid. Storing the same uuid again is a no-op."""
        return self.add_trials([record], sweep_id)[0]

    def add_trials(
        self, records: Iterable[Mapping[str, Any]], sweep_id: int | None = None
    ) -> list[str]:
        """Store many trial records in one transaction; returns their uuids, in order.

        A record without ``trial_uuid`` is given a new one. A record without fingerprint or
        workload takes its sweep's. Nothing is written if any record is invalid.
        """
        items = [writes.prepare(r, sweep_id, i) for i, r in enumerate(records)]
        for item in items:
            item.row["uuid"] = item.row["uuid"] or str(uuidlib.uuid4())
        if items:
            with self._write("storing trials") as session:
                writes.insert_trials(session, self._ids, items)
        return [item.row["uuid"] for item in items]

    def create_sweep(
        self,
        workload: Mapping[str, Any],
        fingerprint: Mapping[str, Any],
        settings: dict[str, Any],
        study_name: str | None,
        planned_trials: int | None = None,
    ) -> int:
        """Open a sweep (status "running"); returns its id for `add_trial` and `finish_sweep`."""
        sweep = {
            "uuid": str(uuidlib.uuid4()),
            "workload": workload,
            "fingerprint": fingerprint,
            "settings": settings,
            "status": "running",
            "study_name": study_name,
            "planned_trials": planned_trials,
            "started_at": datetime.now(UTC),
            "finished_at": None,
            "owner": lifetime.owner(),  # this process: gone at once to a reader on this host
        }
        sweep["heartbeat_at"] = sweep["started_at"]
        with self._write("creating a sweep") as session:
            return writes.insert_sweep(session, self._ids, sweep)

    def finish_sweep(self, sweep_id: int, status: str = "finished") -> None:
        """Set a sweep's status (finished, interrupted, failed; running again to resume)."""
        if status not in SWEEP_STATUSES:
            raise StoreError(f"sweep status {status!r} is not one of {', '.join(SWEEP_STATUSES)}")
        now = datetime.now(UTC)
        values: dict[str, Any] = {"status": status, "finished_at": now}
        if status == "running":  # resumed: alive again, this process its owner
            values |= {"finished_at": None, "heartbeat_at": now, "owner": lifetime.owner()}
        with self._write("updating a sweep") as session:
            done = session.execute(
                update(queries.S).where(queries.S.c.id == sweep_id).values(**values)
            )
            if done.rowcount != 1:  # type: ignore[attr-defined]
                raise StoreError(f"no sweep with id {sweep_id} in {self.masked_url}")

    def beat(self, sweep_id: int) -> None:
        """The running sweep's heartbeat: its process is alive (see `sweep_dead_after_s`)."""
        with self._write("recording a sweep's heartbeat") as session:
            session.execute(
                update(queries.S)
                .where(queries.S.c.id == sweep_id, queries.S.c.status == "running")
                .values(heartbeat_at=datetime.now(UTC))
            )

    def set_warm_start(self, trial_uuid: str, warm_compile_s: float) -> None:
        """Record a trial's warm start, measured after it was stored (the sweep measures the
        leader's once the trials are done)."""
        if not warm_compile_s >= 0:
            raise StoreError(f"warm start of {warm_compile_s!r} s is not a duration")
        with self._write("recording a warm start") as session:
            done = session.execute(
                update(queries.T)
                .where(queries.T.c.uuid == trial_uuid)
                .values(warm_compile_s=float(warm_compile_s))
            )
            if done.rowcount != 1:  # type: ignore[attr-defined]
                raise StoreError(f"no trial {trial_uuid} in {self.masked_url}")

    def set_serving_alone(self, trial_uuid: str, alone: Mapping[str, Any]) -> None:
        """Record a replay trial's serving process measured again alone (a sweep that ran trials
        at once re-measures its leaders' once the trials are done): the stream's ``alone``
        (``startup_s``, ``per_request_ms``, ``new_shape``), which the process-life cost then
        uses (advisor.serving)."""
        costs, start = alone.get("per_request_ms"), alone.get("startup_s")
        if not isinstance(start, (int, float)) or not start >= 0 \
                or not isinstance(costs, list) or not costs:
            raise StoreError(f"serving alone of trial {trial_uuid}: no start-up and stream")
        with self._write("recording a serving process measured alone") as session:
            found = session.execute(
                select(queries.TD.c.trial_id, queries.TD.c.extra)
                .join(queries.T, queries.T.c.id == queries.TD.c.trial_id)
                .where(queries.T.c.uuid == trial_uuid)
            ).first()
            replay = ((found.extra or {}).get("replay") if found is not None else None) or {}
            if found is None or not replay.get("stream"):
                raise StoreError(f"no replay trial {trial_uuid} in {self.masked_url}")
            if len(costs) != len(replay["stream"].get("per_request_ms") or []):
                raise StoreError(f"serving alone of trial {trial_uuid}: {len(costs)} requests, "
                                 "not its stream's")
            kept = {"startup_s": float(alone["startup_s"]),
                    "per_request_ms": [float(ms) for ms in costs],
                    "new_shape": [int(i) for i in alone.get("new_shape") or []]}
            stream = {**replay["stream"], "alone": kept}
            extra = {**found.extra, "replay": {**replay, "stream": stream}}
            session.execute(
                update(queries.TD).where(queries.TD.c.trial_id == found.trial_id)
                .values(extra=extra)
            )

    # reading

    def get_sweep(self, sweep_id: int | str) -> SweepRow:
        """One sweep by id (or uuid), as in `sweeps`; StoreError if there is none."""
        column = Sweep.uuid if isinstance(sweep_id, str) else Sweep.id
        with self._read("reading a sweep") as session:
            found = queries.sweep_dicts(session, [column == sweep_id])
        if not found:
            raise StoreError(f"no sweep {sweep_id} in {self.masked_url}")
        return _liveness(found[0])

    def sweep_of_study(self, study_name: str) -> SweepRow | None:
        """The sweep whose Optuna study is ``study_name`` (the newest, should two share it),
        as in `sweeps`; None when there is none."""
        with self._read("reading a sweep") as session:
            found = queries.sweep_dicts(session, [Sweep.study_name == study_name])
        return _liveness(max(found, key=lambda s: s["id"])) if found else None

    def sweeps(
        self,
        workload: str | None = None,
        status: str | None = None,
        device_hash: str | None = None,
        limit: int | None = None,
    ) -> list[SweepRow]:
        """Sweeps, newest first, each with n_trials, n_ok, n_failed, n_pruned (replays stopped
        once proven worse, advisor.records.Pruned: not failures) and best_median_ms. A sweep
        stored as running whose heartbeat is stale has status ``dead`` (``stored_status``
        keeps "running"; see `sweep_dead_after_s`)."""
        if status is not None and status not in SWEEP_STATUSES:
            raise StoreError(f"sweep status {status!r} is not one of {', '.join(SWEEP_STATUSES)}")
        where = queries.sweep_filters(workload, status, device_hash)
        with self._read("reading sweeps") as session:
            return [_liveness(s) for s in queries.sweep_dicts(session, where, limit)]

    def trials(
        self,
        sweep_id: int | None = None,
        workload: str | None = None,
        device_hash: str | None = None,
        status: str | None = None,
        fingerprint_hash: str | None = None,
        limit: int | None = None,
    ) -> list[TrialRecord]:
        """Trial records, oldest first, exactly as `advisor.records` describes them, plus
        ``sweep_id`` and ``sweep_uuid``. ``limit`` keeps the most recent ones."""
        if status is not None and status not in TRIAL_STATUSES:
            raise StoreError(f"trial status {status!r} is not one of {', '.join(TRIAL_STATUSES)}")
        where = queries.trial_filters(sweep_id, workload, device_hash, status, fingerprint_hash)
        with self._read("reading trials") as session:
            return queries.trial_records(session, where, limit)

    def config_keys_done(self, sweep_id: int) -> set[str]:
        """Config keys a sweep has measured or seen fail (not those cut off by an interrupt,
        nor those its budget stopped: a resumed sweep measures them)."""
        with self._read("reading a sweep's configs") as session:
            return queries.config_keys_done(session, sweep_id)

    def workloads(self) -> list[str]:
        """Names of the workloads with stored results, sorted."""
        with self._read("reading workloads") as session:
            return queries.workload_names(session)

    def devices(self) -> list[DeviceRow]:
        """Every device: device_hash, its model-level fields and n_trials."""
        with self._read("reading devices") as session:
            return queries.device_dicts(session)

    def best_per_workload_device(self, workload: str | None = None) -> list[BestRow]:
        """Per workload x device x environment, the passed ok trial with the lowest median_ms,
        with ``eager_median_ms`` (the best eager fp32 median of the same group) and
        ``speedup`` = eager_median_ms / median_ms (None without an eager baseline)."""
        with self._read("reading the best configs") as session:
            return queries.best_per_workload_device(session, workload)

    def device_comparison(self, workload: str) -> list[DeviceComparisonRow]:
        """One workload across devices: per device x environment x config_key, n_trials,
        n_passed and best_median_ms."""
        with self._read("comparing devices") as session:
            return queries.device_comparison(session, workload)

    # moving results between databases

    def export(self, workload: str | None = None) -> list[TrialRecord]:
        """Trial records for another database: each with ``sweep_uuid`` and ``sweep`` (the
        sweep's uuid, workload, fingerprint, settings, status, ... or None)."""
        records = self.trials(workload=workload)
        sweep_ids = {r["sweep_id"] for r in records if r["sweep_id"] is not None}
        sweeps = {}
        if sweep_ids:
            with self._read("reading sweeps") as session:
                found = queries.sweep_dicts(session, [queries.S.c.id.in_(sweep_ids)])
            sweeps = {s["id"]: _exported(s) for s in found}
        for record in records:
            sweep_id = record.pop("sweep_id")
            record["sweep"] = sweeps.get(sweep_id) if sweep_id is not None else None
        return records

    def import_records(
        self, records: Iterable[dict[str, Any]],
        before_commit: Callable[[int, int], None] | None = None,
    ) -> tuple[int, int]:
        """Merge exported records by trial uuid, recreating their sweeps, devices,
        environments and workloads as needed; returns (added, skipped). All or nothing:
        ``before_commit(added, skipped)`` runs inside the transaction (the CLI writes its
        report there), and an exception it raises leaves the database as it was."""
        records = list(records)
        if not records:
            return 0, 0  # an empty export: nothing to add, no transaction to open
        sweeps = _carried_sweeps(records)
        items = [writes.prepare(r, None, i) for i, r in enumerate(records)]
        for i, record in enumerate(records):
            rows.check_imported(record, i)  # uuids, hashes, figures: a file from elsewhere
        if any(item.row["uuid"] is None for item in items):
            raise StoreError("an imported trial record has no trial_uuid")
        with self._write("importing trials") as session:
            sweep_ids = {u: writes.insert_sweep(session, self._ids, s) for u, s in sweeps.items()}
            sweep_ids |= _known_sweeps(session, {_sweep_uuid(r) for r in records} - set(sweep_ids))
            for item, record in zip(items, records, strict=True):
                item.sweep_id = sweep_ids.get(_sweep_uuid(record) or "")
            added = writes.insert_trials(session, self._ids, items)
            if before_commit is not None:
                before_commit(len(added), len(items) - len(added))
        if len(added) >= ANALYZE_AFTER:
            self.analyze()
        return len(added), len(items) - len(added)

    # the dashboard's reads: aggregates and narrow rows, fast on 100,000 trials

    def group_summaries(self, workload: str | None = None) -> list[GroupSummaryRow]:
        """Per workload x device x environment with trials: the device and environment
        fields, n_trials, n_ok, n_passed, n_failed, n_pruned, first_started_at and
        last_started_at."""
        with self._read("summarizing trial groups") as session:
            return queries.group_summaries(session, workload)

    def near_best_trials(self, within: float, workload: str | None = None) -> list[NearBestRow]:
        """Per workload x device x environment, the passed trials within ``within`` (a
        fraction) of the group's lowest median, plus every ok eager fp32 trial. Narrow rows:
        trial_uuid, sweep_id, workload, device_hash, env_hash, config, config_key, mode, dtype,
        status, failure_reason, started_at, the scalar figures and the record's keys beyond
        advisor.records (a confidence interval, say); no shapes, kernel names or error tails."""
        with self._read("reading the near-best trials") as session:
            return queries.near_best_trials(session, within, workload)

    def config_dicts(self, workload: str | None = None) -> dict[str, ConfigDict]:
        """config_key -> config dict of every config measured (of one workload, if given)."""
        with self._read("reading configs") as session:
            return queries.config_dicts(session, workload)

    def group_trials(self, workload: str, device_hash: str, env_hash: str) -> list[TrialRecord]:
        """Full trial records (as `trials` returns them) of one workload on one device with
        one software stack, oldest first."""
        where = queries.trial_filters(workload=workload, device_hash=device_hash)
        where.append(queries.group_trial_filter(env_hash))
        with self._read("reading trials") as session:
            return queries.trial_records(session, where)

    def measured_shapes(self, workload: str) -> list[MeasuredShapeRow]:
        """The traffic shapes one workload's ok trials measured, per device x environment:
        device_hash, env_hash and shape (``batch=50,seq=128``)."""
        with self._read("reading measured shapes") as session:
            return queries.measured_shapes(session, workload)

    # recommendations: measured fingerprints, confirmations, warm-start artifacts

    def fingerprints(self, workload: str) -> list[FingerprintRow]:
        """Every fingerprint with trials of ``workload``: fingerprint_hash, device_hash,
        env_hash, the device and environment fields, n_trials, n_passed, last_started_at."""
        with self._read("reading fingerprints") as session:
            return queries.fingerprints(session, workload)

    def add_confirmation(self, confirmation: Mapping[str, Any]) -> str:
        """Store a confirmation (`advisor.search.confirm`); returns its uuid (given or new).

        ``confirmation`` holds workload (record form), fingerprint, and optionally uuid,
        created_at, device, method, rounds, status ("ok" or "failed"), shapes, entries (one
        dict of paired figures per config) and error_tail.
        """
        row = {
            "uuid": confirmation.get("uuid") or str(uuidlib.uuid4()),
            "created_at": _created_at(confirmation),
            "requested_device": confirmation.get("device"),
            "method": confirmation.get("method"),
            "rounds": confirmation.get("rounds"),
            "status": confirmation.get("status") or "ok",
            "shapes": confirmation.get("shapes"),
            "entries": confirmation.get("entries"),
            "fingerprint": confirmation["fingerprint"],
            "error_tail": confirmation.get("error_tail"),
        }
        with self._write("storing a confirmation") as session:
            row |= _keyed(session, self._ids, confirmation, "confirmation")
            session.execute(insert(queries.C), row)
        return str(row["uuid"])

    def confirmations(
        self, workload: str, fingerprint_hash: str | None = None, limit: int | None = None
    ) -> list[Confirmation]:
        """Confirmations of ``workload`` (on one fingerprint, if given), newest first."""
        with self._read("reading confirmations") as session:
            return queries.confirmation_dicts(session, workload, fingerprint_hash, limit)

    def put_artifact(
        self,
        workload: Mapping[str, Any],
        fingerprint: Mapping[str, Any],
        config: Mapping[str, Any],
        data: bytes,
        **facts: Any,
    ) -> str:
        """Store warm-start bytes of ``config`` for a workload on a fingerprint; returns the
        artifact's uuid. ``facts``: trial_uuid, cold_start_s, warm_start_s, shapes, info."""
        from advisor.config import CompileConfig

        unknown = set(facts) - {"trial_uuid", "cold_start_s", "warm_start_s", "shapes", "info"}
        if unknown:
            raise StoreError(f"unknown artifact facts: {', '.join(sorted(unknown))}")
        if not isinstance(data, (bytes, bytearray)) or not data:
            raise StoreError("a cache artifact must be non-empty bytes")
        row = {
            "uuid": str(uuidlib.uuid4()),
            "created_at": datetime.now(UTC),
            "config_key": CompileConfig.from_dict(config).key,
            "config": config,
            "torch_version": fingerprint.get("torch_version"),
            "triton_version": fingerprint.get("triton_version"),
            "size_bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
            "data": bytes(data),
            **{key: facts.get(key) for key in
               ("trial_uuid", "cold_start_s", "warm_start_s", "shapes", "info")},
        }  # fmt: skip
        owner = {"workload": workload, "fingerprint": fingerprint}
        with self._write("storing a cache artifact") as session:
            row |= _keyed(session, self._ids, owner, "cache artifact")
            session.execute(insert(queries.A), row)
        return str(row["uuid"])

    def get_artifact(
        self, workload: str, fingerprint_hash: str, config_key: str
    ) -> ArtifactRow | None:
        """The newest artifact of a config of ``workload`` on a fingerprint, its bytes in
        ``data``; None when there is none."""
        with self._read("reading a cache artifact") as session:
            found = queries.artifact_dicts(
                session, workload, fingerprint_hash, config_key, with_data=True, limit=1
            )
        return found[0] if found else None

    def artifacts(self, workload: str | None = None) -> list[ArtifactRow]:
        """Stored cache artifacts (without their bytes), newest first."""
        with self._read("reading cache artifacts") as session:
            return queries.artifact_dicts(session, workload)


def _liveness(sweep: SweepRow) -> SweepRow:
    """A running sweep whose heartbeat is older than `sweep_dead_after_s()` is reported dead,
    and at once one whose owner ran on this host and is gone (`advisor.lifetime.owner_gone`:
    kill -9, a crash; its pid not alive, or alive as another process); ``stored_status``
    keeps the status as stored."""
    seen = sweep["heartbeat_at"] or sweep["started_at"]
    if sweep["status"] == "running" and seen is not None:
        age_s = (datetime.now(UTC) - datetime.fromisoformat(seen)).total_seconds()
        if age_s > sweep_dead_after_s() or lifetime.owner_gone(sweep["owner"]):
            sweep["status"] = "dead"
    return sweep


def _exported(sweep: SweepRow) -> dict[str, Any]:
    """What an export keeps of a sweep (`ResultStore.export`: a record's ``sweep``)."""
    return {
        "uuid": sweep["uuid"],
        "workload": sweep["workload"],
        "fingerprint": sweep["fingerprint"],
        "settings": sweep["settings"],
        "status": sweep["status"],
        "study_name": sweep["study_name"],
        "planned_trials": sweep["planned_trials"],
        "started_at": sweep["started_at"],
        "finished_at": sweep["finished_at"],
        "heartbeat_at": sweep["heartbeat_at"],
    }


def _known_sweeps(session: Session, uuids: set[str | None]) -> dict[str, int]:
    wanted = sorted(u for u in uuids if u)
    if not wanted:
        return {}
    found = session.execute(select(Sweep.uuid, Sweep.id).where(Sweep.uuid.in_(wanted)))
    return {sweep_uuid: sweep_id for sweep_uuid, sweep_id in found}


def _sweep_uuid(record: dict[str, Any]) -> str | None:
    sweep = record.get("sweep")
    if isinstance(sweep, dict) and sweep.get("uuid"):
        return str(sweep["uuid"])
    return str(record["sweep_uuid"]) if record.get("sweep_uuid") else None


def _carried_sweeps(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The sweeps the records carry, by uuid, checked."""
    found: dict[str, dict[str, Any]] = {}
    for i, record in enumerate(records):
        if not isinstance(record, dict):
            raise StoreError(f"trial record {i} is a {type(record).__name__}, not a dict")
        sweep = record.get("sweep")
        if sweep is None:
            continue
        needed = ("uuid", "workload", "fingerprint", "status", "started_at")
        missing = [k for k in needed if not isinstance(sweep, dict) or sweep.get(k) is None]
        if missing:
            raise StoreError(f"trial record {i}: its sweep lacks {', '.join(missing)}")
        if sweep["status"] not in SWEEP_STATUSES:
            raise StoreError(f"trial record {i}: sweep status {sweep['status']!r} is unknown")
        found.setdefault(str(sweep["uuid"]), sweep)
    return found


def _created_at(data: Mapping[str, Any]) -> datetime:
    return rows.to_datetime(data.get("created_at"), "created_at") or datetime.now(UTC)


def _keyed(
    session: Session, ids: writes.IdCache, owner: Mapping[str, Any], what: str
) -> dict[str, Any]:
    """workload_id, device_id, environment_id, fingerprint_hash and host of a row that belongs
    to ``owner["workload"]`` (record form) on ``owner["fingerprint"]``."""
    rows.check_workload(owner.get("workload"), what)
    rows.check_fingerprint(owner.get("fingerprint"), what)
    workload, fingerprint = owner["workload"], owner["fingerprint"]
    found: dict[str, dict[tuple[Any, ...], dict[str, Any]]] = {
        "workload": {rows.workload_key(workload): rows.workload_row(workload)},
        "device": {(fingerprint["device_hash"],): rows.device_row(fingerprint)},
        "env": {(fingerprint["env_hash"],): rows.environment_row(fingerprint)},
    }
    keyed = {kind: writes.ensure(session, ids, kind, rows_) for kind, rows_ in found.items()}
    return {
        "workload_id": next(iter(keyed["workload"].values())),
        "device_id": next(iter(keyed["device"].values())),
        "environment_id": next(iter(keyed["env"].values())),
        "fingerprint_hash": fingerprint.get("fingerprint_hash"),
        "host": rows.host_of(fingerprint),
    }
