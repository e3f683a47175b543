"""advisor's temporary directories, named after the process that owns them.

A sweep's cache root, its probe's and its trial children's working directories (and those of
confirmation, artifact and check runs) are ``<tmp>/advisor-<kind>-<pid>-<random>``, where pid is
the process that made them and removes them when it is done. A process killed without cleanup
(``kill -9``, the out-of-memory killer) leaves them behind; `remove_orphaned`, which a sweep
calls when it starts, removes those whose process is gone.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

_NAME = re.compile(r"advisor-(?P<kind>[a-z_]+(?:-[a-z_]+)*)-(?P<pid>\d+)-[a-z0-9_]+")


def make(kind: str) -> Path:
    """A new temporary directory of ``kind`` (``sweep``, ``probe``, ``trial``, ...) owned by
    this process."""
    return Path(tempfile.mkdtemp(prefix=f"advisor-{kind}-{os.getpid()}-"))


def owner(path: Path) -> int | None:
    """The pid in an advisor temporary directory's name (None: not such a name)."""
    found = _NAME.fullmatch(path.name)
    return int(found["pid"]) if found else None


def remove_orphaned(where: Path | None = None) -> list[Path]:
    """Remove the advisor temporary directories (in ``where``, default: the temporary
    directory) whose owning process is gone; returns them."""
    removed = []
    for found in Path(where or tempfile.gettempdir()).glob("advisor-*-*-*"):
        pid = owner(found)
        if pid is None or found.is_symlink() or not found.is_dir() or _alive(pid):
            continue
        shutil.rmtree(found, ignore_errors=True)
        removed.append(found)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's live process
    return True
