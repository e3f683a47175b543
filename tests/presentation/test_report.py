"""`advisor report`: a self-contained page (HTML or Markdown) of the one answer and its evidence,
from a real SQLite database seeded as sweeps write it; the chart rows
`advisor.presentation.charts` prepares."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from report_support import fingerprint_of, run

from advisor import units
from advisor.db import ResultStore
from advisor.presentation import charts, report
from advisor.recommendation.answers import answer

H200, A100, NEW = "NVIDIA H200", "NVIDIA A100-SXM4-80GB", "2.11.0+cu130"


def test_the_html_report_names_the_one_answer_its_stack_and_baseline(
        seeded_url: str, tmp_path: Path) -> None:
    fp = fingerprint_of(seeded_url, "reranker", H200, NEW)
    out = tmp_path / "report.html"
    done = run("report", "reranker", "--fingerprint", fp, "--db", seeded_url, "-o", out)
    assert done.exit_code == 0, done.output
    page = out.read_text()
    with ResultStore.from_url(seeded_url, create=False) as store:
        rec = answer(store, "reranker", fp)
    assert rec.best is not None and rec.best.label == "bf16 + reduce-overhead"
    assert f"<b>recommended</b>: {rec.sentence}" in page
    assert rec.baseline_name in page  # every speedup against one named baseline
    assert "torch 2.11.0+cu130" in page and "NVIDIA H200" in page and fp in page
    assert "<tr class=rec><td>bf16 + reduce-overhead (recommended)</td><td>6.46x</td>" in page
    assert "failed: oom" in page and "failed: graph_break" in page
    assert page.count("<svg") == 4  # latency/compile, speedups, kernels, per-shape latency
    # self-contained: nothing to fetch, nothing to run
    assert not re.search(r"https?:|<script|<link|<img|@import|url\(", page)


def test_the_report_marks_the_recommended_point_and_the_pareto_front(seeded_url: str) -> None:
    fp = fingerprint_of(seeded_url, "reranker", H200, NEW)
    with ResultStore.from_url(seeded_url, create=False) as store:
        rec = answer(store, "reranker", fp)
    points = {p["config"]: p for p in charts.latency_points(rec)}
    # bf16 eager (3.6 ms, no compile) and reduce-overhead (0.96 ms, 31 s) beat everything else
    assert {c for c, p in points.items() if p["pareto"]} == {"bf16 + eager",
                                                             "bf16 + reduce-overhead"}
    assert [c for c, p in points.items() if p["recommended"]] == ["bf16 + reduce-overhead"]
    assert points["fp32 + eager"]["cold_compile_s"] == 0.0
    svg = report.scatter_svg(list(points.values()))
    assert svg.count("<circle") == len(points) + 1 + len({p["mode"] for p in points.values()})
    assert "stroke-dasharray='5 4'" in svg  # the front
    speed = charts.speedups(rec)
    assert [s["config"] for s in speed][0] == "bf16 + reduce-overhead"
    assert next(s for s in speed if s["baseline"])["speedup"] == 1.0


def test_shape_strategies_are_charted_when_trials_replayed_traffic(
        seeded_url: str, tmp_path: Path) -> None:
    fp = fingerprint_of(seeded_url, "embedder", H200, NEW)
    out = tmp_path / "embedder.md"
    done = run("report", "embedder", "--fingerprint", fp, "--db", seeded_url, "-o", out)
    assert done.exit_code == 0, done.output
    text = out.read_text()
    assert "## Shape strategies" in text
    assert "| buckets:pow2 | mean_ms | 0.580 ms |" in text
    assert "| static | mean_ms | 0.610 ms |" in text
    assert re.match(r"# embedder on H200 @host-gpu-a · [0-9a-f]{8}\n", text)  # its short id


def test_a_rejected_pick_is_reported_with_its_reason(seeded_url: str) -> None:
    fp = fingerprint_of(seeded_url, "reranker", A100, NEW)
    done = run("report", "reranker", "--fingerprint", fp, "--db", seeded_url, "-o", "-")
    assert done.exit_code == 0, done.output
    assert "**recommended**: fp32 + default" in done.stdout
    assert "| bf16 + reduce-overhead | rejected: top10_overlap below threshold |" in done.stdout
    # max-autotune fp32 is slower than eager there: 9.0 / 9.5 ms
    assert re.search(r"^\| fp32 \+ max-autotune \| 0\.95x \| █+ \|$", done.stdout, re.M)


@pytest.mark.parametrize("args, message", [
    (("-o", "report.pdf"), "write the report to a .html or .md file"),
    (("-o", "missing/report.html"), "does not exist"),
    (("--workload-typo",), "No such option"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_written(
        seeded_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        args: tuple[str, ...], message: str) -> None:
    monkeypatch.chdir(tmp_path)
    done = run("report", "reranker", "--fingerprint", "0" * 16, "--db", seeded_url, *args)
    assert done.exit_code == 2 and message in done.output
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_workload_is_one_line_exit_2(seeded_url: str, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    done = run("report", "nope", "--fingerprint", "0" * 16, "--db", seeded_url, "-o", out)
    assert done.exit_code == 2 and "no results for workload 'nope'" in done.output
    assert not out.exists()


def test_pareto_and_bars_on_hand_made_rows() -> None:
    rows = [{"c": "eager", "x": 0.0, "y": 6.0}, {"c": "default", "x": 10.0, "y": 4.9},
            {"c": "ro", "x": 30.0, "y": 1.0}, {"c": "max", "x": 90.0, "y": 1.2},
            {"c": "slow", "x": 20.0, "y": 5.5}, {"c": "unknown", "x": None, "y": 0.1}]
    assert [r["c"] for r in charts.pareto(rows, "x", "y")] == ["eager", "default", "ro"]
    svg = report.bars_svg([("a", 2.0, True), ("b", 0.5, False), ("c", float("nan"), False)],
                          units.ratio, reference=1.0)
    assert svg.count("<rect") == 2 and "2.00x" in svg and "0.50x" in svg
    assert report.nice_ticks(0.0, 95.0) == [0, 20, 40, 60, 80, 100]
    assert report.nice_ticks(0.0, 0.96) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]


@pytest.mark.parametrize("ms, text", [
    (1220.0, "1.22 s"), (0.96, "0.960 ms"), (12.345, "12.3 ms"), (0.037, "37.0 µs"),
    (150_000.0, "2.50 min"), (None, "-"), (float("nan"), "-"), (999.0, "999 ms"),
])
def test_durations_in_human_units(ms: float | None, text: str) -> None:
    assert units.duration_ms(ms) == text


def test_rates_and_sizes_in_human_units() -> None:
    assert units.rate(1000 / 1220.0) == "0.820/s"  # a call above one second is not 0 calls/s
    assert units.rate(41.23) == "41.2/s" and units.rate(12345.6) == "12,346/s"
    assert units.rate(0) == "-" and units.size(200_000_000) == "191 MiB"
    assert units.duration_s(31.04) == "31.0 s" and units.duration_s(0.2) == "200 ms"
