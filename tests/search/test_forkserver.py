"""Children forked from the fork server (advisor.search.forkserver, advisor.child.server), run
for real: a forked child is the child a fresh process would be (its own session and name, the
environment, directory and affinity it was given, its exit code or signal reported), a kill
reaches its helpers, a server that dies takes its children with it and is started again, a
GPU's child is forked as a CPU's is, and the children it cannot fork as they are asked for
(another value of a variable read at torch's import, the setting off) start fresh."""

from __future__ import annotations

import json
import os
import resource
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from advisor import settings
from advisor.config import EAGER_FP32
from advisor.errors import ConfigError
from advisor.protocol import LISTEN_FLAG, SERVER_MODULE, process_name
from advisor.search import forkserver
from advisor.search.launcher import Child, Launcher

pytestmark = pytest.mark.slow  # each test starts a fork server and real children (2-10 s)

HANGS = Path(__file__).resolve().parents[1] / "workloads" / "hangs.py"
LEAVES_HELPER = HANGS.with_name("leaves_helper.py")
WAIT_S = 300  # a generous bound for a child on a loaded 2-core host: only a hang reaches it


@pytest.fixture(autouse=True)
def _own_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts this process's fork server afresh and stops it (its own: not the
    suite's shared one, tests/conftest.py)."""
    monkeypatch.delenv("ADVISOR_FORK_SERVER_SOCKET", raising=False)
    forkserver.close()
    yield
    forkserver.close()


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {**settings.child_env(), "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "cache"),
            "PYTHONUNBUFFERED": "1", **extra}


def _probe(tmp_path: Path, name: str, **extra: str) -> Child:
    workdir = tmp_path / name
    workdir.mkdir()
    return Child({"kind": "probe", "device": "cpu"}, workdir, _env(tmp_path, **extra), None)


def _wait_for(path: Path) -> str:
    deadline = time.monotonic() + WAIT_S
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never written"
        time.sleep(0.05)
    return path.read_text()


def test_a_forked_probe_gets_its_own_environment_and_reports_its_exit(tmp_path: Path) -> None:
    plain = _probe(tmp_path, "plain")
    assert isinstance(plain.proc, forkserver.ForkedProcess)
    assert plain.wait(WAIT_S) == 0
    assert (plain.result() or {})["device_kind"] == "cpu"
    # another value of a variable read after the import: forked too, and the child reads it
    told = _probe(tmp_path, "told",
                  ADVISOR_FINGERPRINT_OVERRIDES=json.dumps({"device_name": "Told GPU"}))
    assert isinstance(told.proc, forkserver.ForkedProcess)
    assert told.wait(WAIT_S) == 0
    assert (told.result() or {})["device_name"] == "Told GPU"
    assert (plain.result() or {})["device_name"] != "Told GPU"


def test_a_spec_of_no_known_kind_exits_2_through_the_server(tmp_path: Path) -> None:
    child = Child({"kind": "nope", "device": "cpu"},  # type: ignore[arg-type,typeddict-item]
                  tmp_path, _env(tmp_path), None)
    assert isinstance(child.proc, forkserver.ForkedProcess)
    assert child.wait(WAIT_S) == 2
    assert "spec has kind 'nope'" in child.stderr_tail()


def test_a_forked_trial_is_a_process_of_its_own_and_a_kill_takes_its_helpers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _probe(tmp_path, "first").wait(WAIT_S) == 0  # the server starts here, in another cwd
    monkeypatch.chdir(tmp_path)
    launcher, runner, records, own, helper = _hanging_trial(tmp_path, monkeypatch)
    try:
        child = psutil.Process(own)
        server = forkserver._server
        assert server is not None and child.ppid() == server.proc.pid  # forked, not started
        assert os.getsid(own) == own and os.getpgid(helper) == own  # a session of its own
        assert child.name() == process_name("trial")
        assert child.cwd() == str(tmp_path)
        assert child.cpu_affinity() == sorted(os.sched_getaffinity(0))
    finally:
        launcher.kill()
        runner.join(WAIT_S)
    [record] = records
    assert record["status"] == "failed" and record["failure_reason"] == "interrupted"
    _gone(own)
    _gone(helper)


