"""After `kill -9` of a sweep, the next sweep removes what it left in the temporary directory:
the sweep's cache root, and its probe's and trial children's working directories, each named
``advisor-<kind>-<pid>-*`` after the process that made it and removed once that process is gone."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from reliability_support import HERE, sweep_support

from advisor import tempdirs
from advisor.config import EAGER_FP32
from advisor.search.launcher import Launcher, Probe
from advisor.search.pool import remove_orphaned_roots

HANGS = HERE / "workloads" / "hangs_at_import.py"
WRITES_ITS_CACHE_DIR = HERE / "workloads" / "writes_its_cache_dir.py"


@pytest.fixture
def own_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary directory of this test's own, for this process and those it starts."""
    where = tmp_path / "tmp"
    where.mkdir()
    monkeypatch.setenv("TMPDIR", str(where))
    monkeypatch.setattr(tempfile, "tempdir", str(where))
    return where


def test_the_probe_names_its_directory_after_its_process(own_tmp: Path) -> None:
    probe = Probe("cpu")
    try:
        (made,) = own_tmp.iterdir()
        assert made.name.startswith("advisor-probe-")
        assert tempdirs.owner(made) == os.getpid()
        assert remove_orphaned_roots() == [] and made.is_dir()  # its owner is alive
    finally:
        probe.close()
    assert list(own_tmp.iterdir()) == []


def test_only_the_directories_of_gone_processes_are_removed(own_tmp: Path) -> None:
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead = int(gone.stdout)
    orphans = [own_tmp / f"advisor-{kind}-{dead}-x1y2z3" for kind in ("sweep", "probe", "trial")]
    for folder in orphans:
        (folder / "inductor-cache").mkdir(parents=True)
    live = tempdirs.make("trial")
    others = [own_tmp / f"advisor-trial-{dead}", own_tmp / "advisor-device-cpu.lock",
              own_tmp / f"someone-{dead}-x1y2z3"]
    others[0].mkdir()
    others[1].touch()
    others[2].mkdir()
    assert sorted(remove_orphaned_roots()) == sorted(orphans)
    assert sorted(own_tmp.iterdir()) == sorted([live, *others])


@pytest.mark.slow
def test_a_trial_child_works_in_a_directory_named_after_its_parent(
        own_tmp: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mark = tmp_path / "cache-dir"
    monkeypatch.setenv("ADVISOR_TEST_IMPORT_MARK", str(mark))
    record = Launcher(timeout_s=120).run(WRITES_ITS_CACHE_DIR, EAGER_FP32, "cpu")
    assert record["status"] == "failed", record
    workdir = Path(mark.read_text()).parent
    assert workdir.parent == own_tmp and workdir.name.startswith("advisor-trial-")
    assert tempdirs.owner(workdir) == os.getpid()
    assert not workdir.exists()  # removed by the launcher once the trial ended


@pytest.mark.slow
def test_the_next_sweep_removes_what_a_killed_sweep_left(own_tmp: Path, tmp_path: Path) -> None:
    mark = tmp_path / "importing"
    env = sweep_support.cli_env(marker="own-tree") | {"TMPDIR": str(own_tmp),  # its own server
                                                      "ADVISOR_TEST_IMPORT_MARK": str(mark)}
    proc = subprocess.Popen(
        [*sweep_support.advisor_command(), "sweep", str(HANGS), "--device", "cpu", "--db",
         f"sqlite:///{tmp_path / 'r.db'}"], cwd=tmp_path, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while not mark.exists() and proc.poll() is None:
            time.sleep(0.1)  # until the parent is inside the import, its probe started
        tree = [proc.pid, *(p.pid for p in psutil.Process(proc.pid).children(recursive=True))]
        for pid in tree:
            with contextlib.suppress(ProcessLookupError):  # one that ended since it was listed
                os.kill(pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    left = sorted(p.name for p in own_tmp.iterdir())
    assert any(name.startswith(f"advisor-probe-{proc.pid}-") for name in left), left
    remove_orphaned_roots()  # what the next sweep does first
    assert list(own_tmp.iterdir()) == []
