"""Database URLs and engines: which URL, which dialect, masked for messages, errors in one line.

Only SQLite (``sqlite:///path.db``) and PostgreSQL through psycopg 3
(``postgresql+psycopg://user:password@host:port/db``; ``postgresql://`` and ``postgres://`` are
rewritten to it) are supported. SQLite connections use WAL, a busy timeout and ``BEGIN
IMMEDIATE`` for writes, so several processes can write to one file at once.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError, StatementError

from advisor.errors import StoreError

DEFAULT_URL = "sqlite:///advisor.db"
ENV_VAR = "ADVISOR_DB_URL"
SQLITE_BUSY_TIMEOUT_MS = 60_000
PG_CONNECT_TIMEOUT_S = 10
URL_HINT = "use sqlite:///path.db or postgresql+psycopg://user:password@host:port/dbname"
# An execution option: a connection that carries it begins with BEGIN IMMEDIATE on SQLite.
WRITE_OPTION = "advisor_write"

_PG_SCHEMES = {"postgresql", "postgres", "postgresql+psycopg"}
_SQLITE_SCHEMES = {"sqlite", "sqlite+pysqlite"}
_PASSWORD_IN_URL = re.compile(r"(://[^:/@?#]*:)[^@/?#]*@")


def resolve_url(url: str | None = None) -> str:
    """The URL to use: ``url``, else ``$ADVISOR_DB_URL``, else ``sqlite:///advisor.db``."""
    return url or os.environ.get(ENV_VAR) or DEFAULT_URL


def masked_url(url: str | URL) -> str:
    """``url`` with its password replaced by ``***``, safe for any message or log."""
    if isinstance(url, URL):
        return url.render_as_string(hide_password=True)
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        return _PASSWORD_IN_URL.sub(r"\1***@", url)


def display_url(url: str | None = None) -> str:
    """The URL that ``url`` resolves to (see `resolve_url`), normalised and masked."""
    resolved = resolve_url(url)
    try:
        return masked_url(parse_url(resolved))
    except StoreError:
        return masked_url(resolved)


def parse_url(url: str) -> URL:
    """Parse and normalise a database URL, or raise StoreError naming what is wrong."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError) as e:
        raise StoreError(f"malformed database URL {masked_url(url)!r}: {URL_HINT}") from e
    scheme = parsed.drivername
    if scheme in _PG_SCHEMES:
        return parsed.set(drivername="postgresql+psycopg")
    if scheme in _SQLITE_SCHEMES:
        return parsed.set(drivername="sqlite")
    raise StoreError(
        f"unsupported database URL {masked_url(parsed)!r} ({scheme}): advisor stores results "
        f"in SQLite or PostgreSQL; {URL_HINT}"
    )


def make_engine(url: URL, *, read_only: bool = False) -> Engine:
    """An engine for a parsed URL, with advisor's SQLite or PostgreSQL connection settings.

    ``read_only``: a reader's engine; on SQLite it leaves the file's journal mode as it is
    (a writer switches the file to WAL; a reader never converts it)."""
    if url.get_backend_name() == "sqlite":
        return _sqlite_engine(url, read_only)
    connect_args: dict[str, Any] = {}
    if "connect_timeout" not in url.query:
        connect_args["connect_timeout"] = PG_CONNECT_TIMEOUT_S
    return create_engine(url, pool_pre_ping=True, connect_args=connect_args)


def _sqlite_engine(url: URL, read_only: bool = False) -> Engine:
    engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event below decide how each transaction starts.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        if url.database and url.database != ":memory:" and not read_only:
            cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        write = connection.get_execution_options().get(WRITE_OPTION, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


def describe(error: BaseException, url: URL) -> str:
    """The first meaningful line of a driver error, with the URL's password masked."""
    original = error.orig if isinstance(error, StatementError) and error.orig else error
    text = " ".join(str(original).split()) or type(original).__name__
    text = text.removeprefix("connection failed: ").replace("FATAL: ", "")
    if url.password:
        text = text.replace(str(url.password), "***")
    return text


def connect_error(error: BaseException, url: URL) -> StoreError:
    """A StoreError for a database that cannot be opened (unreachable, refused, missing)."""
    where = masked_url(url)
    reason = describe(error, url)
    if url.get_backend_name() == "sqlite":
        hint = ""
        if url.database and not Path(url.database).parent.resolve().is_dir():
            hint = " (its directory does not exist)"
        return StoreError(f"cannot open SQLite database {where}{hint}: {reason}")
    return StoreError(f"cannot connect to {where}: {reason} (check the URL: --db or {ENV_VAR})")


@contextmanager
def translated(url: URL, doing: str) -> Iterator[None]:
    """Turn SQLAlchemy errors raised while ``doing`` something into one-line StoreErrors."""
    try:
        yield
    except StoreError:
        raise
    except SQLAlchemyError as e:
        raise StoreError(f"{doing} failed on {masked_url(url)}: {describe(e, url)}") from e
