"""Every ``ADVISOR_*`` environment variable: the table (`SETTINGS`), a typed reader for each and
the one function that writes them into a child's environment (`child_env`).

Readers look at ``os.environ`` when called, never at import: a child gets its variables from
its parent, and a test sets them per process. No other module names a variable; docs/settings.md
is generated from `SETTINGS` (`markdown_table`) and a test keeps the two equal.

Who reads a variable: ``parent`` (the `advisor` command, a sweep and its worker processes),
``child`` (a trial, warm-start, probe or confirmation process a launcher starts), ``serving``
(a process that calls `advisor.apply`, and the dashboard). ``set by``: ``user`` (an operator or
a test), ``advisor`` (a parent, for the processes it starts), or both.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from advisor.errors import ConfigError
from advisor.protocol import FINGERPRINT_FIELDS

if TYPE_CHECKING:
    from advisor.records import Fingerprint


@dataclass(frozen=True)
class Setting:
    """One environment variable: its name, type, default (as the docs show it), meaning, the
    processes that read it and who sets it."""

    name: str
    type: str
    default: str
    meaning: str
    readers: tuple[str, ...]
    set_by: str = "user"


DB_URL = Setting(
    "ADVISOR_DB_URL", "URL", "sqlite:///advisor.db",
    "the results database when no `--db` is given (kept off command lines: `ps` shows those)",
    ("parent", "serving"), "user, advisor")
LOG_LEVEL = Setting(
    "ADVISOR_LOG_LEVEL", "level", "unset (no log lines)",
    "log lines of the `advisor` logger on stderr at this level (DEBUG, INFO, ...); "
    "`advisor -v` is DEBUG",
    ("parent",))
FINGERPRINT_OVERRIDES = Setting(
    "ADVISOR_FINGERPRINT_OVERRIDES", "JSON object", "unset",
    "fingerprint fields replaced before hashing (to simulate another device or stack)",
    ("child", "serving"))
REPLAY_REQUESTS = Setting(
    "ADVISOR_REPLAY_REQUESTS", "int > 0", "300",
    "requests of the traffic replay (the holdout of a traffic log, or sampled by weight)",
    ("child",))
RECOMPILE_LIMIT = Setting(
    "ADVISOR_RECOMPILE_LIMIT", "int > 0", "torch's `recompile_limit`",
    "Dynamo's recompile limit in the traffic replay (raised to the bucket count when padding)",
    ("child",))
HEARTBEAT_S = Setting(
    "ADVISOR_HEARTBEAT_S", "int > 0", "5",
    "seconds between a fleet worker's heartbeats for the trial it holds",
    ("parent",))
HEARTBEAT_GRACE_S = Setting(
    "ADVISOR_HEARTBEAT_GRACE_S", "int > 0", "30",
    "seconds without a trial's heartbeat after which its config is queued again",
    ("parent",))
SWEEP_HEARTBEAT_S = Setting(
    "ADVISOR_SWEEP_HEARTBEAT_S", "float > 0", "20",
    "seconds between a running sweep's heartbeats in its stored row (at most a quarter of "
    "ADVISOR_SWEEP_DEAD_AFTER_S)",
    ("parent",))
SWEEP_DEAD_AFTER_S = Setting(
    "ADVISOR_SWEEP_DEAD_AFTER_S", "float > 0", "120",
    "seconds without a sweep's heartbeat after which a running sweep is shown as dead",
    ("parent", "serving"))
DEVICE_LOCK = Setting(
    "ADVISOR_DEVICE_LOCK", "path", "unset (no lock)",
    "lock file through which trials sharing a device take turns to measure",
    ("child",), "user, advisor")
MEASURE_CORE = Setting(
    "ADVISOR_MEASURE_CORE", "cores", "unset",
    "the core a measurement moves onto (`none`: measure where the process runs)",
    ("child",), "user, advisor")
RESERVED_CORES = Setting(
    "ADVISOR_RESERVED_CORES", "cores", "unset",
    "cores kept for measurements, which workers and their compiles keep off (`14,15`)",
    ("parent",), "user, advisor")
KEEP_CACHES = Setting(
    "ADVISOR_KEEP_CACHES", "path", "unset",
    "folder where a sweep's workers keep their trials' caches (for the leader's warm start)",
    ("parent",), "advisor")
PROBED_FINGERPRINT = Setting(
    "ADVISOR_PROBED_FINGERPRINT", "JSON object", "unset",
    "the fingerprint a sweep probed, given to its worker on that device (no second probe)",
    ("parent",), "advisor")
WORKLOAD_CHECKED = Setting(
    "ADVISOR_WORKLOAD_CHECKED", "sha256", "unset",
    "the workload file's hash, given to a sweep's workers: they compare bytes, not import it",
    ("parent",), "advisor")
DB_BUSY_TIMEOUT_S = Setting(
    "ADVISOR_DB_BUSY_TIMEOUT_S", "float > 0", "60",
    "seconds a SQLite statement waits for another process's lock before it fails "
    "(advisor's and Optuna's connections)",
    ("parent", "serving"))
STORE_RETRY_S = Setting(
    "ADVISOR_STORE_RETRY_S", "float > 0", "300",
    "seconds a sweep keeps retrying a measured trial's write, with backoff, once the database "
    "stayed locked or away past its busy timeout; then the record goes to a spill file, which "
    "`advisor sweep --resume` or `advisor import` stores",
    ("parent",))
MEASURE_S = Setting(
    "ADVISOR_MEASURE_S", "float > 0", "the device's (4 on a GPU, 1 on a CPU; paired: 2, 1)",
    "seconds a trial's sampling, and a paired re-measurement's interleaved rounds, last at "
    "least (their minimum counts of samples and rounds still hold)",
    ("parent", "child"))
FORK_SERVER = Setting(
    "ADVISOR_FORK_SERVER", "0 or 1", "1",
    "1: a process forks the children it starts (trials, warm starts, probes, confirmations, "
    "descriptions), a CPU's and a GPU's, from one process that imported torch once "
    "(advisor.child.server); 0: each child is a fresh interpreter",
    ("parent",))
FORK_SERVER_SOCKET = Setting(
    "ADVISOR_FORK_SERVER_SOCKET", "path", "unset",
    "the Unix socket of a shared fork server (`python -m advisor.child.server --listen PATH`, "
    "in a folder only its user may enter): a process connects to it instead of starting a fork "
    "server of its own, and uses it while its user, namespaces, limits, interpreter and the "
    "variables read at torch's import are the process's own (else, or when it does not "
    "answer, a server of its own)",
    ("parent",))
QUIET_WAIT_S = Setting(
    "ADVISOR_QUIET_WAIT_S", "float >= 0", "20 (a CPU), 5 (a GPU)",
    "seconds a trial or paired re-measurement waits, before measuring, for other processes to "
    "leave the CPU it needs (advisor.hostload); it measures then either way, and a figure "
    "measured beside them is stored as contended, which never decides",
    ("parent", "child"))
BUSY_SLACK_CORES = Setting(
    "ADVISOR_BUSY_SLACK_CORES", "float > 0", "0.5",
    "cores other processes may use beyond those a measurement leaves free before its figure is "
    "contended (advisor.hostload); a large value records the host's figures without judging "
    "them (the test suite, whose workers share two cores by design)",
    ("parent", "child"))
IMPORT_TIMEOUT_S = Setting(
    "ADVISOR_IMPORT_TIMEOUT_S", "float > 0", "300",
    "seconds a workload file's import may take when advisor reads it first (sweep, trial, "
    "worker, `recommend --confirm --file`; at most the command's `--timeout`); the wait is "
    "said every few seconds",
    ("parent",))
REGIME_RATIO = Setting(
    "ADVISOR_REGIME_RATIO", "float > 1", "2",
    "how far apart eager fp32's paired re-measurement and its trials may lie (beyond both "
    "intervals) before the host counts as changed between them and the paired figures are not "
    "used (advisor.recommendation.decide); a large value turns the judgement off (the test "
    "suite, which loads its own host)",
    ("parent", "serving"))
CPU_THREADS = Setting(
    "ADVISOR_CPU_THREADS", "int > 0", "the cores the process may use",
    "torch's intra-op threads in a CPU trial or paired re-measurement (stored with each "
    "figure)",
    ("parent", "child"))

SETTINGS: tuple[Setting, ...] = (
    DB_URL, LOG_LEVEL, FINGERPRINT_OVERRIDES, REPLAY_REQUESTS, RECOMPILE_LIMIT, HEARTBEAT_S,
    HEARTBEAT_GRACE_S, SWEEP_HEARTBEAT_S, SWEEP_DEAD_AFTER_S, DEVICE_LOCK, MEASURE_CORE,
    RESERVED_CORES, KEEP_CACHES, PROBED_FINGERPRINT, WORKLOAD_CHECKED, DB_BUSY_TIMEOUT_S,
    STORE_RETRY_S, MEASURE_S, FORK_SERVER, FORK_SERVER_SOCKET, QUIET_WAIT_S, BUSY_SLACK_CORES,
    REGIME_RATIO, CPU_THREADS, IMPORT_TIMEOUT_S,
)
BY_NAME = {s.name: s for s in SETTINGS}


# -- reading -----------------------------------------------------------------------------------
def raw(setting: Setting, env: Mapping[str, str] | None = None) -> str | None:
    """The variable's text in `env` (default: this process's environment); None when unset or
    empty."""
    return (os.environ if env is None else env).get(setting.name) or None


def is_set(setting: Setting, env: Mapping[str, str] | None = None) -> bool:
    """Whether the variable is named in `env` at all (even empty): a user's choice to keep."""
    return setting.name in (os.environ if env is None else env)


