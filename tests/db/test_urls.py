"""Which database a URL names, and the one-line errors for those that cannot be used."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from advisor.db import ResultStore, database_revision, display_url, masked_url, resolve_url
from advisor.errors import SchemaOutdated, StoreError

SECRET = "s3cr3t-Pa55"


def _refused(url: str) -> str:
    with pytest.raises(StoreError) as refused:
        ResultStore.from_url(url)
    message = str(refused.value)
    assert "\n" not in message
    assert SECRET not in message and SECRET not in repr(refused.value)
    assert not isinstance(refused.value, SchemaOutdated)
    return message


def _pg_url(**parts: object) -> str:
    server = os.environ.get("ADVISOR_TEST_PG_URL")
    if not server:
        pytest.skip("needs a PostgreSQL server: set ADVISOR_TEST_PG_URL")
    return make_url(server).set(**parts).render_as_string(hide_password=False)  # type: ignore[arg-type]


def test_passwords_are_masked() -> None:
    url = f"postgresql+psycopg://bob:{SECRET}@db.example:5432/results"
    assert masked_url(url) == "postgresql+psycopg://bob:***@db.example:5432/results"
    assert masked_url(f"mysql://bob:{SECRET}@host/x") == "mysql://bob:***@host/x"
    assert masked_url(f"not a url://bob:{SECRET}@host/x") == "not a url://bob:***@host/x"
    assert display_url(f"postgresql://bob:{SECRET}@h/d") == "postgresql+psycopg://bob:***@h/d"
    assert masked_url("sqlite:///advisor.db") == "sqlite:///advisor.db"


def test_the_default_database_is_advisor_db_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ADVISOR_DB_URL", raising=False)
    assert resolve_url() == "sqlite:///advisor.db"
    with ResultStore.from_url() as store:
        assert store.url == store.masked_url == "sqlite:///advisor.db"
    assert (tmp_path / "advisor.db").exists()
    monkeypatch.setenv("ADVISOR_DB_URL", "sqlite:///other.db")
    with ResultStore.from_url() as store:
        assert store.url == "sqlite:///other.db"
    assert ResultStore.from_url("sqlite:///given.db").url == "sqlite:///given.db"


def test_an_unknown_dialect_is_refused() -> None:
    message = _refused(f"mysql://bob:{SECRET}@localhost/results")
    assert message.startswith("unsupported database URL 'mysql://bob:***@localhost/results'")
    assert "sqlite:///path.db" in message and "postgresql+psycopg://" in message
    assert "postgresql+psycopg" in _refused(f"postgresql+psycopg2://bob:{SECRET}@h/d")


def test_a_malformed_url_is_refused() -> None:
    assert _refused("advisor.db").startswith("malformed database URL 'advisor.db'")
    assert "malformed" in _refused(f"://bob:{SECRET}@")


def test_an_unreachable_server_is_one_line_with_the_password_masked() -> None:
    message = _refused(f"postgresql://bob:{SECRET}@127.0.0.1:1/results")
    assert message.startswith("cannot connect to postgresql+psycopg://bob:***@127.0.0.1:1/results")
    assert "Connection refused" in message and "ADVISOR_DB_URL" in message


@pytest.mark.postgres
def test_a_missing_database_is_refused() -> None:
    message = _refused(_pg_url(database="advisor_no_such_database", password=SECRET))
    assert 'database "advisor_no_such_database" does not exist' in message


@pytest.mark.postgres
def test_an_unknown_user_is_refused() -> None:
    message = _refused(_pg_url(username="advisor_no_such_role", password=SECRET))
    assert 'role "advisor_no_such_role" does not exist' in message


@pytest.mark.postgres
def test_postgresql_urls_are_rewritten_to_psycopg_3(pg_scratch: str) -> None:
    plain = make_url(pg_scratch).set(drivername="postgresql")
    with ResultStore.from_url(plain.render_as_string(hide_password=False)) as store:
        assert store.url.startswith("postgresql+psycopg://")
        assert store.dialect == "postgresql"


def test_sqlite_in_a_missing_directory_is_refused(tmp_path: Path) -> None:
    message = _refused(f"sqlite:///{tmp_path}/missing/advisor.db")
    assert "its directory does not exist" in message


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("these are my notes, not a database\n" * 100)
    assert "not a database" in _refused(f"sqlite:///{path}")


def test_asking_the_revision_does_not_create_a_database(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/later.db"
    assert database_revision(url).current is None
    assert not (tmp_path / "later.db").exists()


def test_create_false_leaves_a_new_database_alone(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/x.db"
    with pytest.raises(SchemaOutdated, match=r"holds no advisor results yet: if a first sweep"):
        ResultStore.from_url(url, create=False)
    assert database_revision(url).current is None


def test_a_postgresql_url_without_its_driver_names_the_extra_to_install() -> None:
    import subprocess
    import sys

    code = ("import sys; sys.modules['psycopg'] = None\n"
            "from advisor.db.engine import make_engine, parse_url\n"
            "from advisor.errors import StoreError\n"
            "try:\n"
            "    make_engine(parse_url('postgresql://bob@127.0.0.1:1/x'))\n"
            "except StoreError as e:\n"
            "    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'advisor[postgres]'" in out.stdout
