"""The charts' rows are typed (advisor.presentation.charts: LatencyPoint, KernelCount,
ShapeLatency, ...): mypy checks the report's readers. The dashboard draws the same rows with
Altair, whose field names are strings mypy cannot see: every field the workload page's charts
encode, filter or show must be a key of the row type its DataFrame holds (or a column the page
derives from one, named here), so that renaming a row's field fails here."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_type_hints

from advisor.presentation import charts

PAGE = Path(__file__).resolve().parents[2] / "dashboard" / "views" / "workload.py"
FIELD = re.compile(r"""["']([a-z_0-9]+):[QNOT]["']|alt\.datum\.([a-z_0-9]+)""")
# the page's own columns, made from a LatencyPoint's median_ci_ms
DERIVED = {"ci_low", "ci_high", "interval"}


def _section(source: str, start: str, end: str) -> str:
    a = source.index(start)
    return source[a:source.index(end, a)]


def _fields(text: str) -> set[str]:
    return {a or b for a, b in FIELD.findall(text)}


def test_the_workload_page_encodes_only_the_rows_fields() -> None:
    source = PAGE.read_text()
    sections = {
        charts.LatencyPoint: _section(source, "charts.latency_points(rec)", "with right:"),
        charts.KernelCount: _section(source, "analysis.kernel_counts(best)", "kernel_names"),
        charts.ShapeLatency: _section(source, "analysis.shape_latencies(records, named)",
                                      "Graph breaks"),
    }
    for row_type, text in sections.items():
        keys = set(get_type_hints(row_type))
        used = _fields(text)
        assert used, row_type.__name__  # the section was found and draws something
        assert used - DERIVED <= keys, (row_type.__name__, sorted(used - DERIVED - keys))


def test_a_renamed_field_is_caught() -> None:
    # the check above fails when a row type loses a field the page encodes
    text = _section(PAGE.read_text(), "charts.latency_points(rec)", "with right:")
    keys = set(get_type_hints(charts.LatencyPoint)) - {"median_ms"}
    assert "median_ms" in _fields(text) - DERIVED - keys