def _number(setting: Setting, cast: type[int] | type[float],
            zero: bool = False) -> int | float | None:
    """The variable as a finite number above 0 (``zero``: at least 0), or None when unset;
    NaN, infinity, 0, a negative number or text raise ConfigError naming the variable."""
    text = raw(setting)
    if text is None:
        return None
    try:
        value = cast(text) if len(text) <= 40 else -1  # int() of thousands of digits raises
    except ValueError:
        value = -1
    if not math.isfinite(value) or value < 0 or (value == 0 and not zero):
        example = f" (e.g. {setting.default})" if setting.default.isdigit() else ""
        least = "at least 0" if zero else "above 0"
        raise ConfigError(f"{setting.name} must be a finite number {least} ({setting.type}), "
                          f"not {text[:40]!r}: set it to one{example} or unset it")
    return value


def _json_object(setting: Setting) -> dict[str, Any] | None:
    text = raw(setting)
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise ConfigError(f"{setting.name} must be a JSON object, not {text[:80]!r}")
    return value


def _cores(setting: Setting) -> set[int]:
    """Cores named in the variable ("15" or "14,15"); none when unset or "none". Anything else
    (text, a negative index) raises ConfigError naming the variable."""
    text = (raw(setting) or "").strip()
    if text in ("", "none"):
        return set()
    parts = [c.strip() for c in text.split(",")]
    if not all(p.isascii() and p.isdigit() and len(p) <= 6 for p in parts):
        raise ConfigError(f"{setting.name} must name CPU cores as comma-separated indices "
                          f"(15, or 14,15) or none, not {text[:40]!r}: fix it or unset it")
    return {int(p) for p in parts}


