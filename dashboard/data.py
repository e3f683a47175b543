"""Every read of the dashboard: the store's queries behind Streamlit caches, read-only.

The database is the one `advisor dashboard --db URL` passes through $ADVISOR_DB_URL (else
sqlite:///advisor.db, as every advisor command). The store (one engine) is shared by all
sessions through ``st.cache_resource``; query results live ``TTL_S`` seconds in
``st.cache_data`` (sweep progress ``LIVE_TTL_S``), so a sweep's new trials show up on the next
run. Pages get pandas frames and plain records; only masked URLs ever reach the screen.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import streamlit as st

from advisor.db import ResultStore, database_revision, display_url, masked_url, resolve_url
from advisor.db.engine import parse_url
from advisor.devices import DeviceNames
from advisor.errors import StoreError
from advisor.fingerprint import combined_hash
from advisor.recommendation import Recommendation
from advisor.recommendation.answers import answer
from advisor.records import TrialRecord
from dashboard import analysis

TTL_S = 10
LIVE_TTL_S = 2
RECENT_SWEEPS = 100
# A query that does not depend on another runs here meanwhile (the database does the work, or
# SQLite without holding Python's lock).
_BACKGROUND = ThreadPoolExecutor(max_workers=2, thread_name_prefix="dashboard-query")


@dataclass(frozen=True)
class Database:
    """Where the dashboard reads: the URL (real, for the queries), what to show of it, and its
    state: ``ready``, ``empty`` (no results yet), ``missing`` (a SQLite file that does not exist:
    a mistyped path, or a database not created yet) or ``error`` (``message`` says why)."""

    url: str
    shown: str
    state: str
    message: str = ""


def database() -> Database:
    """The results database and whether it can be read (never raises for a database problem)."""
    url = resolve_url()
    shown = display_url(url)
    try:
        _check_sqlite_directory(url)
        missing = _missing_sqlite_file(url)
        if missing:
            return Database(url, shown, "missing", missing)
        if _revision(url) is None:
            return Database(url, shown, "empty")
        if not workloads(url):
            return Database(url, shown, "empty")
    except StoreError as e:
        return Database(url, shown, "error", str(e).splitlines()[0] if str(e) else repr(e))
    return Database(url, shown, "ready")


def _missing_sqlite_file(url: str) -> str:
    """Why a SQLite URL names no database ("" when it does, or is no SQLite file): the
    message every advisor reader gives for that path (`advisor list --db URL` exits 2 on it)."""
    parsed = parse_url(url)
    path = parsed.database
    if parsed.get_backend_name() != "sqlite" or not path or path == ":memory:":
        return ""
    if Path(path).expanduser().exists():
        return ""
    return (f"There is no results database at {path}: check the path given to `advisor "
            "dashboard --db` (a typo?), or create it with a first sweep into it:")


def _check_sqlite_directory(url: str) -> None:
    """A SQLite file in a directory that does not exist cannot be read, nor ever written."""
    parsed = parse_url(url)
    path = parsed.database
    if parsed.get_backend_name() != "sqlite" or not path or path == ":memory:":
        return
    if not Path(path).expanduser().parent.is_dir():
        raise StoreError(
            f"cannot open SQLite database {masked_url(parsed)}: its directory does not exist"
        )


@st.cache_data(ttl=TTL_S, show_spinner=False)
def _revision(url: str) -> str | None:
    return database_revision(url).current


@st.cache_resource(show_spinner=False)
def _store(url: str) -> ResultStore:
    return ResultStore.from_url(url, read_only=True)


def clear() -> None:
    """Forget every cached result (the Refresh button)."""
    st.cache_data.clear()


def forget_state() -> None:
    """Forget whether the database has a schema and results (before looking again)."""
    _revision.clear()
    workloads.clear()


# -- cached queries (the URL is the cache key: one dashboard process may serve one database,
#    a test process several) ------------------------------------------------------------------


@st.cache_data(ttl=TTL_S, show_spinner=False)
def workloads(url: str) -> list[str]:
    return _store(url).workloads()


@st.cache_data(ttl=TTL_S, show_spinner=False)
def groups(url: str, workload: str | None = None) -> pd.DataFrame:
    """Every workload x device x stack with trials (of one workload, if given): labels,
    counts, staleness (judged against every workload's trials)."""
    if workload is not None:
        every = groups(url)
        return every[every["workload"] == workload].reset_index(drop=True)
    found = pd.DataFrame(_store(url).group_summaries())
    if found.empty:
        return found
    return analysis.add_staleness(analysis.add_labels(found, device_names(url)))


@st.cache_data(ttl=LIVE_TTL_S, show_spinner=False)  # a new sweep's host: as soon as it shows
def device_names(url: str) -> DeviceNames:
    """The short ids of the store's devices, hosts from every sweep: `advisor.devices`, the
    names the CLI and the report print."""
    return DeviceNames.of_store(_store(url))


@st.cache_data(ttl=TTL_S, show_spinner=False)
def recommendations(url: str, workload: str | None = None) -> pd.DataFrame:
    """One row per workload x device x stack: the one answer there and its figures."""
    found = groups(url, workload)
    keys = zip(found["workload"], found["device_hash"], found["env_hash"], strict=True) \
        if not found.empty else []
    return analysis.recommendations(found, [recommendation(url, *key) for key in keys])


@st.cache_data(ttl=TTL_S, show_spinner=False)
def recommendation(url: str, workload: str, device_hash: str, env_hash: str) -> Recommendation:
    """What is recommended for one workload on one device and stack:
    `advisor.recommendation.answers.answer`,
    the same function every other surface calls."""
    records = group_trials(url, workload, device_hash, env_hash)
    fp = next((r["fingerprint"] for r in records if r.get("fingerprint")), None)
    here = (fp["fingerprint_hash"] if fp and fp.get("fingerprint_hash")
            else combined_hash(device_hash, env_hash))
    return answer(_store(url), workload, here, records=records)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def group_trials(url: str, workload: str, device_hash: str, env_hash: str) -> list[TrialRecord]:
    """Full trial records of one workload on one device with one stack."""
    return _store(url).group_trials(workload, device_hash, env_hash)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def fleet(url: str, workload: str) -> pd.DataFrame:
    """One workload across devices and stacks: per group x config, the best p50 and speedup."""
    store = _store(url)
    return analysis.fleet_frame(
        store.device_comparison(workload), store.config_dicts(workload), groups(url, workload)
    )


@st.cache_data(ttl=TTL_S, show_spinner=False)
def most_different(url: str, workload: str) -> tuple[str, str]:
    """The two devices and stacks that disagree most on ``workload`` (`analysis.most_different`):
    the Two devices view's default pair."""
    return analysis.most_different(fleet(url, workload))


@st.cache_data(ttl=TTL_S, show_spinner=False)
def measured_shapes(url: str, workload: str) -> dict[tuple[str, str], tuple[str, ...]]:
    """(device_hash, env_hash) -> the traffic shapes measured there, sorted."""
    found: dict[tuple[str, str], list[str]] = {}
    for row in _store(url).measured_shapes(workload):
        if row["shape"] is not None:  # a shape stored without its name has none to show
            found.setdefault((row["device_hash"], row["env_hash"]), []).append(row["shape"])
    return {key: tuple(sorted(shapes)) for key, shapes in found.items()}


@st.cache_data(ttl=LIVE_TTL_S, show_spinner=False)
def sweeps(url: str, limit: int = RECENT_SWEEPS) -> pd.DataFrame:
    """The most recent sweeps, newest first, with their progress."""
    return analysis.sweeps_frame(_store(url).sweeps(limit=limit), device_names(url))


@st.cache_data(ttl=LIVE_TTL_S, show_spinner=False)
def sweep_trials(url: str, sweep_id: int) -> list[TrialRecord]:
    """Full trial records of one sweep, in the order they ran."""
    return _store(url).trials(sweep_id=sweep_id)
