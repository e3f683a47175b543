"""Markers that skip themselves (`gpu` without CUDA, `postgres` without ADVISOR_TEST_PG_URL), the
``db_url`` fixture every test that takes a database runs on, on both backends
(tests/support/backends.py), and how `-n 2 --dist load` shares the tests between the workers."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.backends import BACKENDS, PG_ENV, PG_SKIP, drop_database, new_database

from advisor.protocol import LISTEN_FLAG, SERVER_MODULE

# The suite runs two or three workers on two cores: each trial child compiles in its own thread
# instead of starting a pool of compile workers (children inherit this; tests that set it keep
# theirs).
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
# Every trial compiles into an empty Inductor cache, where Inductor would first dry-compile and
# load a test program for each vector ISA the CPU lists (about 7 s of g++ per cold compile on the
# 2-core machine, more than the model's own kernels). The tests take the CPU's list as it is:
# the same ISAs are found valid and the same one picked (torch._inductor.cpu_vec_isa), so the
# kernels compiled and run are the ones a user's trial compiles; only the probe is skipped (but
# AMX's and AVX512-BF16's own dry compiles, which Inductor runs whatever this says: 1.3 s against
# 7.4 s, bench/results/trial_fixed_costs_cpu_20261204T200102Z.md).
os.environ.setdefault("TORCHINDUCTOR_VEC_ISA_OK", "1")
# Every measurement samples for at least a quarter of a second instead of the CPU's second (and
# still takes its 30 samples or rounds at least): the tests check what the sweeps decide and
# record, which needs samples, not long windows; the figures quoted in docs come from bench/.
os.environ.setdefault("ADVISOR_MEASURE_S", "0.25")
# The suite runs two or three workers on two cores, so every figure it takes has neighbours by
# design: the host's figures are recorded with each but not judged (contended), and no trial
# waits for a quiet host; the tests of that judgement (tests/child/test_hostload.py) set their
# own values.
os.environ.setdefault("ADVISOR_BUSY_SLACK_CORES", "1000")
os.environ.setdefault("ADVISOR_QUIET_WAIT_S", "0")
# For the same reason a paired re-measurement is never judged to have met another host regime
# than its trials (tests/recommendation/test_decided_earned.py sets the default back).
os.environ.setdefault("ADVISOR_REGIME_RATIO", "1000")


SHARED_FORK_SERVER = "ADVISOR_FORK_SERVER_SOCKET"


@pytest.fixture(scope="session", autouse=True)
def _shared_fork_server() -> Iterator[None]:
    """One shared fork server for each pytest process (advisor.child.server --listen), named in
    $ADVISOR_FORK_SERVER_SOCKET: the `advisor` commands the tests start fork their children
    there instead of each starting a server that imports torch again (1.7 CPU-seconds a server
    on the 2-core host of bench/results/lane_profile_20261206T002028Z.md, 148 of them in the slow
    lane). A command whose user, namespaces, limits, interpreter or variables read at import
    differ (another user, an unshare, TMPDIR...) starts its own, as do the commands a test
    watches by marker (tests/support/sweeps.py `cli_env`) and the fork server's own tests."""
    if os.environ.get(SHARED_FORK_SERVER):
        yield  # the user's, kept
        return
    folder = tempfile.mkdtemp(prefix="advisor-forks-")  # 0700: this user's alone
    path = os.path.join(folder, "socket")
    server = subprocess.Popen([sys.executable, "-m", SERVER_MODULE, LISTEN_FLAG, path],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              start_new_session=True)
    deadline = time.monotonic() + 60
    while not os.path.exists(path) and server.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if os.path.exists(path):
        os.environ[SHARED_FORK_SERVER] = path
    try:
        yield
    finally:
        os.environ.pop(SHARED_FORK_SERVER, None)
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A new, empty database: a SQLite file, or a scratch PostgreSQL database (dropped after);
    every test that takes it runs on both (tests/support/backends.py)."""
    url = new_database(request.param, tmp_path)
    yield url
    drop_database(url)


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    gpu = [item for item in items if item.get_closest_marker("gpu") is not None]
    # torch is imported (slow) only when some collected test needs a GPU.
    if gpu and not _cuda_available():
        skip = pytest.mark.skip(reason="needs a CUDA device (torch.cuda.is_available() is False)")
        for item in gpu:
            item.add_marker(skip)
    if not os.environ.get(PG_ENV):
        skip = pytest.mark.skip(reason=PG_SKIP)
        for item in items:
            if item.get_closest_marker("postgres") is not None:
                item.add_marker(skip)



def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """The README's command runs the tests with ``-n 2 --dist load``: each test goes to whichever
    worker is free, so that a file of several long tests (the library's compiles, the workers'
    kills) is spread over both, except the tests of a file with a module-scoped fixture (a sweep,
    a seeded database, a rendered page), which stay together so that the fixture runs once.
    (xdist's own ``loadgroup`` would do this with marks, but its marks do not reach pytest 9's
    node ids.)"""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    root = Path(str(config.rootpath))

    class FilesWithModuleFixtures(LoadScopeScheduling):  # type: ignore[misc]
        shared: dict[str, bool] = {}

        def _split_scope(self, nodeid: str) -> str:
            file = nodeid.split("::")[0]
            if file not in self.shared:
                path = root / file
                dirs = [d for d in path.parents if d == root or root in d.parents]
                sources = [path, *(d / "conftest.py" for d in dirs)]
                self.shared[file] = any(MODULE_SCOPE.search(f.read_text(encoding="utf-8"))
                                        for f in sources if f.is_file())
            return file if self.shared[file] else nodeid

    return FilesWithModuleFixtures(config, log)


MODULE_SCOPE = re.compile(r"""scope\s*=\s*["']module["']""")