def _host_cores(setting: Setting, most: int | None = None) -> set[int]:
    """`_cores`, each a core of this host (0 to its CPU count - 1), at most ``most`` of them."""
    cores = _cores(setting)
    count = os.cpu_count() or 1
    past = sorted(c for c in cores if c >= count)
    if past:
        raise ConfigError(f"{setting.name}={raw(setting)!s:.40}: this host has no core {past[0]} "
                          f"(its cores are 0 to {count - 1}): name one of them or unset it")
    if most is not None and len(cores) > most:
        raise ConfigError(f"{setting.name}={raw(setting)!s:.40} names {len(cores)} cores; it "
                          f"takes at most {most} (the one a measurement moves onto) or none")
    return cores


def _text(setting: Setting) -> str | None:
    """The variable's text, None when unset; set but empty raises ConfigError (a path or a
    hash that names nothing is a mistake, not "unset")."""
    text = raw(setting)
    if text is None and is_set(setting):
        raise ConfigError(f"{setting.name} is set but empty: give it a {setting.type} or unset "
                          "it")
    return text


def db_url() -> str | None:
    """$ADVISOR_DB_URL, or None (the store then uses sqlite:///advisor.db)."""
    return raw(DB_URL)


def log_level() -> str | None:
    """$ADVISOR_LOG_LEVEL upper-cased, or None: the CLI then logs nothing (but at -v); a name
    that is not a level raises ConfigError."""
    text = raw(LOG_LEVEL)
    if not text:
        return None
    level = text.strip().upper()
    import logging

    if not isinstance(logging.getLevelName(level), int):
        raise ConfigError(f"{LOG_LEVEL.name}={level[:40]!r} is not a log level: use DEBUG, INFO, "
                          "WARNING or ERROR")
    return level


