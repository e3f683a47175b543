"""The fork server: a process that imports torch and the child's modules once and forks each
child from there, so that a sweep's children (trials, warm starts, probes, confirmations) do
not each start an interpreter and import torch again (`import torch` alone: 1.5 CPU-seconds a
child on a 2-core host, bench/results/trial_fixed_costs_cpu_20261204T200102Z.md). Started by
`advisor.search.forkserver` as ``python -m advisor.child.server``.

A forked child runs exactly what ``python -m advisor.child.main SPEC RESULT`` runs
(`advisor.child.main.main`), in a session of its own (its process group is what the launcher
kills), with the environment, working directory and CPU affinity the launcher sends, stdout
and stderr on the descriptors it sends, and Python's normal exit (atexit, threads joined).
Nothing here touches a device or runs a torch operation: no CUDA context and no OpenMP pool
exist before a fork, so each child initialises its own, as a fresh process would. Variables
that torch or its libraries read at import are the server's; the launcher forks only children
whose environment differs from the server's in variables read later (`FORKABLE_PREFIXES`).

The wire (the descriptor named on the command line: one end of a Unix SOCK_SEQPACKET pair, a
JSON document per message): the launcher sends ``{"id", "argv", "env", "cwd", "affinity"}``
with two descriptors (the child's stdout and stderr); the server answers ``{"id", "pid"}`` once
it has forked (``pid`` null, with an ``error``, when it could not: the launcher then starts that
child fresh), and ``{"pid", "code"}`` when that child has exited (its exit code, or minus the
signal that killed it, as `subprocess` reports). A forked child that cannot be set up as asked
exits 1 with its traceback on its stderr. When the socket closes (the launcher exited or was
killed), the server kills every child's process group and exits; its children die with it
(`advisor.lifetime.die_with_parent`).

Shared (``python -m advisor.child.server --listen PATH``, `listen`): the process imports torch
once and binds a Unix socket at PATH (its folder must be one only this user may enter: a
connection may ask for any workload to run); for each connection it forks a server that sends
``{"pid", "identity"}`` first (the server's pid and `advisor.protocol.fork_identity` with its
environment) and then serves that connection as above. A process that sets
``ADVISOR_FORK_SERVER_SOCKET=PATH`` connects there instead of starting a server of its own
(`advisor.search.forkserver`), and uses it only where that identity is its own. The listening
process dies with the process that started it, and removes its socket when it ends; the servers
it forked each end with their connection.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import socket
import sys
import traceback
from typing import Any

from advisor.lifetime import die_with_parent, end_process, name_this_process
from advisor.protocol import LISTEN_FLAG, fork_identity

MAX_MESSAGE = 1 << 20  # bytes: a request carries an environment
START_CWD = os.getcwd()  # ``python -m`` put it first on sys.path; a child gets its own cwd there


def _send(sock: socket.socket, message: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):  # the launcher is gone: the next read says so
        sock.send(json.dumps(message).encode())


def _kill_all(children: set[int]) -> None:
    """Kill each child's process group (the child alone if it has none yet) and reap it."""
    for pid in children:
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    for pid in children:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def _reap(sock: socket.socket, children: set[int]) -> None:
    """Reap each child that has exited and send its exit code. The rest of its process group
    (compile workers, helpers it started) is killed first, while the child's zombie still holds
    its pid: once reaped, the group's id may be taken by an unrelated process (a host's pid_max
    can be 32768), which a kill sent afterwards would hit."""
    while children:
        try:
            info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return
        if info is None:
            return
        pid = info.si_pid
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        children.discard(pid)
        _send(sock, {"pid": pid, "code": os.waitstatus_to_exitcode(status)})