@pytest.mark.parametrize("forked", [True, False], ids=["forked", "fresh"])
def test_a_trial_that_ends_takes_the_helpers_it_left_with_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forked: bool) -> None:
    """An ended child's process group is killed before the child is reaped (while its zombie
    holds the group's id, which no other process can then have): by the fork server for a
    forked child, by the launcher for a fresh one; nothing is sent to a reaped child."""
    if not forked:
        monkeypatch.setenv("ADVISOR_FORK_SERVER", "0")
    pidfile = tmp_path / "pids"
    monkeypatch.setenv("ADVISOR_TEST_PIDFILE", str(pidfile))
    launcher = Launcher(timeout_s=WAIT_S)
    records: list[dict[str, object]] = []
    runner = threading.Thread(target=lambda: records.append(dict(
        launcher.run(LEAVES_HELPER, EAGER_FP32, "cpu", measure_warm=False))))
    runner.start()
    own, helper = map(int, _wait_for(pidfile).split())
    try:  # held while they run: is_running() tells a reused pid from them
        alive = [psutil.Process(pid) for pid in (own, helper)]
    except psutil.NoSuchProcess:
        alive = []  # the trial already ended: nothing left to hold
    runner.join(WAIT_S)
    [record] = records
    assert record["status"] == "ok", record.get("error_tail")
    deadline = time.monotonic() + 30  # a SIGKILLed process takes a moment to be torn down
    while [p for p in alive if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]:
        assert time.monotonic() < deadline, [p.pid for p in alive if p.is_running()]
        time.sleep(0.05)


def _hanging_trial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                   ) -> tuple[Launcher, threading.Thread, list[dict[str, object]], int, int]:
    """A trial of `HANGS` running in a thread: (its launcher, the thread, where its record
    goes, the trial's pid, its helper's pid)."""
    pidfile = tmp_path / "pids"
    monkeypatch.setenv("ADVISOR_TEST_PIDFILE", str(pidfile))
    launcher = Launcher(timeout_s=WAIT_S)
    records: list[dict[str, object]] = []
    runner = threading.Thread(target=lambda: records.append(
        dict(launcher.run(HANGS, EAGER_FP32, "cpu", measure_warm=False))))
    runner.start()
    own, helper = map(int, _wait_for(pidfile).split())
    return launcher, runner, records, own, helper


