"""advisor's results database: one store API over SQLite or PostgreSQL, schema by Alembic.

    from advisor.db import ResultStore
    store = ResultStore.from_url("postgresql+psycopg://user@host/db")

Nothing outside this package writes SQL; everything goes through `ResultStore`.

    store.py     ResultStore (the API), upgrade_database, database_revision
    models.py    the tables (SQLAlchemy 2 typed ORM), all prefixed advisor_
    schema.py    Alembic revisions: find the shipped migrations, check, create, upgrade
    engine.py    URLs (which database, masked for messages), engines, one-line errors
    rows.py      trial records <-> rows;  writes.py, queries.py: the statements
    transfer.py  export files (JSON, CSV)
    retry.py     the backoff of a write the database is too busy or away to take
    spill.py     a sweep's trial write: retried, else spilled to a file its --resume stores
    studies.py   Optuna's storage at the boundary: its errors retried, then one line
"""

from advisor.db.engine import display_url, masked_url, resolve_url
from advisor.db.schema import Revision, head_revision
from advisor.db.store import ResultStore, database_revision, upgrade_database

__all__ = [
    "ResultStore",
    "Revision",
    "database_revision",
    "display_url",
    "head_revision",
    "masked_url",
    "resolve_url",
    "upgrade_database",
]
