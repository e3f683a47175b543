"""Children forked from one process that has imported torch once (`advisor.child.server`),
instead of each started as a fresh interpreter that imports torch again.

`spawn` starts this process's fork server on first use (with the first child's environment and
this process's CPU affinity) and forks from it every child, a CPU's or a GPU's, whose
environment differs from that one only in variables read after torch's import (`forkable`). A
child it cannot serve (a variable read at import changed, or this process's affinity) gets a new
server, started for it, once the old one has no child running; while it has one, and when the
server is off (`advisor.settings.fork_server`) or gone, `spawn` returns None and the launcher
starts a fresh process as before. The server never initialises CUDA nor NVML, so a GPU's child
makes its own CUDA context after the fork, as a fresh process would (tests/gpu proves it on an
H200). A forked child is the same program as a fresh one (`advisor.child.main`), in its own
session, with the same environment, directory and affinity.

The server lives as long as this process: when it exits or is killed, the socket closes and
the server kills its children. `ForkedProcess` offers the part of `subprocess.Popen` a launcher
uses (pid, stdout, poll, wait).

Where $ADVISOR_FORK_SERVER_SOCKET names a shared fork server (``python -m advisor.child.server
--listen PATH``), the server is the one it forks for this process's connection
(`ForkServer.connect`), used only while its identity (`advisor.protocol.fork_identity`: user,
namespaces, limits, interpreter...) is this process's and its environment serves the child's;
else, or when it does not answer, one of this process's own (`ForkServer.start`).
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping
from typing import IO, Any

from advisor import settings
from advisor.protocol import SERVER_MODULE, fork_identity

log = logging.getLogger(__name__)
MAX_MESSAGE = 1 << 16
CLOSE_WAIT_S = 30.0  # for the server to kill its children and exit, before it is killed
CONNECT_WAIT_S = 60.0  # for a shared server's first message (it may still be importing torch)

# Variables a forked child may have other than the server's: those torch and its libraries
# read after their import (Inductor's and Triton's when they are imported, in the child;
# advisor's own when read), not those read at import (OMP_*, MKL_*, TORCH_*, PYTHON*, LD_*...).
FORKABLE_PREFIXES = ("ADVISOR_", "TORCHINDUCTOR_", "TRITON_")
# and the shell's bookkeeping, the terminal's size, pytest's name of the test it runs (it
# changes at each phase of each test: a sweep run from a test suite), and the address Inductor
# puts in its own process's environment before it loads each compiled module, which that
# module reads at once (torch._inductor.codecache): a process that compiled in-process (a
# Python session, a test worker) passes it on, and a child that compiles sets its own first.
# Nothing reads these at import.
FORKABLE_NAMES = frozenset({"PWD", "OLDPWD", "SHLVL", "_", "COLUMNS", "LINES",
                            "PYTEST_CURRENT_TEST", "_TORCHINDUCTOR_PYOBJECT_TENSOR_DATA_PTR"})


def unforkable(env: Mapping[str, str], server_env: Mapping[str, str]) -> list[str]:
    """The variables that keep a child with `env` from being forked from a server started
    with `server_env` (those read at import that differ), sorted."""
    return sorted(k for k in env.keys() | server_env.keys() if env.get(k) != server_env.get(k)
                  and not k.startswith(FORKABLE_PREFIXES) and k not in FORKABLE_NAMES)


def forkable(env: Mapping[str, str], server_env: Mapping[str, str]) -> bool:
    """Whether a child with `env` may be forked from a server started with `server_env`."""
    return not unforkable(env, server_env)


class _Exit:
    def __init__(self) -> None:
        self.code: int | None = None
        self.reaped = False  # by its server, which killed the child's group first
        self.done = threading.Event()

    def set(self, code: int, reaped: bool = False) -> None:
        self.code, self.reaped = code, reaped
        self.done.set()


class ForkedProcess:
    """A child the fork server forked: `subprocess.Popen`'s pid, stdout, poll and wait."""

    def __init__(self, pid: int, stdout: IO[bytes], exit_: _Exit, args: list[str]) -> None:
        self.pid, self.stdout, self.args = pid, stdout, args
        self._exit = exit_

    def poll(self) -> int | None:
        return self._exit.code

    @property
    def reaped(self) -> bool:
        """Ended and reaped by its server, which killed the rest of its process group first
        (`advisor.child.server`); False while it runs, and when its server died first."""
        return self._exit.reaped

    def wait(self, timeout: float | None = None) -> int:
        if not self._exit.done.wait(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        assert self._exit.code is not None
        return self._exit.code


class ForkServer:
    """One fork server and the socket to it: a process of this process's own (`start`), or one
    a shared server forked for this connection (`connect`); `spawn` is thread-safe."""

    def __init__(self, sock: socket.socket, env: Mapping[str, str], pid: int,
                 proc: subprocess.Popen[bytes] | None) -> None:
        self.sock, self.env, self.pid, self.proc = sock, dict(env), pid, proc
        self.affinity = os.sched_getaffinity(0)
        self.dead = False
        self._lock = threading.Lock()
        self._ended = threading.Event()  # the server closed its end: its children are gone
        self._ids = itertools.count()
        # request id -> (set once answered, [(pid, its exit)] once forked)
        self._starting: dict[int, tuple[threading.Event, list[tuple[int, _Exit]]]] = {}
        self._exits: dict[int, _Exit] = {}  # pid -> its exit
        threading.Thread(target=self._read, name="fork-server", daemon=True).start()
        log.debug("fork server pid %d %s", pid, "started" if proc else "connected")

    @classmethod
    def start(cls, env: Mapping[str, str]) -> ForkServer:
        """A server of this process's own, started with `env` (OSError: it could not be)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", SERVER_MODULE, str(theirs.fileno())],
                pass_fds=(theirs.fileno(),), env=dict(env), stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, start_new_session=True,
            )
        except OSError:
            ours.close()
            raise
        finally:
            theirs.close()
        return cls(ours, env, proc.pid, proc)

    @classmethod
    def connect(cls, path: str, env: Mapping[str, str]) -> ForkServer | None:
        """The server a shared fork server (``--listen``) at `path` forks for this connection,
        when its identity (`advisor.protocol.fork_identity`, its environment aside) is this
        process's and it may fork a child with `env`; else None (closed)."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            sock.settimeout(CONNECT_WAIT_S)
            sock.connect(path)
            hello: dict[str, Any] = json.loads(sock.recv(1 << 20) or b"null") or {}
            sock.settimeout(None)
        except (OSError, ValueError) as e:
            log.info("shared fork server at %s did not answer (%s): starting one", path, e)
            sock.close()
            return None
        if not isinstance(hello.get("pid"), int):
            log.info("shared fork server at %s sent no pid: starting one", path)
            sock.close()
            return None
        identity = dict(hello.get("identity") or {})
        server_env = identity.pop("env", {})
        ours = fork_identity()
        differs = sorted(k for k in identity.keys() | ours.keys()
                         if identity.get(k) != ours.get(k))
        if not forkable(env, server_env):
            differs.append("environment: " + ", ".join(unforkable(env, server_env))[:200])
        if differs:
            log.info("shared fork server at %s differs from this process (%s): starting one",
                     path, "; ".join(differs))
            sock.close()  # its server sees the connection close, and ends
            return None
        return cls(sock, server_env, hello["pid"], None)

    def serves(self, env: Mapping[str, str]) -> bool:
        """Whether a child with `env`, started from this process now, may be forked here."""
        return forkable(env, self.env) and os.sched_getaffinity(0) == self.affinity

    def idle(self) -> bool:
        """No child of this server is being forked or still running."""
        with self._lock:
            return not self._starting and not self._exits

    def spawn(self, argv: list[str], env: Mapping[str, str], stdout: int,
              stderr: int) -> tuple[int, _Exit] | None:
        """Fork a child running ``python -m`` `argv` with `env`, stdout and stderr on the given
        descriptors: its pid and exit; None when it cannot be forked here (the caller starts it
        fresh)."""
        if not self.serves(env):
            return None
        started = threading.Event()
        box: list[tuple[int, _Exit]] = []
        with self._lock:
            if self.dead:
                return None
            request_id = next(self._ids)
            self._starting[request_id] = (started, box)
            request = {"id": request_id, "argv": argv, "env": dict(env), "cwd": os.getcwd(),
                       "affinity": sorted(self.affinity)}
            try:
                socket.send_fds(self.sock, [json.dumps(request).encode()], [stdout, stderr])
            except OSError as e:
                log.info("fork server gone (%s): children start fresh", e)
                self._starting.pop(request_id, None)
                return None
        started.wait()
        return box[0] if box else None

    def _read(self) -> None:
        while True:
            try:
                data = self.sock.recv(MAX_MESSAGE)
            except OSError:
                data = b""
            if not data:
                break
            message: dict[str, Any] = json.loads(data)
            with self._lock:
                if "id" in message:  # forked (a pid), or not (None: it starts fresh)
                    event, box = self._starting.pop(message["id"])
                    if message["pid"] is not None:  # its exit may come before spawn returns
                        exit_ = self._exits[message["pid"]] = _Exit()
                        box.append((message["pid"], exit_))
                    else:
                        log.info("fork server could not fork: %s", message.get("error"))
                    event.set()
                else:
                    ended = self._exits.pop(message["pid"], None)
                    if ended is not None:
                        ended.set(message["code"], reaped=True)
        with self._lock:  # the server died: its children died with it
            self.dead = True
            log.info("fork server pid %d ended", self.pid)
            for event, _ in self._starting.values():
                event.set()
            for exit_ in self._exits.values():
                exit_.set(-9)
            self._starting.clear()
            self._exits.clear()
        self._ended.set()


_server: ForkServer | None = None
_server_lock = threading.Lock()


def spawn(argv: list[str], env: Mapping[str, str], stderr: int) -> ForkedProcess | None:
    """Fork a child of `argv` (``python -m`` its module and arguments) with `env`
    and `stderr`, its stdout a pipe (the returned process's ``stdout``), from this process's
    fork server, started (or started again, once it died) on first use; None: start it fresh.
    A child whose environment or affinity the server cannot serve gets a server of its own
    (the old one stopped) once the old one has no child running, and starts fresh while it has."""
    global _server
    if not settings.fork_server():
        return None
    stale = None
    with _server_lock:
        if (_server is not None and not _server.dead and not _server.serves(env)
                and _server.idle()):
            stale, _server = _server, None
        if _server is None or _server.dead:
            shared = settings.fork_server_socket()
            _server = ForkServer.connect(shared, env) if shared else None
            if _server is None:
                try:
                    _server = ForkServer.start(env)
                except OSError as e:
                    log.info("fork server failed to start (%s): children start fresh", e)
                    return None
        server = _server
    if stale is not None:
        _stop(stale)
    read, write = os.pipe()
    try:
        started = server.spawn(argv, env, write, stderr)
    finally:
        os.close(write)
    if started is None:
        os.close(read)
        return None
    pid, exit_ = started
    return ForkedProcess(pid, os.fdopen(read, "rb"), exit_, argv)


def close() -> None:
    """Stop this process's fork server (its children are killed) and reap it, so that its CPU
    time and its children's count among this process's children's; the next `spawn` starts
    another. Run at this process's exit too."""
    global _server
    with _server_lock:
        server, _server = _server, None
    if server is not None:
        _stop(server)


def _stop(server: ForkServer) -> None:
    """Close this end of the server's socket and wait until the server has closed its end (it
    kills and reaps its children first, then exits); reap it where it is this process's own. A
    server that takes more than `CLOSE_WAIT_S` is killed."""
    with contextlib.suppress(OSError):
        server.sock.shutdown(socket.SHUT_WR)
    if not server._ended.wait(CLOSE_WAIT_S):
        with contextlib.suppress(OSError):
            os.kill(server.pid, signal.SIGKILL)
    if server.proc is not None:
        try:
            server.proc.wait(CLOSE_WAIT_S)
        except subprocess.TimeoutExpired:
            server.proc.kill()
            server.proc.wait()
    server.sock.close()


atexit.register(close)
