"""Trial records <-> table rows. Pure: no database access.

A record (`advisor.records`) is split into a trial row (its scalars, as typed columns), a details
row (its lists, dicts and error tail, as JSON and text), its shape rows, and the rows of its
device, environment and workload; the way back rebuilds exactly the record's keys. Timestamps
are stored as UTC datetimes and come back as ``datetime.isoformat()`` in UTC. Keys a record has
beyond `records.empty_record()` are kept in the trial's ``extra`` JSON and come back as they were.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import BigInteger, Boolean, Double, Integer, String, Table, Text

from advisor.db.models import (
    TRIAL_STATUSES,
    Device,
    Environment,
    ShapeMeasurement,
    Trial,
    table,
)
from advisor.errors import StoreError
from advisor.records import METRIC_KEYS, RECORD_VERSION, SHAPE_KEYS, TrialRecord, empty_record

DEVICE_FIELDS = (
    "device_kind", "device_name", "compute_capability", "device_memory_bytes", "sm_count",
    "cpu_model", "cpu_cores", "host_memory_bytes",
)  # fmt: skip
ENV_FIELDS = (
    "driver_version", "cuda_driver_version", "torch_version", "triton_version",
    "cuda_runtime_version", "cudnn_version", "python_version",
)  # fmt: skip
JSON_KEYS = ("graph_breaks", "kernel_names", "eager_kernel_names", "telemetry", "fingerprint")
CONFIG_COLUMNS = ("mode", "dtype", "fullgraph", "dynamic")
# Keys that describe where a record sits in a database, not the record itself.
PLACEMENT_KEYS = ("sweep_id", "sweep_uuid", "sweep")
RECORD_KEYS = tuple(empty_record())


Cast = tuple[type, Callable[[Any], Any]]


def _caster(table: Table, name: str) -> Cast:
    """The Python type a column holds, and how to make one from a near miss."""
    kind = type(table.c[name].type)
    if issubclass(kind, Boolean):
        return bool, _to_bool
    if issubclass(kind, (Integer, BigInteger)):
        return int, _to_int
    if issubclass(kind, Double):
        return float, float
    if issubclass(kind, (String, Text)):
        return str, str
    return object, lambda value: value  # JSON: kept as it is


def _to_bool(value: Any) -> bool:
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise ValueError(f"{value!r} is not true or false")


def _to_int(value: Any) -> int:
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise ValueError(f"{value!r} is not a whole number")
    return int(value)


def _casters(table: Table, names: tuple[str, ...]) -> dict[str, Cast]:
    return {name: _caster(table, name) for name in names}


_TRIAL_CASTS = _casters(table(Trial), (*METRIC_KEYS, *CONFIG_COLUMNS))
_SHAPE_CASTS = _casters(table(ShapeMeasurement), SHAPE_KEYS)
_DEVICE_CASTS = _casters(table(Device), DEVICE_FIELDS)
_ENV_CASTS = _casters(table(Environment), ENV_FIELDS)


def _cast(casts: Mapping[str, Cast], data: Mapping[str, Any], what: str) -> dict[str, Any]:
    """The values of ``data`` for the cast keys, each of its column's type (or None)."""
    out = {}
    for key, (kind, cast) in casts.items():
        value = data.get(key)
        if value is None or type(value) is kind:
            out[key] = value
            continue
        try:
            out[key] = cast(value)
        except (TypeError, ValueError) as e:
            raise StoreError(f"{what}: {key}={value!r} is not valid ({e})") from None
    return out