URL_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def check_db_url() -> None:
    """$ADVISOR_DB_URL looks like a database URL (``scheme://...``); the store parses it
    (`advisor.db.engine.parse_url`) before it opens anything."""
    text = raw(DB_URL)
    if text is not None and not URL_SCHEME.match(text):
        raise ConfigError(f"{DB_URL.name} is not a database URL ({text[:40]!r}): use "
                          "sqlite:///path.db or postgresql+psycopg://user:password@host:port/db")


def fingerprint_overrides() -> dict[str, Any]:
    """$ADVISOR_FINGERPRINT_OVERRIDES, checked: a JSON object whose keys are fingerprint fields
    (`advisor.protocol.FINGERPRINT_FIELDS`; the hashes are computed from them) and whose values
    are text, numbers, booleans or null. Anything else raises ConfigError naming the
    variable."""
    name = FINGERPRINT_OVERRIDES.name
    found = _json_object(FINGERPRINT_OVERRIDES) or {}
    for key, value in found.items():
        if key not in FINGERPRINT_FIELDS:
            raise ConfigError(f"{name}: {key!r} is not a fingerprint field; the fields: "
                              f"{', '.join(FINGERPRINT_FIELDS)}")
        if not (value is None or isinstance(value, (str, int, float, bool))):
            raise ConfigError(f"{name}: the value of {key!r} must be text, a number, true, false "
                              f"or null, not {json.dumps(value)[:40]}")
    return found


def replay_requests() -> int:
    return int(_number(REPLAY_REQUESTS, int) or 300)


def recompile_limit() -> int | None:
    """The limit asked for, or None: torch's own."""
    value = _number(RECOMPILE_LIMIT, int)
    return None if value is None else int(value)


def measure_s() -> float | None:
    """The least seconds of sampling asked for, or None: the device's (advisor.child.measure,
    advisor.stats.Rounds)."""
    value = _number(MEASURE_S, float)
    return None if value is None else float(value)


def quiet_wait_s(device: str) -> float:
    """Seconds to wait for a quiet host before measuring on ``device`` (`QUIET_WAIT_S`; 0: no
    wait)."""
    value = _number(QUIET_WAIT_S, float, zero=True)
    if value is None:
        return 5.0 if device.startswith("cuda") else 20.0
    return float(value)


def busy_slack_cores() -> float:
    """`BUSY_SLACK_CORES`: the others' CPU beyond the free cores a figure tolerates."""
    value = _number(BUSY_SLACK_CORES, float)
    return 0.5 if value is None else float(value)


def import_timeout_s(timeout_s: float | None = None) -> float:
    """Seconds a workload's import may take (`IMPORT_TIMEOUT_S`), at most ``timeout_s`` (the
    command's --timeout) when given."""
    value = float(_number(IMPORT_TIMEOUT_S, float) or 300.0)
    return value if timeout_s is None else min(value, timeout_s)


