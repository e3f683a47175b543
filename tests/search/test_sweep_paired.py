"""Every sweep ends on a paired headline, and its row reads ``finished`` only once that is
stored: a real CPU sweep whose compiled pick stands alone (no contender) re-measures it against
eager fp32 interleaved in one process; a parent killed (kill -9) during that re-measurement
leaves a sweep that reads dead, not finished, and --resume runs the re-measurement again
without measuring a config twice."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from support.sweeps import (
    MANY_SMALL_OPS,
    advisor_command,
    cli_env,
    json_out,
    marked_processes,
    open_store,
    sqlite_url,
)

from advisor.config import EAGER_FP32, CompileConfig

pytestmark = pytest.mark.slow

ARGS = ("--modes", "eager,default", "--dtypes", "fp32", "--no-warm", "--screen", "0")
PAIRING = "against eager fp32, interleaved in one process"
DEADLINE_S = 300
POLL_S = 0.1


def _wait_for(path: Path, text: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while text not in path.read_text():
        assert proc.poll() is None, f"the sweep ended before {text!r}: {path.read_text()}"
        assert time.monotonic() < deadline, f"no {text!r} before the deadline"
        time.sleep(POLL_S)


def _gone(marker: str) -> bool:
    deadline = time.monotonic() + 60
    while marked_processes(marker) and time.monotonic() < deadline:
        time.sleep(0.5)
    return not marked_processes(marker)


def test_a_killed_pairing_leaves_the_sweep_unfinished_and_resume_ends_it_paired(
    tmp_path: Path,
) -> None:
    url = sqlite_url(tmp_path / "paired.db")
    marker = uuid.uuid4().hex
    env = {**cli_env(marker), "ADVISOR_SWEEP_HEARTBEAT_S": "0.5"}
    err = tmp_path / "err.txt"
    with open(tmp_path / "out.json", "wb") as out, open(err, "wb") as errors:
        proc = subprocess.Popen([*advisor_command(), "sweep", str(MANY_SMALL_OPS), *ARGS,
                                 "--db", url, "--json"], cwd=tmp_path, env=env, stdout=out,
                                stderr=errors)
        try:
            _wait_for(err, PAIRING, proc)
            with open_store(url) as store:
                (sweep,) = store.sweeps()
                assert store.get_sweep(sweep["id"])["stored_status"] == "running"
                assert len(store.trials(sweep_id=sweep["id"])) == 2  # every trial stored
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert _gone(marker), "the re-measurement's child outlived its parent"

    # Its heartbeat stops with it: the sweep reads dead, never finished, and nothing paired
    # was stored.
    time.sleep(2.0)
    listed = subprocess.run([*advisor_command(), "list", "--db", url, "--json"], cwd=tmp_path,
                            env={**cli_env(), "ADVISOR_SWEEP_DEAD_AFTER_S": "1"},
                            capture_output=True, text=True, timeout=120, check=False)
    assert listed.returncode == 0, listed.stderr
    (row,) = json_out(listed)
    assert row["status"] == "dead", row
    with open_store(url) as store:
        assert store.confirmations("many-small-ops") == []

    # --resume measures nothing again and runs the pairing: the headline is a paired speedup.
    # (its heartbeat is seconds old: read as dead after 1 s, as a user would after 120)
    done = subprocess.run([*advisor_command(), "sweep", str(MANY_SMALL_OPS), *ARGS, "--db", url,
                           "--resume", "--json"], cwd=tmp_path,
                          env={**cli_env(), "ADVISOR_SWEEP_DEAD_AFTER_S": "1"},
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    rec = json_out(done)["recommendation"]
    with open_store(url) as store:
        (sweep,) = store.sweeps()
        records = store.trials(sweep_id=sweep["id"])
        (confirmation,) = store.confirmations("many-small-ops")
    assert sweep["status"] == "finished"
    assert sorted(r["config_key"] for r in records) == sorted(
        [EAGER_FP32.key, CompileConfig(mode="default").key])  # no config measured twice
    assert confirmation["status"] == "ok"
    assert {e["config_key"] for e in confirmation["entries"]} == {
        EAGER_FP32.key, CompileConfig(mode="default").key}
    assert rec["best"]["config"]["mode"] == "default", rec["sentence"]
    assert rec["best"]["confirmed"] and rec["baseline"]["confirmed"]
    assert rec["confirmation"]["used"] is True
    assert "x paired" in rec["sentence"] and "not paired" not in rec["sentence"]
