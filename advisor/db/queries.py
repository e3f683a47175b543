"""The store's reads: trial records, sweeps with their counts, the dashboard's summaries."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import ColumnElement, Select, and_, func, literal_column, select, true
from sqlalchemy.orm import Session

from advisor.config import EAGER_FP32, ConfigDict
from advisor.db import rows
from advisor.db.models import (
    CacheArtifact,
    Confirmation,
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
from advisor.records import Confirmation as ConfirmationRecord
from advisor.records import TrialRecord
from advisor.rows import (
    ArtifactRow,
    BestRow,
    DeviceColumns,
    DeviceComparisonRow,
    DeviceRow,
    EnvColumns,
    FingerprintRow,
    GroupSummaryRow,
    MeasuredShapeRow,
    NearBestRow,
    SweepRow,
)

T = table(Trial)
S = table(Sweep)
W = table(Workload)
D = table(Device)
E = table(Environment)
SH = table(ShapeMeasurement)
TD = table(TrialDetails)
G = table(TrialGroup)

# Rendered as models.PASSED_SQL (literals, not parameters) so the partial index applies.
PASSED = and_(T.c.status == literal_column("'ok'"), T.c.passed == true())
BEST = and_(PASSED, T.c.median_ms.is_not(None))
CHUNK = 5000  # ids per IN (...) list
DEVICE_COLUMNS = (D.c.device_hash, *(D.c[name] for name in rows.DEVICE_FIELDS))
ENV_COLUMNS = (E.c.env_hash, *(E.c[name] for name in rows.ENV_FIELDS))


def trial_filters(
    sweep_id: int | None = None,
    workload: str | None = None,
    device_hash: str | None = None,
    status: str | None = None,
    fingerprint_hash: str | None = None,
) -> list[ColumnElement[bool]]:
    """WHERE clauses on trials (joined with workloads and devices) for the given filters."""
    where: list[ColumnElement[bool]] = []
    if sweep_id is not None:
        where.append(T.c.sweep_id == sweep_id)
    if workload is not None:
        where.append(W.c.name == workload)
    if device_hash is not None:
        where.append(D.c.device_hash == device_hash)
    if status is not None:
        where.append(T.c.status == status)
    if fingerprint_hash is not None:
        where.append(T.c.fingerprint_hash == fingerprint_hash)
    return where


def sweep_filters(
    workload: str | None = None, status: str | None = None, device_hash: str | None = None
) -> list[ColumnElement[bool]]:
    """WHERE clauses on sweeps (joined with workloads and devices) for the given filters."""
    where: list[ColumnElement[bool]] = []
    if workload is not None:
        where.append(W.c.name == workload)
    if status is not None:
        where.append(S.c.status == status)
    if device_hash is not None:
        where.append(D.c.device_hash == device_hash)
    return where


def _trials_select(*columns: Any) -> Select[Any]:
    return (
        select(*columns)
        .select_from(T)
        .join(W, W.c.id == T.c.workload_id)
        .join(D, D.c.id == T.c.device_id)
    )


def trial_records(
    session: Session, where: list[ColumnElement[bool]], limit: int | None = None
) -> list[TrialRecord]:
    """Full trial records (advisor.records shape + sweep_id/sweep_uuid), oldest first."""
    query = (
        _trials_select(
            T,
            *(c for c in TD.c if c.name != "trial_id"),
            W.c.name,
            W.c.source_sha256,
            W.c.info,
            S.c.uuid.label("sweep_uuid"),
        )
        .join(TD, TD.c.trial_id == T.c.id)
        .outerjoin(S, S.c.id == T.c.sweep_id)
        .where(*where)
    )
    if limit is not None:
        query = query.order_by(T.c.started_at.desc(), T.c.id.desc()).limit(limit)
        found = list(reversed(session.execute(query).mappings().all()))
    else:
        found = list(session.execute(query.order_by(T.c.started_at, T.c.id)).mappings())
    shapes = _shapes(session, [row["id"] for row in found])
    return [rows.record_from_row(row, shapes.get(row["id"], [])) for row in found]


def _shapes(session: Session, trial_ids: list[int]) -> dict[int, list[Any]]:
    by_trial: dict[int, list[Any]] = defaultdict(list)
    for start in range(0, len(trial_ids), CHUNK):
        chunk = trial_ids[start : start + CHUNK]
        query = select(SH).where(SH.c.trial_id.in_(chunk)).order_by(SH.c.trial_id, SH.c.position)
        for shape in session.execute(query).mappings():
            by_trial[shape["trial_id"]].append(shape)
    return by_trial


def _sweep_counts(session: Session, sweep_ids: list[int]) -> dict[int, dict[str, Any]]:
    query = (
        select(
            T.c.sweep_id,
            func.count().label("n_trials"),
            func.count().filter(T.c.status == "ok").label("n_ok"),
            func.count().filter(T.c.status == "failed").label("n_failed"),
            func.count().filter(T.c.status == "pruned").label("n_pruned"),
            func.count().filter(T.c.status == "stopped").label("n_stopped"),
            func.min(T.c.median_ms).filter(PASSED).label("best_median_ms"),
        )
        .where(T.c.sweep_id.in_(sweep_ids))
        .group_by(T.c.sweep_id)
    )
    return {row["sweep_id"]: dict(row) for row in session.execute(query).mappings()}


def sweep_dicts(
    session: Session, where: list[ColumnElement[bool]], limit: int | None = None
) -> list[SweepRow]:
    """Sweeps, newest first, with their workload, fingerprint and trial counts; ``status`` as
    stored (the store says which running ones are dead)."""
    query = (
        select(S, W.c.name, W.c.source_sha256, W.c.info, D.c.device_hash, D.c.device_name,
               E.c.env_hash)
        .join(W, W.c.id == S.c.workload_id)
        .join(D, D.c.id == S.c.device_id)
        .join(E, E.c.id == S.c.environment_id)
        .where(*where)
        .order_by(S.c.started_at.desc(), S.c.id.desc())
        .limit(limit)
    )  # fmt: skip
    found = session.execute(query).mappings().all()
    counts = _sweep_counts(session, [row["id"] for row in found]) if found else {}
    return [_sweep_dict(row, counts.get(row["id"])) for row in found]


def _sweep_dict(row: Any, counts: dict[str, Any] | None) -> SweepRow:
    counts = counts or {}
    return {
        "id": row["id"],
        "uuid": row["uuid"],
        "workload": rows.workload_dict(row, row["workload_path"]),
        "fingerprint": row["fingerprint"],
        "device_hash": row["device_hash"],
        "device_name": row["device_name"],
        "env_hash": row["env_hash"],
        "fingerprint_hash": row["fingerprint_hash"],
        "host": row["host"],
        "settings": row["settings"],
        "status": row["status"],
        "study_name": row["study_name"],
        "planned_trials": row["planned_trials"],
        "started_at": rows.to_iso(row["started_at"]),
        "finished_at": rows.to_iso(row["finished_at"]),
        "heartbeat_at": rows.to_iso(row["heartbeat_at"]),
        "owner": row["owner"],
        "n_trials": counts.get("n_trials", 0),
        "n_ok": counts.get("n_ok", 0),
        "n_failed": counts.get("n_failed", 0),
        "n_pruned": counts.get("n_pruned", 0),  # stopped once proven worse: not failures
        "n_stopped": counts.get("n_stopped", 0),  # stopped by the budget: not measured
        "best_median_ms": counts.get("best_median_ms"),
        "stored_status": row["status"],
    }


def config_keys_done(session: Session, sweep_id: int) -> set[str]:
    query = (
        select(T.c.config_key)
        .distinct()
        .where(
            T.c.sweep_id == sweep_id,
            T.c.config_key.is_not(None),
            T.c.failure_reason.is_(None) | (T.c.failure_reason != "interrupted"),
            T.c.status != "stopped",  # stopped by the budget: still to measure (--resume)
        )
    )
    return set(session.scalars(query))


def workload_names(session: Session) -> list[str]:
    return list(session.scalars(select(W.c.name).distinct().order_by(W.c.name)))


def device_columns(row: Any) -> DeviceColumns:
    """A row's `DEVICE_COLUMNS`."""
    return {
        "device_hash": row["device_hash"],
        "device_kind": row["device_kind"],
        "device_name": row["device_name"],
        "compute_capability": row["compute_capability"],
        "device_memory_bytes": row["device_memory_bytes"],
        "sm_count": row["sm_count"],
        "cpu_model": row["cpu_model"],
        "cpu_cores": row["cpu_cores"],
        "host_memory_bytes": row["host_memory_bytes"],
        "cpu_isa": row["cpu_isa"],
        "cpu_flags": row["cpu_flags"],
    }


