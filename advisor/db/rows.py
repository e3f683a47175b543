"""Trial records <-> table rows. Pure: no database access.

A record (`advisor.records`) is split into a trial row (its scalars, as typed columns), a details
row (its lists, dicts and error tail, as JSON and text), its shape rows, and the rows of its
device, environment and workload; the way back rebuilds exactly the record's keys. Timestamps
are stored as UTC datetimes and come back as ``datetime.isoformat()`` in UTC. Keys a record has
beyond `records.empty_record()` are kept in the trial's ``extra`` JSON and come back as they were.
"""

from __future__ import annotations

import math
import re
import typing
import uuid as uuidlib
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, overload

from sqlalchemy import BigInteger, Boolean, Double, Integer, String, Table, Text

from advisor import protocol
from advisor.db.models import (
    TRIAL_STATUSES,
    Device,
    Environment,
    ShapeMeasurement,
    Trial,
    table,
)
from advisor.errors import StoreError
from advisor.records import (
    METRIC_KEYS,
    RECORD_VERSION,
    SHAPE_KEYS,
    TrialRecord,
    WorkloadInfo,
    empty_record,
)

# The fingerprint's columns of a device row and of an environment row (advisor.db.queries reads
# them from here too).
DEVICE_FIELDS = protocol.DEVICE_FIELDS
ENV_FIELDS = protocol.ENV_FIELDS
JSON_KEYS = ("graph_breaks", "kernel_names", "eager_kernel_names", "telemetry", "fingerprint")
CONFIG_COLUMNS = ("mode", "dtype", "fullgraph", "dynamic")
# Keys that describe where a record sits in a database, not the record itself (spilled_from:
# the database and sweep a spilled record was measured for, advisor.db.spill).
PLACEMENT_KEYS = ("sweep_id", "sweep_uuid", "sweep", "spilled_from")
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


@overload
def to_iso(value: datetime) -> str: ...


@overload
def to_iso(value: datetime | None) -> str | None: ...


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
    _check_stopped(record, what)
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


def _check_stopped(record: Mapping[str, Any], what: str) -> None:
    """A stopped record (advisor.records.Stopped: its time ended before it finished) says how
    far it got, with a bound only where what it served proves one, and has no measured
    figure."""
    if record["status"] != "stopped":
        return
    stopped = record.get("stopped")
    if not isinstance(stopped, dict) or not isinstance(stopped.get("phase"), str):
        raise StoreError(f"{what}: status stopped needs stopped.phase, where its time ended")
    bound = stopped.get("lower_bound_ms")
    if bound is not None and (isinstance(bound, bool) or not isinstance(bound, (int, float))
                              or not bound >= 0):
        raise StoreError(f"{what}: stopped.lower_bound_ms {bound!r} is not a figure >= 0")
    if record["median_ms"] is not None:
        raise StoreError(f"{what}: a stopped trial has no median_ms (its time ended before its "
                         "steady state was measured)")


# What an imported record must hold beyond what a sweep's own writes are checked for: a file
# from elsewhere is input, validated like flags (the sweep's figures come from the measurement).
INT32 = 2**31 - 1
INT64 = 2**63 - 1
_DURATIONS = ("median_ms", "p90_ms", "p99_ms", "mean_ms", "cold_compile_s", "warm_compile_s",
              "eager_first_call_s", "atol", "rtol", "device_wait_s")  # finite, >= 0
_ERRORS = ("max_abs_err", "max_rel_err")  # >= 0; infinite when an output is not finite
_COUNTS = {"peak_mem_bytes": INT64, "graph_count": INT32, "graph_break_count": INT32,
           "recompiles": INT32, "generated_kernel_count": INT32, "kernels_per_call": INT32,
           "launches_per_call": INT32, "eager_kernels_per_call": INT32,
           "eager_launches_per_call": INT32, "warmup_iters": INT32, "record_version": INT32}
_SHAPE_DURATIONS = ("median_ms", "mean_ms", "min_ms", "max_ms", "p90_ms", "p99_ms", "stdev_ms",
                    "iqr_ms", "weight")
_SHAPE_COUNTS = {"n_samples": INT32, "warmup_iters": INT32}
_FINGERPRINT_COUNTS = {"device_memory_bytes": INT64, "sm_count": INT32, "cpu_cores": INT32,
                       "host_memory_bytes": INT64}
_HASH = re.compile(r"[0-9a-f]{8,64}")  # advisor.fingerprint.stable_hash: 16 hex digits
_SHA256 = re.compile(r"[0-9a-f]{64}")
MAX_DEPTH = 32  # nesting of an imported record (a real one nests 4 deep; workload info a bit more)


