"""Schema revisions through Alembic: find the shipped migrations, check, create, upgrade.

The migrations are the top-level ``migrations`` package (``env.py`` + ``versions/``), found by
import so they work from an installed wheel as well as from a checkout. Alembic is configured
in code; its version table is ``advisor_alembic_version`` (Optuna keeps its own
``alembic_version`` in the same database). Creating or upgrading the schema holds a database
lock (``BEGIN IMMEDIATE`` on SQLite, an advisory lock on PostgreSQL), so processes that open a
new database at the same time do not race.

Opening a database at head only reads its version table: Alembic is imported when a schema is
created or upgraded, so commands that just use the store start fast.

Optuna's tables (its RDB storage shares the database) are created once as well, by
`ensure_optuna` under a lock that spans processes: on PostgreSQL a session advisory lock, on
SQLite an advisory ``flock`` of the database file's directory (no file is added; a SQLite
write lock cannot be held there, since Optuna writes through connections of its own). Optuna
creates its tables on first use without a lock, and processes that do so at the same time
fail; `advisor db upgrade` and every sweep call `ensure_optuna` before Optuna opens the study.
"""

from __future__ import annotations

import fcntl
import importlib
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Column, Connection, Engine, MetaData, String, Table, inspect, select, text

from advisor import settings
from advisor.db.engine import WRITE_OPTION, masked_url
from advisor.errors import SchemaOutdated, StoreError

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from alembic.config import Config

# The newest revision in migrations/versions; bump it with every new revision (a test checks).
HEAD = "0006"
VERSION_TABLE = "advisor_alembic_version"
TABLE_PREFIX = "advisor_"
_VERSIONS = Table(VERSION_TABLE, MetaData(), Column("version_num", String(32), primary_key=True))
_LOCK_KEY = 0x616476697372  # "advisr": one lock id for every advisor schema change
_OPTUNA_LOCK_KEY = _LOCK_KEY + 1  # Optuna's tables, created once (a session lock)
OPTUNA_TABLES = ("studies", "trials", "version_info", "alembic_version")


@dataclass(frozen=True)
class Revision:
    """Where a database stands: its revision (None: no advisor schema) and this advisor's head."""

    current: str | None
    head: str

    @property
    def at_head(self) -> bool:
        return self.current == self.head


def migrations_dir() -> Path:
    """The directory of the shipped Alembic migrations (the ``migrations`` package)."""
    try:
        package = importlib.import_module("migrations")
    except ImportError as e:
        raise StoreError("advisor's migrations package is missing: reinstall advisor") from e
    if not getattr(package, "ADVISOR_MIGRATIONS", False) or not package.__file__:
        raise StoreError(
            f"the 'migrations' package at {package.__file__} is not advisor's: "
            "another package of that name shadows it"
        )
    return Path(package.__file__).parent


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic Config for the shipped migrations, bound to ``connection`` when given."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    config.set_main_option("version_table", VERSION_TABLE)
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    """The schema revision this advisor works with."""
    return HEAD


@cache
def known_revisions() -> tuple[str, ...]:
    """Every revision of the shipped migrations, newest first."""
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(alembic_config())
    return tuple(r.revision for r in script.walk_revisions())


def revision_of(connection: Connection) -> Revision:
    """The advisor schema revision of the database behind ``connection``."""
    current = None
    if inspect(connection).has_table(VERSION_TABLE):
        current = connection.scalar(select(_VERSIONS.c.version_num))
    return Revision(current, HEAD)


def check(engine: Engine, *, create: bool = True) -> Revision:
    """Make sure the database is at head: create a new one, refuse an outdated one. A reader
    (``create`` False) that finds no schema waits, up to `CREATING_WAIT_S`, for a schema
    another process is creating (a first sweep holds the schema lock meanwhile)."""
    with engine.connect() as connection:
        revision = revision_of(connection)
    if revision.at_head:
        return revision
    if revision.current is None and create:
        upgrade(engine, only_if_new=True)
        return Revision(revision.head, revision.head)
    creating = False
    if revision.current is None:
        creating = not wait_for_schema(engine)
        with engine.connect() as connection:
            revision = revision_of(connection)
        if revision.at_head:
            return revision
    raise _not_at_head(engine, revision, creating)


CREATING_WAIT_S = 30.0  # how long a reader waits for a schema another process is creating


def wait_for_schema(engine: Engine, wait_s: float | None = None) -> bool:
    """Wait until no process holds the schema lock (`_schema_lock`: a first sweep creating the
    schema), at most ``wait_s`` (default `CREATING_WAIT_S`); True when it was free or freed,
    False when still held. A database this process cannot lock (a read-only SQLite file)
    counts as free."""
    wait_s = CREATING_WAIT_S if wait_s is None else wait_s
    try:
        with engine.connect() as connection:
            if engine.dialect.name == "postgresql":
                with connection.begin():
                    connection.execute(text(f"SET LOCAL lock_timeout = {round(wait_s * 1000)}"))
                    connection.execute(text("SELECT pg_advisory_xact_lock(:k)"),
                                       {"k": _LOCK_KEY})
                return True
            driver = connection.connection.driver_connection
            assert driver is not None
            driver.execute(f"PRAGMA busy_timeout={round(wait_s * 1000)}")
            try:  # a writer's transaction (the schema's creation) ends before this begins
                driver.execute("BEGIN IMMEDIATE")
                driver.execute("ROLLBACK")
            finally:
                driver.execute(f"PRAGMA busy_timeout={round(settings.db_busy_timeout_s() * 1000)}")
            return True
    except Exception as e:  # noqa: BLE001 - locked past the wait, or a database it cannot lock
        text_ = str(e).lower()
        return not ("lock" in text_ and ("timeout" in text_ or "locked" in text_))