def env_columns(row: Any) -> EnvColumns:
    """A row's `ENV_COLUMNS`."""
    return {
        "env_hash": row["env_hash"],
        "driver_version": row["driver_version"],
        "cuda_driver_version": row["cuda_driver_version"],
        "torch_version": row["torch_version"],
        "triton_version": row["triton_version"],
        "cuda_runtime_version": row["cuda_runtime_version"],
        "cudnn_version": row["cudnn_version"],
        "python_version": row["python_version"],
    }


def device_dicts(session: Session) -> list[DeviceRow]:
    counts = select(T.c.device_id, func.count().label("n_trials")).group_by(T.c.device_id)
    counts_sq = counts.subquery()
    query = (
        select(*DEVICE_COLUMNS, func.coalesce(counts_sq.c.n_trials, 0).label("n_trials"))
        .outerjoin(counts_sq, counts_sq.c.device_id == D.c.id)
        .order_by(D.c.device_name, D.c.device_hash)
    )
    return [{**device_columns(row), "n_trials": row["n_trials"]}
            for row in session.execute(query).mappings()]


def _group_probe(*where: ColumnElement[bool]) -> Select[Any]:
    """Trials of the enclosing query's group (correlated), passed, with the extra conditions."""
    return (
        select(T.c.id)
        .where(
            T.c.workload_id == G.c.workload_id,
            T.c.device_id == G.c.device_id,
            T.c.environment_id == G.c.environment_id,
            BEST,
            *where,
        )
        .correlate(G)
    )


