"""Fixtures of the reliability tests: the results-database fixtures of tests/db (a new database
of each backend, PostgreSQL when ADVISOR_TEST_PG_URL is set). Helpers: reliability_support.py."""

from __future__ import annotations

from reliability_support import HERE, load

db_helpers = load("advisor_tests_db_helpers", HERE.parent / "db" / "conftest.py")

# the fixtures of tests/db, for these tests too
backend = db_helpers.backend
new_db_url = db_helpers.new_db_url
db_url = db_helpers.db_url
pg_scratch = db_helpers.pg_scratch
sqlite_template = db_helpers.sqlite_template
store_url = db_helpers.store_url
store = db_helpers.store
make = db_helpers.make
