"""`advisor` run in a real pseudo-terminal of a given width (python's pty module), as a user's
terminal runs it: the terminal tests' helper."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from dataclasses import dataclass
from pathlib import Path

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


@dataclass
class Screen:
    """What a command printed on a terminal: its exit code and its lines (colours removed)."""

    code: int
    text: str

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()


def in_terminal(*args: str, columns: int = 80, cwd: Path | None = None,
                env: dict[str, str] | None = None, timeout_s: float = 120.0,
                python: str | None = None) -> Screen:
    """``advisor ARGS`` (or ``python -c PYTHON``) with stdout and stderr on a pseudo-terminal
    ``columns`` wide (its window size set, COLUMNS too), as a user's terminal runs it."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    environ = {**os.environ, "COLUMNS": str(columns), "LINES": "50", "TERM": "xterm-256color",
               **(env or {})}
    environ.pop("NO_COLOR", None)
    argv = [sys.executable, "-c", python] if python else [sys.executable, "-m", "advisor", *args]
    process = subprocess.Popen(argv, stdin=slave,
                               stdout=slave, stderr=slave, env=environ, cwd=cwd, close_fds=True)
    os.close(slave)
    chunks = []
    try:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        code = process.wait(timeout=timeout_s)
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
            process.wait()
    text = ANSI.sub("", b"".join(chunks).decode("utf-8", "replace")).replace("\r", "")
    return Screen(code, text)
