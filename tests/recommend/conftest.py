"""Fixtures of the recommendation tests: this machine's fingerprint, a database per backend."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from recommend_support import db_builders

PG_ENV = "ADVISOR_TEST_PG_URL"


@pytest.fixture(scope="session")
def cpu_fp() -> dict[str, Any]:
    """The real fingerprint of this machine's CPU (as a trial child collects it)."""
    from advisor import fingerprint

    saved = os.environ.pop("ADVISOR_FINGERPRINT_OVERRIDES", None)
    try:
        return fingerprint.collect("cpu")
    finally:
        if saved is not None:
            os.environ["ADVISOR_FINGERPRINT_OVERRIDES"] = saved


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A new, empty database: a SQLite file, or a scratch PostgreSQL database (dropped after)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'advisor.db'}"
        return
    server = os.environ.get(PG_ENV)
    if not server:
        pytest.skip(f"needs a PostgreSQL server: set {PG_ENV}")
    builders = db_builders()
    url = builders.create_pg_database(server)
    yield url
    builders.drop_pg_database(server, url)