def best_per_workload_device(session: Session, workload: str | None) -> list[BestRow]:
    """Per workload x device x environment: the passed trial with the lowest median.

    First the best trial id and the eager baseline of every group, each one probe of the
    partial index ix_advisor_trials_best (so the cost grows with the number of groups, not of
    trials); then those trials by primary key. Two steps keep the plan good on a PostgreSQL
    that has no statistics yet.
    """
    best_id = _group_probe().order_by(T.c.median_ms, T.c.id).limit(1).scalar_subquery()
    eager = (
        _group_probe(T.c.config_key == EAGER_FP32.key)
        .with_only_columns(func.min(T.c.median_ms))
        .scalar_subquery()
    )
    groups = select(best_id, eager).select_from(G)
    if workload is not None:
        groups = groups.where(G.c.workload_id.in_(select(W.c.id).where(W.c.name == workload)))
    eager_of = {trial_id: base for trial_id, base in session.execute(groups) if trial_id}
    found: list[BestRow] = []
    ids = sorted(eager_of)
    for start in range(0, len(ids), CHUNK):
        query = _best_trials().where(T.c.id.in_(ids[start : start + CHUNK]))
        found += (
            _with_speedup(row, eager_of[row["id"]]) for row in session.execute(query).mappings()
        )
    return sorted(found, key=_display_order)


