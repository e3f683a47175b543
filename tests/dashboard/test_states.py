"""What every page shows when there is nothing to show: an empty or missing database (how to
run the first sweep), and one that cannot be read (one message, password masked)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from advisor.db import ResultStore

Run = Callable[..., AppTest]
PAGES = ("recommendations", "workload", "fleet", "sweeps")


def _shows_first_sweep(at: AppTest, url: str) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error
    assert len(at.info) == 1 and "No results in" in at.info[0].value
    assert at.code[0].value == f"advisor sweep workloads/reranker.py --db {url}"
    assert not at.get("vega_lite_chart") and not at.dataframe


@pytest.mark.parametrize("page", PAGES)
def test_a_missing_database_is_an_error_with_the_fix_and_creates_nothing(
    run_page: Run, tmp_path: Path, page: str
) -> None:
    """A mistyped --db path: an error, as every advisor reader answers it (exit 2), not "no
    results yet"; with the fix (check the path, or the first sweep that creates it)."""
    path = tmp_path / "none-yet.db"
    url = f"sqlite:///{path}"
    at = run_page(url, page)
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.error) == 1 and not at.info
    assert at.error[0].value.startswith(f"There is no results database at {path}: check the "
                                        "path given to `advisor dashboard --db`")
    assert at.code[0].value == f"advisor sweep workloads/reranker.py --db {url}"
    assert not at.get("vega_lite_chart") and not at.dataframe
    assert not path.exists()  # read-only: the dashboard never creates a database


def test_database_without_trials_shows_the_first_sweep(run_page: Run, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    ResultStore.from_url(url).close()  # advisor's tables, no results
    for page in PAGES:
        _shows_first_sweep(run_page(url, page), url)


def _one_error(at: AppTest) -> str:
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.error) == 1
    assert not at.get("vega_lite_chart") and not at.dataframe and not at.title
    return at.error[0].value


@pytest.mark.parametrize("page", PAGES)
def test_unreachable_database_is_one_message_without_the_password(run_page: Run, page: str) -> None:
    url = "postgresql+psycopg://advisor:s3cret-pw@127.0.0.1:1/results"
    message = _one_error(run_page(url, page))
    assert message.startswith("Cannot read the results database. cannot connect to ")
    assert "advisor:***@127.0.0.1:1/results" in message
    assert "s3cret-pw" not in message
    assert "s3cret-pw" not in " ".join(c.value for c in run_page(url, page).sidebar.caption)


def test_sqlite_file_in_a_missing_directory_is_one_message(run_page: Run, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'no' / 'such' / 'dir' / 'results.db'}"
    message = _one_error(run_page(url))
    assert "its directory does not exist" in message


def test_outdated_schema_says_how_to_upgrade(run_page: Run, tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    ResultStore.from_url(f"sqlite:///{path}").close()
    with sqlite3.connect(path) as connection:  # pretend it was made by an older advisor
        connection.execute("UPDATE advisor_alembic_version SET version_num = '0001'")
    message = _one_error(run_page(f"sqlite:///{path}", "fleet"))
    assert "schema revision 0001" in message and "advisor db upgrade" in message
