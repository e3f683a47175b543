"""One figure per quantity on a report page: the pick's median reads the same in the headline,
the latency chart and the evidence table (and its speedup in the sentence, the bar chart and
the table); the per-shape chart, from each run's own trial, is drawn only where there are
several shapes (with one it would give the headline's quantity a second figure)."""

from __future__ import annotations

import copy
import html

from report_support import fingerprint_of

from advisor import units
from advisor.db import ResultStore
from advisor.presentation import report
from advisor.recommendation.answers import answer


def _page(url: str, records_edit: object = None) -> tuple[object, dict[str, object], str]:
    fp = fingerprint_of(url, "reranker", "NVIDIA H200", "2.11.0+cu130")
    with ResultStore.from_url(url, read_only=True) as store:
        rec = answer(store, "reranker", fp)
        records = store.trials(workload="reranker", fingerprint_hash=fp)
        fingerprint = records[0]["fingerprint"]
    if callable(records_edit):
        records = records_edit(records)
    data = report.build(rec, records, fingerprint, database=url)
    return rec, data, report.to_html(data)


def test_the_pick_reads_one_figure_everywhere(seeded_url: str) -> None:
    rec, data, page = _page(seeded_url)
    best = rec.best  # type: ignore[attr-defined]
    median, speedup = units.duration_ms(best.median_ms), units.ratio(best.speedup)
    assert f"{best.label}: " in data["sentence"]  # type: ignore[operator]
    (row,) = [r for r in data["evidence"] if r["config"].endswith("(recommended)")]  # type: ignore[union-attr]
    assert (row["median"], row["speedup"]) == (median, speedup)
    (point,) = [p for p in data["charts"]["latency"] if p["recommended"]]  # type: ignore[index]
    assert units.duration_ms(point["median_ms"]) == median
    (bar,) = [b for b in data["charts"]["speedups"] if b["recommended"]]  # type: ignore[index]
    assert units.ratio(bar["speedup"]) == speedup
    assert median in html.unescape(page) and speedup in html.unescape(page)


def test_per_shape_bars_only_where_there_are_several_shapes(seeded_url: str) -> None:
    _, data, _ = _page(seeded_url)
    shapes = data["charts"]["shapes"]  # type: ignore[index]
    assert {s["run"] for s in shapes} == {"recommended", "eager fp32"}  # two shapes each

    def one_shape(records: list[dict[str, object]]) -> list[dict[str, object]]:
        out = copy.deepcopy(records)
        for r in out:
            r["shapes"] = (r.get("shapes") or [])[:1]  # type: ignore[index]
        return out

    _, single, page = _page(seeded_url, one_shape)
    assert single["charts"]["shapes"] == []  # type: ignore[index]
    assert "Median latency per traffic shape" not in page