def upgrade(engine: Engine, *, only_if_new: bool = False) -> Revision:
    """Upgrade the database to head under a lock; returns the revision it was at before."""
    with _schema_lock(engine) as connection:
        before = revision_of(connection)
        if before.at_head:
            return before
        if before.current is None:
            _refuse_unversioned(connection, engine)
        elif only_if_new:
            raise _not_at_head(engine, before)
        _known_revision(before, engine)
        from alembic import command

        log.info("%s: schema %s %s", masked_url(engine.url),
                 "created at" if before.current is None else f"upgraded from {before.current} to",
                 before.head)
        command.upgrade(alembic_config(connection), "head")
    return before


@contextmanager
def _schema_lock(engine: Engine) -> Iterator[Connection]:
    """A connection in a transaction that holds the schema lock; commits on success."""
    sqlite = engine.dialect.name == "sqlite"
    with engine.connect() as connection:
        connection.execution_options(**{WRITE_OPTION: True})
        if sqlite:
            # Batch migrations copy tables and foreign keys would cascade; the pragma only
            # works outside a transaction, hence on the driver connection before BEGIN.
            _driver_execute(connection, "PRAGMA foreign_keys=OFF")
        try:
            with connection.begin():
                if not sqlite:
                    connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _LOCK_KEY})
                yield connection
        finally:
            if sqlite:
                _driver_execute(connection, "PRAGMA foreign_keys=ON")


def optuna_ready(engine: Engine) -> bool:
    """Whether Optuna's tables exist and are stamped (Optuna stamps its version last)."""
    with engine.connect() as connection:
        names = set(inspect(connection).get_table_names())
        if not set(OPTUNA_TABLES) <= names:
            return False
        return bool(connection.scalar(text("SELECT count(*) FROM alembic_version")))


def ensure_optuna(engine: Engine, url: str) -> bool:
    """Create Optuna's tables in the database at ``url`` once, under a lock that spans
    processes (see the module docstring); True when this call created them."""
    if optuna_ready(engine):
        return False
    with _process_lock(engine):
        if optuna_ready(engine):
            return False
        import optuna

        kwargs: dict[str, object] = {}
        if engine.dialect.name == "sqlite":
            kwargs["engine_kwargs"] = {"connect_args": {"timeout": settings.db_busy_timeout_s()}}
        storage = optuna.storages.RDBStorage(url, **kwargs)  # type: ignore[arg-type]
        storage.engine.dispose()
    log.info("%s: Optuna's tables created", masked_url(engine.url))
    return True


@contextmanager
def _process_lock(engine: Engine) -> Iterator[None]:
    """A lock that spans processes, held while nothing else is written through ``engine``."""
    if engine.dialect.name == "postgresql":
        with engine.connect() as connection:
            connection.execute(text("SELECT pg_advisory_lock(:k)"), {"k": _OPTUNA_LOCK_KEY})
            connection.commit()
            try:
                yield
            finally:
                connection.execute(text("SELECT pg_advisory_unlock(:k)"),
                                   {"k": _OPTUNA_LOCK_KEY})
                connection.commit()
        return
    database = engine.url.database
    if not database or database == ":memory:":
        yield
        return
    fd = os.open(Path(database).resolve().parent, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def analyze(engine: Engine) -> None:
    """Refresh the query planner's statistics of advisor's tables."""
    from advisor.db.models import Base

    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            names = ", ".join(t.name for t in Base.metadata.sorted_tables)
            connection.exec_driver_sql(f"ANALYZE {names}")
        else:
            for table in Base.metadata.sorted_tables:
                connection.exec_driver_sql(f"ANALYZE {table.name}")


def _driver_execute(connection: Connection, statement: str) -> None:
    driver = connection.connection.driver_connection
    assert driver is not None
    driver.execute(statement)


def _refuse_unversioned(connection: Connection, engine: Engine) -> None:
    tables = [t for t in inspect(connection).get_table_names() if t.startswith(TABLE_PREFIX)]
    if tables and tables != [VERSION_TABLE]:
        raise StoreError(
            f"{masked_url(engine.url)} has advisor tables but no {VERSION_TABLE}: it was not "
            "created by advisor's migrations; use another database"
        )


def _known_revision(revision: Revision, engine: Engine) -> None:
    if revision.current is not None and revision.current not in known_revisions():
        raise StoreError(
            f"{masked_url(engine.url)} is at schema revision {revision.current}, which this "
            f"advisor does not know (its newest is {revision.head}): upgrade advisor"
        )


def _not_at_head(engine: Engine, revision: Revision, creating: bool = False) -> StoreError:
    _known_revision(revision, engine)
    where = masked_url(engine.url)
    if revision.current is None and creating:
        return SchemaOutdated(
            f"the results database {where} is being created (another process holds its schema "
            f"lock past {CREATING_WAIT_S:.0f} s); try again once it is done"
        )
    if revision.current is None:
        return SchemaOutdated(
            f"the results database {where} holds no advisor results yet: if a first sweep is "
            f"starting, the database is being created; try again in a moment (else run a sweep "
            f"first, or `advisor db upgrade --db {where}`)"
        )
    return SchemaOutdated(
        f"the results database {where} is at schema revision {revision.current}, this advisor "
        f"needs {revision.head}: run `advisor db upgrade --db {where}`"
    )
