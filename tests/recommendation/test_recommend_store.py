"""The store's recommendation tables (revision 0003) on every backend, and the 0002 upgrade."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from recommend_support import REPO, TINY_WORKLOAD, other_stack, record
from sqlalchemy import create_engine

from advisor.config import CompileConfig
from advisor.db import ResultStore, Revision, database_revision, head_revision, upgrade_database
from advisor.db.engine import parse_url
from advisor.errors import SchemaOutdated, StoreError

FIXTURES = REPO / "tests" / "fixtures" / "db"
DEFAULT = CompileConfig(mode="default")


def _fixture_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_advisor_0002",
                                                  FIXTURES / "make_advisor_0002.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fingerprints_lists_every_measured_stack(db_url: str, cpu_fp: dict[str, Any]) -> None:
    newer = other_stack(cpu_fp, torch_version="2.99.0")
    with ResultStore.from_url(db_url) as store:
        store.add_trials([record(cpu_fp, "eager"), record(cpu_fp, "default", passed=False),
                          record(newer, "eager")])  # fmt: skip
        store.add_trial(record(cpu_fp, "eager", workload={**TINY_WORKLOAD, "name": "other"}))
        found = store.fingerprints("tiny-mlp")
        assert store.fingerprints("nothing") == []
    assert [(f["fingerprint_hash"], f["n_trials"], f["n_passed"]) for f in found] == [
        (cpu_fp["fingerprint_hash"], 2, 1), (newer["fingerprint_hash"], 1, 1)
    ]
    assert found[1]["torch_version"] == "2.99.0"
    assert found[0]["device_name"] == cpu_fp["device_name"]
    assert {"device_hash", "env_hash", "last_started_at", "device_kind"} <= set(found[0])


def test_confirmations_come_back_newest_first(db_url: str, cpu_fp: dict[str, Any]) -> None:
    entry = {"config_key": DEFAULT.key, "label": DEFAULT.label, "median_ms": 0.05,
             "samples_ms": [[0.05, 0.051]], "speedup_ci": [1.5, 1.7]}  # fmt: skip
    old = {"workload": TINY_WORKLOAD, "fingerprint": cpu_fp, "created_at": "2026-10-01T10:00:00Z",
           "device": "cpu", "method": "perf_counter", "rounds": 2, "shapes": [{"dims": {"b": 1}}],
           "entries": [entry]}  # fmt: skip
    elsewhere = other_stack(cpu_fp, torch_version="2.99.0")
    with ResultStore.from_url(db_url) as store:
        first = store.add_confirmation(old)
        second = store.add_confirmation({**old, "created_at": "2026-10-02T10:00:00Z"})
        third = store.add_confirmation({**old, "fingerprint": elsewhere, "status": "failed",
                                        "error_tail": "boom", "created_at": None})  # now
        here = store.confirmations("tiny-mlp", cpu_fp["fingerprint_hash"])
        every = store.confirmations("tiny-mlp")
        assert store.confirmations("tiny-mlp", limit=1)[0]["uuid"] == third
        with pytest.raises(StoreError, match="fingerprint"):
            store.add_confirmation({**old, "fingerprint": {}})
    assert [c["uuid"] for c in here] == [second, first]
    assert [c["uuid"] for c in every] == [third, second, first]
    got = here[0]
    assert got["entries"] == [entry] and got["rounds"] == 2 and got["device"] == "cpu"
    assert got["created_at"] == "2026-10-02T10:00:00+00:00" and got["status"] == "ok"
    assert got["workload"] == "tiny-mlp" and got["fingerprint"] == cpu_fp
    assert every[0]["status"] == "failed" and every[0]["error_tail"] == "boom"


def test_artifacts_keep_their_bytes(db_url: str, cpu_fp: dict[str, Any]) -> None:
    data = bytes(range(256)) * 1000
    with ResultStore.from_url(db_url) as store:
        assert store.get_artifact("tiny-mlp", cpu_fp["fingerprint_hash"], DEFAULT.key) is None
        first = store.put_artifact(TINY_WORKLOAD, cpu_fp, DEFAULT.to_dict(), b"old bytes")
        second = store.put_artifact(
            TINY_WORKLOAD, cpu_fp, DEFAULT.to_dict(), data, trial_uuid="t-1", cold_start_s=12.5,
            warm_start_s=2.5, shapes=[{"dims": {"batch": 16}, "weight": 1.0}], info={"n": 2},
        )
        got = store.get_artifact("tiny-mlp", cpu_fp["fingerprint_hash"], DEFAULT.key)
        listed = store.artifacts("tiny-mlp")
        assert store.get_artifact("tiny-mlp", "elsewhere", DEFAULT.key) is None
        assert store.get_artifact("tiny-mlp", cpu_fp["fingerprint_hash"], "eager/fp32") is None
        with pytest.raises(StoreError, match="non-empty bytes"):
            store.put_artifact(TINY_WORKLOAD, cpu_fp, DEFAULT.to_dict(), b"")
        with pytest.raises(StoreError, match="unknown artifact facts: speed"):
            store.put_artifact(TINY_WORKLOAD, cpu_fp, DEFAULT.to_dict(), b"x", speed=1)
    assert got is not None and got["uuid"] == second and got["data"] == data
    assert got["size_bytes"] == len(data) and got["sha256"] == hashlib.sha256(data).hexdigest()
    assert (got["cold_start_s"], got["warm_start_s"], got["trial_uuid"]) == (12.5, 2.5, "t-1")
    assert got["torch_version"] == cpu_fp["torch_version"] and got["info"] == {"n": 2}
    assert got["config"] == DEFAULT.to_dict() and got["config_key"] == DEFAULT.key
    assert [a["uuid"] for a in listed] == [second, first]
    assert all("data" not in a for a in listed)


# --- the 0002 fixture: a released revision upgrades with its data -----------------------------


def _assert_intact(url: str, expected: dict[str, Any], fp: dict[str, Any]) -> None:
    with ResultStore.from_url(url) as store:
        trials = [{k: v for k, v in r.items() if k != "sweep_id"} for r in store.trials()]
        assert trials == expected["trials"]
        sweeps = {s["uuid"]: s for s in store.sweeps()}
        for sweep in expected["sweeps"]:
            assert {k: sweeps[sweep["uuid"]][k] for k in sweep} == sweep
            assert sweeps[sweep["uuid"]]["host"] == sweep["fingerprint"]["hostname"]
        best = {(b["workload"], b["device_hash"]) for b in store.best_per_workload_device()}
        assert ("tiny-mlp", expected["sweeps"][2]["fingerprint"]["device_hash"]) in best
        # the 0003 tables are there, empty, and take rows
        assert store.confirmations("tiny-mlp") == [] and store.artifacts() == []
        store.put_artifact(TINY_WORKLOAD, fp, DEFAULT.to_dict(), b"bytes")
        store.add_confirmation({"workload": TINY_WORKLOAD, "fingerprint": fp, "entries": []})
        assert len(store.artifacts()) == len(store.confirmations("tiny-mlp")) == 1


def test_the_0002_fixture_is_refused_then_upgraded_with_its_data(
    tmp_path: Path, cpu_fp: dict[str, Any]
) -> None:
    path = tmp_path / "advisor.db"
    shutil.copyfile(FIXTURES / "advisor-0002.sqlite", path)
    url = f"sqlite:///{path}"
    with pytest.raises(SchemaOutdated, match="revision 0002"):
        ResultStore.from_url(url)
    assert database_revision(url) == Revision("0002", head_revision())
    assert upgrade_database(url) == Revision("0002", head_revision())
    _assert_intact(url, json.loads((FIXTURES / "advisor-0002.json").read_text()), cpu_fp)


def test_upgrading_from_0002_keeps_the_data(db_url: str, cpu_fp: dict[str, Any]) -> None:
    script = _fixture_script()
    engine = create_engine(parse_url(db_url))
    with engine.begin() as connection:
        script.upgrade_to_0002(connection)
        expected = script.populate(connection)
    engine.dispose()
    assert upgrade_database(db_url).current == "0002"
    _assert_intact(db_url, json.loads(json.dumps(expected)), cpu_fp)


def test_the_0002_fixture_script_describes_the_committed_fixture() -> None:
    script = _fixture_script()
    committed = json.loads((FIXTURES / "advisor-0002.json").read_text())
    assert json.loads(json.dumps(script.expected(script.dataset()))) == committed
    assert committed["revision"] == "0002" and len(committed["trials"]) == 12
