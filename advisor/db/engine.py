"""Database URLs and engines: which URL, which dialect, masked for messages, errors in one line.

Only SQLite (``sqlite:///path.db``) and PostgreSQL through psycopg 3
(``postgresql+psycopg://user:password@host:port/db``; ``postgresql://`` and ``postgres://`` are
rewritten to it) are supported. SQLite connections use WAL, a busy timeout and ``BEGIN
IMMEDIATE`` for writes, so several processes can write to one file at once.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError, StatementError

from advisor import settings
from advisor.errors import StoreError

log = logging.getLogger(__name__)

DEFAULT_URL = "sqlite:///advisor.db"
ENV_VAR = settings.DB_URL.name  # named in messages
PG_CONNECT_TIMEOUT_S = 10
URL_HINT = "use sqlite:///path.db or postgresql+psycopg://user:password@host:port/dbname"
# An execution option: a connection that carries it begins with BEGIN IMMEDIATE on SQLite.
WRITE_OPTION = "advisor_write"

_PG_SCHEMES = {"postgresql", "postgres", "postgresql+psycopg"}
_SQLITE_SCHEMES = {"sqlite", "sqlite+pysqlite"}
# query parameters whose values are secrets (libpq's password, sslpassword, ...)
_SECRET_PARAM = re.compile(
    r"([?&;][^=&;#]*(?:password|passwd|pwd|secret|token|passfile)[^=&;#]*=)[^&;#]*",
    re.IGNORECASE,
)
_MASK = "***"


def resolve_url(url: str | None = None) -> str:
    """The URL to use: ``url``, else ``$ADVISOR_DB_URL``, else ``sqlite:///advisor.db``."""
    return url or settings.db_url() or DEFAULT_URL


def masked_url(url: str | URL) -> str:
    """``url`` with every secret replaced by ``***``, safe for any message or log.

    The one masking function of advisor: every message that shows a database URL goes through
    it. It works on the text, so it masks what a parser would miss: ``user:password@`` (a raw
    ``@`` inside the password too: everything up to the last ``@`` of the authority is the
    user's), secret query parameters (``?password=...``, ``sslpassword``, ``token``), and a URL
    without ``//`` (all but its scheme). A string without a scheme is shown as it is.
    """
    text = url.render_as_string(hide_password=True) if isinstance(url, URL) else str(url)
    return _SECRET_PARAM.sub(rf"\1{_MASK}", _mask_authority(text))


def _mask_authority(text: str) -> str:
    scheme, sep, rest = text.partition("://")
    if not sep:
        head, colon, tail = text.partition(":")
        if not colon or not tail or not re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", head):
            return text  # no scheme: a path, or not a URL at all
        return f"{head}:{_MASK}"  # a URL without //: where its secrets end cannot be known
    at = rest.rfind("@")
    if at < 0:
        return text
    userinfo, host = rest[:at], rest[at + 1 :]
    user, colon, _ = userinfo.partition(":")
    if not colon and "/" not in userinfo and "?" not in userinfo:
        return text  # a user name alone
    return f"{scheme}://{user if colon else _MASK}:{_MASK}@{host}"


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
    if parsed.host and "@" in parsed.host:
        raise StoreError(
            f"malformed database URL {masked_url(url)!r}: its password holds a raw '@'; "
            "write it as %40 (percent-encode the password)"
        )
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
    log.debug("opening %s%s", masked_url(url), " (read-only)" if read_only else "")
    if url.get_backend_name() == "sqlite":
        return _sqlite_engine(url, read_only)
    try:
        import psycopg  # noqa: F401  (the driver SQLAlchemy will load)
    except ImportError:
        raise StoreError("a PostgreSQL URL needs the psycopg driver, which is not installed: "
                         "pip install 'advisor[postgres]'") from None
    connect_args: dict[str, Any] = {}
    if "connect_timeout" not in url.query:
        connect_args["connect_timeout"] = PG_CONNECT_TIMEOUT_S
    return create_engine(url, pool_pre_ping=True, connect_args=connect_args)


