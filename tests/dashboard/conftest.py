"""Fixtures of the dashboard tests: a seeded results database, and the app run by AppTest.

The app is run in this process by Streamlit's AppTest, reading the database that
$ADVISOR_DB_URL names, exactly as `advisor dashboard` passes it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

import streamlit as st  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402
from support.backends import create_pg_database, drop_pg_database, pg_server  # noqa: E402
from support.seed import seed, seeded_file  # noqa: E402

APP = ROOT / "dashboard" / "app.py"


@pytest.fixture(autouse=True)
def _seeded_sweeps_stay_alive(monkeypatch: pytest.MonkeyPatch) -> None:
    """The seed's running sweep has no process beating for it: it must not turn dead (no
    heartbeat for 120 s) while a long session runs."""
    monkeypatch.setenv("ADVISOR_SWEEP_DEAD_AFTER_S", str(30 * 86400))


@pytest.fixture(scope="session")
def seeded_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A SQLite file with the seeded trials (support.seed), shared: the dashboard only reads."""
    return seeded_file(tmp_path_factory.mktemp("seeded"))


@pytest.fixture(scope="session")
def pg_seeded_url() -> Iterator[str]:
    """The same data set in a scratch PostgreSQL database (dropped afterwards)."""
    url = create_pg_database(pg_server())
    try:
        seed(url).close()
        yield url
    finally:
        drop_pg_database(pg_server(), url)


@pytest.fixture
def run_page(monkeypatch: pytest.MonkeyPatch) -> Callable[..., AppTest]:
    """run_page(url, page): the app on ``url`` after one run of ``page`` (None: the default)."""

    def run(url: str, page: str | None = None) -> AppTest:
        monkeypatch.setenv("ADVISOR_DB_URL", url)
        st.cache_data.clear()
        at = AppTest.from_file(str(APP), default_timeout=60).run()
        if page is not None:
            at.switch_page(f"views/{page}.py").run()
        return at

    return run
