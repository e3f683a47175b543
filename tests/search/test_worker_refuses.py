"""`advisor worker SWEEP` on a sweep it cannot work on (finished; interrupted, stopped or dead
with nothing queued) says why and what to run, in one line, exit 2; an interrupted sweep whose
study still holds queued configs (a pooled run that died) is one it can work on."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from advisor import fingerprint
from advisor.config import EAGER_FP32
from advisor.db import ResultStore
from advisor.search.fleet import has_work
from advisor.search.request import SweepSettings
from advisor.search.study import open_study

WORKLOAD = {"name": "tiny", "path": "/srv/workloads/tiny.py", "source_sha256": "0" * 64,
            "info": {}}


def _sweep(url: str, status: str, study: str = "tiny-1") -> int:
    with ResultStore.from_url(url) as store:
        sweep_id = store.create_sweep(WORKLOAD, fingerprint.collect("cpu"),
                                      {**SweepSettings(device="cpu", timeout_s=60.0).to_dict(),
                                       "space": [EAGER_FP32.to_dict()]},
                                      study, 1)
        if status != "running":
            store.finish_sweep(sweep_id, status)
    return sweep_id


def _worker(url: str, sweep_id: int, **env: str) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run([sys.executable, "-m", "advisor", "worker", str(sweep_id), "--db", url,
                           "--device", "cpu"], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=120)


@pytest.mark.parametrize(("status", "said"), [
    ("interrupted", "is interrupted"), ("stopped", "is stopped (its budget ran out)"),
])
def test_an_ended_sweep_with_nothing_queued_says_how_to_continue_it(
        tmp_path: Path, status: str, said: str) -> None:
    url = f"sqlite:///{tmp_path / 'f.db'}"
    sweep_id = _sweep(url, status)
    done = _worker(url, sweep_id)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"advisor: error: sweep {sweep_id} {said}; ")
    resume = f"`advisor sweep /srv/workloads/tiny.py --db {url} --resume`"
    assert f"continue it with {resume}" in lines[0]
    assert f"`advisor worker {sweep_id}`" in lines[0]
    assert done.stdout == ""


def test_a_finished_sweep_has_nothing_to_measure(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'f.db'}"
    sweep_id = _sweep(url, "finished")
    done = _worker(url, sweep_id)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"advisor: error: sweep {sweep_id} is finished: nothing is left to measure; its "
        f"results: `advisor show {sweep_id}`; to measure again, start a new sweep: "
        "`advisor sweep /srv/workloads/tiny.py`")


def test_a_dead_sweep_says_so(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'f.db'}"
    sweep_id = _sweep(url, "running")
    # a heartbeat older than a microsecond: dead by the time the worker reads it
    done = _worker(url, sweep_id, ADVISOR_SWEEP_DEAD_AFTER_S="0.000001")
    assert done.returncode == 2
    assert f"sweep {sweep_id} is dead (its process stopped beating)" in done.stderr
    assert "--resume`" in done.stderr


def test_queued_configs_of_an_interrupted_sweep_are_work(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'f.db'}"
    sweep_id = _sweep(url, "interrupted", "held")
    with ResultStore.from_url(url) as store:
        sweep = store.get_sweep(sweep_id)
        assert not has_work(store, sweep)
        study = open_study(url, "held")
        study.enqueue_trial({"mode": "eager", "dtype": "fp32"}, user_attrs={"queued": True})
        assert has_work(store, sweep)
        assert has_work(store, {**sweep, "status": "running"})