def _sqlite_engine(url: URL, read_only: bool = False) -> Engine:
    busy_s = settings.db_busy_timeout_s()  # $ADVISOR_DB_BUSY_TIMEOUT_S
    engine = create_engine(url, connect_args={"timeout": busy_s})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event below decide how each transaction starts.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout={round(busy_s * 1000)}")
        if url.database and url.database != ":memory:" and not read_only:
            _use_wal(cursor, busy_s)
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        write = connection.get_execution_options().get(WRITE_OPTION, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


def _use_wal(cursor: Any, busy_s: float) -> None:
    """Put the file in WAL mode unless it is already. Switching needs the file to itself, and
    SQLite answers "database is locked" at once, without its busy timeout, when another
    connection is writing to a file still in its first (rollback) mode: waiting could deadlock
    (several processes opening a new database at once met it on a loaded host). So it is tried
    again until the busy timeout has passed; once one connection has switched, the rest find
    the file in WAL mode and switch nothing."""
    deadline = time.monotonic() + busy_s
    while True:
        try:
            if str(cursor.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
                cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def check_sqlite_path(url: URL, folder_needed: bool = False) -> None:
    """A SQLite file's path as this user can use it: a folder on the way that it cannot enter
    (another user's 0700 home folder) is a StoreError naming it, before SQLite is asked (its
    own message names neither the folder nor the user); ``folder_needed``: a folder that does
    not exist too (a sweep says so before it starts any child)."""
    from advisor import paths

    database = url.database if url.get_backend_name() == "sqlite" else None
    if not database or database == ":memory:" or database.startswith("file:"):
        return
    folder = paths.blocked_by(database)
    if folder is not None:
        raise StoreError(f"cannot open SQLite database {masked_url(url)}: permission denied: "
                         f"this user ({paths.user()}) cannot enter the folder {folder}; choose "
                         "a database outside it (--db), or ask its owner for access")
    if folder_needed and not Path(database).expanduser().absolute().parent.is_dir():
        raise StoreError(f"cannot open SQLite database {masked_url(url)} (its directory does "
                         "not exist): create it, or choose another --db")


def immutable_url(url: URL) -> URL | None:
    """A reader's way into a SQLite file whose folder it cannot write: SQLite must create the
    ``-shm`` file beside a WAL database to read it, so the file is opened read-only and
    immutable instead. Only when no writer can be at work (no ``-wal`` or ``-journal`` file
    beside it: none could be created there); else None."""
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    path = Path(url.database).resolve()
    if url.database.startswith("file:") or not path.is_file() or os.access(path.parent, os.W_OK):
        return None
    if any(Path(f"{path}{suffix}").exists() for suffix in ("-wal", "-journal")):
        return None
    return url.set(database=f"file:{quote(str(path))}?mode=ro&immutable=1", query={"uri": "true"})


def transient(error: BaseException) -> bool:
    """Whether a StoreError came from the database being busy or away (locked past its busy
    timeout, a connection lost, a backend terminated): the same write may succeed later. Not:
    refused or invalid (`advisor.db.retry.transient_cause`)."""
    from advisor.db.retry import transient_cause

    return transient_cause(error.__cause__)


def database_key(url: str | URL) -> str:
    """A short hash naming one database, whatever the URL's spelling of it: a SQLite file's
    resolved path; a server's host, port and database (neither user nor password). Spill files
    carry it (`advisor.db.spill`), so that one database never takes another's."""
    parsed = parse_url(url) if isinstance(url, str) else url
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ":memory:"
        name = database if database == ":memory:" else str(Path(database).resolve())
        where = f"sqlite:{name}"
    else:
        host = parsed.host or str(parsed.query.get("host") or "localhost")
        where = f"postgresql://{host}:{parsed.port or 5432}/{parsed.database or ''}"
    return hashlib.sha256(where.encode()).hexdigest()[:12]


def describe(error: BaseException, url: URL) -> str:
    """The first meaningful line of a driver error, with the URL's password masked."""
    original = error.orig if isinstance(error, StatementError) and error.orig else error
    text = " ".join(str(original).split()) or type(original).__name__
    text = text.removeprefix("connection failed: ").replace("FATAL: ", "")
    for secret in _secrets(url):
        text = text.replace(secret, _MASK)
    return masked_url(text) if "://" in text else text


def _secrets(url: URL) -> list[str]:
    """The password and the secret query values of ``url`` (to strip from driver messages)."""
    found = [str(url.password)] if url.password else []
    for key, value in url.query.items():
        if _SECRET_PARAM.fullmatch(f"?{key}=x"):
            found += [value] if isinstance(value, str) else list(value)
    return [s for s in found if s]


def connect_error(error: BaseException, url: URL) -> StoreError:
    """A StoreError for a database that cannot be opened (unreachable, refused, missing)."""
    where = masked_url(url)
    reason = describe(error, url)
    if url.get_backend_name() == "sqlite":
        hint = ""
        folder = Path(url.database).parent.resolve() if url.database else None
        if folder is not None and not folder.is_dir():
            hint = " (its directory does not exist)"
        elif folder is not None and not os.access(folder, os.W_OK):
            hint = (f" (its folder {folder} is not writable, and SQLite writes its -wal/-shm "
                    "files there: make the folder writable, or copy the database to one that is)")
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
