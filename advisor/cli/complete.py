"""Shell completion of advisor's values (typer's own completion: `advisor --install-completion`
for bash, zsh or fish): workload names and sweep ids, read from the database the command line
names with ``--db`` when it names one before the word completed, else the default one
($ADVISOR_DB_URL, else sqlite:///advisor.db here). A reader: it never creates a database, imports
no torch, and completes nothing (rather than an error) where the database cannot be read."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from advisor.db.store import ResultStore


@contextlib.contextmanager
def _store(ctx: Any) -> Iterator[ResultStore | None]:
    from advisor.db.store import ResultStore

    db = (getattr(ctx, "params", None) or {}).get("db")
    try:
        store = ResultStore.from_url(db, read_only=True)
    except Exception:  # completion says nothing rather than a traceback in the shell
        yield None
        return
    try:
        yield store
    finally:
        store.close()


def workloads(ctx: Any, incomplete: str) -> list[str]:
    """The workload names of the database that start with ``incomplete``."""
    with _store(ctx) as store:
        try:
            names = store.workloads() if store is not None else []
        except Exception:
            names = []
    return [n for n in names if n.startswith(incomplete)]


def sweep_ids(ctx: Any, incomplete: str) -> list[tuple[str, str]]:
    """The sweep ids that start with ``incomplete``, newest first, each with its workload and
    status as the completion's help (zsh and fish show it)."""
    with _store(ctx) as store:
        try:
            sweeps = store.sweeps() if store is not None else []
        except Exception:
            sweeps = []
    out = [(str(s["id"]), f"{s['workload']['name']} ({s['status']})") for s in sweeps]
    return sorted((o for o in out if o[0].startswith(incomplete)), key=lambda o: -int(o[0]))
