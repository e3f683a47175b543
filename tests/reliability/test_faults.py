"""Faults of the host and the database, made for real while sweeps run: a database that refuses
writes (a SQLite file held under BEGIN EXCLUSIVE by another process; a PostgreSQL database
closed to connections, its backends terminated), a full disk where the spill goes (a full
tmpfs, mounted in a mount namespace of the sweep's own), the SQLite file removed mid-sweep, and
Optuna's study meeting a locked file or a terminated backend. Nothing is lost silently: a trial
is stored, spilled, or named as not stored in one line with a non-zero exit code; the printed
--resume runs at once. The table in docs/trust.md ("Faults") says the same."""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from faults_support import (
    EAGER_TWO,
    SLOW,
    Background,
    Lock,
    Refusal,
    error_line,
    pg_admin,
    wait_for,
)
from reliability_support import advisor, sweep_support
from sqlalchemy import event, text
from sqlalchemy.engine import make_url

from advisor.db import ResultStore
from advisor.db.spill import spill_dir
from advisor.db.studies import RetryingStorage
from advisor.errors import StoreError
from advisor.search.study import open_study

FAST_RETRIES = {"ADVISOR_STORE_RETRY_S": "0.5", "ADVISOR_DB_BUSY_TIMEOUT_S": "0.2"}


def _configs(url: str, sweep_id: int) -> list[str]:
    with ResultStore.from_url(url, read_only=True) as store:
        return sorted(r["config_key"] for r in store.trials(sweep_id=sweep_id))


def _spilled(folder: Path) -> list[dict[str, Any]]:
    found = sorted(folder.glob("db-*-sweep-*.json")) if folder.is_dir() else []
    return [record for path in found for record in json.loads(path.read_text())]


# -- Optuna's study: a write the database refuses is retried, then told in one line -------------


class OptunaFault:
    """The next Optuna write of a finished trial's state (its tell) meets a real fault: its
    PostgreSQL backend terminated (pg_terminate_backend) just before it runs, or the SQLite file
    locked by another process (released when the storage waits to retry). ``every``: each such
    write, not only the next."""

    def __init__(self, study: Any, url: str, every: bool = False) -> None:
        self.url, self.every, self.hits = url, every, 0
        self.lock: Lock | None = None
        self.engine = study._storage._backend.engine
        event.listen(self.engine, "before_cursor_execute", self._before)

    def _before(self, conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        said = " ".join(statement.split()).upper()
        if not (said.startswith("UPDATE TRIALS SET STATE") and "DATETIME_COMPLETE" in said):
            return
        if self.hits and not self.every:
            return
        self.hits += 1
        if self.url.startswith("sqlite"):
            if self.lock is None:
                self.lock = Lock(Path(str(make_url(self.url).database)))
            return
        pid = conn.connection.dbapi_connection.info.backend_pid
        admin = pg_admin()
        with admin.connect() as c:
            assert c.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid}).scalar()
        admin.dispose()

    def release(self, seconds: float = 0.0) -> None:
        if self.lock is not None and not self.every:
            self.lock.close()
            self.lock = None

    def close(self) -> None:
        event.remove(self.engine, "before_cursor_execute", self._before)
        if self.lock is not None:
            self.lock.close()


@pytest.fixture
def study(store_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, Any, str]]:
    """A sweep's study (eager fp32 asked, RUNNING) on the test's backend, busy timeout short."""
    monkeypatch.setenv("ADVISOR_DB_BUSY_TIMEOUT_S", "0.1")
    opened = open_study(store_url, "faults")
    opened.enqueue_trial({"mode": "eager", "dtype": "fp32"})
    yield opened, opened.ask(), store_url
    opened._storage._backend.engine.dispose()


