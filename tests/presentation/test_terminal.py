"""The terminal at 80 columns: tables drop columns by priority instead of wrapping cells,
configs by their one label (abbreviated with a legend where too narrow), figures in human
units; the sweep's closing line."""

from __future__ import annotations

import io

import pytest
from report_support import fingerprint_of
from rich.console import Console

from advisor.cli import render
from advisor.config import CompileConfig
from advisor.db import ResultStore
from advisor.recommendation.answers import answer


@pytest.fixture
def narrow(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    out = io.StringIO()
    monkeypatch.setattr(render, "console", Console(width=80, file=out, highlight=False,
                                                   color_system=None))
    return out


def test_the_sweeps_table_fits_80_columns_without_wrapping_a_cell(
        seeded_url: str, narrow: io.StringIO) -> None:
    fp = fingerprint_of(seeded_url, "reranker", "NVIDIA H200", "2.11.0+cu130")
    with ResultStore.from_url(seeded_url, read_only=True) as store:
        rec = answer(store, "reranker", fp)
    render.recommendation(rec)
    lines = narrow.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 80
    rows = [line for line in lines if line.startswith("│")]
    assert len(rows) == len(rec.ranked)  # one line per config: nothing wrapped
    first = [cell.strip() for cell in rows[0].strip("│").split("│")]
    assert first[:3] == ["bf16 + reduce-overhead", "6.46x", "0.960 ms"]
    header = next(line for line in lines if line.startswith("┃"))
    assert "cold" in header and "quality" not in header  # dropped by priority


def test_columns_return_when_they_fit() -> None:
    columns = (("config", 0), ("median", 0), ("wide", 1), ("narrow", 2))
    rows = [["fp32 eager", "1.22 s", "x" * 60, "3"]]
    table = render.fitted_table("t", columns, rows, width=60)
    assert [c.header for c in table.columns] == ["config", "median", "narrow"]
    assert [c.header for c in render.fitted_table("t", columns, rows, width=200).columns] == [
        "config", "median", "wide", "narrow"]
    empty = render.fitted_table("t", columns, [["a", "-", "", "-"]], width=200)
    assert [c.header for c in empty.columns] == ["config"]  # nothing measured: not shown


def test_labels_and_intervals() -> None:
    config = CompileConfig(mode="max-autotune-no-cudagraphs", dtype="bf16", fullgraph=True,
                           options={"a": 1}, shapes="buckets:pow2")
    assert render.short_label(config) == config.label == (  # the one form, on every surface
        "bf16 + max-autotune-no-cudagraphs + fullgraph + a=1 + shapes=buckets:pow2")
    assert render.abbreviate(config.label)[0] == "bf16 + ma-nocg + fg + a=1 + shapes=buckets:pow2"
    assert render.interval([0.94, 0.98]) == "0.940-0.980 ms"
    assert render.interval([980.0, 1220.0]) == "0.980-1.22 s"  # one unit, the larger end's
    assert render.figure(1220.0, [1200.0, 1250.0], noisy=True) == "1.22 s [1.20-1.25 s] (noisy)"


def test_the_closing_line_names_the_database_and_the_next_commands() -> None:
    line = render.closing_line(3, "reranker", "sqlite:///advisor.db", db_flag=False)
    # each command on a line of its own: nothing between them reads as a shell pipe
    assert line.splitlines() == ["sweep 3 of reranker is in sqlite:///advisor.db; next:",
                                 "  advisor show 3",
                                 "  advisor report reranker -o reranker-report.html"]
    named = render.closing_line(3, "reranker", "postgresql+psycopg://u:***@h/db", db_flag=True)
    assert "  advisor show 3 --db postgresql+psycopg://u:***@h/db" in named.splitlines()
    assert "|" not in line + named


def test_a_table_with_no_rows_yet_keeps_its_title_on_one_line(narrow: io.StringIO) -> None:
    # a sweep stopped before any trial finished: its table has one column and no rows
    title = "guardrail: best configs (0 trials, 0 failed, 0 rejected); speedup vs no baseline"
    columns = (("config", 0), ("speedup", 0), ("median", 0))
    render.console.print(render.fitted_table(title[:76], columns, []))
    lines = narrow.getvalue().splitlines()
    assert lines[0].strip() == title[:76]
    assert max(len(line) for line in lines) <= 80