def regime_ratio() -> float:
    """`REGIME_RATIO`: eager fp32 paired against its trials, the ratio that says the host
    changed."""
    value = _number(REGIME_RATIO, float)
    if value is not None and value <= 1:
        raise ConfigError(f"{REGIME_RATIO.name} must be a number above 1 (float > 1), not "
                          f"{raw(REGIME_RATIO)!r}: set it to one (e.g. 2) or unset it")
    return 2.0 if value is None else float(value)


def cpu_threads() -> int | None:
    """torch's intra-op threads for a CPU measurement, or None: the cores allowed."""
    value = _number(CPU_THREADS, int)
    return None if value is None else int(value)


def fork_server() -> bool:
    """Whether children are forked from a fork server (`FORK_SERVER`); ConfigError for a value
    other than 0 or 1."""
    text = raw(FORK_SERVER)
    if text not in (None, "0", "1"):
        raise ConfigError(f"{FORK_SERVER.name} must be 0 or 1, not {text[:40]!r}: "
                          "set it to 0 (a fresh process per child) or 1, or unset it")
    return text != "0"


def fork_server_socket() -> str | None:
    """The shared fork server's socket (`FORK_SERVER_SOCKET`), or None; ConfigError when the
    path names no Unix socket (a server that has stopped leaves its socket: connecting to it
    fails, and the process starts a server of its own)."""
    path = raw(FORK_SERVER_SOCKET)
    if path is None:
        return None
    try:
        is_socket = stat.S_ISSOCK(os.stat(path).st_mode)
    except OSError as e:
        raise ConfigError(f"{FORK_SERVER_SOCKET.name}={path[:200]}: {e.strerror or e}: start "
                          "one with `python -m advisor.child.server --listen PATH`, or unset "
                          "it") from None
    if not is_socket:
        raise ConfigError(f"{FORK_SERVER_SOCKET.name}={path[:200]} is not a Unix socket: start "
                          "one with `python -m advisor.child.server --listen PATH`, or unset it")
    return path


def heartbeat_s() -> int:
    return int(_number(HEARTBEAT_S, int) or 5)


def heartbeat_grace_s() -> int:
    return int(_number(HEARTBEAT_GRACE_S, int) or 30)


def sweep_heartbeat_s() -> float:
    return float(_number(SWEEP_HEARTBEAT_S, float) or 20.0)


def sweep_dead_after_s() -> float:
    return float(_number(SWEEP_DEAD_AFTER_S, float) or 120.0)


def db_busy_timeout_s() -> float:
    return float(_number(DB_BUSY_TIMEOUT_S, float) or 60.0)


def store_retry_s() -> float:
    return float(_number(STORE_RETRY_S, float) or 300.0)


def device_lock() -> str | None:
    return _text(DEVICE_LOCK)


def measure_core() -> set[int]:
    return _cores(MEASURE_CORE)


def reserved_cores() -> set[int]:
    return _cores(RESERVED_CORES)


def keep_caches() -> str | None:
    return _text(KEEP_CACHES)


def probed_fingerprint() -> Fingerprint | None:
    return cast("Fingerprint | None", _json_object(PROBED_FINGERPRINT))  # a sweep's probe


SHA256 = re.compile(r"[0-9a-fA-F]{64}")


def workload_checked() -> str | None:
    """The sha256 a sweep handed its workers (64 hex digits); anything else raises
    ConfigError."""
    text = _text(WORKLOAD_CHECKED)
    if text is not None and not SHA256.fullmatch(text):
        raise ConfigError(f"{WORKLOAD_CHECKED.name} must be a sha256 (64 hex digits), not "
                          f"{text[:40]!r}: a sweep sets it for its workers; unset it")
    return text


def check_device_lock() -> None:
    """$ADVISOR_DEVICE_LOCK names a lock file this user can open for writing: not a folder, in
    a folder that exists and that it may enter and write in (a trial opens it, creating it if
    needed: a probe that died of it once said only "probing cpu failed")."""
    path = device_lock()
    if path is None:
        return
    from advisor import paths

    what = f"{DEVICE_LOCK.name}="
    found = paths.lookup(path, what)
    if found is not None and stat.S_ISDIR(found.st_mode):
        raise ConfigError(f"{what}{path} is a directory: name a lock file (any path in a folder "
                          "you may write to), or unset it")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ConfigError(f"{what}{path}: the folder {folder} does not exist: name a lock file "
                          "in a folder that does, or unset it")
    if not os.access(path if found is not None else folder, os.W_OK):
        raise ConfigError(f"{what}{path}: permission denied (this user, {paths.user()}, cannot "
                          "write it): name a lock file in a folder you may write to, or unset it")