def _display_order(best: BestRow) -> tuple[str, ...]:
    return (best["workload"], best["device_name"] or "", best["device_hash"], best["env_hash"])


def _best_trials() -> Select[Any]:
    return (
        select(
            T.c.id, W.c.name.label("workload"), W.c.source_sha256, *DEVICE_COLUMNS,
            *ENV_COLUMNS, T.c.uuid.label("trial_uuid"), T.c.sweep_id, T.c.config_key,
            T.c.config, T.c.mode, T.c.dtype, T.c.median_ms, T.c.p90_ms, T.c.p99_ms,
            T.c.cold_compile_s, T.c.peak_mem_bytes, T.c.started_at,
        )
        .select_from(T)
        .join(W, W.c.id == T.c.workload_id)
        .join(D, D.c.id == T.c.device_id)
        .join(E, E.c.id == T.c.environment_id)
    )  # fmt: skip


def _with_speedup(row: Any, eager: float | None) -> BestRow:
    median_ms = row["median_ms"]
    return {
        "workload": row["workload"],
        "source_sha256": row["source_sha256"] or None,
        **device_columns(row),
        **env_columns(row),
        "trial_uuid": row["trial_uuid"],
        "sweep_id": row["sweep_id"],
        "config_key": row["config_key"],
        "config": row["config"],
        "mode": row["mode"],
        "dtype": row["dtype"],
        "median_ms": median_ms,
        "p90_ms": row["p90_ms"],
        "p99_ms": row["p99_ms"],
        "cold_compile_s": row["cold_compile_s"],
        "peak_mem_bytes": row["peak_mem_bytes"],
        "started_at": rows.to_iso(row["started_at"]),
        "eager_median_ms": eager,
        "speedup": eager / median_ms if eager and median_ms else None,
    }


def device_comparison(session: Session, workload: str) -> list[DeviceComparisonRow]:
    """One workload across devices: per device x environment x config, counts and best median."""
    group = (T.c.device_id, T.c.environment_id, T.c.config_key)
    stats = (
        select(
            *group,
            func.count().label("n_trials"),
            func.count().filter(PASSED).label("n_passed"),
            func.min(T.c.median_ms).filter(PASSED).label("best_median_ms"),
        )
        .join(W, W.c.id == T.c.workload_id)
        .where(W.c.name == workload)
        .group_by(*group)
        .subquery()
    )
    query = (
        select(*DEVICE_COLUMNS, *ENV_COLUMNS, stats.c.config_key, stats.c.n_trials,
               stats.c.n_passed, stats.c.best_median_ms)
        .select_from(stats)
        .join(D, D.c.id == stats.c.device_id)
        .join(E, E.c.id == stats.c.environment_id)
        .order_by(D.c.device_name, D.c.device_hash, E.c.env_hash, stats.c.config_key)
    )  # fmt: skip
    return [
        {**device_columns(row), **env_columns(row), "config_key": row["config_key"],
         "n_trials": row["n_trials"], "n_passed": row["n_passed"],
         "best_median_ms": row["best_median_ms"]}
        for row in session.execute(query).mappings()
    ]  # fmt: skip


# -- the dashboard's reads: aggregates and narrow rows, never every full record ---------------

GROUP = (T.c.workload_id, T.c.device_id, T.c.environment_id)
SUMMARY_COLUMNS = (
    T.c.uuid.label("trial_uuid"), T.c.sweep_id, W.c.name.label("workload"), D.c.device_hash,
    E.c.env_hash, T.c.config, T.c.config_key, T.c.mode, T.c.dtype, T.c.status, T.c.failure_reason,
    T.c.started_at, T.c.median_ms, T.c.p90_ms, T.c.p99_ms, T.c.mean_ms, T.c.cold_compile_s,
    T.c.warm_compile_s, T.c.peak_mem_bytes, T.c.kernels_per_call, T.c.launches_per_call,
    T.c.eager_kernels_per_call, T.c.eager_launches_per_call, T.c.max_abs_err, T.c.correct,
    T.c.quality_name, T.c.quality_value, T.c.quality_passed, T.c.passed,
)  # fmt: skip


