"""Several workers on one sweep (real processes, real database), retry after kill -9, compare."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from advisor.db.store import ResultStore
from advisor.protocol import process_name

ROOT = Path(__file__).resolve().parents[2]
FOUR = str(ROOT / "tests" / "workloads" / "four_dtypes.py")
SLOW = str(ROOT / "tests" / "workloads" / "slow_build.py")
EAGER_ALL = ["--device", "cpu", "--modes", "eager", "--dtypes", "fp32,tf32,bf16,fp16",
             "--no-warm", "--no-confirm-leaders"]

pytestmark = pytest.mark.slow


def advisor(*args: str, env: dict[str, str] | None = None, timeout: float = 300):
    return subprocess.run([sys.executable, "-m", "advisor", *args], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})


def study_states(url: str, study_name: str) -> list[str]:
    import optuna

    study = optuna.load_study(study_name=study_name, storage=url)
    return [t.state.name for t in study.get_trials(deepcopy=False)]


def test_three_workers_measure_every_config_exactly_once(db_url: str) -> None:
    done = advisor("sweep", FOUR, "--db", db_url, *EAGER_ALL, "--workers", "3", "--json")
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    assert outcome["status"] == "finished"
    with ResultStore.from_url(db_url) as store:
        records = store.trials(sweep_id=outcome["sweep_id"])
        sweep = store.get_sweep(outcome["sweep_id"])
    keys = [r["config_key"] for r in records]
    assert sorted(keys) == sorted(f"eager/{d}" for d in ("fp32", "tf32", "bf16", "fp16"))
    assert sweep["status"] == "finished"
    assert study_states(db_url, outcome["study_name"]).count("COMPLETE") == 4
    # four eager configs of one tiny layer, timed beside three workers' start-ups: a pick, or
    # the answer that the timings cannot order them (never a silent empty one)
    rec = outcome["recommendation"]
    assert rec["best"] is not None or rec["decision"] == "undecided: noise", rec


def _cmdline(p: psutil.Process) -> list[str]:
    try:
        return p.cmdline()
    except psutil.Error:  # gone, or a zombie, since it was listed
        return []


def _workers_of(root: psutil.Process) -> list[psutil.Process]:
    return [p for p in root.children(recursive=True)
            if "worker" in _cmdline(p) and "advisor" in " ".join(_cmdline(p))]


def _trial_children(worker: psutil.Process) -> list[psutil.Process]:
    # Trial children name themselves (advisor.protocol.process_name); forked from the worker's
    # fork server, they are its grandchildren.
    try:
        return [p for p in worker.children(recursive=True) if p.name() == process_name("trial")]
    except psutil.Error:
        return []


def test_a_worker_killed_mid_trial_loses_nothing(db_url: str) -> None:
    # Two configs for two workers: the survivor, its own trial done, waits while the killed
    # worker's trial is still held, and measures it once it is failed and queued again.
    env = {**os.environ, "ADVISOR_HEARTBEAT_S": "1", "ADVISOR_HEARTBEAT_GRACE_S": "4"}
    env.pop("ADVISOR_FORK_SERVER_SOCKET", None)  # its trials found below its workers' servers
    sweep = subprocess.Popen(
        [sys.executable, "-m", "advisor", "sweep", SLOW, "--db", db_url, *EAGER_ALL[:4],
         "--dtypes", "fp32,bf16", *EAGER_ALL[6:], "--workers", "2", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    root = psutil.Process(sweep.pid)
    victim, orphan = None, None
    deadline = time.monotonic() + 120
    while victim is None and time.monotonic() < deadline:
        for w in _workers_of(root):
            children = _trial_children(w)
            if children:
                victim, orphan = w, children[0]
                break
        else:
            time.sleep(0.2)
    assert victim is not None, "no worker ever held a trial"
    os.kill(victim.pid, signal.SIGKILL)
    out, err = sweep.communicate(timeout=300)
    assert sweep.returncode == 0, err
    outcome = json.loads(out)
    # The killed worker's trial died with it (no orphan measuring on), and was retried.
    assert not orphan.is_running() or orphan.status() == psutil.STATUS_ZOMBIE
    with ResultStore.from_url(db_url) as store:
        keys = [r["config_key"] for r in store.trials(sweep_id=outcome["sweep_id"])]
    assert sorted(keys) == ["eager/bf16", "eager/fp32"]
    states = study_states(db_url, outcome["study_name"])
    assert states.count("COMPLETE") == 2
    assert states.count("FAIL") >= 1  # the stale trial, failed and queued again


def test_second_host_gets_its_own_sweep_and_compare_shows_both(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fleet.db'}"
    first = advisor("sweep", FOUR, "--db", url, *EAGER_ALL[:4], "--dtypes", "fp32,bf16",
                    "--no-warm", "--no-confirm-leaders", "--json")
    assert first.returncode == 0, first.stderr
    other = {"ADVISOR_FINGERPRINT_OVERRIDES": json.dumps(
        {"device_name": "Simulated H200", "torch_version": "2.99.0"})}
    second = advisor("sweep", FOUR, "--db", url, *EAGER_ALL[:4], "--dtypes", "fp32,bf16",
                     "--no-warm", "--no-confirm-leaders", "--json", env=other)
    assert second.returncode == 0, second.stderr
    a, b = json.loads(first.stdout), json.loads(second.stdout)
    assert a["sweep_id"] != b["sweep_id"]
    assert a["fingerprint"]["fingerprint_hash"] != b["fingerprint"]["fingerprint_hash"]

    compared = advisor("compare", "four-dtypes", "--db", url, "--json")
    assert compared.returncode == 0, compared.stderr
    devices = {d["device"] for d in json.loads(compared.stdout)["devices"]}
    assert "Simulated H200" in devices and len(devices) == 2
    table = advisor("compare", "four-dtypes", "--db", url)
    assert "Simulated H200" in table.stdout

    # A worker on the simulated host may not join the first host's sweep.
    refused = advisor("worker", str(a["sweep_id"]), "--db", url, "--device", "cpu", env=other)
    assert refused.returncode == 2
    lines = refused.stderr.strip().splitlines()
    # (the sweep is finished: that refusal comes first, one line with what to run instead)
    assert len(lines) == 1 and ("differs" in lines[0] and "device_name" in lines[0]
                                or f"sweep {a['sweep_id']} is finished" in lines[0])