def _number(value: Any) -> bool:
    """A number a Double column holds (an int past a float's range is none)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        float(value)
    except OverflowError:
        return False
    return True


def _figure(value: Any) -> bool:
    return _number(value) and math.isfinite(value) and value >= 0


def _count(value: Any, most: int) -> bool:
    if isinstance(value, float):
        return math.isfinite(value) and value.is_integer() and 0 <= value <= most
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= most


def _check_figures(data: Mapping[str, Any], durations: tuple[str, ...],
                   counts: Mapping[str, int], what: str) -> None:
    for key in durations:
        value = data.get(key)
        if value is not None and not _figure(value):
            raise StoreError(f"{what}: {key}={_short(value)} is not a figure (a finite number "
                             ">= 0); fix or drop the record")
    for key, most in counts.items():
        value = data.get(key)
        if value is not None and not _count(value, most):
            raise StoreError(f"{what}: {key}={_short(value)} is not a count (a whole number "
                             f"from 0 to {most}); fix or drop the record")


def _short(value: Any) -> str:
    text = repr(value) if not isinstance(value, int) or value.bit_length() < 64 else "<huge int>"
    return text if len(text) <= 40 else text[:37] + "..."


def _check_uuid(value: Any, key: str, what: str) -> None:
    try:
        ok = isinstance(value, str) and len(value) == 36 and bool(uuidlib.UUID(value))
    except ValueError:
        ok = False
    if not ok:
        raise StoreError(f"{what}: {key} {_short(value)} is not a UUID (like "
                         "123e4567-e89b-42d3-a456-426614174000)")


def _check_hashes(fingerprint: Any, what: str) -> None:
    if not isinstance(fingerprint, dict):
        return  # check_fingerprint names it
    for key in ("device_hash", "env_hash", "fingerprint_hash"):
        value = fingerprint.get(key)
        if value is not None and not (isinstance(value, str) and _HASH.fullmatch(value)):
            raise StoreError(f"{what}: fingerprint {key} {_short(value)} is not a hash (hex "
                             "text, as advisor.fingerprint writes it)")
    _check_figures(fingerprint, ("power_limit_w",), _FINGERPRINT_COUNTS, f"{what}: fingerprint")


def _check_workload_hash(workload: Any, what: str) -> None:
    sha = workload.get("source_sha256") if isinstance(workload, dict) else None
    if sha and not (isinstance(sha, str) and _SHA256.fullmatch(sha)):
        raise StoreError(f"{what}: workload source_sha256 {_short(sha)} is not a sha256 (64 hex "
                         "digits)")


def _depth(value: Any) -> int:
    """How deep lists and dicts nest in ``value`` (iterative: no recursion to exhaust)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            if depth <= MAX_DEPTH:
                stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict)
                                                      else item))
    return deepest


def check_imported(record: Any, index: int) -> None:
    """Check what an imported record carries beyond a sweep's checks (`check_record`): its
    uuids, its hashes in their format, its figures finite and >= 0, its counts whole and in
    range, no deeper nesting than `MAX_DEPTH`. Raises StoreError naming record ``index``."""
    what = f"trial record {index}"
    if not isinstance(record, dict):
        raise StoreError(f"{what} is a {type(record).__name__}, not a dict")
    if _depth(record) > MAX_DEPTH:
        raise StoreError(f"{what} nests deeper than {MAX_DEPTH} levels: not an advisor export")
    _check_uuid(record.get("trial_uuid"), "trial_uuid", what)
    if record.get("sweep_uuid") is not None:
        _check_uuid(record["sweep_uuid"], "sweep_uuid", what)
    _check_figures(record, _DURATIONS, _COUNTS, what)
    for key in _ERRORS:
        value = record.get(key)
        if value is not None and not (_number(value) and value >= 0):
            raise StoreError(f"{what}: {key}={_short(value)} is not an error figure (a number "
                             ">= 0); fix or drop the record")
    ci = record.get("median_ci_ms")
    if ci is not None and not (isinstance(ci, list) and len(ci) == 2
                               and all(_figure(v) for v in ci)):
        raise StoreError(f"{what}: median_ci_ms {_short(ci)} is not an interval [low, high] "
                         "of finite figures >= 0")
    shapes = record.get("shapes")
    for i, shape in enumerate(shapes if isinstance(shapes, list) else []):
        if isinstance(shape, dict):
            _check_figures(shape, _SHAPE_DURATIONS, _SHAPE_COUNTS, f"{what}: shapes[{i}]")
            rate = shape.get("throughput_per_s")
            if rate is not None and not (_number(rate) and rate >= 0):
                raise StoreError(f"{what}: shapes[{i}]: throughput_per_s={_short(rate)} is not "
                                 "a rate (a number >= 0)")
    pruned = record.get("pruned")
    if isinstance(pruned, dict):
        _check_figures(pruned, ("lower_bound_ms", "above_ms"), {}, f"{what}: pruned")
    _check_hashes(record.get("fingerprint"), what)
    _check_workload_hash(record.get("workload"), what)
    sweep = record.get("sweep")
    if isinstance(sweep, dict):
        if sweep.get("uuid") is not None:
            _check_uuid(sweep["uuid"], "sweep uuid", what)
        _check_hashes(sweep.get("fingerprint"), f"{what}: its sweep")
        _check_workload_hash(sweep.get("workload"), f"{what}: its sweep")
        _check_figures(sweep, (), {"planned_trials": INT32}, f"{what}: its sweep")


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


def workload_dict(workload: Mapping[Any, Any], path: str | None) -> WorkloadInfo:
    return {
        "name": workload["name"],
        "path": path,
        "source_sha256": workload["source_sha256"] or None,
        "info": workload["info"],
    }
