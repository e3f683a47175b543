"""Fixtures of the reliability tests: the results-database fixtures the store's tests use (a new
database of each backend, PostgreSQL when ADVISOR_TEST_PG_URL is set). Helpers:
reliability_support.py."""

from support.stores import (  # noqa: F401 - fixtures, registered by being imported here
    backend,
    db_url,
    make,
    new_db_url,
    pg_scratch,
    sqlite_template,
    store,
    store_url,
)