def _of_workload(query: Select[Any], workload: str | None) -> Select[Any]:
    if workload is None:
        return query
    return query.where(T.c.workload_id.in_(select(W.c.id).where(W.c.name == workload)))


def group_summaries(session: Session, workload: str | None) -> list[GroupSummaryRow]:
    """Per workload x device x environment with trials: its device and environment fields,
    n_trials, n_ok, n_passed, n_failed, n_pruned, first_started_at and last_started_at."""
    stats = _of_workload(
        select(
            *GROUP,
            func.count().label("n_trials"),
            func.count().filter(T.c.status == "ok").label("n_ok"),
            func.count().filter(PASSED).label("n_passed"),
            func.count().filter(T.c.status == "failed").label("n_failed"),
            func.count().filter(T.c.status == "pruned").label("n_pruned"),
            func.min(T.c.started_at).label("first_started_at"),
            func.max(T.c.started_at).label("last_started_at"),
        ).group_by(*GROUP),
        workload,
    ).subquery()
    query = (
        select(W.c.name.label("workload"), *DEVICE_COLUMNS, *ENV_COLUMNS,
               *(c for c in stats.c if c.name not in ("workload_id", "device_id",
                                                       "environment_id")))
        .select_from(stats)
        .join(W, W.c.id == stats.c.workload_id)
        .join(D, D.c.id == stats.c.device_id)
        .join(E, E.c.id == stats.c.environment_id)
    )  # fmt: skip
    found: list[GroupSummaryRow] = [
        {"workload": row["workload"], **device_columns(row), **env_columns(row),
         "n_trials": row["n_trials"], "n_ok": row["n_ok"], "n_passed": row["n_passed"],
         "n_failed": row["n_failed"], "n_pruned": row["n_pruned"],
         "first_started_at": rows.to_iso(row["first_started_at"]),
         "last_started_at": rows.to_iso(row["last_started_at"])}
        for row in session.execute(query).mappings()
    ]  # fmt: skip
    return sorted(found, key=lambda g: (g["workload"], g["device_name"] or "", g["device_hash"],
                                        g["env_hash"]))  # fmt: skip


def _summaries() -> Select[Any]:
    return (
        select(*SUMMARY_COLUMNS, TD.c.extra)
        .select_from(T)
        .join(W, W.c.id == T.c.workload_id)
        .join(D, D.c.id == T.c.device_id)
        .join(E, E.c.id == T.c.environment_id)
        .join(TD, TD.c.trial_id == T.c.id)
    )


def _summary_dict(row: Any) -> NearBestRow:
    """A narrow row, with the record's keys beyond advisor.records (``extra``) merged in."""
    out: NearBestRow = {
        "trial_uuid": row["trial_uuid"],
        "sweep_id": row["sweep_id"],
        "workload": row["workload"],
        "device_hash": row["device_hash"],
        "env_hash": row["env_hash"],
        "config": row["config"],
        "config_key": row["config_key"],
        "mode": row["mode"],
        "dtype": row["dtype"],
        "status": row["status"],
        "failure_reason": row["failure_reason"],
        "started_at": rows.to_iso(row["started_at"]),
        "median_ms": row["median_ms"],
        "p90_ms": row["p90_ms"],
        "p99_ms": row["p99_ms"],
        "mean_ms": row["mean_ms"],
        "cold_compile_s": row["cold_compile_s"],
        "warm_compile_s": row["warm_compile_s"],
        "peak_mem_bytes": row["peak_mem_bytes"],
        "kernels_per_call": row["kernels_per_call"],
        "launches_per_call": row["launches_per_call"],
        "eager_kernels_per_call": row["eager_kernels_per_call"],
        "eager_launches_per_call": row["eager_launches_per_call"],
        "max_abs_err": row["max_abs_err"],
        "correct": row["correct"],
        "quality_name": row["quality_name"],
        "quality_value": row["quality_value"],
        "quality_passed": row["quality_passed"],
        "passed": row["passed"],
    }
    extra = {k: v for k, v in (row["extra"] or {}).items() if k not in out}
    return cast(NearBestRow, {**out, **extra}) if extra else out