def test_an_optuna_write_met_by_a_fault_is_retried(
        study: tuple[Any, Any, str], monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    opened, trial, url = study
    fault = OptunaFault(opened, url)
    monkeypatch.setattr(RetryingStorage, "wait", staticmethod(fault.release))
    try:
        with caplog.at_level(logging.WARNING, logger="advisor.db.studies"):
            opened.tell(trial, 1.5)  # a raw StorageInternalError before
    finally:
        fault.close()
    assert fault.hits == 1
    (done,) = opened.get_trials()
    assert done.state.name == "COMPLETE" and done.value == 1.5
    (said,) = [r.getMessage() for r in caplog.records]
    assert "set trial state values failed" in said and "retried in" in said


def test_an_optuna_write_refused_past_the_retries_is_one_line(
        study: tuple[Any, Any, str], monkeypatch: pytest.MonkeyPatch) -> None:
    opened, trial, url = study
    monkeypatch.setenv("ADVISOR_STORE_RETRY_S", "1.5")
    fault = OptunaFault(opened, url, every=True)
    try:
        with pytest.raises(StoreError) as raised:
            opened.tell(trial, 1.5)
    finally:
        fault.close()
    message = str(raised.value)
    assert "\n" not in message and fault.hits >= 2
    assert message.startswith("Optuna's set trial state values failed on ")
    assert "still failing after 1.5 s of retries ($ADVISOR_STORE_RETRY_S)" in message
    assert ("locked" if url.startswith("sqlite") else "terminating connection") in message


@pytest.mark.slow
def test_a_sweep_whose_study_meets_a_fault_goes_on(
        db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real sweep (in this process, so that the fault can be timed): the first trial's
    Optuna write meets the fault (1 of 3 PostgreSQL runs crashed with a raw traceback)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ADVISOR_DB_BUSY_TIMEOUT_S", "0.2")
    faults: list[OptunaFault] = []
    opened = open_study

    def faulty(url: str, name: str, *args: Any, **kwargs: Any) -> Any:
        found = opened(url, name, *args, **kwargs)
        faults.append(OptunaFault(found, url))
        return found

    monkeypatch.setattr("advisor.search.sweep.open_study", faulty)
    monkeypatch.setattr(RetryingStorage, "wait",
                        staticmethod(lambda s: [f.release() for f in faults]))
    try:
        code, _, err = advisor("sweep", sweep_support.FOUR_DTYPES, "--db", db_url, *EAGER_TWO)
    finally:
        for fault in faults:
            fault.close()
    assert code in (0, 1), err  # 1: no config passed is not this test's
    assert "Traceback" not in err and "error" not in err
    assert [f.hits for f in faults] == [1]
    assert _configs(db_url, 1) == ["eager/bf16", "eager/fp32"]
    with ResultStore.from_url(db_url, read_only=True) as store:
        sweep = store.get_sweep(1)
    assert sweep["status"] == "finished"
    states = [t.state.name for t in open_study(db_url, sweep["study_name"]).trials]
    assert states == ["COMPLETE", "COMPLETE"]


# -- a trial the database refuses: spilled, and the printed --resume runs at once ----------------


@pytest.mark.slow
def test_after_a_spill_the_printed_resume_runs_at_once(
        db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ADVISOR_SWEEP_DEAD_AFTER_S", raising=False)  # dead only after 120 s
    ResultStore.from_url(db_url).close()
    sweep = Background("sweep", SLOW, "--db", db_url, *EAGER_TWO, cwd=tmp_path, env=FAST_RETRIES)
    refusal = None
    try:
        wait_for(sweep.trial_children, "the first trial")
        refusal = Refusal(db_url)  # the database refuses the trial's record
        code, _, err = sweep.finish()
        refusal.release()
    finally:
        if refusal is not None:
            refusal.release()
        sweep.kill()
    message = error_line(err)
    assert code == 2 and "is kept in" in message and "--resume" in message
    (kept,) = _spilled(spill_dir(db_url) if db_url.startswith("sqlite") else
                       tmp_path / "advisor-spill")
    assert kept["config_key"] == "eager/fp32"

    # at once: the sweep's heartbeat is seconds old (refused for 120 s before)
    done = sweep_support.advisor("sweep", SLOW, "--db", db_url, "--resume", "--device", "cpu",
                                 cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    assert "stored 1 measured trial(s)" in " ".join(done.stderr.split())
    assert _configs(db_url, 1) == ["eager/bf16", "eager/fp32"]
    with ResultStore.from_url(db_url, read_only=True) as store:
        assert store.get_sweep(1)["status"] == "finished"
        assert kept["trial_uuid"] in {r["trial_uuid"] for r in store.trials(sweep_id=1)}


# -- a full disk where the spill goes -----------------------------------------------------------


def _can_mount() -> bool:
    if shutil.which("unshare") is None:
        return False
    done = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=16k tmpfs /mnt"],
                          capture_output=True, check=False)
    return done.returncode == 0


FILL = """
import sys
try:
    with open(sys.argv[1] + "/filler", "wb", buffering=0) as f:
        while True:
            f.write(b"x" * 4096)
except OSError:
    pass
"""


@pytest.mark.slow
@pytest.mark.skipif(not _can_mount(), reason="needs `unshare -rm` and a tmpfs mount")
def test_a_full_disk_where_the_spill_goes_names_the_trial_not_stored(
        db_url: str, tmp_path: Path) -> None:
    """The database refuses the trial's record and the spill folder lies on a full tmpfs
    (ENOSPC for real): one line naming the trial not stored, exit 2, no partial file."""
    ResultStore.from_url(db_url).close()
    folder = spill_dir(db_url) if db_url.startswith("sqlite") else tmp_path / "advisor-spill"
    folder.mkdir()
    listing = tmp_path / "listing.txt"
    script = (f'mount -t tmpfs -o size=64k tmpfs "{folder}" || exit 97\n'
              f'python -c \'{FILL}\' "{folder}"\n'
              f'"$@"; code=$?\n'
              f'ls -A "{folder}" > "{listing}"\n'
              "exit $code\n")
    command = ["unshare", "-rm", "sh", "-c", script, "sh", *sweep_support.advisor_command(),
               "sweep", str(SLOW), "--db", db_url, *EAGER_TWO]
    sweep = Background(cwd=tmp_path, env=FAST_RETRIES, command=command)
    refusal = None
    try:
        wait_for(sweep.trial_children, "the first trial")
        refusal = Refusal(db_url)
        code, _, err = sweep.finish()
    finally:
        if refusal is not None:
            refusal.release()
        sweep.kill()
    assert code == 2, err
    message = error_line(err)
    assert "eager/fp32" in message and "is NOT stored" in message
    assert "No space left on device" in message and "--resume" in message
    assert listing.read_text().split() == ["filler"]  # no partial spill file left
    assert _configs(db_url, 1) == []


# -- the SQLite file removed mid-sweep ----------------------------------------------------------


@pytest.mark.slow
def test_a_database_file_removed_mid_sweep_is_an_error_and_its_trial_spilled(
        tmp_path: Path) -> None:
    path = tmp_path / "gone.db"
    url = f"sqlite:///{path}"
    sweep = Background("sweep", SLOW, "--db", url, *EAGER_TWO, cwd=tmp_path, env=FAST_RETRIES)
    try:
        wait_for(sweep.trial_children, "the first trial")
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        code, out, err = sweep.finish()
    finally:
        sweep.kill()
    message = error_line(err)  # exit 0 and "results are in" a file that was gone, before
    assert code == 2
    assert f"the SQLite database {path} was removed" in message and "is kept in" in message
    assert "next:" not in err and "is in sqlite" not in err
    (kept,) = _spilled(spill_dir(url))
    assert kept["config_key"] == "eager/fp32" and str(spill_dir(url)) in message
