"""-f/--format (table, json, yaml, csv), --json and -o on the commands that report what they did:
`advisor import`, `advisor db current`, `advisor worker` and `advisor trial`; a bad format is
one line, exit 2, before anything is read, run or written."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path

import pytest
import yaml
from report_support import run
from support.sweeps import FOUR_DTYPES, advisor, json_out

from advisor.config import EAGER_FP32
from advisor.db import ResultStore
from advisor.search.request import SweepSettings


def _ok(*args: object) -> str:
    done = run(*args)
    assert done.exit_code == 0, done.output
    return done.stdout


def test_import_reports_added_and_skipped_in_each_format(seeded_url: str, tmp_path: Path) -> None:
    exported = tmp_path / "all.json"
    _ok("export", "--workload", "reranker", "--db", seeded_url, "-o", exported)
    n = len(json.loads(exported.read_text()))
    url = f"sqlite:///{tmp_path / 'new.db'}"
    first = json.loads(_ok("import", exported, "--db", url, "-f", "json"))
    assert first == {"database": url, "added": n, "skipped": 0}
    assert yaml.safe_load(_ok("import", exported, "--db", url, "-f", "yaml")) == {
        "database": url, "added": 0, "skipped": n}
    (row,) = csv.DictReader(io.StringIO(_ok("import", exported, "--db", url, "-f", "csv")))
    assert row == {"database": url, "added": "0", "skipped": str(n)}
    assert _ok("import", exported, "--db", url) == (
        f"imported 0 trials into {url}; skipped {n} already there\n")
    assert json.loads(_ok("import", exported, "--db", url, "--json"))["skipped"] == n


def test_db_current_in_each_format(seeded_url: str, tmp_path: Path) -> None:
    document = json.loads(_ok("db", "current", "--db", seeded_url, "-f", "json"))
    assert document["database"] == seeded_url and document["at_head"] is True
    assert document["current"] == document["head"] and document["head"]
    assert yaml.safe_load(_ok("db", "current", "--db", seeded_url, "-f", "yaml")) == document
    written = tmp_path / "rev.json"
    _ok("db", "current", "--db", seeded_url, "--json", "-o", written)
    assert json.loads(written.read_text()) == document
    table = _ok("db", "current", "--db", seeded_url)
    assert table == f"{seeded_url}: schema revision {document['current']} (head)\n"


@pytest.mark.parametrize("command", [
    ("import", "x.json"), ("db", "current"), ("worker", "1"), ("trial", str(FOUR_DTYPES)),
])
def test_a_bad_format_is_one_line_exit_2_nothing_written(
        tmp_path: Path, command: tuple[str, ...]) -> None:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    done = run(*command, "--db", url, "-f", "xml") if command[0] != "trial" else run(
        *command, "-f", "xml")
    assert done.exit_code == 2, done.output
    assert done.stderr.strip() == ("advisor: error: unknown format 'xml': choose one of table, "
                                   "json, yaml, csv")
    assert list(tmp_path.iterdir()) == []


def test_a_worker_reports_its_trials_as_json(seeded_url: str, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker joining a sweep with nothing queued: it measures nothing and says so."""
    with ResultStore.from_url(seeded_url, read_only=True) as seeded:
        fingerprint = seeded.sweeps()[0]["fingerprint"]
    url = f"sqlite:///{tmp_path / 'a.db'}"
    sha = hashlib.sha256(FOUR_DTYPES.read_bytes()).hexdigest()
    with ResultStore.from_url(url) as store:
        sweep_id = store.create_sweep(
            {"name": "four-dtypes", "path": str(FOUR_DTYPES), "source_sha256": sha, "info": {}},
            fingerprint, {**SweepSettings(device="cpu", timeout_s=60.0).to_dict(),
                          "space": [EAGER_FP32.to_dict()]}, "study-1")
    # as a sweep starts its workers: the file checked and the device probed already
    monkeypatch.setenv("ADVISOR_WORKLOAD_CHECKED", sha)
    monkeypatch.setenv("ADVISOR_PROBED_FINGERPRINT", json.dumps(fingerprint))
    document = json.loads(_ok("worker", str(sweep_id), "--db", url, "--device", "cpu",
                              "-f", "json"))
    assert document == {"sweep_id": sweep_id, "trials": 0, "interrupted": False}


@pytest.mark.slow
def test_a_trial_prints_its_record_in_the_format_asked(tmp_path: Path) -> None:
    done = advisor("trial", FOUR_DTYPES, "--mode", "eager", "--device", "cpu", "--no-warm",
                   "-f", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    record = json_out(done)
    assert record["config_key"] == "eager/fp32" and record["status"] == "ok"
