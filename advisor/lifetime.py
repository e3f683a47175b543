"""Processes advisor starts die with the process that started them (Linux), and end without
tearing their heap down.

A trial child dies with its launcher, and a pooled sweep's worker with its sweep: kill -9 of a
parent runs no cleanup, and what it started must not go on measuring (or holding the GPU) for a
sweep that reads as dead, nor store a config twice once the sweep is resumed.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import socket
import sys
import threading
from typing import Any, NoReturn


def die_with_parent() -> None:
    """Ask the kernel to SIGKILL this process when the thread that started it exits
    (PR_SET_PDEATHSIG); if that parent is already gone (reparented to init), exit now. A no-op
    where prctl is not there."""
    parent = os.getppid()
    if not _prctl(1, signal.SIGKILL):  # PR_SET_PDEATHSIG
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def end_process(code: int) -> NoReturn:
    """Exit with `code` as Python's own exit does (non-daemon threads joined, then the atexit
    handlers, logging's and the weakref finalizers' among them, then stdout and stderr flushed),
    less the interpreter's teardown: freeing every module and object of a process that imported
    torch, in a forked child each page shared with its server copied first (child-heavy tests:
    a quarter less CPU, bench/results/end_process_ab_cpu_20261205T034104Z.txt), while a CPU
    child still holds the device lock. Files still open are closed by the kernel unflushed: a
    caller writes its results whole first."""
    shutdown = getattr(threading, "_shutdown", None)  # what Python's exit runs first
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # closed, or its reader is gone
            stream.flush()
    os._exit(code)


def name_this_process(name: str) -> None:
    """Give this process the short name `ps`, `top` and psutil's ``name()`` show (its first 15
    characters: PR_SET_NAME); a no-op where prctl is not there."""
    import ctypes

    _prctl(15, ctypes.c_char_p(name.encode()[:15]))  # PR_SET_NAME


def _prctl(option: int, arg: object) -> bool:
    """prctl(2) with one argument, on this process; False where prctl is not there."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, arg, 0, 0, 0)
    except (OSError, AttributeError):
        return False
    return True


def alive_here(owner: Any) -> bool | None:
    """Whether the process ``owner`` names (``{"host": ..., "pid": ...}``, as a worker's trial
    or a stopped sweep's marker records it; `owner`'s ``started`` too) still runs: None when it
    names another host or none (this host cannot tell: the caller decides); on this host False
    only when no such process exists, or (``started`` given) the pid is another process's,
    started at another time (one we may not signal, or an unreadable pid, counts as alive)."""
    if not isinstance(owner, dict) or owner.get("host") != socket.gethostname():
        return None
    try:
        pid = int(owner["pid"])
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, KeyError, TypeError, ValueError):
        return True
    started = owner.get("started")
    if isinstance(started, (int, float)) and not isinstance(started, bool):
        now = started_at(pid)
        return now is None or abs(now - started) < 1.0  # a pid reused: not the owner
    return True


def started_at(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch, psutil's `create_time`); None
    when it cannot be read."""
    import psutil

    try:
        return float(psutil.Process(pid).create_time())
    except (psutil.Error, OSError):
        return None


def owner() -> dict[str, Any]:
    """This process as a sweep's owner (`alive_here` reads it): its host, pid and start time."""
    return {"host": socket.gethostname(), "pid": os.getpid(), "started": started_at(os.getpid())}


def owner_gone(found: Any) -> bool:
    """Whether the owner ``found`` names is known to be gone: it ran on this host and its
    process is no more (`alive_here` False). Another host's, or none: False (its heartbeat
    tells)."""
    return alive_here(found) is False
