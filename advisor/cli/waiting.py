"""What a command waits for, said on stderr while it lasts: "advisor: importing FILE (12 s)".

A workload's import (`advisor.search.launcher.describe`) and a trial's phases (loading the
workload and building the model, compiling, measuring) can take minutes, or hang on a download
or a lock until their time limit; the command says what it waits for every `EVERY_S` seconds
(nothing for a wait shorter than that), so that a silent terminal never means "hung".
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType

import typer

EVERY_S = 5.0


def say(text: str) -> None:
    typer.echo(f"advisor: {text}", err=True)


def importing(file: object) -> Callable[[float], None]:
    """`describe`'s ``on_wait`` for ``file``: "importing FILE (12 s)"."""
    return lambda seconds: say(f"importing {file} ({seconds:.0f} s)")


class Phases:
    """A thread that says the phase a child is in (`phase`, a launcher's ``on_phase``) with its
    seconds so far, every `EVERY_S` while one lasts longer than that. A context manager."""

    def __init__(self, what: str, every_s: float = EVERY_S) -> None:
        self.what = what
        self.every_s = every_s
        self._name: str | None = None
        self._since = time.monotonic()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="phases", daemon=True)

    def phase(self, name: str) -> None:
        with self._lock:
            self._name, self._since = name, time.monotonic()

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            with self._lock:
                name, seconds = self._name, time.monotonic() - self._since
            if name is not None and seconds >= self.every_s:
                say(f"{self.what}: {name} ({seconds:.0f} s)")

    def __enter__(self) -> Phases:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()