def test_a_killed_server_takes_its_children_and_the_next_child_starts_another(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    launcher, runner, records, own, helper = _hanging_trial(tmp_path, monkeypatch)
    server = forkserver._server
    assert server is not None
    server.proc.kill()  # kill -9: its children die with it (PR_SET_PDEATHSIG)
    runner.join(WAIT_S)
    [record] = records
    assert record["status"] == "failed" and record["failure_reason"] == "crash"
    _gone(own)
    _gone(helper)  # the launcher kills the trial's group once it has ended
    again = _probe(tmp_path, "again")
    assert isinstance(again.proc, forkserver.ForkedProcess)
    assert forkserver._server is not None and forkserver._server is not server
    assert again.wait(WAIT_S) == 0


def test_the_server_kills_its_children_when_its_launcher_goes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    launcher, runner, records, own, helper = _hanging_trial(tmp_path, monkeypatch)
    server = forkserver._server
    assert server is not None
    forkserver.close()  # the socket closes, as when the launching process exits or is killed
    assert server.proc.wait(WAIT_S) == 0
    _gone(own)
    _gone(helper)  # the server killed the trial's whole group
    runner.join(WAIT_S)
    [record] = records
    assert record["status"] == "failed"


def test_the_setting_off_starts_children_fresh(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(_probe(tmp_path, "first").proc, forkserver.ForkedProcess)
    monkeypatch.setenv("ADVISOR_FORK_SERVER", "0")
    child = _probe(tmp_path, "fresh")
    assert isinstance(child.proc, subprocess.Popen)
    assert child.wait(WAIT_S) == 0 and (child.result() or {})["device_kind"] == "cpu"


def test_another_value_read_at_import_gets_a_server_of_its_own_once_the_old_one_is_idle(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _probe(tmp_path, "first").wait(WAIT_S) == 0
    first = forkserver._server
    assert first is not None
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # read at torch's import: the first cannot serve
    launcher, runner, records, own, helper = _hanging_trial(tmp_path, monkeypatch)
    try:
        second = forkserver._server
        assert second is not None and second is not first
        assert first.proc.poll() == 0  # stopped (it had no child), and reaped
        assert psutil.Process(own).ppid() == second.proc.pid  # forked from the new one
        assert psutil.Process(own).environ().get("OMP_NUM_THREADS") == "1"
        # while the second has a child running, a third value starts fresh
        monkeypatch.setenv("OMP_NUM_THREADS", "2")
        fresh = _probe(tmp_path, "fresh")
        assert isinstance(fresh.proc, subprocess.Popen) and forkserver._server is second
        assert fresh.wait(WAIT_S) == 0 and (fresh.result() or {})["device_kind"] == "cpu"
    finally:
        launcher.kill()
        runner.join(WAIT_S)
    _gone(own)
    _gone(helper)


def test_a_process_that_compiled_in_process_still_forks_its_children(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Inductor puts an address in its process's environment before it loads a compiled module
    (`_TORCHINDUCTOR_PYOBJECT_TENSOR_DATA_PTR`); nothing reads it at import, so a child of a
    process that compiled (a Python session, a test worker) is still forked from the server
    started before (it used to get a server of its own, importing torch again)."""
    import torch

    assert _probe(tmp_path, "before").wait(WAIT_S) == 0
    server = forkserver._server
    assert server is not None
    name = "_TORCHINDUCTOR_PYOBJECT_TENSOR_DATA_PTR"
    monkeypatch.setenv(name, "0")  # restored after the test, whatever Inductor sets
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    torch.compile(lambda x: x * 2 + 1)(torch.ones(8))
    assert os.environ[name] != "0"  # Inductor's own address, set as it loaded the kernel
    after = _probe(tmp_path, "after")
    assert after.wait(WAIT_S) == 0 and not isinstance(after.proc, subprocess.Popen)
    assert forkserver._server is server and server.proc.poll() is None


def test_a_bad_setting_is_one_line_before_any_child(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADVISOR_FORK_SERVER", "yes")
    with pytest.raises(ConfigError, match=r"^ADVISOR_FORK_SERVER must be 0 or 1, not 'yes'"):
        settings.child_env()


def _gone(pid: int) -> None:
    """Wait until `pid` has died (a zombie counts: it runs no more)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return
        except psutil.NoSuchProcess:
            return
        assert time.monotonic() < deadline, f"process {pid} still runs"
        time.sleep(0.05)


def test_the_server_imports_torch_and_leaves_compilers_and_devices_to_its_children() -> None:
    # in a fresh interpreter, as the server does before its first fork (on a GPU host too:
    # no CUDA context may exist before a fork)
    code = ("import sys, torch; from advisor.child.server import preload; preload(); "
            "print([m for m in ('torch._inductor', 'torch._dynamo', 'triton') "
            "if m in sys.modules], torch.cuda.is_initialized())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=WAIT_S, check=True)
    assert done.stdout.split("\n")[0] == "[] False", done.stdout + done.stderr


def test_a_gpus_child_is_forked_too(tmp_path: Path) -> None:
    # the server never touched a device: a CUDA child creates its context after the fork (with
    # no GPU its probe fails, as a fresh one would; tests/gpu holds what it does on one)
    import torch

    child = Child({"kind": "probe", "device": "cuda"}, tmp_path, _env(tmp_path), None)
    assert isinstance(child.proc, forkserver.ForkedProcess)
    code, result = child.wait(WAIT_S), child.result()
    if torch.cuda.is_available():
        assert code == 0 and (result or {})["device_kind"] == "cuda", child.stderr_tail()
    else:
        assert code != 0 and result is None


def test_a_child_that_cannot_be_set_up_fails_alone(tmp_path: Path) -> None:
    # the wire itself: a request whose directory is gone gives a child that exits 1 with its
    # traceback, and the server forks the next request as before
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    server = subprocess.Popen([sys.executable, "-m", SERVER_MODULE, str(theirs.fileno())],
                              pass_fds=(theirs.fileno(),), env=_env(tmp_path))
    theirs.close()
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"kind": "probe", "device": "cpu"}))
    try:
        codes = []
        for n, cwd in enumerate([str(tmp_path / "gone"), str(tmp_path)]):
            with open(tmp_path / f"err{n}", "wb") as err, open(os.devnull, "wb") as out:
                request = {"id": n, "argv": ["x", str(spec), str(tmp_path / f"result{n}.json")],
                           "env": _env(tmp_path), "cwd": cwd, "affinity": []}
                socket.send_fds(ours, [json.dumps(request).encode()], [out.fileno(), err.fileno()])
            started = json.loads(ours.recv(1 << 16))
            assert started["id"] == n and started["pid"] > 0
            ended = json.loads(ours.recv(1 << 16))
            assert ended["pid"] == started["pid"]
            codes.append(ended["code"])
        assert codes == [1, 0]
        assert "FileNotFoundError" in (tmp_path / "err0").read_text()
        assert json.loads((tmp_path / "result1.json").read_text())["device_kind"] == "cpu"
    finally:
        ours.close()
        assert server.wait(WAIT_S) == 0


@pytest.fixture
def shared(monkeypatch: pytest.MonkeyPatch) -> Iterator[subprocess.Popen[bytes]]:
    """A shared fork server (``--listen``) named in $ADVISOR_FORK_SERVER_SOCKET; stopped after."""
    folder = Path(tempfile.mkdtemp(prefix="advisor-forks-"))
    path = folder / "socket"
    listener = subprocess.Popen([sys.executable, "-m", SERVER_MODULE, LISTEN_FLAG, str(path)],
                                stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        _wait_for_path(path)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600  # this user's alone
        monkeypatch.setenv("ADVISOR_FORK_SERVER_SOCKET", str(path))
        yield listener
    finally:
        forkserver.close()
        listener.terminate()
        listener.wait(WAIT_S)
        shutil.rmtree(folder, ignore_errors=True)


def _wait_for_path(path: Path) -> None:
    deadline = time.monotonic() + WAIT_S
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never made"
        time.sleep(0.05)


def test_a_shared_server_forks_a_server_for_this_process_whose_children_are_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        shared: subprocess.Popen[bytes]) -> None:
    probe = _probe(tmp_path, "first")
    server = forkserver._server
    assert server is not None and server.proc is None  # connected, not started here
    assert psutil.Process(server.pid).ppid() == shared.pid  # forked by the listening server
    assert isinstance(probe.proc, forkserver.ForkedProcess) and probe.wait(WAIT_S) == 0
    assert (probe.result() or {})["device_kind"] == "cpu"
    monkeypatch.chdir(tmp_path)
    launcher, runner, records, own, helper = _hanging_trial(tmp_path, monkeypatch)
    try:
        child = psutil.Process(own)
        assert forkserver._server is server and child.ppid() == server.pid
        assert os.getsid(own) == own and os.getpgid(helper) == own
        assert child.cwd() == str(tmp_path)  # this process's, not the listening server's
        assert child.cpu_affinity() == sorted(os.sched_getaffinity(0))
        assert child.name() == process_name("trial")
    finally:
        forkserver.close()  # as when this process exits: its server kills its children, ends
    _gone(own)
    _gone(helper)
    _gone(server.pid)
    runner.join(WAIT_S)
    [record] = records
    assert record["status"] == "failed"
    assert shared.poll() is None  # the shared server serves on: the next process connects
    again = _probe(tmp_path, "again")
    assert again.wait(WAIT_S) == 0 and forkserver._server is not None
    assert forkserver._server.proc is None and forkserver._server.pid != server.pid


def test_a_process_unlike_the_shared_server_starts_its_own(
        tmp_path: Path, shared: subprocess.Popen[bytes]) -> None:
    # a variable read at torch's import differs: the shared server's children would not have it
    child = _probe(tmp_path, "threads", OMP_NUM_THREADS="1")
    server = forkserver._server
    assert server is not None and server.proc is not None  # its own, started here
    assert isinstance(child.proc, forkserver.ForkedProcess) and child.wait(WAIT_S) == 0
    forkserver.close()
    # a limit differs (open files, lowered by one for this process alone)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft - 1, hard))
    try:
        child = _probe(tmp_path, "limits")
        assert forkserver._server is not None and forkserver._server.proc is not None
        assert child.wait(WAIT_S) == 0
    finally:
        forkserver.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_stopped_shared_server_leaves_each_process_to_start_its_own(
        tmp_path: Path, shared: subprocess.Popen[bytes]) -> None:
    path = Path(os.environ["ADVISOR_FORK_SERVER_SOCKET"])
    shared.terminate()
    assert shared.wait(WAIT_S) == 0 and not path.exists()  # it removes its socket
    path.parent.mkdir(exist_ok=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    stale.bind(str(path))  # a socket no one listens on, as a killed server leaves
    stale.close()
    child = _probe(tmp_path, "fresh")
    assert forkserver._server is not None and forkserver._server.proc is not None
    assert child.wait(WAIT_S) == 0


@pytest.mark.parametrize(("value", "words"), [
    ("/nonexist_dir/socket", "No such file or directory"), ("/proc", "is not a Unix socket")])
def test_a_shared_server_setting_naming_no_socket_is_one_line(
        monkeypatch: pytest.MonkeyPatch, value: str, words: str) -> None:
    monkeypatch.setenv("ADVISOR_FORK_SERVER_SOCKET", value)
    with pytest.raises(ConfigError, match=rf"^ADVISOR_FORK_SERVER_SOCKET={value}.*{words}.*"
                                          r"advisor\.child\.server --listen PATH"):
        settings.child_env()