def serve(sock: socket.socket) -> dict[str, Any] | None:
    """Fork a child for each request until the socket closes. Returns None in the server (it is
    done: every child killed), and the request in each forked child, whose process is then set
    up as it asked (`_become`)."""
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # wakes the select through wake_w
    selector = selectors.DefaultSelector()
    selector.register(sock, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    children: set[int] = set()
    try:
        while True:
            for key, _ in selector.select():
                if key.fileobj is not sock:
                    with contextlib.suppress(BlockingIOError):
                        os.read(wake_r, 4096)
                    continue
                try:
                    data, fds, _, _ = socket.recv_fds(sock, MAX_MESSAGE, 2)
                except OSError:
                    data, fds = b"", []
                if not data:
                    _kill_all(children)
                    return None
                request = json.loads(data)
                try:
                    pid = os.fork()
                except OSError as e:  # no fork now: the launcher starts this child fresh
                    pid = None
                    _send(sock, {"id": request["id"], "pid": None, "error": str(e)})
                if pid == 0:
                    try:
                        signal.set_wakeup_fd(-1)
                        selector.close()
                        for fd in (wake_r, wake_w):
                            os.close(fd)
                        sock.close()
                        _become(request, fds)
                    except BaseException:  # this child alone fails, never its siblings
                        traceback.print_exc()
                        os._exit(1)
                    return dict(request)
                for fd in fds:
                    os.close(fd)
                if pid is not None:
                    children.add(pid)
                    _send(sock, {"id": request["id"], "pid": pid})
            _reap(sock, children)
    except BaseException:
        _kill_all(children)
        raise


def _become(request: dict[str, Any], fds: list[int]) -> None:
    """Turn this forked process into the child the request asks for, before it runs: a session
    of its own, the default signal handlers, stdout and stderr on the descriptors sent, the
    environment, directory and affinity given, fresh random states."""
    os.setsid()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    out, err = fds
    os.dup2(out, 1)
    os.dup2(err, 2)
    for fd in fds:
        os.close(fd)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    if sys.path and sys.path[0] == START_CWD:  # as ``python -m`` started in its cwd would be
        sys.path[0] = request["cwd"]
    if request.get("affinity"):
        os.sched_setaffinity(0, request["affinity"])
    sys.argv = list(request["argv"])
    if "numpy" in sys.modules:  # Python's own `random` reseeds itself after a fork
        sys.modules["numpy"].random.seed()


def preload() -> None:
    """What every child would import and the server imports once: torch and the child's
    modules (which leave Inductor, Dynamo and Triton to the child that compiles, and touch no
    device)."""
    import torch  # noqa: F401

    import advisor.child.main  # noqa: F401


def listen(path: str) -> socket.socket:
    """Bind a Unix socket at `path`, import what children need (`preload`: a connection made
    meanwhile waits), and accept connections until this process is killed, forking a server
    for each: returns the connection in each forked server (after its ``{"pid",
    "identity"}``), never in the listening process, which removes its socket and exits on
    SIGTERM, and dies with its parent (`die_with_parent`)."""
    die_with_parent()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    old_umask = os.umask(0o177)  # the socket is this user's alone from its first moment
    try:
        listener.bind(path)
    finally:
        os.umask(old_umask)
    listener.listen(64)

    def stop(*_: object) -> None:
        with contextlib.suppress(OSError):
            os.unlink(path)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the servers forked here
    preload()
    while True:
        conn, _ = listener.accept()
        try:
            pid = os.fork()
        except OSError:  # no fork now: the client sees its connection close, and starts its own
            conn.close()
            continue
        if pid == 0:
            listener.close()
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            identity = fork_identity() | {"env": dict(os.environ)}
            try:
                conn.send(json.dumps({"pid": os.getpid(), "identity": identity}).encode())
            except OSError:  # the process that connected is gone
                os._exit(0)
            return conn
        conn.close()


def main(argv: list[str]) -> int:
    """``python -m advisor.child.server FD``: serve on the socket FD; ``--listen PATH``: fork a
    server for each connection to a Unix socket bound at PATH (`listen`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the launcher stops its children itself
    name_this_process("advisor-server")
    if argv[1:2] == [LISTEN_FLAG] and len(argv) == 3:
        sock = listen(argv[2])
    else:
        sock = socket.socket(fileno=int(argv[1]))
        preload()
    request = serve(sock)
    if request is None:
        return 0
    from advisor.child.main import main as child_main

    return child_main(sys.argv)


if __name__ == "__main__":
    end_process(main(sys.argv))  # the teardown skipped: `advisor.lifetime.end_process`
