"""Issue 44's bad inputs (the fourth pass), as a hostile user gives them: an empty export is
valid (nothing imported, said, exit 0, no database made); every file read is bounded before it
is parsed; every setting of docs/settings.md is checked at start, named in its one line, before
anything is written; an option that needs another is refused naming both, and a shape from a
flag has the bounds of a shape from a traffic file; a reader beside a first sweep waits for the
schema being created. SQLite and PostgreSQL where a database is involved."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import psutil
import pytest
from faults_support import pg_admin, wait_for
from reliability_support import HERE, advisor, one_line_error, sweep_support
from sqlalchemy import text

from advisor import paths, settings
from advisor.cli import waiting
from advisor.config import MAX_DIM
from advisor.db import ResultStore, schema
from advisor.db.store import database_revision
from advisor.errors import ConfigError, SchemaOutdated
from advisor.traffic import parse_traffic

FOUR = sweep_support.FOUR_DTYPES
SWEEP = ("sweep", FOUR, "--device", "cpu", "--modes", "eager", "--dtypes", "fp32", "--no-warm")
TRIAL = ("trial", FOUR, "--device", "cpu", "--mode", "eager", "--no-warm")
HANGS = HERE / "workloads" / "hangs_at_import.py"
FP = "f000000000000000"  # make.fingerprint(0)'s fingerprint_hash


def _untouched(db_url: str, tmp_path: Path) -> None:
    """The new database (a SQLite path not yet there, or an empty PostgreSQL database) is
    still new: no file, no advisor tables."""
    if db_url.startswith("sqlite"):
        assert list(tmp_path.glob("advisor-*.db*")) == []
    else:
        assert database_revision(db_url).current is None


def _seeded(url: str, make: SimpleNamespace) -> str:
    with ResultStore.from_url(url) as store:
        sweep_id = store.create_sweep(make.workload(), make.fingerprint(), {}, "s", 1)
        store.add_trial(make.record(0), sweep_id)
        store.finish_sweep(sweep_id, "finished")
    return url


def _state(url: str) -> tuple[list[Any], list[Any]]:
    with ResultStore.from_url(url, read_only=True) as store:
        return store.sweeps(), store.trials()


def _files(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if "__pycache__" not in p.parts}


# -- 2. an empty export is valid -----------------------------------------------------------------

EMPTY = [  # (id, file name, text)
    ("json-list", "export.json", "[]\n"),
    ("csv-header-only", "export.csv", "trial_uuid,median_ms,config_key\n"),
    ("csv-of-nothing", "export.csv", "\n"),  # what `export -f csv` of no trials once wrote
    ("empty-file", "export.json", ""),
]


@pytest.mark.parametrize(("name", "content"), [e[1:] for e in EMPTY], ids=[e[0] for e in EMPTY])
def test_an_empty_export_imports_nothing_says_so_and_creates_no_database(
    name: str, content: str, db_url: str, tmp_path: Path
) -> None:
    path = tmp_path / name
    path.write_text(content)
    code, out, err = advisor("import", path, "--db", db_url)
    assert code == 0, err
    assert out.startswith(f"imported nothing: {path} holds no trial records"), out
    assert err == ""
    _untouched(db_url, tmp_path)
    code, out, err = advisor("import", path, "--db", db_url, "--json")
    assert code == 0 and json.loads(out)["added"] == 0 and json.loads(out)["skipped"] == 0, err
    _untouched(db_url, tmp_path)


def test_an_empty_export_leaves_a_populated_database_as_it_was(
    store_url: str, make: SimpleNamespace, tmp_path: Path
) -> None:
    _seeded(store_url, make)
    before = _state(store_url)
    for name, content in (("e.json", "[]"), ("e.csv", "trial_uuid\n")):
        (tmp_path / name).write_text(content)
        code, out, err = advisor("import", tmp_path / name, "--db", store_url)
        assert code == 0 and "imported nothing" in out, err
    assert _state(store_url) == before
    with ResultStore.from_url(store_url) as store:
        assert store.import_records([]) == (0, 0)  # the store's own API too


def test_an_export_of_an_empty_database_imports_back(store_url: str, tmp_path: Path) -> None:
    for fmt in ("json", "csv"):
        out = tmp_path / f"none.{fmt}"
        code, _, err = advisor("export", "--db", store_url, "-f", fmt, "-o", out)
        assert code == 0, err
        code, said, err = advisor("import", out, "--db", store_url)
        assert code == 0 and "imported nothing" in said, err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_an_import_whose_report_cannot_be_written_imports_nothing(
    store_url: str, make: SimpleNamespace, tmp_path: Path
) -> None:
    """`import good.json -o /dev/full` once said "nothing written" with both trials imported:
    the report is written before the import commits."""
    records = [make.record(i) for i in range(2)]
    for r in records:
        r["sweep"] = None
    good = tmp_path / "good.json"
    good.write_text(json.dumps(records))
    full = tmp_path / "report.json"
    full.symlink_to("/dev/full")
    code, out, err = advisor("import", good, "--db", store_url, "-o", full)
    assert "No space left on device" in one_line_error(code, err)
    assert _state(store_url) == ([], [])
    code, _, err = advisor("import", good, "--db", store_url, "--json", "-o",
                           tmp_path / "said.json")
    assert code == 0, err
    assert json.loads((tmp_path / "said.json").read_text())["added"] == 2
    assert len(_state(store_url)[1]) == 2


# -- 5. an option that needs another; a shape's bounds from a flag ---------------------------------

HOLDOUT = [  # (id, command, words of the one line)
    ("sweep-1.5", (*SWEEP, "--holdout", "1.5"), "--holdout 1.5 applies only with --traffic"),
    ("sweep-negative", (*SWEEP, "--holdout", "-0.1"), "--holdout -0.1 applies only with"),
    ("sweep-nan", (*SWEEP, "--holdout", "nan"), "--holdout nan applies only with --traffic"),
    ("sweep-default-given", (*SWEEP, "--holdout", "0.5"), "--holdout 0.5 applies only with"),
    ("trial-1.5", (*TRIAL, "--holdout", "1.5"), "--holdout 1.5 applies only with --traffic"),
    ("trial-nan", (*TRIAL, "--holdout", "nan"), "--holdout nan applies only with --traffic"),
    ("sweep-shape-past-bound", (*SWEEP, "--shape", "batch=99999999999"),
     f"batch 99999999999 is above the most advisor takes ({MAX_DIM:,})"),
    ("trial-shape-past-bound", (*TRIAL, "--shape", "batch=99999999999"),
     f"batch 99999999999 is above the most advisor takes ({MAX_DIM:,})"),
    ("trial-shape-5000-digits", (*TRIAL, "--shape", "batch=" + "9" * 5000),
     "is above the most advisor takes"),
]


@pytest.mark.parametrize(("command", "words"), [h[1:] for h in HOLDOUT],
                         ids=[h[0] for h in HOLDOUT])
def test_an_option_that_cannot_apply_is_refused_naming_both(
    command: tuple[Any, ...], words: str, tmp_path: Path
) -> None:
    db = ("--db", f"sqlite:///{tmp_path / 'r.db'}") if command[0] == "sweep" else ()
    files = _files(tmp_path)
    code, out, err = advisor(*command, *db)
    message = one_line_error(code, err)
    assert words in message and out == ""
    if "holdout" in words:
        assert "--traffic" in message
    assert _files(tmp_path) == files  # no database, nothing else


def test_a_shape_from_a_flag_has_the_bounds_of_a_traffic_file() -> None:
    with pytest.raises(ConfigError) as from_file:
        parse_traffic("batch\n99999999999\n", "requests.csv")
    code, _, err = advisor(*TRIAL, "--shape", "batch=99999999999")
    from_flag = one_line_error(code, err)
    said = "batch 99999999999 is above the most advisor takes (16,777,216)"
    assert said in str(from_file.value) and said in from_flag


@pytest.mark.parametrize("devices", ["", ",", " , "])
def test_compare_devices_that_name_nothing_is_refused(
    devices: str, store_url: str, make: SimpleNamespace
) -> None:
    _seeded(store_url, make)
    code, _, err = advisor("compare", "reranker", "--devices", devices, "--db", store_url)
    assert "--devices names no device" in one_line_error(code, err)


# -- 4. every setting, checked at start ------------------------------------------------------------

BAD_SETTINGS: dict[str, tuple[str, str]] = {  # variable -> (a value its check refuses, words)
    "ADVISOR_DB_URL": ("nope", "is not a database URL"),
    "ADVISOR_LOG_LEVEL": ("loud", "is not a log level"),
    "ADVISOR_FINGERPRINT_OVERRIDES": ("[1]", "must be a JSON object"),
    "ADVISOR_REPLAY_REQUESTS": ("abc", "must be a finite number above 0"),
    "ADVISOR_RECOMPILE_LIMIT": ("-3", "must be a finite number above 0"),
    "ADVISOR_HEARTBEAT_S": ("0", "must be a finite number above 0"),
    "ADVISOR_HEARTBEAT_GRACE_S": ("nan", "must be a finite number above 0"),
    "ADVISOR_SWEEP_HEARTBEAT_S": ("inf", "must be a finite number above 0"),
    "ADVISOR_SWEEP_DEAD_AFTER_S": ("-1", "must be a finite number above 0"),
    "ADVISOR_DEVICE_LOCK": ("/nonexist_dir/lock", "the folder /nonexist_dir does not exist"),
    "ADVISOR_MEASURE_CORE": ("abc", "must name CPU cores"),
    "ADVISOR_RESERVED_CORES": ("abc", "must name CPU cores"),
    "ADVISOR_KEEP_CACHES": ("", "is set but empty"),
    "ADVISOR_PROBED_FINGERPRINT": ("{not json", "must be a JSON object"),
    "ADVISOR_WORKLOAD_CHECKED": ("zz", "must be a sha256 (64 hex digits)"),
    "ADVISOR_DB_BUSY_TIMEOUT_S": ("0", "must be a finite number above 0"),
    "ADVISOR_STORE_RETRY_S": ("nan", "must be a finite number above 0"),
    "ADVISOR_MEASURE_S": ("abc", "must be a finite number above 0"),
    "ADVISOR_FORK_SERVER": ("2", "must be 0 or 1"),
    "ADVISOR_FORK_SERVER_SOCKET": ("/nonexist_dir/socket", "No such file or directory"),
    "ADVISOR_QUIET_WAIT_S": ("-1", "must be a finite number at least 0"),
    "ADVISOR_BUSY_SLACK_CORES": ("0", "must be a finite number above 0"),
    "ADVISOR_REGIME_RATIO": ("0.5", "must be a number above 1"),
    "ADVISOR_CPU_THREADS": ("1.5", "must be a finite number above 0"),
    "ADVISOR_IMPORT_TIMEOUT_S": ("0", "must be a finite number above 0"),
}
MORE_BAD = [  # more values the brief names, or that a type allows and a host does not
    ("ADVISOR_MEASURE_CORE", str(os.cpu_count() or 1), "this host has no core"),
    ("ADVISOR_MEASURE_CORE", "0,0,1", "it takes at most 1"),
    ("ADVISOR_RESERVED_CORES", "-1", "must name CPU cores"),
    ("ADVISOR_RESERVED_CORES", "99999", "this host has no core 99999"),
    ("ADVISOR_WORKLOAD_CHECKED", "", "is set but empty"),
    ("ADVISOR_KEEP_CACHES", "/proc/nope", "cannot create or write in /proc"),
    ("ADVISOR_DEVICE_LOCK", "", "is set but empty"),
    ("ADVISOR_DEVICE_LOCK", "/proc", "is a directory"),
    ("ADVISOR_QUIET_WAIT_S", "nan", "at least 0"),
    ("ADVISOR_LOG_LEVEL", "5000", "is not a log level"),
    ("ADVISOR_FORK_SERVER_SOCKET", "/proc", "is not a Unix socket"),
]
ALL_BAD = [(n, v, w) for n, (v, w) in BAD_SETTINGS.items()] + MORE_BAD


def test_every_setting_of_the_docs_has_a_bad_value_here() -> None:
    """A new setting in `advisor.settings.SETTINGS` (docs/settings.md) needs a row above."""
    assert set(BAD_SETTINGS) == {s.name for s in settings.SETTINGS}


@pytest.mark.parametrize(("name", "value", "words"), ALL_BAD,
                         ids=[f"{n.removeprefix('ADVISOR_')}={v[:12]}" for n, v, _ in ALL_BAD])
def test_a_bad_setting_is_named_at_start_and_nothing_is_written(
    name: str, value: str, words: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as raised:
        settings.check_all()
    assert str(raised.value).startswith(name) and words in str(raised.value)
    code, out, err = advisor(*SWEEP, "--db", f"sqlite:///{tmp_path / 'r.db'}")
    message = one_line_error(code, err)
    assert message.startswith(name) and words in message, message
    assert out == "" and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["ADVISOR_DEVICE_LOCK", "ADVISOR_MEASURE_CORE",
                                  "ADVISOR_KEEP_CACHES", "ADVISOR_WORKLOAD_CHECKED"])
def test_a_bad_setting_writes_no_schema_on_either_backend(
    name: str, db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ADVISOR_DEVICE_LOCK=/nonexist_dir/lock advisor sweep` once said "probing cpu failed"
    (a child that died of it) and wrote the schema first."""
    monkeypatch.setenv(name, BAD_SETTINGS[name][0])
    code, _, err = advisor(*SWEEP, "--db", db_url)
    assert one_line_error(code, err).startswith(name)
    _untouched(db_url, tmp_path)