def check_keep_caches() -> None:
    """$ADVISOR_KEEP_CACHES is a folder this user can make and write in
    (`advisor.paths.creatable_folder`)."""
    path = keep_caches()
    if path is not None:
        from advisor import paths

        paths.creatable_folder(path, f"{KEEP_CACHES.name}=")


# -- writing -----------------------------------------------------------------------------------
def check_all() -> None:
    """Read every variable that is set, as its reader will: a bad value is one ConfigError
    naming the variable now, before a command writes anything (a sweep reads its heartbeat
    interval only once its row is stored)."""
    for reader in (heartbeat_s, heartbeat_grace_s, sweep_heartbeat_s, sweep_dead_after_s,
                   db_busy_timeout_s, store_retry_s, import_timeout_s, probed_fingerprint,
                   log_level, check_db_url, workload_checked, check_keep_caches):
        reader()
    _host_cores(RESERVED_CORES)
    check_for_children()


def check_for_children() -> None:
    """Read, here, the variables this process hands on to the children it starts and that they
    read (a trial, a probe): a bad value is the user's one-line ConfigError naming the variable
    before any child starts, not a child that dies with it."""
    fingerprint_overrides()
    replay_requests()
    recompile_limit()
    measure_s()
    fork_server()
    fork_server_socket()
    quiet_wait_s("cpu")
    busy_slack_cores()
    regime_ratio()
    cpu_threads()
    _host_cores(MEASURE_CORE, most=1)
    check_device_lock()


def child_env(base: Mapping[str, str] | None = None,
              values: Mapping[Setting, object] | None = None) -> dict[str, str]:
    """The environment of a process advisor starts: `base` (default: this process's
    environment, its variables for children checked first: `check_for_children`) with each of
    `values` written as text (a set of cores as "14,15", a dict as JSON); a value of None
    leaves the variable as `base` has it."""
    if base is None:
        check_for_children()
    env = dict(os.environ if base is None else base)
    for setting, value in (values or {}).items():
        if value is None:
            continue
        if isinstance(value, set | frozenset | list | tuple):
            text = ",".join(str(v) for v in sorted(value))
        elif isinstance(value, dict):
            text = json.dumps(value)
        else:
            text = str(value)
        env[setting.name] = text
    return env


def hand_on(setting: Setting, value: object) -> None:
    """Write `setting` into this process's own environment, so that every process it starts
    from now on inherits it (the CLI hands `-v` on to a sweep's workers this way)."""
    os.environ.update(child_env({}, {setting: value}))


# -- documenting -------------------------------------------------------------------------------
def markdown_table() -> str:
    """The table of docs/settings.md."""
    rows = ["| variable | type | default | read by | set by | meaning |",
            "| --- | --- | --- | --- | --- | --- |"]
    rows += [f"| `{s.name}` | {s.type} | {s.default} | {', '.join(s.readers)} | {s.set_by} "
             f"| {s.meaning} |" for s in SETTINGS]
    return "\n".join(rows) + "\n"


BEGIN = "<!-- settings table: generated by `python -m advisor.settings FILE`; do not edit -->"
END = "<!-- end of settings table -->"


def write_table(path: str) -> None:
    """Replace the table between `BEGIN` and `END` in the Markdown file at `path`."""
    with open(path) as f:
        text = f.read()
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    if not rest or END not in rest:
        raise ConfigError(f"{path} has no settings table markers ({BEGIN} ... {END})")
    with open(path, "w") as f:
        f.write(f"{head}{BEGIN}\n{markdown_table()}{END}{tail}")


if __name__ == "__main__":
    import sys

    if len(sys.argv) > 1:
        write_table(sys.argv[1])
    else:
        print(markdown_table(), end="")