def to_datetime(value: Any, what: str = "timestamp") -> datetime | None:
    """An ISO 8601 text or datetime as an aware UTC datetime (naive ones are taken as UTC)."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise StoreError(f"{what} {value!r} is not an ISO 8601 timestamp") from None
    if not isinstance(value, datetime):
        raise StoreError(f"{what} {value!r} is not an ISO 8601 timestamp")
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def to_iso(value: datetime | None) -> str | None:
    """A stored timestamp back as ISO 8601 UTC text (SQLite returns naive UTC datetimes)."""
    if value is None:
        return None
    return (
        value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    ).isoformat()


def device_row(fingerprint: Mapping[str, Any]) -> dict[str, Any]:
    return {"device_hash": str(fingerprint["device_hash"])} | _cast(
        _DEVICE_CASTS, fingerprint, "fingerprint"
    )


def environment_row(fingerprint: Mapping[str, Any]) -> dict[str, Any]:
    return {"env_hash": str(fingerprint["env_hash"])} | _cast(
        _ENV_CASTS, fingerprint, "fingerprint"
    )


def workload_row(workload: Mapping[str, Any]) -> dict[str, Any]:
    """The workloads row; a missing source hash is stored as '' so (name, hash) stays unique."""
    return {
        "name": str(workload["name"]),
        "source_sha256": str(workload.get("source_sha256") or ""),
        "path": workload.get("path"),
        "info": workload.get("info"),
    }


def workload_key(workload: Mapping[str, Any]) -> tuple[str, str]:
    row = workload_row(workload)
    return row["name"], row["source_sha256"]


def check_fingerprint(fingerprint: Any, what: str) -> None:
    if not isinstance(fingerprint, dict) or not all(
        fingerprint.get(k) for k in ("device_hash", "env_hash")
    ):
        raise StoreError(f"{what}: the fingerprint must be a dict with device_hash and env_hash")


def check_workload(workload: Any, what: str) -> None:
    if not isinstance(workload, dict) or not workload.get("name"):
        raise StoreError(f"{what}: the workload must be a dict with a name")


def check_record(record: Mapping[str, Any], what: str) -> None:
    """Check a full record's names with the validators a sweep uses (`CompileConfig`,
    `parse_shape`, `FAILURE_REASONS`); raises StoreError naming the record and the field."""
    from advisor.config import CompileConfig, parse_shape
    from advisor.errors import ConfigError
    from advisor.records import FAILURE_REASONS

    config = record["config"]
    if not isinstance(config, dict):
        raise StoreError(f"{what}: config must be a dict as CompileConfig.to_dict() writes it")
    try:
        parsed = CompileConfig.from_dict(config)
    except (ConfigError, TypeError) as e:
        raise StoreError(f"{what}: config: {str(e).splitlines()[0]}") from None
    if record["config_key"] is not None and record["config_key"] != parsed.key:
        raise StoreError(f"{what}: config_key {record['config_key']!r} is not its config's "
                         f"key ({parsed.key})")
    reason = record["failure_reason"]
    if reason is not None and reason not in FAILURE_REASONS:
        raise StoreError(f"{what}: failure_reason {reason!r} is not one of "
                         f"{', '.join(FAILURE_REASONS)}")
    _check_pruned(record, what)
    device = record["device"]
    if device is not None and not _DEVICE.fullmatch(str(device)):
        raise StoreError(f"{what}: device {device!r} is not cpu, cuda or cuda:N")
    shapes = record["shapes"]
    for i, shape in enumerate(shapes if isinstance(shapes, list) else []):
        name = shape.get("shape") if isinstance(shape, dict) else None
        try:
            dims = parse_shape(str(name)) if name is not None else None
        except ConfigError as e:
            raise StoreError(f"{what}: shapes[{i}].shape: {str(e).splitlines()[0]}") from None
        if dims is not None and shape.get("dims") not in (None, dims):
            raise StoreError(f"{what}: shapes[{i}].dims {shape.get('dims')!r} do not match "
                             f"its shape {name!r}")


_DEVICE = re.compile(r"cpu|cuda(:\d+)?")


def _check_pruned(record: Mapping[str, Any], what: str) -> None:
    """A pruned record (advisor.records.Pruned) carries the bound it proved and no measured
    figure: never a figure it did not earn."""
    if record["status"] != "pruned":
        return
    pruned = record.get("pruned")
    bound = pruned.get("lower_bound_ms") if isinstance(pruned, dict) else None
    if isinstance(bound, bool) or not isinstance(bound, (int, float)):
        raise StoreError(f"{what}: status pruned needs pruned.lower_bound_ms, the bound it proved")
    if record["median_ms"] is not None:
        raise StoreError(f"{what}: a pruned trial has no median_ms (it was stopped before its "
                         "steady state was measured)")


def full_record(record: Any, index: int | None = None) -> TrialRecord:
    """``record`` over `empty_record()`: every key present; raises StoreError if it is no record."""
    where = "trial record" if index is None else f"trial record {index}"
    if not isinstance(record, dict):
        raise StoreError(f"{where} is a {type(record).__name__}, not a dict")
    full = typing.cast(TrialRecord, {**empty_record(), **record})
    if full["status"] not in TRIAL_STATUSES:
        raise StoreError(f"{where}: status {full['status']!r} is not one of {TRIAL_STATUSES}")
    uuid = full["trial_uuid"]
    if uuid is not None and (not isinstance(uuid, str) or not 0 < len(uuid) <= 36):
        raise StoreError(f"{where}: trial_uuid {uuid!r} is not a uuid")
    return full


def trial_row(record: Mapping[str, Any], what: str) -> dict[str, Any]:
    """The trial row of a full record (without its foreign keys)."""
    config = record["config"]
    fingerprint = record["fingerprint"] or {}
    workload = record["workload"] or {}
    row: dict[str, Any] = {
        "uuid": record["trial_uuid"],
        "fingerprint_hash": fingerprint.get("fingerprint_hash"),
        "host": host_of(fingerprint),
        "record_version": _to_int(record["record_version"] or RECORD_VERSION),
        "workload_path": workload.get("path"),
        "requested_device": record["device"],
        "config": config,
        "config_key": record["config_key"],
        "status": record["status"],
        "failure_reason": record["failure_reason"],
        "started_at": to_datetime(record["started_at"], f"{what}: started_at"),
        "finished_at": to_datetime(record["finished_at"], f"{what}: finished_at"),
    }
    config_fields = config if isinstance(config, dict) else {}
    row.update(_cast(_TRIAL_CASTS, {**record, **config_fields}, what))
    return row


def details_row(record: Mapping[str, Any]) -> dict[str, Any]:
    """The trial's bulky part (advisor_trial_details, without its trial_id)."""
    error_tail = record["error_tail"]
    return {
        "error_tail": None if error_tail is None else str(error_tail),
        "extra": _extra(record),
        **{key: record[key] for key in JSON_KEYS},
    }


