"""A measured trial is never lost to a busy, absent or vanished database, and never stored in
another database than its own.

`store_trial` writes a sweep's trial record. When the database stays locked past its busy
timeout ($ADVISOR_DB_BUSY_TIMEOUT_S, SQLite) or is away (a lost connection, a terminated
backend), the write is tried again with backoff (`advisor.db.retry`: 1 s, doubling, at most
30 s apart) for $ADVISOR_STORE_RETRY_S after the first failure; the whole wait is at most that
plus two busy timeouts. Failing that, or at once when the SQLite file was removed while the
sweep ran (`advisor.db.store.DatabaseVanished`), the record goes to a spill file, an
`advisor export` file of one record, and the sweep stops with one line naming it: `advisor
sweep FILE --resume` stores the sweep's spilled records before it goes on, and `advisor import
SPILL_FILE` stores one by hand. When the spill file cannot be written either (a full disk), no
partial file is left and the line says which trial was not stored.

Spill files lie beside a SQLite database (``advisor.db`` -> ``advisor.db.spill/``), and for
other databases in ``advisor-spill/`` of the working directory. Each is named after its
database, sweep and trial, ``db-<database key>-sweep-<id>-<trial uuid>.json``
(`advisor.db.engine.database_key`: a short hash of the SQLite file's path, or of the server's
host, port and database), and each record carries that key and its sweep's uuid
(``spilled_from``, ``sweep_uuid``): a resumed sweep stores only the records spilled for it, in
its database; another database's are left where they are, with a one-line notice.

A sweep that stops on a store error leaves its row marked (`mark_ended`): interrupted, or, when
the database cannot take that write either, a marker file beside its spills
(``db-<key>-sweep-<id>.ended``), so that the printed `--resume` runs at once instead of waiting
for the sweep's heartbeat to age out (`ended`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from advisor.db.engine import database_key, parse_url, transient
from advisor.db.retry import FIRST_RETRY_S as FIRST_RETRY_S
from advisor.db.retry import Backoff
from advisor.db.store import DatabaseVanished, ResultStore
from advisor.errors import StoreError
from advisor.lifetime import alive_here
from advisor.records import TrialRecord

log = logging.getLogger(__name__)
SPILLED_FROM = "spilled_from"  # a spilled record's key: the database and sweep it belongs to
Notice = Callable[[str], None]


def spill_dir(url: str) -> Path:
    """Where the spill files of the database at ``url`` go (see the module docstring)."""
    parsed = parse_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        path = Path(str(parsed.database)).absolute()
        return path.with_name(f"{path.name}.spill")
    return Path.cwd() / "advisor-spill"


def spill_path(url: str, sweep_id: int, trial_uuid: str) -> Path:
    """The spill file of one trial of sweep ``sweep_id`` of the database at ``url``."""
    return spill_dir(url) / f"db-{database_key(url)}-sweep-{sweep_id}-{trial_uuid}.json"


def store_trial(store: ResultStore, record: TrialRecord, sweep_id: int,
                wait: Callable[[float], None] | None = None) -> None:
    """Store ``record`` in ``sweep_id``, retried while the database is busy or away; when it
    stays so (or its SQLite file was removed), spill the record and raise StoreError saying
    where it is and how to store it, or, when it cannot be spilled either, which trial was not
    stored. ``wait``: how a pause between tries is spent (a test releases its lock there)."""
    import time

    backoff = Backoff()
    while True:
        try:
            store.add_trial(record, sweep_id=sweep_id)
            return
        except DatabaseVanished as e:  # retrying cannot bring the file back
            error: StoreError = e
            why, back = "", "the database file put back"
            break
        except StoreError as e:
            if not transient(e):
                raise
            error = e
        pause = backoff.next()
        if pause is None:
            why = (f"; still failing after {backoff.retry_s:g} s of retries "
                   "($ADVISOR_STORE_RETRY_S)")
            back = "the database back"
            break
        log.warning("storing trial %s failed (%s); retried in %.1f s", record["trial_uuid"],
                    str(error).splitlines()[0], pause)
        (wait or time.sleep)(pause)
    first = str(error).splitlines()[0]
    info = record.get("workload")
    workload = info["path"] if info and info.get("path") else "WORKLOAD"
    resume = f"`advisor sweep {workload} --db {store.masked_url} --resume`"
    try:
        path = spill(store, record, sweep_id)
    except OSError as e:
        raise StoreError(
            f"{first}{why}, and its spill file could not be written either "
            f"({e.filename or spill_dir(store.url)}: {e.strerror or e}): the measured trial "
            f"{record['config_key']} ({record['trial_uuid']}) of sweep {sweep_id} is NOT "
            f"stored; with room there and {back}, {resume} measures it again"
        ) from error
    raise StoreError(
        f"{first}{why}: the measured trial {record['config_key']} is kept in {path}; with "
        f"{back}, {resume} stores it and goes on (or `advisor import {path} --db "
        f"{store.masked_url}`)"
    ) from error


def spill(store: ResultStore, record: TrialRecord, sweep_id: int) -> Path:
    """Write ``record`` to its spill file, whole or not at all (flushed to the disk before it
    takes its name; nothing is left when it cannot be); returns the file's path. Raises
    OSError when it cannot be written (a full disk, a read-only folder)."""
    kept: dict[str, Any] = dict(record)
    # a reader gets through a writer's lock (WAL); without the uuid, --resume still can
    with contextlib.suppress(StoreError):
        kept["sweep_uuid"] = store.get_sweep(sweep_id)["uuid"]
    kept[SPILLED_FROM] = {"database": database_key(store.url), "url": store.masked_url,
                          "sweep_id": sweep_id}
    path = spill_path(store.url, sweep_id, str(record["trial_uuid"]))
    _write_whole(path, json.dumps([kept], default=str, indent=1))
    log.warning("trial %s of sweep %d kept in %s", record["trial_uuid"], sweep_id, path)
    return path


def _write_whole(path: Path, text: str) -> None:
    """``text`` into ``path``: a partial file written, flushed to the disk and renamed; on an
    error (ENOSPC, EACCES, ...) the partial file is removed and the OSError raised."""
    partial = path.with_suffix(".partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(partial, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, path)
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise


def store_spilled(store: ResultStore, sweep_id: int, notice: Notice | None = None) -> int:
    """Store the records spilled by sweep ``sweep_id`` of this database (a resumed sweep calls
    this first) and remove their files; returns how many records were stored or found stored
    already. A spill file of another database, or of another sweep that had this id, is left
    where it is, said in one line through ``notice``."""
    say = notice or log.warning
    folder = spill_dir(store.url)
    key = database_key(store.url)
    sweep_uuid = store.get_sweep(sweep_id)["uuid"]
    with contextlib.suppress(OSError):
        _marker(store.url, sweep_id).unlink()  # resumed: no longer ended
    found = ([*folder.glob(f"db-*-sweep-{sweep_id}-*.json"),
              *folder.glob(f"sweep-{sweep_id}-*.json")]  # named before databases were
             if folder.is_dir() else [])
    stored = 0
    for path in sorted(found):
        records = _read_spill(path)
        if records is None:
            say(f"{path} is not a readable spill file: left where it is")
            continue
        foreign = next((why for r in records if (why := _foreign(r, key, sweep_uuid))), "")
        if foreign:
            say(f"{path} holds a trial of {foreign}, not of sweep {sweep_id} of "
                f"{store.masked_url}: not stored here, left where it is (`advisor import` "
                "of that file into its own database stores it)")
            continue
        store.add_trials([_placed(r) for r in records], sweep_id)
        path.unlink()
        stored += len(records)
        log.info("stored %d spilled trial(s) of sweep %d from %s", len(records), sweep_id, path)
    if folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
    return stored


def _read_spill(path: Path) -> list[dict[str, Any]] | None:
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        return None
    return records


def _foreign(record: dict[str, Any], key: str, sweep_uuid: str) -> str:
    """Whose the record is when it is not this sweep's ("" when it is): another database's
    (its key), or another sweep's (its uuid); a record that says neither is no one's here."""
    origin = record.get(SPILLED_FROM)
    if isinstance(origin, dict) and origin.get("database") != key:
        return f"another database ({origin.get('url') or origin.get('database')})"
    spilled_for = record.get("sweep_uuid")
    if spilled_for != sweep_uuid and (spilled_for or not isinstance(origin, dict)):
        return f"another sweep ({spilled_for or 'unknown'})"
    return ""


def _placed(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != SPILLED_FROM}


# -- a sweep that stopped on a store error ------------------------------------------------------


def _marker(url: str, sweep_id: int) -> Path:
    return spill_dir(url) / f"db-{database_key(url)}-sweep-{sweep_id}.ended"


def mark_ended(store: ResultStore, sweep_id: int, error: StoreError) -> None:
    """A sweep's process leaves on ``error``: mark its row interrupted so that it can be
    resumed at once; when the database is busy, away or gone (the write would wait or fail
    too), leave the marker file that `ended` reads instead. Nothing raises: the caller goes on
    raising ``error``."""
    if not (transient(error) or isinstance(error, DatabaseVanished)):
        try:
            store.finish_sweep(sweep_id, "interrupted")
            return
        except StoreError as e:
            log.info("sweep %d: marking it interrupted failed: %s", sweep_id, e)
    left = {"pid": os.getpid(), "host": socket.gethostname(), "why": str(error)[:300]}
    try:
        _write_whole(_marker(store.url, sweep_id), json.dumps(left))
    except OSError as e:
        log.info("sweep %d: no marker of its end written (%s); --resume waits for its "
                 "heartbeat to age out", sweep_id, e.strerror or e)


def ended(url: str, sweep_id: int) -> bool:
    """Whether sweep ``sweep_id`` of the database at ``url``, though its row still says
    running, was left by its process on a store error (`mark_ended`) and that process is gone."""
    try:
        left = json.loads(_marker(url, sweep_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(left, dict):
        return False
    alive = alive_here(left)  # another host's process cannot be asked: taken as ended
    return alive is None or not alive