def near_best_trials(session: Session, within: float, workload: str | None) -> list[NearBestRow]:
    """Per workload x device x environment, the passed trials whose median is within
    ``within`` (a fraction) of the group's lowest, and every ok eager fp32 trial: narrow
    rows (`SUMMARY_COLUMNS` and the record's extra keys, such as a confidence interval),
    enough for a policy to choose between near ties."""
    leaders = _of_workload(
        select(*GROUP, func.min(T.c.median_ms).label("best_ms")).where(BEST).group_by(*GROUP),
        workload,
    ).subquery()
    near = (
        _summaries()
        .join(
            leaders,
            and_(*(column == leaders.c[column.name] for column in GROUP)),
        )
        .where(BEST, T.c.median_ms <= leaders.c.best_ms * (1.0 + within))
    )
    eager = _of_workload(
        _summaries().where(
            T.c.status == "ok", T.c.config_key == EAGER_FP32.key, T.c.median_ms.is_not(None)
        ),
        workload,
    )
    found: dict[str, NearBestRow] = {}
    for query in (near, eager):
        for row in session.execute(query).mappings():
            found.setdefault(row["trial_uuid"], _summary_dict(row))
    return list(found.values())


def config_dicts(session: Session, workload: str | None) -> dict[str, ConfigDict]:
    """config_key -> config dict of every config measured (of one workload, if given)."""
    first = _of_workload(
        select(func.min(T.c.id)).where(T.c.config_key.is_not(None)).group_by(T.c.config_key),
        workload,
    )
    query = select(T.c.config_key, T.c.config).where(T.c.id.in_(first))
    return {key: config for key, config in session.execute(query) if config is not None}


def group_trial_filter(env_hash: str) -> ColumnElement[bool]:
    """A `trial_records` condition: trials run with the software stack ``env_hash``."""
    return T.c.environment_id.in_(select(E.c.id).where(E.c.env_hash == env_hash))


# -- recommendations: fingerprints measured, confirmations, warm-start artifacts ---------------

C = table(Confirmation)
A = table(CacheArtifact)
ARTIFACT_META = tuple(c for c in A.c if c.name not in ("data", "workload_id", "device_id",
                                                        "environment_id"))


def fingerprints(session: Session, workload: str) -> list[FingerprintRow]:
    """Per fingerprint with trials of ``workload``: its device and environment fields, hashes,
    n_trials, n_passed and last_started_at; the most trials first."""
    query = (
        select(
            T.c.fingerprint_hash, *DEVICE_COLUMNS, *ENV_COLUMNS,
            func.count().label("n_trials"), func.count().filter(PASSED).label("n_passed"),
            func.max(T.c.started_at).label("last_started_at"),
        )
        .select_from(T)
        .join(W, W.c.id == T.c.workload_id)
        .join(D, D.c.id == T.c.device_id)
        .join(E, E.c.id == T.c.environment_id)
        .where(W.c.name == workload, T.c.fingerprint_hash.is_not(None))
        .group_by(T.c.fingerprint_hash, *DEVICE_COLUMNS, *ENV_COLUMNS)
    )  # fmt: skip
    found: list[FingerprintRow] = [
        {"fingerprint_hash": row["fingerprint_hash"], **device_columns(row), **env_columns(row),
         "n_trials": row["n_trials"], "n_passed": row["n_passed"],
         "last_started_at": rows.to_iso(row["last_started_at"])}
        for row in session.execute(query).mappings()
    ]  # fmt: skip
    return sorted(found, key=lambda f: (-f["n_trials"], f["fingerprint_hash"]))


