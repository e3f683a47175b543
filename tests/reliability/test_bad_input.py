"""Bad input, as users and operators give it: one line on stderr, exit code 2, nothing written.
Each case runs the real command (in this process) against a database that is either absent
(and must stay absent) or holds one sweep (and must stay as it was)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from reliability_support import advisor, one_line_error, sweep_support

from advisor.db import ResultStore

WORKLOADS = Path(__file__).with_name("workloads")
HANGS = WORKLOADS / "hangs_at_import.py"
FOUR = sweep_support.FOUR_DTYPES
SWEEP = ("sweep", FOUR, "--device", "cpu", "--modes", "eager", "--dtypes", "fp32", "--no-warm")


def _bad_record(tmp_path: Path, make: SimpleNamespace) -> Path:
    records = [make.record(i) for i in range(3)]
    records[1]["config"] = {**records[1]["config"], "mode": "warp"}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(records))
    return path


def _a_file(tmp_path: Path, make: SimpleNamespace) -> Path:
    path = tmp_path / "not-a-dir"
    path.write_text("x")
    return path


# (id, args given the tmp dir and the builders, words the line holds, "new" or "existing" db)
CASES: list[tuple[str, Callable[[Path, SimpleNamespace], tuple[Any, ...]], str, str]] = [
    ("timeout-0", lambda t, m: (*SWEEP, "--timeout", "0"), "--timeout 0", "new"),
    ("timeout-negative", lambda t, m: (*SWEEP, "--timeout", "-5"), "--timeout -5", "new"),
    ("keep-caches-file", lambda t, m: (*SWEEP, "--keep-caches", _a_file(t, m)), "is a file",
     "new"),
    ("budget-empty", lambda t, m: (*SWEEP, "--budget", ""), "bad budget ''", "new"),
    ("trials-0", lambda t, m: (*SWEEP, "--trials", "0"), "--trials", "new"),
    ("hangs-at-import", lambda t, m: ("sweep", HANGS, "--device", "cpu", "--timeout", "2"),
     "importing it took longer than 2 s", "new"),
    ("import-invalid-record", lambda t, m: ("import", _bad_record(t, m)),
     "trial record 1", "existing"),
    ("resume-nothing", lambda t, m: (*SWEEP, "--resume", "--timeout", "60"),
     "no interrupted sweep", "existing"),
    ("list-missing-db", lambda t, m: ("list",), "no results database at", "new"),
    ("show-missing-db", lambda t, m: ("show", "1"), "no results database at", "new"),
    ("recommend-missing-db", lambda t, m: ("recommend", "w"), "no results database at", "new"),
    ("compare-missing-db", lambda t, m: ("compare", "w"), "no results database at", "new"),
    ("export-missing-db", lambda t, m: ("export",), "no results database at", "new"),
    ("show-unknown-sweep", lambda t, m: ("show", "99"), "no sweep 99", "existing"),
]


def _state(url: str) -> tuple[list[Any], list[Any]]:
    with ResultStore.from_url(url, read_only=True) as store:
        return store.sweeps(), store.trials()


@pytest.mark.parametrize(("args", "words", "db"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(
    args: Callable[[Path, SimpleNamespace], tuple[Any, ...]], words: str, db: str,
    tmp_path: Path, make: SimpleNamespace
) -> None:
    path = tmp_path / "results.db"
    url = f"sqlite:///{path}"
    before = None
    if db == "existing":
        with ResultStore.from_url(url) as store:
            sweep_id = store.create_sweep(make.workload(), make.fingerprint(), {}, "s", 1)
            store.add_trial(make.record(0), sweep_id)
            store.finish_sweep(sweep_id, "finished")
        before = _state(url)
    code, out, err = advisor(*args(tmp_path, make), "--db", url)
    message = one_line_error(code, err)
    assert words in message, message
    if db == "new":
        assert not path.exists()
        assert not list(tmp_path.glob("results.db*"))
    else:
        assert _state(url) == before


@pytest.mark.slow
def test_sigterm_exits_143_and_leaves_no_temporary_directory(tmp_path: Path) -> None:
    """SIGTERM while the parent imports a workload (its probe child running): exit 143, the
    probe ended, its temporary directory removed."""
    own_tmp = tmp_path / "tmp"
    own_tmp.mkdir()
    mark = tmp_path / "importing"
    env = sweep_support.cli_env(marker=tmp_path.name) | {"TMPDIR": str(own_tmp),
                                                         "ADVISOR_TEST_IMPORT_MARK": str(mark)}
    proc = subprocess.Popen(
        [*sweep_support.advisor_command(), "sweep", str(HANGS), "--device", "cpu", "--db",
         f"sqlite:///{tmp_path / 'r.db'}"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    try:
        while not mark.exists() and proc.poll() is None:
            time.sleep(0.1)  # until the parent is inside the import
        assert list(own_tmp.glob("advisor-probe-*")), "the probe had started"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, err
    assert "Traceback" not in err
    assert list(own_tmp.iterdir()) == []
    assert sweep_support.marked_processes(env[sweep_support.MARK]) == []
    assert not (tmp_path / "r.db").exists()
    assert os.environ.get("ADVISOR_TEST_IMPORT_MARK") is None
