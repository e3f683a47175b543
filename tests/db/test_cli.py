"""`advisor db upgrade|current`, `advisor export` and `advisor import`."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

import advisor.cli.db
import advisor.cli.transfer  # noqa: F401  (registers the commands on the app)
from advisor.cli.app import app
from advisor.db import ResultStore, head_revision

FIXTURE = Path(__file__).parents[1] / "fixtures" / "db" / "advisor-0001.sqlite"


def advisor(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def _one_line_error(code: int, err: str) -> str:
    assert code == 2
    assert err.startswith("advisor: error: ") and err.count("\n") == 1
    return err


def _filled(url: str, make: SimpleNamespace) -> int:
    with ResultStore.from_url(url) as store:
        sweep_id = store.create_sweep(make.workload(), make.fingerprint(), {}, "cli", 3)
        store.add_trials([make.record(i) for i in range(3)], sweep_id)
        store.add_trial(make.record(3, workload=make.workload("other")))
        return len(store.trials())


def test_db_current_and_upgrade(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/old.db"
    shutil.copyfile(FIXTURE, tmp_path / "old.db")
    code, out, _ = advisor("db", "current", "--db", url)
    assert code == 0
    assert out == (
        f"{url}: schema revision 0001, head is {head_revision()}: "
        f"run `advisor db upgrade --db {url}`\n"
    )
    code, out, _ = advisor("db", "upgrade", "--db", url)
    assert (code, out) == (0, f"{url}: upgraded from schema revision 0001 to {head_revision()}\n")
    assert advisor("db", "upgrade", "--db", url)[1] == (
        f"{url}: already at schema revision {head_revision()} (head)\n"
    )
    assert advisor("db", "current", "--db", url)[1] == (
        f"{url}: schema revision {head_revision()} (head)\n"
    )


def test_db_upgrade_creates_a_new_database(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/new.db"
    expected = f"no advisor tables yet (created at revision {head_revision()} on first use)\n"
    assert advisor("db", "current", "--db", url)[1] == f"{url}: {expected}"
    assert not (tmp_path / "new.db").exists()
    code, out, _ = advisor("db", "upgrade", "--db", url)
    created = f"created advisor's tables at schema revision {head_revision()} (head)"
    assert (code, out) == (0, f"{url}: {created}\n")


def test_db_commands_refuse_bad_urls_in_one_line() -> None:
    code, _, err = advisor("db", "upgrade", "--db", "mysql://bob:hunter2@localhost/x")
    assert "mysql://bob:***@localhost/x" in _one_line_error(code, err) and "hunter2" not in err
    code, _, err = advisor("db", "current", "--db", "postgresql://bob:hunter2@127.0.0.1:1/x")
    assert "cannot connect" in _one_line_error(code, err) and "hunter2" not in err


def test_export_json_then_import_into_another_database(
    new_db_url: Callable[[], str], tmp_path: Path, make: SimpleNamespace
) -> None:
    source, target = new_db_url(), new_db_url()
    n = _filled(source, make)
    code, out, _ = advisor("export", "--db", source)
    assert code == 0
    exported = json.loads(out)
    assert len(exported) == n
    path = tmp_path / "results.json"
    path.write_text(out)
    code, out, _ = advisor("import", str(path), "--db", target)
    assert code == 0 and out.startswith(f"imported {n} trials into ")
    assert out.endswith("; skipped 0 already there\n")
    assert advisor("import", str(path), "--db", target)[1].endswith(f"skipped {n} already there\n")
    assert json.loads(advisor("export", "--db", target)[1]) == exported


def test_export_one_workload_as_csv_and_import_it(
    new_db_url: Callable[[], str], tmp_path: Path, make: SimpleNamespace
) -> None:
    source, target = new_db_url(), new_db_url()
    _filled(source, make)
    code, out, _ = advisor("export", "--workload", "reranker", "--format", "csv", "--db", source)
    assert code == 0 and out.startswith("record_version,trial_uuid,status,")
    path = tmp_path / "reranker.csv"
    path.write_text(out)
    assert advisor("import", str(path), "--db", target)[0] == 0
    with ResultStore.from_url(source) as a, ResultStore.from_url(target) as b:
        assert b.export() == a.export("reranker")


def test_export_refuses_an_unknown_workload_or_format(store: ResultStore) -> None:
    code, out, err = advisor("export", "--workload", "nope", "--db", store.url)
    assert "no trials of workload 'nope'" in _one_line_error(code, err) and out == ""
    code, out, err = advisor("export", "--format", "xml", "--db", store.url)
    assert "unknown format 'xml'" in _one_line_error(code, err) and out == ""


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[{", "is not valid JSON"),
        ('{"trials": []}', "expected a JSON list of trial records"),
        ("[1, 2]", "entry 0 is not a trial record"),
        ("a,b\n1,2\n", "no trial_uuid column"),
        ('[{"trial_uuid": "x", "status": "ok"}]', "fingerprint"),
    ],
)
def test_a_bad_import_file_is_one_line_and_writes_nothing(
    store: ResultStore, tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    if content.startswith("a,b"):
        path = path.rename(tmp_path / "bad.csv")
    code, _, err = advisor("import", str(path), "--db", store.url)
    assert message in _one_line_error(code, err)
    assert store.trials() == []


def test_an_import_with_one_bad_record_writes_nothing(
    store: ResultStore, tmp_path: Path, make: SimpleNamespace
) -> None:
    records = [make.record(1), {**make.record(2), "started_at": "last tuesday"}]
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(records))
    code, _, err = advisor("import", str(path), "--db", store.url)
    assert "last tuesday" in _one_line_error(code, err)
    assert store.trials() == []


def test_importing_a_missing_file_creates_no_database(tmp_path: Path) -> None:
    code, _, err = advisor("import", str(tmp_path / "nope.json"), "--db",
                           f"sqlite:///{tmp_path}/x.db")  # fmt: skip
    assert "cannot read" in _one_line_error(code, err)
    assert not (tmp_path / "x.db").exists()
