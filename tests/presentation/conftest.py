"""Fixtures of the report, check and output-format tests: the dashboard's seeded database (real
SQLite, written through the store as sweeps write it) and the CLI run in this process."""

from __future__ import annotations

import pytest
from support.seed import seed


@pytest.fixture(scope="session")
def seeded_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A SQLite file with the seeded trials; shared, so tests only read it."""
    url = f"sqlite:///{tmp_path_factory.mktemp('seeded') / 'results.db'}"
    seed(url).close()
    return url
