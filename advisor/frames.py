"""The store as pandas DataFrames, for a notebook: the rows the CLI's ``-f csv`` prints.

    import advisor
    df = advisor.trials("reranker", db=URL)           # `advisor export -w reranker -f csv`
    picks = advisor.recommendations(db=URL)           # `advisor compare W -f csv`, every workload
    df = advisor.trials("reranker", db=URL, flatten=True)   # `... -f csv --flatten`

The columns are the CSV's, in its order; a nested value (``config``, ``fingerprint``) is the
Python object the CSV writes as JSON text, or dotted columns (``config.mode``,
``fingerprint.torch_version``) with ``flatten=True``. `compare_devices` builds the rows of
`advisor compare` (and of `recommendations`) from the one answer per device.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from advisor.db.store import ResultStore


def flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dicts as dotted keys (``config.mode``); lists kept as they are."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(flatten(value, f"{name}."))
        else:
            out[name] = value
    return out


def frame(rows: Sequence[Mapping[str, Any]], flat: bool = False) -> pd.DataFrame:
    """``rows`` as a DataFrame whose columns are every key seen, in order (the CSV's header)."""
    import pandas as pd

    rows = [flatten(r) if flat else dict(r) for r in rows]
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    return pd.DataFrame([[row.get(c) for c in columns] for row in rows], columns=list(columns))


def trials(workload: str | None = None, *, db: str | None = None, sweep: int | None = None,
           flatten: bool = False) -> pd.DataFrame:
    """Every trial record of the database (or of ``workload``, or of sweep id ``sweep``), one
    row each, with the columns of `advisor export -f csv` (``sweep``: `advisor show SWEEP -f
    csv`); ``flatten``: those of ``--flatten``. An unknown workload or sweep raises
    ConfigError."""
    from advisor.db.store import ResultStore
    from advisor.errors import ConfigError

    with ResultStore.from_url(db, read_only=True) as store:
        if workload is not None and workload not in store.workloads():
            known = ", ".join(store.workloads()) or "none yet"
            raise ConfigError(f"no trials of workload {workload!r} in {store.masked_url} "
                              f"(known: {known})")
        if sweep is not None:
            store.get_sweep(sweep)  # an unknown sweep: its error
            records: Sequence[Mapping[str, Any]] = [
                r for r in store.trials(sweep_id=sweep)
                if workload is None or _workload_name(r) == workload]
        else:
            records = store.export(workload)
    return frame(records, flatten)


def recommendations(workload: str | None = None, *, db: str | None = None,
                    devices: Sequence[str] | None = None,
                    flatten: bool = False) -> pd.DataFrame:
    """The one answer for every workload (or ``workload``) on every device it was measured on,
    one row each, the fastest device first within a workload: a ``workload`` column, then the
    columns of `advisor compare WORKLOAD -f csv` (``device_id``, ``config``, ``decision``,
    ``median_ms``, ``speedup``, ``vs_best``, ...). ``devices``: parts of device ids or model
    names to keep, as ``--devices`` (none matching raises ConfigError, as the CLI's exit 2)."""
    from advisor.db.store import ResultStore
    from advisor.errors import ConfigError

    rows: list[dict[str, Any]] = []
    with ResultStore.from_url(db, read_only=True) as store:
        names = store.workloads()
        if workload is not None and workload not in names:
            raise ConfigError(f"no results for workload {workload!r}; known: "
                              f"{', '.join(names) or 'none yet'}")
        for name in [workload] if workload is not None else names:
            rows += [{"workload": name, **row}
                     for row in compare_devices(store, name, devices)]
    if devices is not None and not rows and names:
        raise ConfigError(f"no device matches devices={list(devices)!r}: give parts of their "
                          "short ids or model names (`advisor.recommendations()` lists them), "
                          "or None for every device")
    return frame(rows, flatten)


def compare_devices(store: ResultStore, workload: str,
                    wanted: Sequence[str] | None = None, *, policy: str = "latency",
                    calls_per_process: int | None = None) -> list[dict[str, Any]]:
    """One row per device (fingerprint) ``workload`` was measured on, the fastest pick first
    (devices with no pick last), each with ``vs_best``: what `advisor compare` prints and
    `advisor report --fleet` reports (under ``policy``). ``wanted``: parts of short ids or model
    names to keep (case-insensitive)."""
    from advisor.devices import DeviceNames
    from advisor.recommendation.answers import answer, pick_label

    records = store.trials(workload=workload)
    names = DeviceNames.of_store(store)
    groups: dict[str, list[Any]] = {}
    for r in records:
        found = r.get("fingerprint")
        groups.setdefault((found.get("fingerprint_hash") if found else None) or "?",
                          []).append(r)
    words = [w.strip().lower() for w in wanted or [] if w.strip()]
    rows = []
    for fp_hash, group in sorted(groups.items()):
        fp: Mapping[str, Any] = group[0].get("fingerprint") or {}
        name = str(fp.get("device_name") or fp.get("cpu_model"))
        device_id = names.name(fp_hash, fp)
        if words and not any(w in name.lower() or w in device_id.lower() for w in words):
            continue
        rec = answer(store, workload, fp_hash, records=group, policy=policy,
                     calls_per_process=calls_per_process)
        best = rec.best
        rows.append({
            "device_id": device_id, "fingerprint_hash": fp_hash, "device": name,
            "host": fp.get("hostname"),
            "torch": fp.get("torch_version"), "driver": fp.get("driver_version"),
            "cuda": fp.get("cuda_driver_version"), "trials": len(group),
            "config": best.label if best else None, "pick": pick_label(rec),
            "config_short": best.label if best else pick_label(rec),
            "decision": rec.decision,
            "median_ms": best.median_ms if best else None,
            "median_ci_ms": best.median_ci_ms if best else None,
            "noisy": best.noisy if best else None,
            "speedup": best.speedup if best else None,
            "eager_fp32_ms": rec.baseline.median_ms if rec.baseline else None,
            "baseline": rec.baseline_name,
        })
    return _fastest_first(rows)


def _workload_name(record: Mapping[str, Any]) -> str | None:
    workload = record.get("workload")
    return workload.get("name") if isinstance(workload, Mapping) else None


def _fastest_first(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` by their pick's median, the fastest first (devices with no pick last), each
    with ``vs_best``: its median over the fastest one's (1.0 for the fastest)."""
    if not rows:
        return rows
    rows = sorted(rows, key=lambda r: (r["median_ms"] is None, r["median_ms"] or 0.0,
                                       r["device_id"]))
    fastest = rows[0]["median_ms"]
    for r in rows:
        r["vs_best"] = r["median_ms"] / fastest if r["median_ms"] and fastest else None
    return rows
