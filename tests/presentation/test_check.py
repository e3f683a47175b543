"""`advisor check`: the regression gate, on a real SQLite database seeded with two software
stacks of one H200 (bf16 + reduce-overhead: 1.2 ms on torch 2.10, 0.96 ms on torch 2.11), an
A100 and another H200; baselines from the store, an export file and recommend documents.

The seeded trials carry no 95% interval, so the gate cannot tell (exit 4) however far apart
their medians are: it never passes or fails on medians alone. Its outcomes on intervals are in
test_check_intervals.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_support import fingerprint_of, run

from advisor.cli import exits
from advisor.presentation.check import parse_threshold

H200, A100 = "NVIDIA H200", "NVIDIA A100-SXM4-80GB"
OLD, NEW = "2.10.0+cu128", "2.11.0+cu130"


@pytest.fixture(scope="module")
def fps(seeded_url: str) -> dict[str, str]:
    return {"old": fingerprint_of(seeded_url, "reranker", H200, OLD),
            "new": fingerprint_of(seeded_url, "reranker", H200, NEW),
            "a100": fingerprint_of(seeded_url, "reranker", A100, NEW)}


def _check(url: str, here: str, *args: object) -> object:
    return run("check", "reranker", "--db", url, "--fingerprint", here, *args)


def test_faster_medians_without_intervals_are_no_pass(seeded_url: str,
                                                      fps: dict[str, str]) -> None:
    done = _check(seeded_url, fps["new"], "--against", fps["old"], "--fail-if-slower", "5%")
    assert done.exit_code == exits.CANNOT_TELL == 4, done.output
    assert done.stdout.startswith(
        "reranker: cannot tell, not a pass (no 95% interval on this stack or the baseline): "
        "bf16 + reduce-overhead: 0.960 ms on this stack vs 1.20 ms on ")
    assert done.stdout.endswith(", 20.0% faster on the medians alone\n")


def test_slower_medians_without_intervals_are_no_regression_either(
        seeded_url: str, fps: dict[str, str]) -> None:
    done = _check(seeded_url, fps["old"], "--against", fps["new"], "--fail-if-slower", "5%")
    assert done.exit_code == exits.CANNOT_TELL
    assert done.stdout.strip().endswith("25.0% slower on the medians alone")
    loose = _check(seeded_url, fps["old"], "--against", fps["new"], "--fail-if-slower", "30")
    assert loose.exit_code == exits.CANNOT_TELL and "ok" not in loose.stdout


def test_an_export_file_gives_the_same_verdict_as_the_store(
        seeded_url: str, fps: dict[str, str], tmp_path: Path) -> None:
    exported = run("export", "--workload", "reranker", "--db", seeded_url)
    assert exported.exit_code == 0
    file = tmp_path / "baseline.json"
    file.write_text(exported.stdout)
    done = _check(seeded_url, fps["old"], "--baseline", file, "--against", fps["new"], "--json")
    assert done.exit_code == exits.CANNOT_TELL
    verdict = json.loads(done.stdout)
    assert verdict["same_config"] and verdict["outcome"] == "cannot tell"
    assert verdict["slowdown"] == pytest.approx(1.2 / 0.96 - 1)
    assert verdict["slowdown_range"] is None
    many = _check(seeded_url, fps["old"], "--baseline", file)
    assert many.exit_code == exits.BAD_INPUT and "pass --against to choose one" in many.output


@pytest.mark.parametrize("flag", ["--format json", "--json"])
def test_a_recommend_document_is_a_baseline(
        seeded_url: str, fps: dict[str, str], tmp_path: Path, flag: str) -> None:
    doc = run("recommend", "reranker", "--db", seeded_url, "--fingerprint", fps["new"],
              *flag.split())
    assert doc.exit_code == 0, doc.output
    file = tmp_path / "rec.json"
    file.write_text(doc.stdout)
    done = _check(seeded_url, fps["old"], "--baseline", file, "--json")
    assert done.exit_code == exits.CANNOT_TELL
    assert json.loads(done.stdout)["slowdown"] == pytest.approx(1.2 / 0.96 - 1)


def test_without_the_same_config_the_baselines_pick_is_compared(
        seeded_url: str, fps: dict[str, str], tmp_path: Path) -> None:
    # a document naming the pick alone (bf16 + reduce-overhead, no ranked configs); the A100
    # recommends fp32 + default
    doc = json.loads(run("recommend", "reranker", "--db", seeded_url, "--fingerprint",
                         fps["new"], "--format", "json").stdout)
    pick_only = {k: v for k, v in doc.items() if k not in ("ranked", "best", "baseline")}
    file = tmp_path / "rec.json"
    file.write_text(json.dumps(pick_only))
    done = _check(seeded_url, fps["a100"], "--baseline", file, "--json")
    assert done.exit_code == exits.CANNOT_TELL
    verdict = json.loads(done.stdout)
    assert not verdict["same_config"]
    assert (verdict["here"]["label"], verdict["there"]["label"]) == ("fp32 + default",
                                                                     "bf16 + reduce-overhead")


@pytest.mark.parametrize("args, message", [
    ((), "--against FINGERPRINT or --baseline FILE"),
    (("--against", "0" * 16), "no trials of reranker on "),  # then how the device is named
    (("--against", "x", "--fail-if-slower", "five"), "bad --fail-if-slower 'five'"),
    (("--baseline", "/nonexistent/base.json"), "cannot read --baseline"),
])
def test_bad_input_is_one_line_and_exit_2(
        seeded_url: str, fps: dict[str, str], args: tuple[str, ...], message: str) -> None:
    done = _check(seeded_url, fps["new"], *args)
    assert done.exit_code == exits.BAD_INPUT and message in done.output
    assert len(done.output.strip().splitlines()) == 1


def test_a_document_of_another_workload_is_refused(seeded_url: str, fps: dict[str, str],
                                                   tmp_path: Path) -> None:
    file = tmp_path / "other.json"
    file.write_text(json.dumps({"workload": "embedder", "figures": {}, "config": None}))
    done = _check(seeded_url, fps["new"], "--baseline", file)
    assert done.exit_code == exits.BAD_INPUT and "not of 'reranker'" in done.output


def test_thresholds() -> None:
    assert parse_threshold("5%") == pytest.approx(0.05)
    assert parse_threshold("2.5") == pytest.approx(0.025)
