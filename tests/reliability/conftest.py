"""Fixtures of the reliability tests: the results-database fixtures of tests/db (a new database
of each backend, PostgreSQL when ADVISOR_TEST_PG_URL is set). Helpers: reliability_support.py."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _load(name: str, path: Path):  # type: ignore[no-untyped-def]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


db_helpers = _load("advisor_tests_db_helpers", HERE.parent / "db" / "conftest.py")
sweep_support = _load("advisor_tests_sweep_support", HERE.parent / "sweep" / "sweep_support.py")

# the fixtures of tests/db, for these tests too
backend = db_helpers.backend
new_db_url = db_helpers.new_db_url
db_url = db_helpers.db_url
pg_scratch = db_helpers.pg_scratch
sqlite_template = db_helpers.sqlite_template
store_url = db_helpers.store_url
store = db_helpers.store
make = db_helpers.make
