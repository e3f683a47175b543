"""Files and folders a user names (a workload, a traffic log, an export, ``-o``, ``--db``,
``--keep-caches``, a setting's path), checked as the user running the command, and files read
with a bound.

Every check answers in one line that names the path, what is wrong with it for this user and
what to do, as the error class the caller's layer raises (a `ConfigError` by default), before
anything is written: a folder on the way that this user cannot enter (another user's 0700 home
folder), a file it cannot read, a folder it cannot write in. `read_bounded` reads at most a
given number of bytes, so that ``/dev/zero`` or a file of gigabytes is refused, not parsed.
Standard library only: `advisor.settings` and ``--help`` import it.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from pathlib import Path

from advisor.errors import AdvisorError, ConfigError

KiB = 1 << 10
MiB = 1 << 20
GiB = 1 << 30
_CHUNK = MiB
# The most bytes advisor reads of each kind of file a user names (`read_bounded`); messages
# name the bound. An export of 100,000 trials with their replays is a few hundred MiB.
EXPORT_MAX_BYTES = GiB  # `advisor import`, `advisor check --baseline`
TRAFFIC_MAX_BYTES = 64 * MiB  # a traffic log: 1,000,000 requests of a few dims
WORKLOAD_MAX_BYTES = 16 * MiB  # a workload's Python source
SWEEP_FILE_MAX_BYTES = MiB  # `advisor sweep --config FILE.toml`
_MISSING = (errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.ENAMETOOLONG)


def _named(what: str, path: object) -> str:
    """``--traffic FILE``, or ``NAME=FILE`` for a setting (``what`` ending in ``=``)."""
    return f"{what}{path}" if what.endswith("=") else f"{what} {path}"


def user() -> str:
    """This process's user, as messages name it (its name, else its uid)."""
    try:
        import pwd

        return pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError):
        return f"uid {os.geteuid()}"


def _may(path: Path, mode: int) -> bool:
    effective = os.access in os.supports_effective_ids
    return os.access(path, mode, effective_ids=effective)


def blocked_by(path: str | Path) -> Path | None:
    """The first folder on the way to ``path`` (its parents, the root first) that this user
    may not enter, or None."""
    for folder in reversed(Path(os.path.abspath(path)).parents):
        if folder.is_dir() and not _may(folder, os.X_OK):
            return folder
    return None


def _blocked_error(what: str, path: str | Path, folder: Path,
                   error: type[AdvisorError]) -> AdvisorError:
    return error(f"{_named(what, path)}: permission denied: this user ({user()}) cannot enter "
                 f"the folder {folder}; choose a path outside it, or ask its owner for access")


def lookup(path: str | Path, what: str,
           error: type[AdvisorError] = ConfigError) -> os.stat_result | None:
    """``os.stat`` of ``path`` (symbolic links followed); None when nothing is there. A folder
    on the way this user cannot enter, or any other failure to look, raises ``error``."""
    try:
        return os.stat(path)
    except OSError as e:
        if e.errno in _MISSING:
            return None
        folder = blocked_by(path) if e.errno == errno.EACCES else None
        if folder is not None:
            raise _blocked_error(what, path, folder, error) from None
        raise error(f"{_named(what, path)}: cannot look at it ({e.strerror or e})") from None


def readable_file(path: str | Path, what: str, error: type[AdvisorError] = ConfigError,
                  missing: str | None = None) -> os.stat_result:
    """``path`` is there, is not a folder, and this user may read it; else ``error`` (one
    line; ``missing``: the message when nothing is there)."""
    found = lookup(path, what, error)
    if found is None:
        raise error(missing or f"{_named(what, path)}: cannot read it (no such file); check "
                    "the path")
    if stat.S_ISDIR(found.st_mode):
        raise error(f"{_named(what, path)} is a directory: name a file")
    if not _may(Path(path), os.R_OK):
        raise error(f"{_named(what, path)}: permission denied: this user ({user()}) cannot "
                    "read it; make it readable to this user or copy it to a folder you can read")
    return found


def writable_file(path: str | Path, what: str,
                  error: type[AdvisorError] = ConfigError) -> None:
    """``path`` names a file this user may write (create, or replace through a file beside
    it): not a folder, in a folder that exists and that it may enter and write in; else
    ``error``."""
    path = Path(path)
    if str(path) == "":
        raise error(f"{what} is empty: name the file to write, e.g. {what} out.json")
    found = lookup(path, what, error)
    if found is not None and stat.S_ISDIR(found.st_mode):
        raise error(f"{_named(what, path)} is a directory: name a file in it, e.g. "
                    f"{what} {path / ('out' + (path.suffix or '.json'))}")
    folder = path.parent
    seen = lookup(folder, what, error)
    if seen is None or not stat.S_ISDIR(seen.st_mode):
        raise error(f"{_named(what, path)}: the folder {folder} does not exist")
    regular = found is None or stat.S_ISREG(found.st_mode)
    if not _may(path if found is not None else folder, os.W_OK) or (
            regular and not _may(folder, os.W_OK | os.X_OK)):
        raise error(f"{_named(what, path)}: permission denied (this user, {user()}, cannot "
                    f"write in {folder}); choose a file in a folder you may write to")


