"""The one backend parametrization of the suite: every test that takes a database runs on a
SQLite file and on a scratch PostgreSQL database of the server ``ADVISOR_TEST_PG_URL`` names
(made for the test, dropped after it; the PostgreSQL case skips itself without a server).
`tests/conftest.py` offers it as the ``db_url`` fixture; `support.stores` builds the
store fixtures on the same helpers."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

PG_ENV = "ADVISOR_TEST_PG_URL"
PG_SKIP = (
    f"needs a PostgreSQL server: set {PG_ENV} (e.g. postgresql+psycopg://postgres@127.0.0.1/test)"
)
BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def pg_server() -> str:
    """The server URL of ``ADVISOR_TEST_PG_URL``; the test is skipped without one."""
    url = os.environ.get(PG_ENV)
    if not url:
        pytest.skip(PG_SKIP)
    return url


def _admin(server: str) -> Any:
    url = make_url(server)
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    return create_engine(url, isolation_level="AUTOCOMMIT")


def create_pg_database(server: str) -> str:
    """A new, empty database on the server of ``server``; returns its URL."""
    name = f"advisor_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    admin = _admin(server)
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return make_url(server).set(database=name).render_as_string(hide_password=False)


def drop_pg_database(server: str, url: str) -> None:
    """Drop the database of ``url`` through the server URL ``server``."""
    admin = _admin(server)
    with admin.connect() as connection:
        name = make_url(url).database
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def new_database(backend: str, folder: Path, name: str = "advisor.db") -> str:
    """The URL of a new, empty database of ``backend``: a SQLite file in ``folder``, or a scratch
    PostgreSQL database (the caller drops it with `drop_database`)."""
    if backend == "sqlite":
        return f"sqlite:///{folder / name}"
    return create_pg_database(pg_server())


def drop_database(url: str) -> None:
    """Drop a scratch PostgreSQL database `new_database` made (a SQLite file stays with its
    folder)."""
    if url.startswith("postgresql"):
        drop_pg_database(pg_server(), url)
