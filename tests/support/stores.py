"""The results-database fixtures the store's tests and the reliability tests share (their
conftests import them): a new database of each backend per test (`backend`, `new_db_url`,
`db_url`), one at head holding no results (`store_url`, `store`), and the record builders of
`support.records` as `make`. PostgreSQL when ADVISOR_TEST_PG_URL names a server."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from sqlalchemy import MetaData, create_engine

from advisor.db import ResultStore
from support.backends import BACKENDS, create_pg_database, drop_pg_database, pg_server
from support.records import CONFIGS, as_stored, make_fingerprint, make_record, make_workload


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def new_db_url(backend: str, tmp_path: Path) -> Iterator[Callable[[], str]]:
    """Makes URLs of new, empty databases of the test's backend (dropped afterwards)."""
    made: list[str] = []

    def make() -> str:
        if backend == "sqlite":
            url = f"sqlite:///{tmp_path / f'advisor-{len(made)}.db'}"
        else:
            url = create_pg_database(pg_server())
        made.append(url)
        return url

    yield make
    for url in made:
        if url.startswith("postgresql"):
            drop_pg_database(pg_server(), url)


@pytest.fixture
def db_url(new_db_url: Callable[[], str]) -> str:
    """The URL of a new, empty database of the test's backend (no advisor tables yet)."""
    return new_db_url()


@pytest.fixture(scope="session")
def pg_scratch() -> Iterator[str]:
    """One scratch PostgreSQL database for this test run, at head; dropped at the end."""
    server = pg_server()
    url = create_pg_database(server)
    ResultStore.from_url(url).close()
    yield url
    drop_pg_database(server, url)


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file at head with no data, copied for each test that needs one."""
    path = tmp_path_factory.mktemp("template") / "advisor.db"
    ResultStore.from_url(f"sqlite:///{path}").close()
    return path


def empty_tables(url: str) -> None:
    """Delete every advisor row and drop every other table (Optuna's) of a database."""
    engine = create_engine(url)
    tables = MetaData()
    tables.reflect(engine)
    ours = [t for t in tables.sorted_tables if t.name.startswith("advisor_")]
    with engine.begin() as connection:
        for table in reversed(ours):
            if table.name != "advisor_alembic_version":
                connection.execute(table.delete())
        others = [t for t in tables.sorted_tables if t not in ours]
        tables.drop_all(connection, tables=others)
    engine.dispose()


@pytest.fixture
def store_url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """The URL of a database at head holding no results."""
    if backend == "sqlite":
        path = tmp_path / "store.db"
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        return f"sqlite:///{path}"
    url = request.getfixturevalue("pg_scratch")
    empty_tables(url)
    return url


@pytest.fixture
def store(store_url: str) -> Iterator[ResultStore]:
    with ResultStore.from_url(store_url) as opened:
        yield opened


@pytest.fixture
def make() -> SimpleNamespace:
    """The record builders: make.record(i, ...), make.fingerprint(i), make.workload(name),
    make.stored(record, sweep_id, sweep_uuid), make.configs."""
    return SimpleNamespace(
        record=make_record,
        fingerprint=make_fingerprint,
        workload=make_workload,
        stored=as_stored,
        configs=CONFIGS,
    )