def confirmation_dicts(
    session: Session, workload: str, fingerprint_hash: str | None, limit: int | None
) -> list[ConfirmationRecord]:
    """Confirmations of a workload (on one fingerprint, if given), newest first."""
    query = (
        select(C, W.c.name.label("workload"))
        .join(W, W.c.id == C.c.workload_id)
        .where(W.c.name == workload)
        .order_by(C.c.created_at.desc(), C.c.id.desc())
    )
    if fingerprint_hash is not None:
        query = query.where(C.c.fingerprint_hash == fingerprint_hash)
    if limit is not None:
        query = query.limit(limit)
    found = []
    for row in session.execute(query).mappings():
        out = {k: v for k, v in row.items() if k not in ("id", "workload_id", "device_id",
                                                         "environment_id")}
        out["created_at"] = rows.to_iso(out["created_at"])
        out["device"] = out.pop("requested_device")
        found.append(cast(ConfirmationRecord, out))
    return found


def artifact_dicts(
    session: Session,
    workload: str | None,
    fingerprint_hash: str | None = None,
    config_key: str | None = None,
    with_data: bool = False,
    limit: int | None = None,
) -> list[ArtifactRow]:
    """Stored cache artifacts, newest first; ``data`` (the bytes) only when asked."""
    columns = (*ARTIFACT_META, A.c.data) if with_data else ARTIFACT_META
    query = (
        select(*columns, W.c.name.label("workload"))
        .select_from(A)
        .join(W, W.c.id == A.c.workload_id)
        .order_by(A.c.created_at.desc(), A.c.id.desc())
    )
    if workload is not None:
        query = query.where(W.c.name == workload)
    if fingerprint_hash is not None:
        query = query.where(A.c.fingerprint_hash == fingerprint_hash)
    if config_key is not None:
        query = query.where(A.c.config_key == config_key)
    if limit is not None:
        query = query.limit(limit)
    found = []
    for row in session.execute(query).mappings():
        out: ArtifactRow = {
            "uuid": row["uuid"],
            "fingerprint_hash": row["fingerprint_hash"],
            "host": row["host"],
            "created_at": rows.to_iso(row["created_at"]),
            "config_key": row["config_key"],
            "config": row["config"],
            "trial_uuid": row["trial_uuid"],
            "torch_version": row["torch_version"],
            "triton_version": row["triton_version"],
            "size_bytes": row["size_bytes"],
            "sha256": row["sha256"],
            "cold_start_s": row["cold_start_s"],
            "warm_start_s": row["warm_start_s"],
            "shapes": row["shapes"],
            "info": row["info"],
            "workload": row["workload"],
        }
        if with_data:
            out["data"] = bytes(row["data"])
        found.append(out)
    return found


def server_time(connection: Any, dialect: str) -> datetime:
    """The server's current time in UTC (SQLite: the local clock, it has no server)."""
    if dialect == "sqlite":
        return datetime.now(UTC)
    value: datetime = connection.execute(select(func.now())).scalar_one()
    return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)


def measured_shapes(session: Session, workload: str) -> list[MeasuredShapeRow]:
    """One workload's traffic shapes measured per device x environment (ok trials): device_hash,
    env_hash, shape (its name, ``batch=50,seq=128``)."""
    query = (
        select(D.c.device_hash, E.c.env_hash, SH.c.shape)
        .distinct()
        .select_from(SH)
        .join(T, T.c.id == SH.c.trial_id)
        .join(D, D.c.id == T.c.device_id)
        .join(E, E.c.id == T.c.environment_id)
        .where(T.c.status == "ok", T.c.workload_id.in_(select(W.c.id).where(W.c.name == workload)))
        .order_by(D.c.device_hash, E.c.env_hash, SH.c.shape)
    )
    return [{"device_hash": row["device_hash"], "env_hash": row["env_hash"], "shape": row["shape"]}
            for row in session.execute(query).mappings()]
