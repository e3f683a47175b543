"""Fixtures of the terminal tests: the fleet-size seed (tests/support/seed.py)."""

from __future__ import annotations

import pytest
from support.seed import seed_fleet


@pytest.fixture(scope="session")
def fleet_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The fleet-size seed: three workloads on twelve devices, 2,880 trials (read only; no
    Optuna studies: the terminal reads none)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('fleet') / 'fleet.db'}"
    seed_fleet(url, studies=False).close()
    return url
