"""The host is part of the measurement (advisor.hostload): what a figure stores of the host, the
contention rule, and a real sweep beside two busy torch processes, which stores its host figures
and threads with every trial and does not decide from them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from advisor import hostload
from advisor.hostload import Snapshot

REPO = Path(__file__).resolve().parents[2]
TINY_MLP = REPO / "tests" / "workloads" / "tiny_mlp.py"
# A neighbour as users meet them: another torch process running matmuls, bounded in time
# (killed by the test before that), on one thread: busy on one core, the sweep's host is short
# of a core whatever else runs, without taking both cores from the tests beside it.
NEIGHBOUR = ("import time, torch\n"
             "torch.set_num_threads(1)\n"
             "a = torch.randn(384, 384)\n"
             "end = time.time() + 240\n"
             "while time.time() < end:\n"
             "    a @ a\n")


def test_others_are_the_host_busy_time_less_this_process(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    monkeypatch.setenv("ADVISOR_BUSY_SLACK_CORES", "0.5")
    start = Snapshot(at=10.0, host_busy_s=100.0, own_s=5.0, load=1.0, psi_total_us=1_000_000)
    end = Snapshot(at=12.0, host_busy_s=104.0, own_s=7.0, load=3.0, psi_total_us=2_000_000)
    figures = hostload.between(start, end, threads=1)
    assert figures["others_cores"] == 1.0  # (4 - 2) s of CPU over 2 s
    assert figures["psi_some"] == 0.5 and figures["wall_s"] == 2.0
    assert (figures["load_start"], figures["load_end"]) == (1.0, 3.0)


def test_contended_means_others_took_more_than_the_free_cores(monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    monkeypatch.setenv("ADVISOR_BUSY_SLACK_CORES", "0.5")
    monkeypatch.setattr(hostload.os, "cpu_count", lambda: 2)
    assert not hostload.contended(0.4, threads=2)  # the sweep's own parent waking now and then
    assert hostload.contended(0.6, threads=2)
    assert not hostload.contended(1.4, threads=1)  # one core left free, and used
    assert hostload.contended(1.6, threads=1)
    monkeypatch.setenv("ADVISOR_BUSY_SLACK_CORES", "1000")  # recorded, not judged
    assert not hostload.contended(2.0, threads=2)


def test_describe_names_the_others_cores_and_load() -> None:
    start = Snapshot(at=0.0, host_busy_s=0.0, own_s=0.0, load=5.5, psi_total_us=None)
    end = Snapshot(at=1.0, host_busy_s=1.8, own_s=0.0, load=5.2, psi_total_us=None)
    text = hostload.describe(hostload.between(start, end, threads=2))
    assert text.startswith("other processes used 1.8 of ") and text.endswith("load 5.5")


@pytest.mark.slow
def test_a_sweep_beside_busy_torch_processes_stores_its_host_and_does_not_decide(
        tmp_path: Path) -> None:
    from support.sweeps import cli_env, json_out, open_store, sqlite_url

    url = sqlite_url(tmp_path / "a.db")
    neighbours = [subprocess.Popen([sys.executable, "-c", NEIGHBOUR], env=cli_env())]
    try:
        done = _sweep_busy(url, tmp_path)
    finally:
        for n in neighbours:
            n.kill()
            n.wait()
    assert done.returncode == 0, done.stderr
    out = json_out(done)
    rec = out["recommendation"]
    with open_store(url) as store:
        trials = store.trials()
    hosts = [t["host"] for t in trials]
    assert len(hosts) == 2 and all(h["threads"] == h["cores"] for h in hosts)  # set explicitly
    assert all(h["others_cores"] > 0.5 for h in hosts)
    assert any(h["contended"] for h in hosts)
    assert rec["decision"] == "undecided: host busy" and rec["best"] is None
    assert rec["sentence"].startswith("cannot decide here: host busy (other processes used ")


def _sweep_busy(url: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    from support.sweeps import advisor_command, cli_env

    env = cli_env()
    env.update(ADVISOR_BUSY_SLACK_CORES="0.5", ADVISOR_QUIET_WAIT_S="1")
    return subprocess.run(
        [*advisor_command(), "sweep", str(TINY_MLP), "--db", url, "--modes", "eager",
         "--dtypes", "fp32,bf16", "--no-warm", "--json"],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)
