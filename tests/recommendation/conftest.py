"""Fixtures of the recommendation tests: this machine's fingerprint (the database per backend is
the suite's ``db_url``, tests/conftest.py)."""

from __future__ import annotations

import os
from typing import Any

import pytest


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
