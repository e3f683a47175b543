"""One output contract on the read commands (list, show, recommend, compare, export):
-f/--format {table,json,yaml,csv}, --json as -f json, -o FILE, --flatten CSV; on a real SQLite
database seeded as sweeps write it."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import yaml
from report_support import fingerprint_of, run

H200, NEW = "NVIDIA H200", "2.11.0+cu130"


def _ok(*args: object) -> str:
    done = run(*args)
    assert done.exit_code == 0, done.output
    return done.stdout


def test_recommend_json_and_format_json_print_one_document(seeded_url: str) -> None:
    fp = fingerprint_of(seeded_url, "reranker", H200, NEW)
    base = ("recommend", "reranker", "--db", seeded_url, "--fingerprint", fp)
    as_json = json.loads(_ok(*base, "--json"))
    assert as_json == json.loads(_ok(*base, "--format", "json")) == json.loads(_ok(*base, "-f",
                                                                                    "json"))
    # the evidence and what a serving process pastes, in one document
    assert as_json["label"] == as_json["best"]["label"] == "bf16 + reduce-overhead"
    assert as_json["torch_compile"] == {"fullgraph": False, "mode": "reduce-overhead"}
    assert [r["label"] for r in as_json["ranked"]][0] == "bf16 + reduce-overhead"
    assert as_json["decision"] == "decided" and as_json["figures"]["median_ms"] == 0.96
    assert yaml.safe_load(_ok(*base, "-f", "yaml")) == as_json
    rows = list(csv.DictReader(io.StringIO(_ok(*base, "-f", "csv", "--flatten"))))
    assert [r["label"] for r in rows][-1] == "fp32 + eager"  # the baseline, last
    assert rows[0]["config.mode"] == "reduce-overhead" and rows[0]["speedup"].startswith("6.458")


def test_export_flatten_has_one_column_per_field(seeded_url: str) -> None:
    text = _ok("export", "--workload", "reranker", "--db", seeded_url, "-f", "csv", "--flatten")
    rows = list(csv.DictReader(io.StringIO(text)))
    for column in ("workload.name", "workload.path", "workload.source_sha256", "config.mode",
                   "config.dtype", "config.fullgraph", "fingerprint.device_name",
                   "fingerprint.torch_version", "fingerprint.fingerprint_hash", "median_ms",
                   "cold_compile_s"):
        assert column in rows[0], column
    assert "workload" not in rows[0] and "config" not in rows[0]  # no JSON blobs
    picked = [r for r in rows if r["fingerprint.torch_version"] == NEW and
              r["config.mode"] == "reduce-overhead" and r["config.dtype"] == "bf16" and
              r["fingerprint.device_name"] == H200]
    assert sorted(float(r["median_ms"]) for r in picked) == [0.96, 0.98]  # two H200s
    # without --flatten the CSV is still what `advisor import` reads
    plain = _ok("export", "--workload", "reranker", "--db", seeded_url, "-f", "csv")
    assert json.loads(next(csv.DictReader(io.StringIO(plain)))["workload"])["name"] == "reranker"


def test_output_files_hold_what_stdout_prints(seeded_url: str, tmp_path: Path) -> None:
    for command in (("list",), ("show", "1"), ("compare", "reranker")):
        printed = _ok(*command, "--db", seeded_url, "-f", "json")
        out = tmp_path / f"{command[0]}.json"
        done = run(*command, "--db", seeded_url, "--json", "-o", out)
        assert done.exit_code == 0 and done.stdout == ""
        assert json.loads(out.read_text()) == json.loads(printed)
    table = tmp_path / "compare.txt"
    assert run("compare", "reranker", "--db", seeded_url, "-o", table).exit_code == 0
    assert "reranker across devices and stacks" in table.read_text()


def test_list_show_and_compare_shapes(seeded_url: str) -> None:
    listed = json.loads(_ok("list", "--db", seeded_url, "--json"))
    assert isinstance(listed, list) and listed[0]["id"] > listed[-1]["id"]
    assert {"id", "workload", "status", "recommendation"} <= set(listed[0])
    flat = list(csv.DictReader(io.StringIO(_ok("list", "--db", seeded_url, "-f", "csv",
                                               "--flatten"))))
    assert {r["workload.name"] for r in flat} == {"reranker", "embedder", "tiny-mlp"}
    assert "recommendation.pick" in flat[0]
    shown = json.loads(_ok("show", "1", "--db", seeded_url, "-f", "json"))
    assert set(shown) == {"sweep", "trials", "recommendation"}
    trials = list(csv.DictReader(io.StringIO(_ok("show", "1", "--db", seeded_url, "-f",
                                                 "csv"))))
    assert len(trials) == len(shown["trials"])
    compared = yaml.safe_load(_ok("compare", "reranker", "--db", seeded_url, "-f", "yaml"))
    assert set(compared) == {"workload", "devices", "best_config_differs"}


@pytest.mark.parametrize("command", [("list",), ("show", "1"), ("compare", "reranker"),
                                     ("recommend", "reranker", "--fingerprint", "0" * 16),
                                     ("export",)])
def test_bad_format_or_output_is_one_line_exit_2_nothing_written(
        seeded_url: str, tmp_path: Path, command: tuple[str, ...]) -> None:
    bad = run(*command, "--db", seeded_url, "-f", "xml")
    assert bad.exit_code == 2 and "unknown format 'xml'" in bad.output
    assert len(bad.output.strip().splitlines()) == 1
    missing = tmp_path / "no" / "out.json"
    done = run(*command, "--db", seeded_url, "-f", "json", "-o", missing)
    assert done.exit_code == 2 and "does not exist" in done.output
    assert not missing.parent.exists()
