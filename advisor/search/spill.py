"""A measured trial is never lost to a busy database.

`store_trial` writes a sweep's trial record. When the database stays locked past its busy
timeout ($ADVISOR_DB_BUSY_TIMEOUT_S, SQLite) or is away (a lost connection), the write is tried
again with backoff (1 s, doubling, at most 30 s apart) for $ADVISOR_STORE_RETRY_S after the first
failure; the whole wait is at most that plus two busy timeouts. Failing that, the record goes to
a spill file, an `advisor export` file of one record, and the sweep stops with one line naming
it: `advisor sweep FILE --resume` stores the sweep's spilled records before it goes on, and
`advisor import SPILL_FILE` stores one by hand.

Spill files lie beside a SQLite database (``advisor.db`` -> ``advisor.db.spill/``), and for
other databases in ``advisor-spill/`` of the working directory; each is named after its sweep
and trial: ``sweep-<id>-<trial uuid>.json``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from advisor import settings
from advisor.errors import StoreError
from advisor.records import TrialRecord

log = logging.getLogger(__name__)
FIRST_RETRY_S = 1.0
MAX_RETRY_S = 30.0


def spill_dir(url: str) -> Path:
    """Where the spill files of the database at ``url`` go (see the module docstring)."""
    from advisor.db.engine import parse_url

    parsed = parse_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        path = Path(str(parsed.database)).absolute()
        return path.with_name(f"{path.name}.spill")
    return Path.cwd() / "advisor-spill"


def store_trial(store: Any, record: TrialRecord, sweep_id: int,
                wait: Callable[[float], None] = time.sleep) -> None:
    """Store ``record`` in ``sweep_id``, retried while the database is busy or away; when it
    stays so, spill the record and raise StoreError saying where it is and how to store it.
    ``wait``: how a pause between tries is spent (a test releases its lock there)."""
    from advisor.db.engine import transient

    deadline: float | None = None
    pause = FIRST_RETRY_S
    while True:
        try:
            store.add_trial(record, sweep_id=sweep_id)
            return
        except StoreError as e:
            if not transient(e):
                raise
            error = e
        now = time.monotonic()
        if deadline is None:
            deadline = now + settings.store_retry_s()
        if now >= deadline:
            break
        pause = min(pause, deadline - now)
        log.warning("storing trial %s failed (%s); retried in %.1f s", record["trial_uuid"],
                    str(error).splitlines()[0], pause)
        wait(pause)
        pause = min(2 * pause, MAX_RETRY_S)
    path = spill(store, record, sweep_id)
    info = record.get("workload")
    workload = info["path"] if info and info.get("path") else "WORKLOAD"
    raise StoreError(
        f"{str(error).splitlines()[0]}; still failing after {settings.store_retry_s():g} s of "
        f"retries ($ADVISOR_STORE_RETRY_S): the measured trial {record['config_key']} is kept in "
        f"{path}; once the database is free, `advisor sweep {workload} --db {store.masked_url} "
        f"--resume` stores it and goes on (or `advisor import {path} --db {store.masked_url}`)"
    ) from error


def spill(store: Any, record: TrialRecord, sweep_id: int) -> Path:
    """Write ``record`` to its spill file (whole or not at all); returns the file's path."""
    kept: dict[str, Any] = dict(record)
    # a reader gets through a writer's lock (WAL); without the uuid, --resume still can
    with contextlib.suppress(StoreError):
        kept["sweep_uuid"] = store.get_sweep(sweep_id)["uuid"]
    folder = spill_dir(store.url)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"sweep-{sweep_id}-{record['trial_uuid']}.json"
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps([kept], default=str, indent=1), encoding="utf-8")
    os.replace(partial, path)
    log.warning("trial %s of sweep %d kept in %s", record["trial_uuid"], sweep_id, path)
    return path


def store_spilled(store: Any, sweep_id: int) -> int:
    """Store the records spilled by sweep ``sweep_id`` (a resumed sweep calls this first) and
    remove their files; returns how many records were stored or found stored already."""
    folder = spill_dir(store.url)
    found = sorted(folder.glob(f"sweep-{sweep_id}-*.json")) if folder.is_dir() else []
    stored = 0
    for path in found:
        records = json.loads(path.read_text(encoding="utf-8"))
        store.add_trials(records, sweep_id)
        path.unlink()
        stored += len(records)
        log.info("stored %d spilled trial(s) of sweep %d from %s", len(records), sweep_id, path)
    if found and not any(folder.iterdir()):
        folder.rmdir()
    return stored