def host_of(fingerprint: Mapping[str, Any]) -> str | None:
    host = fingerprint.get("hostname")
    return None if host is None else str(host)[:256]


def _extra(record: Mapping[str, Any]) -> dict[str, Any] | None:
    extra = {k: v for k, v in record.items() if k not in RECORD_KEYS and k not in PLACEMENT_KEYS}
    return extra or None


def shape_rows(record: Mapping[str, Any], what: str) -> list[dict[str, Any]]:
    shapes = record["shapes"] or []
    if not isinstance(shapes, list) or not all(isinstance(s, dict) for s in shapes):
        raise StoreError(f"{what}: shapes must be a list of dicts")
    return [
        {"position": i, **_cast(_SHAPE_CASTS, shape, f"{what}: shape {i}")}
        for i, shape in enumerate(shapes)
    ]


def record_from_row(trial: Mapping[Any, Any], shapes: list[Any]) -> TrialRecord:
    """The trial record again, keys in `records.empty_record()` order, then sweep_id/sweep_uuid.

    ``trial`` holds the columns of the trial, of its details row, its workload's name,
    source_sha256 and info, and its sweep's uuid as ``sweep_uuid``.
    """
    record: dict[str, Any] = dict(empty_record())
    record.update({key: trial[key] for key in METRIC_KEYS})
    record.update({key: trial[key] for key in JSON_KEYS})
    record.update(
        trial_uuid=trial["uuid"],
        record_version=trial["record_version"],
        status=trial["status"],
        failure_reason=trial["failure_reason"],
        error_tail=trial["error_tail"],
        started_at=to_iso(trial["started_at"]),
        finished_at=to_iso(trial["finished_at"]),
        workload=workload_dict(trial, trial["workload_path"]),
        config=trial["config"],
        config_key=trial["config_key"],
        device=trial["requested_device"],
        shapes=[{key: shape[key] for key in SHAPE_KEYS} for shape in shapes],
    )
    record.update(trial["extra"] or {})
    record["sweep_id"] = trial["sweep_id"]
    record["sweep_uuid"] = trial["sweep_uuid"]
    return typing.cast(TrialRecord, record)


def workload_dict(workload: Mapping[Any, Any], path: str | None) -> dict[str, Any]:
    return {
        "name": workload["name"],
        "path": path,
        "source_sha256": workload["source_sha256"] or None,
        "info": workload["info"],
    }
