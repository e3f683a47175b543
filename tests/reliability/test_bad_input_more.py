"""Issue 31's bad inputs, as a hostile user and a failing host give them: each is one line on
stderr, exit code 2, and nothing written (no database file, no schema in an empty database, no
sweep row, no partial output file). Traffic and import files are validated like flags; settings
where they are read, named in their error. A WAL database in a read-only folder is still read."""

from __future__ import annotations

import ctypes
import errno
import json
import math
import os
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import typer
from reliability_support import advisor, one_line_error, sweep_support

from advisor import settings
from advisor.cli import output
from advisor.db import ResultStore
from advisor.db.store import database_revision
from advisor.errors import ConfigError, WorkloadError
from advisor.traffic import MAX_REQUESTS, Traffic, parse_traffic
from advisor.workload import Workload

FOUR = sweep_support.FOUR_DTYPES
SWEEP = ("sweep", FOUR, "--device", "cpu", "--modes", "eager", "--dtypes", "fp32", "--no-warm")


# -- traffic files and declared traffic ----------------------------------------------------------

TRAFFIC = [
    ("count-past-the-bound", "batch,count\n4,99999999999999\n", "count 99999999999999 is above"),
    ("log-past-the-bound", f"batch,count\n4,{MAX_REQUESTS}\n8,1\n", "more than 1,000,000"),
    ("dim-past-the-bound", "batch\n99999999999\n", "batch 99999999999 is above"),
    ("5000-digit-dim", "batch\n" + "9" * 5000 + "\n", "is above the most"),
    ("zero-count", "batch,count\n4,0\n", "positive whole number"),
    ("unterminated-quote", 'batch\n"4\n', "not valid CSV"),
    ("unterminated-quote-swallows-rows", 'batch,seq\n"4,8\n5,6\n', "not valid CSV"),
]


