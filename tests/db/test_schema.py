"""The schema keeps every part of the trial record, and SQLite is set up for several writers."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from advisor import fingerprint
from advisor.db import ResultStore, rows
from advisor.db.models import ShapeMeasurement, Trial, TrialDetails, table
from advisor.records import LIST_KEYS, METRIC_KEYS, SHAPE_KEYS, empty_record


def test_every_scalar_metric_is_a_column_of_its_own() -> None:
    columns = set(table(Trial).c.keys())
    assert set(METRIC_KEYS) <= columns
    assert {"mode", "dtype", "fullgraph", "dynamic", "config", "config_key"} <= columns


def test_every_list_and_dict_of_the_record_is_kept() -> None:
    details = set(table(TrialDetails).c.keys())
    assert set(LIST_KEYS) - {"shapes"} <= details
    assert {"telemetry", "fingerprint", "error_tail", "extra"} <= details
    assert set(SHAPE_KEYS) <= set(table(ShapeMeasurement).c.keys())
    stored = set(METRIC_KEYS) | set(rows.JSON_KEYS) | {"shapes", "error_tail", "workload"}
    stored |= {"record_version", "trial_uuid", "status", "failure_reason", "started_at"}
    stored |= {"finished_at", "config", "config_key", "device"}
    assert set(empty_record()) <= stored


def test_device_and_environment_fields_are_the_fingerprints() -> None:
    assert rows.DEVICE_FIELDS == fingerprint.DEVICE_FIELDS
    assert rows.ENV_FIELDS == fingerprint.ENV_FIELDS


def test_sqlite_databases_use_wal_and_a_busy_timeout(tmp_path: Path) -> None:
    path = tmp_path / "advisor.db"
    with ResultStore.from_url(f"sqlite:///{path}") as store:
        engine = store._engine
        with engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() == 60_000
            assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
