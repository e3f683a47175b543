"""Schema revisions: upgrading released databases keeps their data; odd databases are refused."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from alembic import command
from sqlalchemy import MetaData, create_engine, update

from advisor.db import ResultStore, Revision, database_revision, head_revision, upgrade_database
from advisor.db.engine import parse_url
from advisor.db.schema import VERSION_TABLE, alembic_config, known_revisions
from advisor.errors import SchemaOutdated, StoreError

REPO = Path(__file__).parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "db"


def _fixture_script() -> ModuleType:
    path = FIXTURES / "make_advisor_0001.py"
    spec = importlib.util.spec_from_file_location("make_advisor_0001", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _engine(url: str) -> Any:
    return create_engine(parse_url(url))


def _assert_intact(url: str, expected: dict[str, Any]) -> None:
    """Every record and sweep of the fixture is there, as the store shows them at head."""
    with ResultStore.from_url(url) as store:
        trials = [{k: v for k, v in r.items() if k != "sweep_id"} for r in store.trials()]
        assert trials == expected["trials"]
        sweeps = {s["uuid"]: s for s in store.sweeps()}
        per_sweep = Counter(t["sweep_uuid"] for t in expected["trials"])
        for sweep in expected["sweeps"]:
            got = sweeps[sweep["uuid"]]
            assert {k: got[k] for k in sweep} == sweep
            assert got["host"] == sweep["fingerprint"]["hostname"]  # backfilled by 0002
            assert got["n_trials"] == per_sweep[sweep["uuid"]]
        groups = {
            (t["workload"]["name"], t["fingerprint"]["device_hash"])
            for t in expected["trials"]
            if t["passed"]
        }
        best = store.best_per_workload_device()  # needs the groups 0002 backfilled
        assert {(b["workload"], b["device_hash"]) for b in best} == groups
        record = {**expected["trials"][0], "trial_uuid": "0bd2a6f4-9d0e-4a43-9b8e-5a3f3c6c0001"}
        store.add_trial({k: v for k, v in record.items() if k != "sweep_uuid"})
        assert len(store.trials()) == len(expected["trials"]) + 1


def test_the_0001_fixture_is_refused_then_upgraded_with_its_data(tmp_path: Path) -> None:
    path = tmp_path / "advisor.db"
    shutil.copyfile(FIXTURES / "advisor-0001.sqlite", path)
    url = f"sqlite:///{path}"
    with pytest.raises(SchemaOutdated) as refused:
        ResultStore.from_url(url)
    message = str(refused.value)
    assert "\n" not in message and "revision 0001" in message
    assert f"run `advisor db upgrade --db {url}`" in message
    assert database_revision(url) == Revision("0001", head_revision())
    assert upgrade_database(url) == Revision("0001", head_revision())
    assert database_revision(url) == Revision(head_revision(), head_revision())
    _assert_intact(url, json.loads((FIXTURES / "advisor-0001.json").read_text()))


def test_upgrading_from_0001_keeps_the_data(db_url: str) -> None:
    script = _fixture_script()
    engine = _engine(db_url)
    with engine.begin() as connection:
        script.upgrade_to_0001(connection)
        expected = script.populate(connection)
    engine.dispose()
    with pytest.raises(SchemaOutdated, match="advisor db upgrade"):
        ResultStore.from_url(db_url)
    assert upgrade_database(db_url).current == "0001"
    _assert_intact(db_url, json.loads(json.dumps(expected)))


def test_head_names_the_newest_shipped_revision() -> None:
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(alembic_config())
    assert head_revision() == script.get_current_head() == known_revisions()[0]
    assert known_revisions() == ("0006", "0005", "0004", "0003", "0002", "0001")


def test_the_fixture_script_describes_the_committed_fixture() -> None:
    script = _fixture_script()
    committed = json.loads((FIXTURES / "advisor-0001.json").read_text())
    assert json.loads(json.dumps(script.expected(script.dataset()))) == committed


def test_migrations_go_down_and_up_again(db_url: str) -> None:
    ResultStore.from_url(db_url).close()
    engine = _engine(db_url)
    with engine.begin() as connection:
        command.downgrade(alembic_config(connection), "base")
    tables = MetaData()
    tables.reflect(engine)
    engine.dispose()
    assert set(tables.tables) == {VERSION_TABLE}
    assert upgrade_database(db_url).current is None
    assert ResultStore.from_url(db_url).revision() == head_revision()


def test_a_database_newer_than_this_advisor_is_refused(db_url: str) -> None:
    ResultStore.from_url(db_url).close()
    engine = _engine(db_url)
    tables = MetaData()
    tables.reflect(engine, only=[VERSION_TABLE])
    with engine.begin() as connection:
        connection.execute(update(tables.tables[VERSION_TABLE]).values(version_num="0999"))
    engine.dispose()
    with pytest.raises(StoreError, match="revision 0999, which this advisor does not know") as e:
        ResultStore.from_url(db_url)
    assert not isinstance(e.value, SchemaOutdated)


def test_advisor_tables_not_made_by_migrations_are_refused(tmp_path: Path) -> None:
    from advisor.db.models import Base

    url = f"sqlite:///{tmp_path / 'handmade.db'}"
    engine = create_engine(url)
    Base.metadata.create_all(engine)
    engine.dispose()
    with pytest.raises(StoreError, match="not created by advisor's migrations"):
        ResultStore.from_url(url)


def test_the_migrations_work_from_an_installed_wheel(tmp_path: Path) -> None:
    source = tmp_path / "src"
    for part in ("advisor", "migrations"):
        shutil.copytree(REPO / part, source / part, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        if (REPO / name).exists():
            shutil.copy(REPO / name, source / name)
    pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", tmp_path / "dist",
                    source], check=True, capture_output=True)  # fmt: skip
    wheel = next((tmp_path / "dist").glob("advisor-*.whl"))
    site = tmp_path / "site"
    subprocess.run([*pip, "install", "--no-deps", "--target", site, wheel], check=True)
    probe = (
        "import migrations; from advisor.db import ResultStore;"
        "s = ResultStore.from_url('sqlite:///installed.db');"
        "print(migrations.__file__); print(s.revision())"
    )
    run = tmp_path / "elsewhere"
    run.mkdir()
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=run, env={"PYTHONPATH": str(site)}, check=True,
        capture_output=True, text=True,
    ).stdout.split()  # fmt: skip
    assert out == [str(site / "migrations" / "__init__.py"), head_revision()]
