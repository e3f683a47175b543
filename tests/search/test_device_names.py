"""Devices by name everywhere: one short id per fingerprint (``H200 @node-h200-1 · af462608``,
`advisor.devices.device_id`) that `compare`, `list`, `show`, `recommend` (table, JSON, -f
python), `check`, the report and the dashboard's data layer all print alike, and that
`recommend --fingerprint` reads back (the id, a hash prefix or the host). `compare` is one line
per device at 80 and 120 columns, the fastest first, with the delta to the fastest.

On real SQLite files: the fleet-size seed (three workloads on twelve devices, one host each) and
the dashboard's small seed (one host, ``host-gpu-a``, measured reranker on two stacks)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from rich.console import Console
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]

from support.seed import (  # noqa: E402
    FLEET_DEVICES,
    GPU_STACK,
    GPU_STACK_OLD,
    fingerprint,
    seeded_file,
)

from advisor.cli import render  # noqa: E402
from advisor.devices import DeviceNames, device_id, short_host, short_model  # noqa: E402
from advisor.errors import ConfigError  # noqa: E402

SHORT = {"NVIDIA H200": "H200", "NVIDIA H100 80GB HBM3": "H100", "NVIDIA A100-SXM4-80GB": "A100",
         "NVIDIA L4": "L4"}  # fmt: skip


def _fleet_ids() -> dict[str, str]:
    """fingerprint hash -> the id every surface must print, written out from the seed."""
    ids = {}
    for device, model, stack_name in FLEET_DEVICES:
        stack = GPU_STACK_OLD if stack_name == "gpu-old" else GPU_STACK
        fp_hash = fingerprint(device, stack, stack_name)["fingerprint_hash"]
        ids[fp_hash] = f"{SHORT[model]} @node-{device} · {fp_hash[:8]}"
    return ids


FLEET_IDS = _fleet_ids()
GPU_A_OLD = fingerprint("gpu-a", GPU_STACK_OLD, "gpu-old")["fingerprint_hash"]
GPU_A_NEW = fingerprint("gpu-a", GPU_STACK, "gpu-new")["fingerprint_hash"]
GPU_B = fingerprint("gpu-b", GPU_STACK, "gpu-new")["fingerprint_hash"]


@pytest.fixture(scope="module")
def fleet_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    return seeded_file(tmp_path_factory.mktemp("fleet"), fleet=True)


@pytest.fixture(scope="module")
def small_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    return seeded_file(tmp_path_factory.mktemp("small"))


@pytest.fixture(autouse=True)
def _seeded_sweeps_stay_alive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADVISOR_SWEEP_DEAD_AFTER_S", str(30 * 86400))  # the seed's running one


def run(*args: Any, width: int = 200) -> tuple[str, Result]:
    """`advisor ARGS` in this process on a terminal ``width`` columns wide: (what the tables
    printed, the runner's result with stdout and stderr)."""
    from advisor.cli.main import app, register

    out = io.StringIO()
    console = Console(width=width, file=out, highlight=False, color_system=None)
    saved, render.console = render.console, console
    try:
        register()
        done = CliRunner().invoke(app, [str(a) for a in args])
    finally:
        render.console = saved
    return out.getvalue(), done


def ok(*args: Any, width: int = 200) -> tuple[str, str]:
    table, done = run(*args, width=width)
    assert done.exit_code == 0, done.output
    return table, done.stdout


def table_rows(text: str) -> list[list[str]]:
    """The table's rows, a row wrapped over several lines (a config label wraps between its
    parts: never cut) joined back into one: a new row starts where the first cell has text."""
    rows: list[list[str]] = []
    for line in text.splitlines():
        if not line.startswith("│"):
            continue
        cells = [c.strip() for c in line.strip("│").split("│")]
        if cells[0] or not rows:
            rows.append(cells)
        else:
            rows[-1] = [f"{a} {b}".strip() for a, b in zip(rows[-1], cells, strict=True)]
    return rows


# -- the id and the selector, without a store ----------------------------------------------------


@pytest.mark.parametrize(("name", "short"), [
    ("NVIDIA H200", "H200"), ("NVIDIA A100-SXM4-80GB", "A100"), ("NVIDIA H100 80GB HBM3", "H100"),
    ("NVIDIA GeForce RTX 4090", "RTX 4090"), ("Tesla V100-SXM2-16GB", "V100"),
    ("Intel(R) Xeon(R) Platinum 8480+", "Xeon 8480+"), ("Intel(R) Xeon(R) CPU @ 2.20GHz", "Xeon"),
    ("AMD EPYC 9654 96-Core Processor", "EPYC 9654"), (None, "unknown"),
])  # fmt: skip
def test_a_model_in_a_word_or_two(name: str | None, short: str) -> None:
    assert short_model(name) == short


def test_the_id_is_model_host_and_short_hash() -> None:
    fp = {"device_name": "NVIDIA H200", "hostname": "gpu-a.example.org",
          "fingerprint_hash": "7f023bc2d1e0f9a8"}  # fmt: skip
    assert device_id(fp) == "H200 @gpu-a · 7f023bc2"
    assert device_id(fp, ["n2", "n1", None, "n1.x"]) == "H200 @n1+1 · 7f023bc2"  # n1 = n1.x
    assert device_id({**fp, "hostname": None}) == "H200 · 7f023bc2"
    cpu = {"device_name": None, "cpu_model": "AMD EPYC 9654 96-Core Processor",
           "hostname": "10.0.0.7", "fingerprint_hash": "00aa"}  # fmt: skip
    assert device_id(cpu) == "EPYC 9654 @10.0.0.7 · 00aa"
    assert short_host("a-very-long-host-name-indeed.example.org") == "a-very-long-host-na~"


def _sweep(host: str, fp_hash: str, name: str = "NVIDIA H200") -> dict[str, Any]:
    return {"fingerprint_hash": fp_hash, "host": host, "device_name": name,
            "fingerprint": {"device_name": name, "hostname": host}}  # fmt: skip


def test_hosts_come_from_the_sweeps_and_a_selector_names_one_device() -> None:
    names = DeviceNames([_sweep("gpu-a", "aaaa1111" * 2), _sweep("gpu-a", "aaaa2222" * 2),
                         _sweep("gpu-b.lab", "bbbb1111" * 2), _sweep("gpu-c", "bbbb1111" * 2)])
    names.learn({"fingerprint_hash": "cccc1111" * 2, "device_name": "NVIDIA L4",
                 "hostname": "not-a-sweep"})  # a record's host is not the device's name
    every = ["aaaa1111" * 2, "aaaa2222" * 2, "bbbb1111" * 2, "cccc1111" * 2]
    assert [names.name(h) for h in every] == [
        "H200 @gpu-a · aaaa1111", "H200 @gpu-a · aaaa2222", "H200 @gpu-b+1 · bbbb1111",
        "L4 · cccc1111"]  # fmt: skip
    for selector in ("H200 @gpu-b+1 · bbbb1111", "bbbb", "BBBB1111", "gpu-c", "@gpu-b",
                     "gpu-b.lab", "gpu-b.other.domain", "bbbb1111" * 2):
        assert names.resolve(selector, every) == "bbbb1111" * 2, selector
    with pytest.raises(ConfigError, match=r"'gpu-a' names 2 devices of w: H200 @gpu-a · "
                                          r"aaaa1111, H200 @gpu-a · aaaa2222; give more"):
        names.resolve("gpu-a", every, scope="w")
    with pytest.raises(ConfigError, match="no trials of w on a device that --fingerprint 'bbb'"):
        names.resolve("bbb", every, scope="w")  # under 4 characters: no prefix
    assert names.resolve("aaaa2", every) == "aaaa2222" * 2


# -- one id on every surface, on the fleet-size database -----------------------------------------


def test_every_surface_names_a_device_alike(fleet_url: str, tmp_path: Path) -> None:
    compared = json.loads(ok("compare", "reranker", "--db", fleet_url, "--json")[1])
    assert {d["fingerprint_hash"]: d["device_id"] for d in compared["devices"]} == FLEET_IDS

    listed = json.loads(ok("list", "--db", fleet_url, "--json")[1])
    assert len(listed) == 36
    assert all(s["device_id"] == FLEET_IDS[s["fingerprint_hash"]] for s in listed)

    fp_hash, name = next((h, n) for h, n in FLEET_IDS.items() if "@node-h200-1 " in n)
    doc = json.loads(ok("recommend", "reranker", "--db", fleet_url, "--fingerprint",
                        "node-h200-1", "--json")[1])  # fmt: skip
    assert (doc["fingerprint_hash"], doc["device_id"]) == (fp_hash, name)
    table, _ = ok("recommend", "reranker", "--db", fleet_url, "--fingerprint", fp_hash[:6])
    assert table.startswith(f"reranker on {name}: best configs")
    snippet = ok("recommend", "reranker", "--db", fleet_url, "--fingerprint", name, "-f",
                 "python")[1]  # fmt: skip
    assert snippet.startswith(f"# advisor recommendation for reranker on {name} (fingerprint "
                              f"{fp_hash},")  # fmt: skip

    sweep = next(s for s in listed if s["fingerprint_hash"] == fp_hash)
    shown, _ = ok("show", sweep["id"], "--db", fleet_url)
    assert shown.startswith(f"sweep {sweep['id']}: {sweep['workload']['name']} on {name} (")

    page = tmp_path / "report.html"
    ok("report", "reranker", "--db", fleet_url, "--fingerprint", "node-h200-1", "-o", page)
    assert f"<h1>reranker on {name}</h1>" in page.read_text(encoding="utf-8")

    from dashboard import data

    groups = data.groups(fleet_url, "reranker")
    assert dict(zip(groups["fingerprint_hash"], groups["device"], strict=True)) == FLEET_IDS
    assert set(data.recommendations(fleet_url, "reranker")["device"]) == set(FLEET_IDS.values())
    sweeps = data.sweeps(fleet_url)
    assert set(sweeps["device"]) == set(FLEET_IDS.values())


@pytest.mark.parametrize("width", [80, 120])
def test_compare_is_one_line_per_device_the_fastest_first(fleet_url: str, width: int) -> None:
    table, _ = ok("compare", "reranker", "--db", fleet_url, width=width)
    lines = table.splitlines()
    assert max(len(line) for line in lines) <= width
    rows = table_rows(table)
    assert len(rows) == len(FLEET_DEVICES) == 12
    # each id whole on its line, never cut; a long config label wraps between its parts
    assert {r[0] for r in rows} == set(FLEET_IDS.values())
    assert {line.split("│")[1].strip() for line in lines if line.startswith("│")} >= set(
        FLEET_IDS.values())
    assert "…" not in table

    devices = json.loads(ok("compare", "reranker", "--db", fleet_url, "--json")[1])["devices"]
    medians = [d["median_ms"] for d in devices]
    assert medians == sorted(medians)  # the fastest first
    assert [r[0] for r in rows] == [d["device_id"] for d in devices]
    assert devices[0]["vs_best"] == 1.0 and rows[0][3] == "best"
    for row, d in zip(rows[1:], devices[1:], strict=True):
        assert row[3] == f"+{d['median_ms'] / medians[0] - 1:.0%}"
        assert re.fullmatch(r"\+\d+%", row[3])
    assert rows[-1][0].startswith("L4 @") and int(rows[-1][3][1:-1]) > 200  # 3.7x the H200
    header = next(line for line in lines if line.startswith("┃"))
    assert ("speedup" in header) == (width == 120)  # dropped first at 80 columns


def test_list_keeps_the_device_column_at_120_columns(fleet_url: str) -> None:
    table, _ = ok("list", "--db", fleet_url, width=120)
    lines = table.splitlines()
    header = next(line for line in lines if line.startswith("┃"))
    assert "device" in header and max(len(line) for line in lines) <= 120
    rows = table_rows(table)
    assert len(rows) == 36 and {r[2] for r in rows} == set(FLEET_IDS.values())


# -- the selector: by short id, hash prefix or host; ambiguous or unknown is exit 2 ------------


@pytest.mark.parametrize("selector", [GPU_B, GPU_B[:5], "host-gpu-b", "@host-gpu-b",
                                      "host-gpu-b.lab.example.org",
                                      "H200 @host-gpu-b · " + GPU_B[:8]])
def test_recommend_for_a_device_by_id_prefix_or_host(small_url: str, selector: str) -> None:
    doc = json.loads(ok("recommend", "reranker", "--db", small_url, "--fingerprint", selector,
                        "--json")[1])  # fmt: skip
    assert doc["fingerprint_hash"] == GPU_B
    assert doc["device_id"] == f"H200 @host-gpu-b · {GPU_B[:8]}"


@pytest.mark.parametrize(("selector", "words"), [
    ("host-gpu-a", f"'host-gpu-a' names 2 devices of reranker: H200 @host-gpu-a · {GPU_A_OLD[:8]}"
                   f", H200 @host-gpu-a · {GPU_A_NEW[:8]}"),
    ("0000", "no trials of reranker on a device that --fingerprint '0000' names"),
    ("host-cpu", "no trials of reranker on a device that --fingerprint 'host-cpu' names"),
])  # fmt: skip
def test_an_ambiguous_or_unknown_device_is_one_line_and_exit_2(
        small_url: str, selector: str, words: str) -> None:
    for command in (("recommend", "reranker"), ("report", "reranker", "-o", "-"),
                    ("check", "reranker", "--against", GPU_B)):
        _, done = run(*command, "--db", small_url, "--fingerprint", selector)
        assert done.exit_code == 2, done.output
        (line,) = done.stderr.strip().splitlines()
        assert words in line
        assert "H200 @host-gpu-b · " in line or "names 2 devices" in line  # says which there are


def test_check_names_its_baseline_device_by_id(small_url: str) -> None:
    _, done = run("check", "reranker", "--db", small_url, "--fingerprint", GPU_A_NEW[:6],
                  "--against", "host-gpu-b")
    assert done.exit_code != 2, done.output
    assert f"H200 @host-gpu-b · {GPU_B[:8]}" in done.stdout