def test_good_values_of_the_new_settings_are_read(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    for name, value in (("ADVISOR_QUIET_WAIT_S", "0.00"), ("ADVISOR_BUSY_SLACK_CORES", "2.5"),
                        ("ADVISOR_CPU_THREADS", "3"), ("ADVISOR_MEASURE_CORE", "0"),
                        ("ADVISOR_RESERVED_CORES", "none"), ("ADVISOR_IMPORT_TIMEOUT_S", "60"),
                        ("ADVISOR_DEVICE_LOCK", str(tmp_path / "lock")),
                        ("ADVISOR_KEEP_CACHES", str(tmp_path / "caches" / "a")),
                        ("ADVISOR_WORKLOAD_CHECKED", "ab" * 32)):
        monkeypatch.setenv(name, value)
    settings.check_all()
    assert settings.quiet_wait_s("cpu") == 0.0 and settings.busy_slack_cores() == 2.5
    assert settings.cpu_threads() == 3 and settings.measure_core() == {0}
    assert settings.import_timeout_s() == 60.0 and settings.import_timeout_s(10.0) == 10.0
    assert list(tmp_path.iterdir()) == []  # checking a folder creates nothing


# -- 3. every file read is bounded -----------------------------------------------------------------

def _reads(tmp_path: Path) -> list[tuple[str, tuple[Any, ...], str]]:
    """(id, command, the flag named) for each file advisor reads, the file /dev/zero behind a
    name with the suffix the command expects."""
    def zero(name: str) -> Path:
        path = tmp_path / name
        path.symlink_to("/dev/zero")
        return path

    db = ("--db", f"sqlite:///{tmp_path / 'r.db'}")
    return [
        ("import", ("import", zero("z.json"), *db), "import file"),
        ("check-baseline", ("check", "reranker", "--baseline", zero("b.json"), *db),
         "--baseline"),
        ("sweep-traffic", (*SWEEP, "--traffic", zero("t.csv"), *db), "--traffic"),
        ("trial-traffic", (*TRIAL, "--traffic", zero("t2.csv")), "--traffic"),
        ("sweep-config", ("sweep", "--config", zero("s.toml"), FOUR, *db), "--config"),
        ("sweep-workload", ("sweep", zero("w.py"), "--device", "cpu", *db), "workload file"),
        ("trial-workload", ("trial", zero("w2.py"), "--device", "cpu"), "workload file"),
        ("recommend-file", ("recommend", "reranker", "--confirm", "--file", zero("w3.py"),
                            *db), "workload file"),
    ]


READ_IDS = ["import", "check-baseline", "sweep-traffic", "trial-traffic", "sweep-config",
            "sweep-workload", "trial-workload", "recommend-file"]


@pytest.fixture
def small_bounds(monkeypatch: pytest.MonkeyPatch) -> int:
    """Every bound at 1 MiB (the real ones are up to 1 GiB): /dev/zero is refused after 1 MiB
    read, as after 1 GiB, without holding a gigabyte."""
    for name in ("EXPORT_MAX_BYTES", "TRAFFIC_MAX_BYTES", "WORKLOAD_MAX_BYTES",
                 "SWEEP_FILE_MAX_BYTES"):
        monkeypatch.setattr(paths, name, paths.MiB)
    return paths.MiB


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
@pytest.mark.parametrize("which", READ_IDS)
def test_a_file_past_its_bound_is_one_line_naming_the_bound(
    which: str, tmp_path: Path, small_bounds: int, make: SimpleNamespace
) -> None:
    _, command, flag = next(r for r in _reads(tmp_path) if r[0] == which)
    if which in ("check-baseline", "recommend-file"):
        _seeded(f"sqlite:///{tmp_path / 'r.db'}", make)
    files = _files(tmp_path)
    state = _state(f"sqlite:///{tmp_path / 'r.db'}") if (tmp_path / "r.db").exists() else None
    code, out, err = advisor(*command)
    message = one_line_error(code, err)
    assert flag in message and "is larger than the most advisor reads (1 MiB)" in message
    assert _files(tmp_path) == files and out == ""
    if state is not None:
        assert _state(f"sqlite:///{tmp_path / 'r.db'}") == state


def test_a_regular_file_past_its_bound_is_refused_by_its_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(paths, "EXPORT_MAX_BYTES", 1024)
    big = tmp_path / "big.json"
    big.write_text("[" + " " * 4096 + "]")
    opened: list[int] = []
    real = paths._read_stream  # the bytes read, were any read

    def counted(stream: Any, *args: Any) -> bytes:
        opened.append(1)
        return real(stream, *args)

    monkeypatch.setattr(paths, "_read_stream", counted)
    code, _, err = advisor("import", big, "--db", f"sqlite:///{tmp_path / 'r.db'}")
    assert "is larger than the most advisor reads (1 KiB)" in one_line_error(code, err)
    assert opened == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.json"]


@pytest.mark.slow
@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
@pytest.mark.parametrize("command", [("import",), ("check", "reranker", "--baseline")],
                         ids=["import", "check-baseline"])
def test_dev_zero_under_a_3_gb_limit_is_one_line_at_the_real_bound(
    command: tuple[str, ...], tmp_path: Path
) -> None:
    """The real bound (1 GiB) under the memory limit that once met a MemoryError traceback."""
    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    done = subprocess.run(
        [*sweep_support.advisor_command(), *command, "/dev/zero", "--db",
         f"sqlite:///{tmp_path / 'r.db'}"], cwd=tmp_path, env=sweep_support.cli_env(),
        capture_output=True, text=True, timeout=300, preexec_fn=limited, check=False)
    message = one_line_error(done.returncode, done.stderr)
    assert "/dev/zero is larger than the most advisor reads (1 GiB)" in message
    assert list(tmp_path.iterdir()) == []


# -- 6. a workload's import, bounded and said ------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("how", ["sweep", "trial", "recommend-confirm"])
def test_a_hanging_import_is_said_then_one_line_with_its_limit(
    how: str, tmp_path: Path, make: SimpleNamespace
) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    command: tuple[Any, ...] = {
        "sweep": ("sweep", HANGS, "--device", "cpu", "--db", url),
        "trial": ("trial", HANGS, "--device", "cpu"),
        "recommend-confirm": ("recommend", "reranker", "--confirm", "--file", HANGS,
                              "--timeout", "8", "--db", url),
    }[how]
    if how == "recommend-confirm":
        _seeded(url, make)
    env = {"ADVISOR_IMPORT_TIMEOUT_S": "12" if how != "recommend-confirm" else "600"}
    started = time.monotonic()
    done = subprocess.run([*sweep_support.advisor_command(), *map(str, command)], cwd=tmp_path,
                          env={**sweep_support.cli_env(), **env}, capture_output=True,
                          text=True, timeout=300, check=False)
    took = time.monotonic() - started
    limit = 8 if how == "recommend-confirm" else 12
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    said = [line for line in lines if line.startswith(f"advisor: importing {HANGS} (")]
    assert said, done.stderr  # every few seconds while it waits
    last = lines[-1]
    assert last.startswith("advisor: error: ") and f"longer than {limit} s" in last, last
    assert "ADVISOR_IMPORT_TIMEOUT_S" in last and "--timeout" in last
    assert took >= limit  # it waited its limit (load can only lengthen this, never flip it)


def test_a_phase_that_lasts_is_said_with_its_seconds(capsys: pytest.CaptureFixture[str]) -> None:
    seen: list[str] = []

    def said_so() -> bool:
        seen.append(capsys.readouterr().err)
        return "advisor: trial of w.py: loading (" in "".join(seen)

    with waiting.Phases("trial of w.py", every_s=0.05) as said:
        said.phase("loading")
        wait_for(said_so, "the phase to be said", timeout_s=30)


# -- 8. a reader beside a first sweep --------------------------------------------------------------

CREATING = """
import sys
from alembic import command
from advisor.db import schema
from advisor.db.engine import make_engine, parse_url
engine = make_engine(parse_url(sys.argv[1]))
with schema._schema_lock(engine) as connection:  # what a first sweep holds while it creates
    command.upgrade(schema.alembic_config(connection), "head")
    print("creating", flush=True)
    sys.stdin.readline()
print("created", flush=True)
"""


class Creating:
    """Another process creating the schema of a new database, holding the schema lock (as a
    first sweep does) until `done`."""

    def __init__(self, url: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", CREATING, url],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "creating"

    def done(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        assert self.process.stdout.readline().strip() == "created"
        self.process.wait(timeout=60)

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture
def creating(db_url: str) -> Iterator[Creating]:
    held = Creating(db_url)
    yield held
    held.close()


def _waiting(db_url: str, reader: subprocess.Popen[str]) -> bool:
    """Whether the reader has begun reading the database (and so waits for the lock)."""
    if db_url.startswith("sqlite"):
        path = db_url.removeprefix("sqlite:///")
        try:
            return any(f.path == path for f in psutil.Process(reader.pid).open_files())
        except psutil.Error:
            return False
    admin = pg_admin()
    try:
        with admin.connect() as c:
            return bool(c.execute(text(
                "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database "
                "WHERE l.locktype = 'advisory' AND NOT l.granted AND d.datname = :name"),
                {"name": db_url.rsplit("/", 1)[-1]}).scalar())
    finally:
        admin.dispose()


@pytest.mark.parametrize("command", [("list",), ("db", "current")], ids=["list", "db-current"])
def test_a_reader_beside_a_first_sweep_waits_for_the_schema(
    command: tuple[str, ...], db_url: str, creating: Creating, tmp_path: Path
) -> None:
    reader = subprocess.Popen([*sweep_support.advisor_command(), *command, "--db", db_url,
                               "--json"], cwd=tmp_path, env=sweep_support.cli_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: _waiting(db_url, reader) or reader.poll() is not None,
                 "the reader to open the database", timeout_s=60)
        assert reader.poll() is None, reader.communicate()  # it waits, it has not answered
        creating.done()
        out, err = reader.communicate(timeout=120)
    finally:
        reader.kill()
    assert reader.returncode == 0, err
    expected = [] if command == ("list",) else {
        "database": json.loads(out)["database"], "current": schema.HEAD, "head": schema.HEAD,
        "at_head": True}
    assert json.loads(out) == expected and "no advisor tables" not in err


def test_a_reader_that_waited_long_enough_says_it_is_being_created(
    db_url: str, creating: Creating, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(schema, "CREATING_WAIT_S", 0.5)
    with pytest.raises(SchemaOutdated) as raised:
        ResultStore.from_url(db_url, read_only=True)
    assert "is being created" in str(raised.value) and "try again" in str(raised.value)
    creating.done()
    with ResultStore.from_url(db_url, read_only=True) as store:
        assert store.sweeps() == []


def test_an_empty_database_no_one_is_creating_says_what_to_do(db_url: str) -> None:
    """No process holds the schema lock: the reader does not wait (the lock is free), and says
    what a user beside a starting sweep should do, and what one without should."""
    if db_url.startswith("sqlite"):
        Path(db_url.removeprefix("sqlite:///")).touch()  # a file another process just made
    code, _, err = advisor("list", "--db", db_url)
    message = one_line_error(code, err)
    assert "no advisor tables" not in message
    assert "the database is being created; try again" in message, message
    assert "advisor db upgrade" in message

