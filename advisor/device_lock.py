"""Trials that share a device take turns: compile side by side, measure alone.

Several trial processes may run at once on one device (`advisor sweep --jobs N`): compilation is
CPU-bound and overlaps well, but a measurement must see a device (and a host) that nothing else
is using. The processes coordinate through a lock file named by ``ADVISOR_DEVICE_LOCK``:

- ``hold("work")``, a shared hold, covers everything of a trial child that may overlap other
  trials' (imports, building the model, the eager reference, compiling, the first call, the
  accuracy check): a child takes it as its first step, so nothing of it runs unaccounted;
- ``hold("measure")``, an exclusive hold, covers warm-up, timed samples and profiling: no other
  trial compiles or touches the device meanwhile.

On a GPU host a measurement is also the host's: a launch-bound config is timed by how fast one
CPU thread issues its launches, and the trials around it import, build and compile on the same
cores. So a sweep may keep one core per GPU for measurements (``ADVISOR_MEASURE_CORE``, the
core of this process's GPU; ``ADVISOR_RESERVED_CORES``, those of every GPU of the host): its
worker processes, and so every trial and compile worker they start, keep off the reserved cores
(`leave_reserved_cores`), and the thread that takes the "measure" hold moves onto its measure
core until it lets go.

A measurement waiting for its turn goes first: new shared holds queue behind it (a turnstile
lock beside the main one), so compiles cannot starve it. Time spent waiting is counted apart
(`waited_s`) and never inside a timed section. Without the variable every hold is a no-op. The
kernel drops a dead process's locks, so a crash never wedges the others.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import time
from collections.abc import Callable
from typing import IO

from advisor import settings
from advisor.errors import ConfigError

_PROCESS_LOCK: DeviceLock | None = None


def gpu_of(device: str) -> str:
    """The GPU that `device` ("cuda" or "cuda:N", N counted among the GPUs this process may
    see) is: its entry in CUDA_VISIBLE_DEVICES (an index or a UUID), else N."""
    index = int(device.partition(":")[2] or 0)
    visible = [d.strip() for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")
               if d.strip()]
    return visible[index] if index < len(visible) else str(index)


def lock_path(device: str) -> str:
    """This host's lock file for `device` ("cpu", "cuda" or "cuda:N"), named after the GPU
    itself: processes on one GPU share it, those on other GPUs of the host keep their own."""
    name = "cpu0"
    if device.startswith("cuda"):
        name = "cuda-" + "".join(c if c.isalnum() or c == "-" else "_" for c in gpu_of(device))
    return os.path.join(tempfile.gettempdir(), f"advisor-device-{name}.lock")


def leave_reserved_cores() -> None:
    """Keep this process, and what it starts from now on, off the reserved cores."""
    rest = os.sched_getaffinity(0) - settings.reserved_cores()
    if rest and rest != os.sched_getaffinity(0):
        os.sched_setaffinity(0, rest)


class DeviceLock:
    def __init__(self, path: str | None) -> None:
        self.path = path
        self.mode: str | None = None
        self.measure_core: int | None = None  # where the last measurement ran, when pinned
        self._affinity: set[int] | None = None
        self.waited_s = 0.0
        self.waits_s: dict[str, float] = {}  # waited_s by the mode waited for
        # called once before a hold blocks (a trial reports the wait as a phase of its own)
        self.on_wait: Callable[[], None] | None = None
        self.windows: list[tuple[float, float]] = []  # wall-clock spans held in "measure"
        self._main: IO[str] | None = None
        self._since = 0.0

    @classmethod
    def from_env(cls) -> DeviceLock:
        """This process's lock (one per process: two open files of one process would block
        each other)."""
        global _PROCESS_LOCK
        if _PROCESS_LOCK is None:
            _PROCESS_LOCK = cls(settings.device_lock())
        return _PROCESS_LOCK

    @property
    def enabled(self) -> bool:
        return self.path is not None

    def hold(self, mode: str) -> None:
        """Hold the lock in `mode` ("work": shared, "measure": exclusive), switching if needed."""
        if mode not in ("work", "measure"):
            raise ValueError(f"unknown lock mode {mode!r}")
        if self.path is None or self.mode == mode:
            return
        self.release()
        t0 = time.perf_counter()
        told = [False]
        with self._open(".turnstile") as turnstile:
            main = self._open("")  # kept open while held
            self._flock(turnstile, fcntl.LOCK_EX, told)  # in line behind a waiting measurement
            self._flock(main, fcntl.LOCK_EX if mode == "measure" else fcntl.LOCK_SH, told)
        self._main, self.mode = main, mode
        waited = time.perf_counter() - t0
        self.waited_s += waited
        self.waits_s[mode] = self.waits_s.get(mode, 0.0) + waited
        self._since = time.time()
        if mode == "measure":
            self._pin()

    def _open(self, suffix: str) -> IO[str]:
        """The lock file (or its turnstile, ``suffix``) opened; a path that cannot be is the
        user's one line naming the variable (not a probe or trial that dies of it)."""
        assert self.path is not None
        try:
            return open(self.path + suffix, "a")  # noqa: SIM115 - the caller closes it
        except OSError as e:
            raise ConfigError(f"{settings.DEVICE_LOCK.name}={self.path}: cannot open the lock "
                              f"file ({e.strerror or e}): name a lock file in a folder you may "
                              "write to, or unset it") from None

    def _flock(self, file: IO[str], operation: int, told: list[bool]) -> None:
        """Take `operation` on `file`; when it would block, say so once (`on_wait`) first."""
        try:
            fcntl.flock(file, operation | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        if not told[0] and self.on_wait is not None:
            told[0] = True
            self.on_wait()
        fcntl.flock(file, operation)

    def _pin(self) -> None:
        """Move the calling thread onto this GPU's measure core, if the sweep keeps one."""
        cores = settings.measure_core()
        if len(cores) != 1:
            return
        affinity = os.sched_getaffinity(0)
        try:
            os.sched_setaffinity(0, cores)
        except OSError:  # not a core this process may use: measure where it is
            return
        self._affinity, self.measure_core = affinity, next(iter(cores))

    def release(self) -> None:
        if self._affinity is not None:
            os.sched_setaffinity(0, self._affinity)
            self._affinity = None
        if self._main is not None:
            if self.mode == "measure":
                self.windows.append((self._since, time.time()))
            fcntl.flock(self._main, fcntl.LOCK_UN)
            self._main.close()
        self._main, self.mode = None, None
