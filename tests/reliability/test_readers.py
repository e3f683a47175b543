"""Readers never create or convert a database: `list`, `show`, `recommend`, `compare`, `export`
and the dashboard's reads on a mistyped SQLite path give one line naming the path and the fix
(exit code 2) and create no file; reading a SQLite file leaves its journal mode as it is."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from reliability_support import advisor, one_line_error

from advisor.db import ResultStore
from advisor.errors import StoreError

ROOT = Path(__file__).resolve().parents[2]
READERS = [
    ("list",),
    ("show", "1"),
    ("recommend", "tiny-mlp"),
    ("compare", "tiny-mlp"),
    ("export",),
]


@pytest.mark.parametrize("command", READERS, ids=[c[0] for c in READERS])
def test_a_reader_on_a_missing_sqlite_file_fails_and_creates_nothing(
    command: tuple[str, ...], tmp_path: Path
) -> None:
    path = tmp_path / "mistyped.db"
    code, out, err = advisor(*command, "--db", f"sqlite:///{path}")
    message = one_line_error(code, err)
    assert str(path) in message
    assert "advisor db upgrade" in message and "advisor sweep" in message
    assert out == ""
    assert list(tmp_path.iterdir()) == []  # no database, no -wal, no -journal


def test_a_reader_on_a_file_without_advisor_tables_does_not_create_them(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    sqlite3.connect(path).execute("CREATE TABLE notes (x INTEGER)").connection.close()
    message = one_line_error(*_code_err(advisor("list", "--db", f"sqlite:///{path}")))
    assert "advisor db upgrade" in message
    with sqlite3.connect(path) as c:
        assert [r[0] for r in c.execute("SELECT name FROM sqlite_master")] == ["notes"]


def _code_err(done: tuple[int, str, str]) -> tuple[int, str]:
    return done[0], done[2]


def _rollback_journal_db(path: Path) -> str:
    url = f"sqlite:///{path}"
    ResultStore.from_url(url).close()  # a writer: at head, in WAL mode
    with sqlite3.connect(path) as c:
        assert c.execute("PRAGMA journal_mode=DELETE").fetchone() == ("delete",)
    return url


def _journal_mode(path: Path) -> str:
    with sqlite3.connect(path) as c:
        return str(c.execute("PRAGMA journal_mode").fetchone()[0])


def test_reading_does_not_switch_a_sqlite_file_to_wal(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    url = _rollback_journal_db(path)
    for command in (("list",), ("list", "--json"), ("export",)):
        code, _, err = advisor(*command, "--db", url)
        assert code == 0, err
    with ResultStore.from_url(url, read_only=True) as store:
        assert store.sweeps() == [] and store.trials() == []
    assert _journal_mode(path) == "delete"
    with ResultStore.from_url(url) as store:  # a writer still switches it
        store.sweeps()
    assert _journal_mode(path) == "wal"


def test_read_only_store_refuses_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.db"
    with pytest.raises(StoreError, match="no results database at"):
        ResultStore.from_url(f"sqlite:///{path}", read_only=True)
    assert not path.exists()


def test_the_dashboard_reads_create_and_convert_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dashboard import data

    missing = tmp_path / "missing.db"
    monkeypatch.setenv("ADVISOR_DB_URL", f"sqlite:///{missing}")
    assert data.database().state == "missing"  # an error page with the fix, nothing created
    assert not missing.exists()
    path = tmp_path / "results.db"
    url = _rollback_journal_db(path)
    monkeypatch.setenv("ADVISOR_DB_URL", url)
    data.forget_state()
    assert data.database().state == "empty"
    assert data.workloads(url) == []
    assert _journal_mode(path) == "delete"