@pytest.mark.parametrize(("text", "says"), [t[1:] for t in TRAFFIC], ids=[t[0] for t in TRAFFIC])
def test_a_bad_traffic_file_is_refused_at_once(text: str, says: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_traffic(text, "requests.csv")
    message = str(raised.value)
    assert message.startswith("requests.csv") and says in message, message
    assert "\n" not in message


@pytest.mark.parametrize("weight", [math.nan, math.inf, -1.0, 0, True],
                         ids=["nan", "inf", "negative", "zero", "bool"])
def test_a_declared_traffic_weight_is_finite_and_positive(weight: Any) -> None:
    with pytest.raises(WorkloadError, match="finite weight > 0"):
        Workload(name="w", build=lambda d, t: None, inputs=lambda s, d: (),
                 traffic=[({"batch": 1}, weight)])
    with pytest.raises(ConfigError, match="must be a finite number above 0"):
        Traffic.from_pairs([({"batch": 1}, weight)])


def test_a_sweep_refuses_a_traffic_log_that_would_hang_it(tmp_path: Path) -> None:
    """`4,99999999999999` (batch,count) once hung the sweep, its memory growing."""
    log = tmp_path / "requests.csv"
    log.write_text("batch,count\n4,99999999999999\n")
    path = tmp_path / "results.db"
    code, _, err = advisor(*SWEEP, "--traffic", log, "--db", f"sqlite:///{path}")
    assert "count 99999999999999 is above" in one_line_error(code, err)
    assert list(tmp_path.glob("results.db*")) == []


# -- settings ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["ADVISOR_SWEEP_DEAD_AFTER_S", "ADVISOR_SWEEP_HEARTBEAT_S"])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e999"])
def test_a_setting_that_is_not_finite_names_its_variable(
    name: str, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(name, value)
    reader = {"ADVISOR_SWEEP_DEAD_AFTER_S": settings.sweep_dead_after_s,
              "ADVISOR_SWEEP_HEARTBEAT_S": settings.sweep_heartbeat_s}[name]
    with pytest.raises(ConfigError, match=name):
        reader()


def test_fingerprint_overrides_are_checked_in_the_parent(monkeypatch: pytest.MonkeyPatch) -> None:
    for value, says in (("[1]", "must be a JSON object"), ('{"gpu": "x"}', "'gpu' is not a"),
                        ('{"device_name": [1]}', "must be text, a number")):
        monkeypatch.setenv("ADVISOR_FINGERPRINT_OVERRIDES", value)
        with pytest.raises(ConfigError, match=f"ADVISOR_FINGERPRINT_OVERRIDES.*{says}"):
            settings.child_env()  # what every child's environment is made with


SETTINGS = [  # (variable, value, command given a new database) : nothing may be written
    ("ADVISOR_FINGERPRINT_OVERRIDES", "[1]", SWEEP),
    ("ADVISOR_SWEEP_HEARTBEAT_S", "nan", SWEEP),  # read once the sweep's row was stored
    ("ADVISOR_SWEEP_DEAD_AFTER_S", "nan", ("import", "-")),
]


@pytest.mark.parametrize(("name", "value", "command"), SETTINGS, ids=[s[0] for s in SETTINGS])
def test_a_bad_setting_is_one_line_naming_it_and_nothing_is_written(
    name: str, value: str, command: tuple[Any, ...], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(name, value)
    code, _, err = advisor(*command, "--db", f"sqlite:///{tmp_path / 'results.db'}")
    assert one_line_error(code, err).startswith(name)
    assert list(tmp_path.iterdir()) == []


def test_a_dead_sweep_shows_dead_or_the_reader_says_why(
    store: ResultStore, make: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.create_sweep(make.workload(), make.fingerprint(), {}, "s", 1)  # running, no beat
    monkeypatch.setenv("ADVISOR_SWEEP_DEAD_AFTER_S", "nan")  # NaN once made it never dead
    code, _, err = advisor("list", "--db", store.url)
    assert "ADVISOR_SWEEP_DEAD_AFTER_S" in one_line_error(code, err)
    monkeypatch.setenv("ADVISOR_SWEEP_DEAD_AFTER_S", "0.001")
    assert [s["status"] for s in store.sweeps()] == ["dead"]


# -- import files --------------------------------------------------------------------------------

def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def spoil(record: dict[str, Any]) -> None:
        *parents, key = path.split(".")
        target: Any = record
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        target[key] = value
    return spoil


IMPORTS = [  # (id, how record 2 is spoiled, what the line says)
    ("median-negative", _set("median_ms", -5), "median_ms=-5"),
    ("median-nan", _set("median_ms", math.nan), "median_ms=nan"),
    ("median-infinite", _set("median_ms", math.inf), "median_ms=inf"),
    ("compile-negative", _set("cold_compile_s", -1.0), "cold_compile_s=-1.0"),
    ("shape-median-nan", _set("shapes.0.median_ms", math.nan), "shapes[0]: median_ms=nan"),
    ("shape-weight-nan", _set("shapes.0.weight", math.nan), "shapes[0]: weight=nan"),
    ("error-nan", _set("max_abs_err", math.nan), "max_abs_err=nan"),
    ("peak-mem-past-bigint", _set("peak_mem_bytes", 10**30), "peak_mem_bytes=<huge int>"),
    ("count-fraction", _set("graph_count", 1.5), "graph_count=1.5"),
    ("trial-uuid", _set("trial_uuid", "not-a-uuid"), "trial_uuid 'not-a-uuid' is not a UUID"),
    ("device-hash-int", _set("fingerprint.device_hash", 1234567890123456),
     "device_hash 1234567890123456 is not a hash"),
    ("fingerprint-hash-int", _set("fingerprint.fingerprint_hash", 7),
     "fingerprint_hash 7 is not a hash"),
    ("env-hash-text", _set("fingerprint.env_hash", "not hex!"), "env_hash 'not hex!'"),
    ("source-sha256", _set("workload.source_sha256", "abc"), "source_sha256 'abc'"),
    ("nested-info", _set("workload.info", json.loads("[" * 200 + "]" * 200)),
     "nests deeper than 32 levels"),
    ("config-mode", _set("config.mode", "warp"), "unknown mode 'warp'"),
]


def _records(make: SimpleNamespace, spoil: Callable[[dict[str, Any]], None]) -> str:
    records = [make.record(i) for i in range(4)]
    for r in records:
        r["sweep"] = None
    spoil(records[2])
    return json.dumps(records)  # NaN and Infinity as Python's json writes them


@pytest.mark.parametrize(("spoil", "says"), [c[1:] for c in IMPORTS], ids=[c[0] for c in IMPORTS])
def test_an_import_of_a_bad_figure_uuid_or_hash_imports_nothing(
    spoil: Callable[[dict[str, Any]], None], says: str, store_url: str, make: SimpleNamespace,
    tmp_path: Path
) -> None:
    path = tmp_path / "export.json"
    path.write_text(_records(make, spoil))
    code, out, err = advisor("import", path, "--db", store_url)
    message = one_line_error(code, err)
    assert message.startswith("trial record 2") and says in message, message
    assert out == ""
    with ResultStore.from_url(store_url, read_only=True) as store:
        assert store.trials() == [] and store.sweeps() == []


def _uuid(i: int) -> str:
    return f"00000000-0000-4000-8000-{i:012d}"


RAW_FILES = [  # (id, the file's text, what the line says): files that broke the parser
    ("nested-json", "[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ("nested-json-parsed", "[" + "[" * 200 + "]" * 200 + "]", "not a trial record"),
    ("5000-digit-number", f'[{{"trial_uuid": "{_uuid(1)}", "median_ms": 1{"0" * 5000}}}]',
     "thousands of digits"),
    ("5000-digit-csv-cell", f"trial_uuid,median_ms\n{_uuid(1)},1{'0' * 5000}\n",
     "thousands of digits"),
]


@pytest.mark.parametrize(("text", "says"), [c[1:] for c in RAW_FILES],
                         ids=[c[0] for c in RAW_FILES])
def test_an_import_file_that_breaks_the_parser_is_one_line(
    text: str, says: str, tmp_path: Path, db_url: str
) -> None:
    path = tmp_path / ("bad.csv" if text.startswith("trial_uuid,") else "bad.json")
    path.write_text(text)
    code, _, err = advisor("import", path, "--db", db_url)
    assert says in one_line_error(code, err)
    _assert_untouched(db_url, tmp_path)


def _assert_untouched(db_url: str, tmp_path: Path) -> None:
    """The new database (db_url: a SQLite path not yet there, or an empty PostgreSQL database)
    is still new: no file, no advisor tables."""
    if db_url.startswith("sqlite"):
        assert list(tmp_path.glob("advisor-*.db*")) == []
    else:
        assert database_revision(db_url).current is None


@pytest.mark.parametrize("spoil", [IMPORTS[0][1], IMPORTS[-1][1]], ids=["figure", "config"])
def test_a_bad_import_into_a_new_database_leaves_no_schema(
    spoil: Callable[[dict[str, Any]], None], db_url: str, make: SimpleNamespace, tmp_path: Path
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(_records(make, spoil))
    one_line_error(*advisor("import", path, "--db", db_url)[::2])
    _assert_untouched(db_url, tmp_path)


def test_a_worker_for_a_new_database_leaves_no_schema(db_url: str, tmp_path: Path) -> None:
    code, _, err = advisor("worker", "99", "--device", "cpu", "--db", db_url)
    assert "no sweep 99 to join" in one_line_error(code, err)
    _assert_untouched(db_url, tmp_path)


# -- flags ---------------------------------------------------------------------------------------

def _broken_workload(tmp_path: Path, make: SimpleNamespace) -> Path:
    path = tmp_path / "bad.py"
    path.write_text("import no_such_module_anywhere\n")
    return path


def _under_a_file(tmp_path: Path, make: SimpleNamespace) -> Path:
    (tmp_path / "a-file").write_text("x")
    return tmp_path / "a-file" / "caches"


FP = "f000000000000000"  # make.fingerprint(0)'s fingerprint_hash
FLAGS: list[tuple[str, Callable[[Path, SimpleNamespace], tuple[Any, ...]], str, str]] = [
    ("timeout-1e-9", lambda t, m: (*SWEEP, "--timeout", "1e-9"), "--timeout 1e-09", "new"),
    ("timeout-nan", lambda t, m: (*SWEEP, "--timeout", "nan"), "--timeout nan", "new"),
    ("screen-nan", lambda t, m: (*SWEEP, "--screen", "nan"), "--screen", "new"),
    ("keep-caches-empty", lambda t, m: (*SWEEP, "--keep-caches", ""), "names no directory",
     "new"),
    ("keep-caches-under-a-file", lambda t, m: (*SWEEP, "--keep-caches", _under_a_file(t, m)),
     "lies under the file", "new"),
    ("trial-timeout-negative", lambda t, m: ("trial", FOUR, "--device", "cpu", "--timeout",
                                             "-1"), "--timeout -1", "new"),
    ("show-id-overflow", lambda t, m: ("show", "99999999999999999999999"), "out of range",
     "existing"),
    ("worker-id-overflow", lambda t, m: ("worker", "99999999999999999999999"), "out of range",
     "existing"),
    ("list-workload-empty", lambda t, m: ("list", "--workload", ""), "--workload is empty",
     "existing"),
    ("report-calls-negative", lambda t, m: ("report", "reranker", "--fingerprint", FP,
                                            "--calls-per-process", "-3", "-o", t / "r.html"),
     "--calls-per-process -3", "existing"),
    ("recommend-calls-negative", lambda t, m: ("recommend", "reranker", "--fingerprint", FP,
                                               "--calls-per-process", "-3"),
     "--calls-per-process -3", "existing"),
    ("recommend-confirm-bad-file", lambda t, m: ("recommend", "reranker", "--confirm", "--file",
                                                 _broken_workload(t, m)),
     "No module named 'no_such_module_anywhere'", "existing"),
]


def _seeded(path: Path, make: SimpleNamespace) -> str:
    url = f"sqlite:///{path}"
    with ResultStore.from_url(url) as store:
        sweep_id = store.create_sweep(make.workload(), make.fingerprint(), {}, "s", 1)
        store.add_trial(make.record(0), sweep_id)
        store.finish_sweep(sweep_id, "finished")
    return url


def _state(url: str) -> tuple[list[Any], list[Any]]:
    with ResultStore.from_url(url, read_only=True) as store:
        return store.sweeps(), store.trials()


@pytest.mark.parametrize(("args", "words", "db"), [c[1:] for c in FLAGS],
                         ids=[c[0] for c in FLAGS])
def test_a_bad_flag_is_one_line_exit_2_and_writes_nothing(
    args: Callable[[Path, SimpleNamespace], tuple[Any, ...]], words: str, db: str,
    tmp_path: Path, make: SimpleNamespace
) -> None:
    path = tmp_path / "results.db"
    url = _seeded(path, make) if db == "existing" else f"sqlite:///{path}"
    before = _state(url) if db == "existing" else None
    made = args(tmp_path, make)
    files = _files(tmp_path)
    code, out, err = advisor(*made, *(("--db", url) if made[0] != "trial" else ()))
    assert words in one_line_error(code, err)
    assert out == ""
    if db == "new":
        assert not list(tmp_path.glob("results.db*"))
    else:
        assert _state(url) == before
    assert _files(tmp_path) == files  # no report, no cache folder, no partial file


def _files(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if "__pycache__" not in p.parts}


# -- output files --------------------------------------------------------------------------------

WRITERS = [
    ("export",), ("list",), ("show", "1"), ("recommend", "reranker", "--fingerprint", FP),
    ("report", "reranker", "--fingerprint", FP),
]


@pytest.fixture
def seeded(tmp_path: Path, make: SimpleNamespace) -> str:
    return _seeded(tmp_path / "results.db", make)


@pytest.mark.parametrize("command", WRITERS, ids=[c[0] for c in WRITERS])
def test_output_to_a_directory_is_one_line(
    command: tuple[str, ...], seeded: str, tmp_path: Path
) -> None:
    folder = tmp_path / "out.html"  # a directory, with the suffix a report needs
    folder.mkdir()
    code, _, err = advisor(*command, "--db", seeded, "-o", folder)
    assert "is a directory" in one_line_error(code, err)
    assert list(folder.iterdir()) == []


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("command", WRITERS, ids=[c[0] for c in WRITERS])
def test_output_to_a_full_device_is_one_line(
    command: tuple[str, ...], seeded: str, tmp_path: Path
) -> None:
    full = tmp_path / "full.html"  # a report's suffix, on /dev/full
    full.symlink_to("/dev/full")
    code, _, err = advisor(*command, "--db", seeded, "-o", full)
    assert "No space left on device" in one_line_error(code, err)


def test_a_failed_write_leaves_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    kept = tmp_path / "kept.json"
    kept.write_text("the earlier output\n")

    def full(*args: Any) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "replace", full)
    for target in (tmp_path / "new.json", kept):
        with pytest.raises(typer.Exit) as exited:
            output.write_file(target, "x" * 100_000)
        assert exited.value.exit_code == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.json"]
    assert kept.read_text() == "the earlier output\n"
    assert capsys.readouterr().err.count("\n") == 2  # one line each


# -- read-only folders: permissions that apply to this user ---------------------------------------

def _drop_dac() -> None:
    """In the child before exec: root loses the capabilities that bypass file permissions
    (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH), so a folder's mode applies to it too."""
    if os.geteuid() == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        for cap in (1, 2):
            if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _unprivileged(*args: Any, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*sweep_support.advisor_command(), *map(str, args)], cwd=cwd,
                          env=sweep_support.cli_env(), capture_output=True, text=True,
                          timeout=sweep_support.CLI_TIMEOUT_S, check=False,
                          preexec_fn=_drop_dac)


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """A folder this test's commands cannot write in (skipped where that cannot be made)."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        probe = subprocess.run(["touch", str(folder / "probe")], preexec_fn=_drop_dac,
                               capture_output=True, check=False)
    except (OSError, subprocess.SubprocessError) as e:
        pytest.skip(f"cannot drop file-permission capabilities here: {e}")
    if probe.returncode == 0:
        pytest.skip("this user writes in a read-only folder")
    yield folder
    folder.chmod(0o755)


def test_output_into_a_read_only_folder_is_one_line(
    read_only: Path, seeded: str, tmp_path: Path
) -> None:
    for command in (("export",), ("list",)):
        done = _unprivileged(*command, "--db", seeded, "-o", read_only / "out.json", cwd=tmp_path)
        assert "permission denied" in one_line_error(done.returncode, done.stderr)
    assert list(read_only.iterdir()) == []


def test_keep_caches_in_a_read_only_folder_is_refused_before_the_sweep_is_stored(
    read_only: Path, tmp_path: Path
) -> None:
    path = tmp_path / "results.db"
    done = _unprivileged(*SWEEP, "--keep-caches", read_only / "caches", "--db",
                         f"sqlite:///{path}", cwd=tmp_path)
    assert "--keep-caches" in one_line_error(done.returncode, done.stderr)
    assert not list(tmp_path.glob("results.db*"))  # no sweep left `running`
    assert list(read_only.iterdir()) == []


def test_a_wal_database_in_a_read_only_folder_is_read(
    read_only: Path, make: SimpleNamespace, tmp_path: Path
) -> None:
    read_only.chmod(0o755)
    url = _seeded(read_only / "results.db", make)
    with sqlite3.connect(read_only / "results.db") as c:
        assert c.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    c.close()
    assert sorted(p.name for p in read_only.iterdir()) == ["results.db"]
    read_only.chmod(0o555)
    listed = _unprivileged("list", "--db", url, "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert [s["workload"]["name"] for s in json.loads(listed.stdout)] == ["reranker"]
    recommended = _unprivileged("recommend", "reranker", "--fingerprint", FP, "--db", url,
                                "--json", cwd=tmp_path)
    assert recommended.returncode == 0, recommended.stderr
    assert sorted(p.name for p in read_only.iterdir()) == ["results.db"]
