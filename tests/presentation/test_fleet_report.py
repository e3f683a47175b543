"""`advisor report --fleet`, on the fleet-size seed (support.seed.seed_fleet: three workloads
on twelve devices, one noisy host): one self-contained page with, per workload and device, the
one answer's pick, decision and speedup over eager fp32 with its noise (the same rows as
`advisor.recommendations`), and where the devices disagree; bad input is one line, exit 2,
nothing written."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from report_support import run
from support.seed import FLEET_NOISY_DEVICE, seeded_file

import advisor
from advisor import units
from advisor.presentation import fleet_report

HOST = f"node-{FLEET_NOISY_DEVICE}"  # the busy host: every figure of it noisy


@pytest.fixture(scope="module")
def fleet_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    return seeded_file(tmp_path_factory.mktemp("fleet"), fleet=True)


@pytest.fixture(scope="module")
def pages(fleet_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    out = tmp_path_factory.mktemp("pages")
    found = {}
    for kind in ("html", "md"):
        done = run("report", "--fleet", "--db", fleet_url, "-o", out / f"fleet.{kind}")
        assert done.exit_code == 0, done.output
        assert "the fleet report: 3 workload(s) on 12 device(s)" in done.output
        found[kind] = (out / f"fleet.{kind}").read_text(encoding="utf-8")
    return found


def _md_rows(page: str, workload: str) -> list[list[str]]:
    """The device table of one workload's section of the Markdown page."""
    section = page.split(f"## {workload}\n", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("| ")]
    return [[c.strip() for c in line.strip("|").split(" | ")] for line in lines[1:]]


def test_each_device_row_is_the_one_answer(fleet_url: str, pages: dict[str, str]) -> None:
    frame = advisor.recommendations(db=fleet_url)  # the one answer per workload and device
    for workload, rows in frame.groupby("workload", sort=False):
        table = _md_rows(pages["md"], str(workload))
        assert len(table) == len(rows) == 12
        for cells, row in zip(table, rows.to_dict("records"), strict=True):  # fastest first
            device, pick, decision, speedup, p50, _, noise = cells[:7]
            assert (device, pick, decision) == (row["device_id"], row["pick"], row["decision"])
            assert speedup == units.ratio(row["speedup"])
            assert p50 == units.duration_ms(row["median_ms"])
            assert noise == ("noisy" if row["noisy"] else "quiet")
            assert (noise == "noisy") == (f"@{HOST} " in device)  # the busy host, and only it


def test_where_devices_disagree_names_every_pick(fleet_url: str, pages: dict[str, str]) -> None:
    frame = advisor.recommendations(db=fleet_url)
    for workload, rows in frame.groupby("workload"):
        picks = rows.dropna(subset=["config"]).groupby("config")["device_id"].apply(list)
        section = pages["md"].split(f"## {workload}\n", 1)[1].split("\n## ", 1)[0]
        if len(picks) == 1:
            assert "Every device picks the same config." in section
            continue
        assert "Where the devices disagree:" in section
        for config, devices in picks.items():
            line = next(x for x in section.splitlines() if x.startswith(f"- {config}: "))
            assert line.split(": ", 1)[1].startswith(", ".join(devices))
    summary = pages["md"].split("## ", 1)[0]
    assert re.search(r"\| reranker \| 12 \| \d+ \| no: \d+ picks \| [\d.]+x-[\d.]+x \|", summary)


def test_the_html_page_is_self_contained(pages: dict[str, str]) -> None:
    page = pages["html"]
    assert page.startswith("<!DOCTYPE html>") and "<style>" in page
    assert "<script" not in page and not re.search(r"(src|href)=", page)
    for workload in ("embedder", "guardrail", "reranker"):
        assert f"<h2>{workload}</h2>" in page
    assert page.count("Where the devices disagree:") == 3
    md_devices = set(re.findall(r"^\| ((?:H200|H100|A100|L4) @[^|]+?) \|", pages["md"], re.M))
    assert md_devices and all(html.escape(d) in page for d in md_devices)


def test_a_fleet_that_agrees_says_so() -> None:
    row = {"device_id": "H200 @a · 1234abcd", "fingerprint_hash": "1234abcd" * 2,
           "pick": "bf16 + default", "config": "bf16 + default", "decision": "decided",
           "speedup": 2.5, "median_ms": 1.0, "median_ci_ms": [0.9, 1.1], "noisy": False,
           "vs_best": 1.0, "torch": "2.11", "trials": 4}  # fmt: skip
    other = {**row, "device_id": "A100 @b · 5678abcd", "fingerprint_hash": "5678abcd" * 2,
             "speedup": 2.0, "median_ms": 2.0, "vs_best": 2.0}
    data = fleet_report.build({"w": [row, other]})
    assert data["summary"] == [{"workload": "w", "devices": "2", "picks": "1", "agree": "yes",
                                "speedup": "2.00x-2.50x", "fastest device": "H200 @a · 1234abcd"}]
    assert "1 pick the same config on every device" in data["sentence"]
    text = fleet_report.to_markdown(data)
    assert "Every device picks the same config." in text and "0.900-1.10 ms" in text
    split = fleet_report.build({"w": [row, {**other, "config": "fp16 + default",
                                            "pick": "fp16 + default", "decision": "equivalent"}]})
    assert split["workloads"][0]["summary"]["agree"] == "no: 2 picks"
    assert ("- fp16 + default: A100 @b · 5678abcd (1 of them among equivalent configs"
            in fleet_report.to_markdown(split))


@pytest.mark.parametrize(("args", "said"), [
    (["--fleet", "--fingerprint", HOST], "--fleet reports every device and stack"),
    (["--fleet", "--device", "cpu"], "--fleet reports every device and stack"),
    ([], "give the WORKLOAD to report"),
    (["nope", "--fleet"], "no results for workload 'nope'"),
    (["--fleet", "--policy", "fastest"], "unknown policy 'fastest'"),
])
def test_bad_fleet_input_is_one_line_and_writes_nothing(
        fleet_url: str, tmp_path: Path, args: list[str], said: str) -> None:
    out = tmp_path / "fleet.html"
    done = run("report", *args, "--db", fleet_url, "-o", out)
    assert done.exit_code == 2, done.output
    assert said in done.output and "Traceback" not in done.output
    assert not out.exists()
