"""A spill file belongs to one database and one sweep: it is named after the database (a short
hash of the SQLite file's path, or of the server's host, port and database) and its record
carries that key and its sweep's uuid. Resuming sweep 1 of database B from the folder that holds
database A's spill of its sweep 1 (every PostgreSQL database spills into ./advisor-spill; a
SQLite file removed and made again at the same path spills beside it) leaves A's trial where it
is, says so in one line, and measures B's own config."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from reliability_support import advisor, sweep_support

from advisor.config import CompileConfig
from advisor.db import ResultStore
from advisor.db.engine import database_key
from advisor.db.spill import spill, spill_dir, spill_path, store_spilled
from advisor.search.request import SweepSettings
from advisor.search.space import build_space

WORKLOAD = sweep_support.FOUR_DTYPES  # eager-only, cheap
BF16 = CompileConfig(mode="eager", dtype="bf16")


def test_the_database_key_names_the_database_not_the_url_spelling(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    pg = "postgresql+psycopg://bob:secret@db.example:5432/results"
    assert database_key(pg) == database_key("postgresql://alice:other@db.example/results")
    assert database_key(pg) != database_key("postgresql+psycopg://bob@db.example/other")
    assert database_key(pg) != database_key("postgresql+psycopg://bob@db.example:6543/results")
    assert database_key("sqlite:///a.db") == database_key(f"sqlite:///{tmp_path / 'a.db'}")
    assert database_key("sqlite:///a.db") != database_key("sqlite:///b.db")
    assert len(database_key(pg)) == 12 and "secret" not in spill_path(pg, 1, "u").name


def _interrupted_sweep(url: str, fingerprint: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """A sweep of four-dtypes (eager fp32 and bf16) on this host, stopped before any trial."""
    from advisor.workload import load_workload

    loaded = load_workload(WORKLOAD)
    workload = {"name": "four-dtypes", "path": str(loaded.path),
                "source_sha256": loaded.source_sha256, "info": {}}
    settings = SweepSettings(device="cpu", measure_warm=False, confirm_leaders=False,
                             priors=False, timeout_s=300.0)
    space = build_space(("fp32", "tf32", "bf16", "fp16"), "cpu",
                        {"mode": ["eager"], "dtype": ["fp32", "bf16"]})
    stored = {**settings.to_dict(), "space": [c.to_dict() for c in space.configs]}
    with ResultStore.from_url(url) as store:
        sweep_id = store.create_sweep(workload, fingerprint, stored,
                                      f"keys-{database_key(url)}", 2)
        store.finish_sweep(sweep_id, "interrupted")
    return sweep_id, workload


def _spill_of_a(url: str, make: SimpleNamespace, fingerprint: dict[str, Any]) -> Path:
    """Database A's sweep 1 with a measured eager bf16 trial spilled (A could not take it)."""
    sweep_id, workload = _interrupted_sweep(url, fingerprint)
    assert sweep_id == 1
    record = make.record(0, config=BF16, workload=workload, fingerprint=fingerprint,
                         device="cpu")
    with ResultStore.from_url(url) as store:
        path = spill(store, record, sweep_id)
    assert path == spill_path(url, sweep_id, record["trial_uuid"])
    (kept,) = json.loads(path.read_text())
    assert kept["spilled_from"]["database"] == database_key(url)
    return path


@pytest.mark.slow
def test_resuming_b_leaves_the_spill_of_a_and_measures_its_own_config(
        backend: str, new_db_url: Callable[[], str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, make: SimpleNamespace) -> None:
    from advisor import fingerprint as fingerprints

    monkeypatch.chdir(tmp_path)  # where PostgreSQL databases spill (./advisor-spill)
    here = fingerprints.collect("cpu")
    if backend == "sqlite":  # A removed, and B made at the same path: the same spill folder
        url_b = url_a = f"sqlite:///{tmp_path / 'results.db'}"
        a_spill = _spill_of_a(url_a, make, here)
        for suffix in ("", "-wal", "-shm"):
            Path(f"{tmp_path / 'results.db'}{suffix}").unlink(missing_ok=True)
    else:  # two databases of one server: both spill into ./advisor-spill
        url_a, url_b = new_db_url(), new_db_url()
        a_spill = _spill_of_a(url_a, make, here)
    sweep_b, _ = _interrupted_sweep(url_b, here)
    assert sweep_b == 1 and a_spill.parent == spill_dir(url_b)

    done = sweep_support.advisor("sweep", WORKLOAD, "--db", url_b, "--resume", "--device", "cpu",
                                 cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr  # 1: no config passed is not this test's
    assert "Traceback" not in done.stderr
    said = " ".join(done.stderr.split())  # the notice's one line, as the terminal wrapped it
    assert said.count("not stored here, left where it is") == 1, done.stderr
    assert f"{a_spill} holds a trial of another" in said
    assert a_spill.exists()  # A's trial kept for A
    spilled_uuid = json.loads(a_spill.read_text())[0]["trial_uuid"]
    with ResultStore.from_url(url_b, read_only=True) as store:
        trials = store.trials(sweep_id=sweep_b)
    assert sorted(r["config_key"] for r in trials) == ["eager/bf16", "eager/fp32"]
    assert spilled_uuid not in {r["trial_uuid"] for r in trials}  # B's bf16 measured by B
    if backend == "postgres":  # A's own resume stores it
        with ResultStore.from_url(url_a) as store:
            assert store_spilled(store, 1) == 1
            assert [r["trial_uuid"] for r in store.trials(sweep_id=1)] == [spilled_uuid]
        assert not a_spill.exists()


def test_a_spill_carried_to_another_database_is_not_stored_there(
        new_db_url: Callable[[], str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        make: SimpleNamespace) -> None:
    """The same file copied by hand beside another database (SQLite or PostgreSQL): its key
    says whose it is; `advisor import` by hand still works, the sweep's uuid placing it."""
    monkeypatch.chdir(tmp_path)
    url_a, url_b = new_db_url(), new_db_url()
    with ResultStore.from_url(url_a) as a, ResultStore.from_url(url_b) as b:
        sweep_a = a.create_sweep(make.workload(), make.fingerprint(), {}, None)
        sweep_b = b.create_sweep(make.workload(), make.fingerprint(), {}, None)
        assert sweep_a == sweep_b == 1
        path = spill(a, make.record(0), sweep_a)
        carried = spill_dir(url_b) / path.name.replace(database_key(url_a), database_key(url_b))
        carried.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(path, carried)
        said: list[str] = []
        assert store_spilled(b, sweep_b, said.append) == 0
        assert b.trials() == [] and carried.exists()
        assert len(said) == 1 and "another database" in said[0] and a.masked_url in said[0]
    code, out, err = advisor("import", carried, "--db", url_a)  # by hand, into its own
    assert code == 0 and "imported 1 trials" in out, err
    with ResultStore.from_url(url_a) as a:
        (stored,) = a.trials()
    assert stored["sweep_id"] == sweep_a  # placed by its sweep's uuid
    assert "spilled_from" not in stored  # where it came from is not the record
