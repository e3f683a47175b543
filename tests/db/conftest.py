"""Fixtures of the results-database tests: realistic records, and a fresh database per test.

Every contract test runs against a SQLite file in tmp_path and, when ADVISOR_TEST_PG_URL names
a PostgreSQL server, against a scratch database created on that server for the test and
dropped afterwards. The fixtures are `support.stores`' (the reliability tests use them too); the
record builders are `support.records`'.
"""

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