def creatable_folder(path: str | Path, what: str,
                     error: type[AdvisorError] = ConfigError) -> None:
    """``path`` is a folder, or one this user can create (with its missing parents), and may
    write in: tried for real, by making and removing a folder in the nearest one that exists
    (a read-only mount, ``/proc``, a folder an ACL closes say no where the mode bits say
    yes). Nothing is left behind; ``error`` otherwise."""
    path = Path(path)
    if str(path) in ("", "."):
        raise error(f"{what} names no directory (it would fill the working directory): name "
                    f"one, e.g. {what} caches")
    existing = path
    while (found := lookup(existing, what, error)) is None and existing != existing.parent:
        existing = existing.parent
    if found is not None and not stat.S_ISDIR(found.st_mode):
        where = "is a file" if existing == path else f"lies under the file {existing}"
        raise error(f"{_named(what, path)} {where}, not a directory: name a directory (it is "
                    "created if missing)")
    import tempfile

    try:
        os.rmdir(tempfile.mkdtemp(prefix=".advisor-check-", dir=existing))
    except OSError as e:
        raise error(f"{_named(what, path)}: cannot create or write in {existing} "
                    f"({e.strerror or e}); name a directory this user may write to") from None


def read_bounded(path: str | Path, what: str, limit: int, *,
                 error: type[AdvisorError] = ConfigError, fix: str = "") -> bytes:
    """The bytes of ``path`` (``-``: stdin), at most ``limit`` of them: a regular file larger
    than that is refused by its size before a byte is read, and a stream (a pipe, a device
    such as ``/dev/zero``) once ``limit`` bytes came without its end. Raises ``error``, one
    line naming the bound (``fix``: what to do instead), or the reason it cannot be read."""
    if str(path) == "-":
        return _read_stream(sys.stdin.buffer, "stdin", what, limit, error, fix)
    readable_file(path, what, error)
    try:
        with open(path, "rb") as stream:
            size = os.fstat(stream.fileno())
            if stat.S_ISREG(size.st_mode) and size.st_size > limit:
                raise _too_large(what, str(path), limit, error, fix)
            return _read_stream(stream, str(path), what, limit, error, fix)
    except OSError as e:
        raise error(f"{_named(what, path)}: cannot read it ({e.strerror or e})") from None


def _read_stream(stream: object, name: str, what: str, limit: int,
                 error: type[AdvisorError], fix: str) -> bytes:
    chunks: list[bytes] = []
    size = 0
    read = getattr(stream, "read")  # noqa: B009 - a binary stream
    while chunk := read(min(_CHUNK, limit + 1 - size)):
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            chunks.clear()
            raise _too_large(what, name, limit, error, fix)
    return b"".join(chunks)


def _too_large(what: str, name: str, limit: int, error: type[AdvisorError],
               fix: str) -> AdvisorError:
    return error(f"{_named(what, name)} is larger than the most advisor reads "
                 f"({size_text(limit)})" + (f"; {fix}" if fix else ""))


def read_text(path: str | Path, what: str, limit: int, *,
              error: type[AdvisorError] = ConfigError, fix: str = "",
              encoding: str = "utf-8") -> str:
    """`read_bounded`, decoded; text that is not ``encoding`` raises ``error``."""
    data = read_bounded(path, what, limit, error=error, fix=fix)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as e:
        raise error(f"{_named(what, path)}: not {encoding.upper().removesuffix('-SIG')} text "
                    f"({e.reason} at byte {e.start})") from None


def size_text(n: int) -> str:
    """``1 GiB``, ``64 MiB``, ``512 KiB``, ``100 bytes``."""
    for unit, name in ((GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB")):
        if n >= unit and n % unit == 0:
            return f"{n // unit} {name}"
    return f"{n:,} bytes"


def exists(path: str | Path, what: str, error: type[AdvisorError] = ConfigError) -> bool:
    """Whether anything is at ``path``; a folder on the way this user cannot enter raises
    ``error`` (`lookup`)."""
    return lookup(path, what, error) is not None


def quietly_exists(path: str | Path) -> bool:
    """Whether ``path`` is a file this user can see; False where it cannot look (a path read
    from the database, say, that the caller only uses when it is there)."""
    return os.path.isfile(path)
