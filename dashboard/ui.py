"""What every page shows the same way: the database line, the empty and error states, charts.

Every chart is Altair and every axis title carries its unit. What keeps a first render fast:

- every encoding is a channel object (``alt.X("p50_ms:Q")``, ``alt.Tooltip``), never a bare
  string or dict, which Altair would look up through the whole Vega-Lite schema;
- layers that share one data frame take it from the layer (``alt.layer(..., data=frame)``):
  Altair compares charts that each hold it by printing the frame;
- a category axis in a given order gets it as its scale's domain, not as a sort (which the
  browser would compute for every data row);
- charts are drawn on a canvas, without ARIA descriptions (Vega-Lite would compute one for
  every mark, and only SVG output uses them).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

import altair as alt
import pandas as pd
import streamlit as st

from advisor import units
from dashboard import data

FIRST_SWEEP = "advisor sweep workloads/reranker.py --db {url}"
SPEEDUP_SCALE = alt.Scale(scheme="redyellowgreen", domainMid=1.0, type="log")
ROW_PX = 30  # pixels per category row of a chart
SLANTED_MAX = 20  # more x categories than this: upright labels, thinned where they would touch
EMPTY_POLL_S = 3  # how often an empty database is looked at again
CANVAS = {"embedOptions": {"renderer": "canvas"}}
PICK_STROKE_PX = 3  # a heatmap's pick: its cell outlined this thick in solid black
NO_PICK_GREY = "#bbbbbb"  # a cell with no figure: every trial failed, or no pick was made


def connect() -> str:
    """The database URL for the page's queries; stops the page (with one message) when the
    database cannot be read, does not exist (an error with the fix) or holds no results yet."""
    db = data.database()
    with st.sidebar:
        st.caption(f"Database: `{db.shown}`")
        # The click reruns the page; the callback empties the caches before that run.
        st.button("Refresh", on_click=data.clear, help="Read the database again now (it is "
                  f"re-read every {data.TTL_S} s anyway).")  # fmt: skip
    if db.state == "error":
        st.error(f"Cannot read the results database. {db.message}", icon=":material/error:")
        st.stop()
    if db.state == "missing":  # a mistyped path is an error, as every advisor reader says
        st.error(db.message, icon=":material/error:")
        st.code(FIRST_SWEEP.format(url=db.shown), language="bash")
        st.caption("This page looks again every few seconds and shows the results once the "
                   "database exists; nothing is created by the dashboard itself.")
        _wait_for_results()
        st.stop()
    if db.state == "empty":
        st.info(
            f"No results in `{db.shown}` yet. Run a first sweep into this database; this page "
            "shows them as soon as its first trial is stored:",
            icon=":material/rocket_launch:",
        )
        st.code(FIRST_SWEEP.format(url=db.shown), language="bash")
        st.caption("A CPU-only machine works too: `--device cpu` (add `--modes eager,default` "
                   "for a first look in a minute).")  # fmt: skip
        _wait_for_results()
        st.stop()
    return db.url


@st.fragment(run_every=EMPTY_POLL_S)
def _wait_for_results() -> None:
    """While the database is empty or missing: look again every few seconds, show the page
    once it holds results."""
    data.forget_state()
    if data.database().state not in ("empty", "missing"):
        st.rerun()


def chart(spec: alt.Chart | alt.LayerChart | alt.FacetChart, height: int | None = None) -> None:
    """An Altair chart across the page; ``height`` is the whole chart's, axes included."""
    spec = spec.configure(aria=False).properties(usermeta=CANVAS)
    st.altair_chart(spec, width="stretch", height="content" if height is None else height)


def long_labels(title: str) -> alt.Axis:
    """A y axis for long category labels: the labels get room, the title sits above them."""
    return alt.Axis(title=title, labelLimit=400, titleAngle=0, titleAlign="right",
                    titleAnchor="end", titleBaseline="bottom", titleX=0, titleY=-10)  # fmt: skip


def x_labels(values: pd.Series, title: str) -> alt.Axis:
    """An x axis for category labels that never overlap into a block: level when short and
    few; slanted when long (up to ``SLANTED_MAX`` of them, a column is then wide enough for
    slanted labels to stand apart); upright when there are more, and thinned: Vega-Lite leaves
    out a label that would touch the one before it (the tooltip names every cell)."""
    longest = int(values.astype(str).str.len().max()) if len(values) else 0
    many = values.nunique() > SLANTED_MAX
    if longest <= 12 and not many:
        return alt.Axis(title=title, labelAngle=0, labelOverlap="greedy")
    if not many:
        return alt.Axis(title=title, labelAngle=-45, labelLimit=260, labelOverlap=False)
    return alt.Axis(title=title, labelAngle=-90, labelLimit=260, labelOverlap="greedy")


def rows(step: int = ROW_PX) -> dict[str, Any]:
    """Chart properties: each category of the y axis gets ``step`` pixels."""
    return {"height": alt.Step(step)}


def speedup_heatmap(
    frame: pd.DataFrame,
    x: str,
    y: str,
    x_title: str,
    y_title: str,
    text: str | None = None,
    x_order: list[str] | None = None,
    y_order: list[str] | None = None,
    step: int = ROW_PX,
    noisy: str | None = None,
    pick: str | None = None,
) -> alt.LayerChart:
    """A heatmap of ``speedup`` (x over eager fp32; log colour scale, 1 in the middle), ``step``
    pixels per row; the tooltip shows every column of ``frame`` but its times. A row without a
    speedup (no pick: undecided, nothing passed) is a grey cell, never left out; ``noisy``: a
    column of booleans, its true cells outlined in black dashes (noisy timings); ``pick``: a
    column of booleans, its true cells (the recommended config) outlined in solid black;
    ``text``: the column written in each cell."""
    tips = tooltips(_tip(frame, c) for c in frame.columns
                    if not str(frame[c].dtype).startswith("datetime"))  # fmt: skip
    at = {"x": alt.X(f"{x}:N", axis=x_labels(frame[x], x_title), **_order(x_order)),
          "y": alt.Y(f"{y}:N", axis=long_labels(y_title), **_order(y_order))}  # fmt: skip
    rect = alt.Chart().mark_rect(stroke="white", strokeWidth=1).encode(
        **at, tooltip=tips,
        color=alt.Color("speedup:Q", title="speedup over eager fp32 (x)", scale=SPEEDUP_SCALE),
    )  # fmt: skip
    layers: list[alt.Chart] = [rect]
    if frame["speedup"].isna().any():
        layers.append(alt.Chart().transform_filter("!isValid(datum.speedup)").mark_rect(
            color=NO_PICK_GREY, stroke="white", strokeWidth=1).encode(**at, tooltip=tips))
    if noisy is not None and frame[noisy].fillna(False).astype(bool).any():
        layers.append(alt.Chart().transform_filter(f"datum.{noisy} === true").mark_rect(
            filled=False, stroke="black", strokeWidth=2, strokeDash=[4, 3]).encode(
            **at, tooltip=tips))  # fmt: skip
    if pick is not None and frame[pick].fillna(False).astype(bool).any():
        layers.append(alt.Chart().transform_filter(f"datum.{pick} === true").mark_rect(
            filled=False, stroke="black", strokeWidth=PICK_STROKE_PX).encode(
            **at, tooltip=tips))  # fmt: skip
    if text is not None:
        layers.append(alt.Chart().mark_text(fontSize=12).encode(
            x=alt.X(f"{x}:N", **_order(x_order)), y=alt.Y(f"{y}:N", **_order(y_order)),
            text=alt.Text(f"{text}:N"), color=alt.ColorValue("black"),
        ))  # fmt: skip
    return cast(alt.LayerChart, alt.layer(*layers, data=frame).properties(**rows(step)))


def _tip(frame: pd.DataFrame, column: str) -> str | alt.Tooltip:
    """A tooltip field, figures with their unit's format (``6.46x``, ``0.960 ms``)."""
    if column == "speedup":
        return alt.Tooltip("speedup:Q", format=".2f", title="speedup (x)")
    if column.endswith("_ms") and pd.api.types.is_numeric_dtype(frame[column]):
        return alt.Tooltip(f"{column}:Q", format=".3~r", title=column.replace("_ms", " (ms)"))
    return column


def _order(categories: list[str] | None) -> dict[str, Any]:
    """A category axis in the given order (its scale's domain: no sorting done per data row)
    or, without one, in ascending order."""
    return {"sort": "ascending"} if categories is None else {"scale": alt.Scale(domain=categories)}


def tooltips(fields: Iterable[str | alt.Tooltip]) -> list[alt.Tooltip]:
    """Tooltip channels for column names (ready channels are kept as they are)."""
    return [f if isinstance(f, alt.Tooltip) else alt.Tooltip(f) for f in fields]


def interval_help(best: Any) -> str | None:
    """A figure's 95% interval, how many trials it pools and whether it was noisy (the
    metric's help)."""
    if best is None:
        return None
    return noise_line(best)


def noise_line(best: Any) -> str:
    """What to trust of a pooled figure: ``95% CI 0.950-0.970 ms; median of 3 trials; noisy``."""
    ci = best.median_ci_ms
    parts = [f"95% CI {units.duration_ms(ci[0])} to {units.duration_ms(ci[1])}" if ci
             else "no interval"]  # fmt: skip
    parts.append("paired confirmation" if best.confirmed else f"median of {best.n_trials} "
                 f"trial{'s' if best.n_trials != 1 else ''}")
    if best.noisy:
        parts.append("noisy: timings varied more than 10% (measure again on a quiet host)")
    return "; ".join(parts)


COLUMNS: dict[str, Any] = {
    "config": st.column_config.TextColumn("config", width=280, help="a label longer than the "
                                          "column ends in …: the Workload page shows it whole"),
    "speedup": st.column_config.NumberColumn("speedup (x)", format="%.2fx",
                                             help="the baseline figure (see `baseline`) / this "
                                             "config's p50"),
    "p50_ci": st.column_config.TextColumn("p50 95% CI", help="the 95% interval of the pooled "
                                          "p50 (empty: too few samples to say)"),
    "noisy": st.column_config.CheckboxColumn("noisy", width=56,
                                             help="a pooled trial's timing was noisy "
                                             "(IQR over 10% of its median)"),
    "decision": st.column_config.TextColumn(
        "decision", help="decided; tie (a simpler config within 2% on paired figures); "
        "equivalent (the evidence cannot order the leader and another config, but all clearly "
        "beat eager fp32: the lower cold compile, then the simpler, is picked); undecided (the "
        "same where the choice matters); undecided: noise (the same on noisy timings: no "
        "pick)"),
    "baseline": st.column_config.TextColumn("speedup against"),
    "p50_ms": st.column_config.NumberColumn("p50 (ms)", format="%.3f"),
    "p90_ms": st.column_config.NumberColumn("p90 (ms)", format="%.3f"),
    "p99_ms": st.column_config.NumberColumn("p99 (ms)", format="%.3f"),
    "eager_p50_ms": st.column_config.NumberColumn("eager fp32 p50 (ms)", format="%.3f"),
    "best_ms": st.column_config.NumberColumn("best p50 (ms)", format="%.3f"),
    "best_median_ms": st.column_config.NumberColumn("best p50 (ms)", format="%.3f"),
    "cold_compile_s": st.column_config.NumberColumn("cold compile (s)", format="%.1f"),
    "warm_compile_s": st.column_config.NumberColumn("warm compile (s)", format="%.1f"),
    "break_even_calls": st.column_config.NumberColumn(
        "break-even (calls)", format="%.0f",
        help="calls after which the compile time is paid back against the fastest eager "
        "config of the same stack: cold compile / (its p50 - p50); empty when the config "
        "saves nothing over it",
    ),
    "peak_mem_mib": st.column_config.NumberColumn("peak memory (MiB)", format="%.0f"),
    "max_abs_err": st.column_config.NumberColumn("max abs err", format="%.1e"),
    "stale": st.column_config.CheckboxColumn(
        "stale", width=56,
        help="the device model has been measured with a newer software stack (newer torch, "
        "triton, CUDA or driver; of the same versions, a later one): its answer may have moved",
    ),
    "progress": st.column_config.ProgressColumn("progress", min_value=0.0, max_value=1.0,
                                                format="percent", color="blue"),
    "started": st.column_config.DatetimeColumn("started (UTC)", format="YYYY-MM-DD HH:mm"),
    "finished": st.column_config.DatetimeColumn("finished (UTC)", format="YYYY-MM-DD HH:mm"),
    "last_measured": st.column_config.DatetimeColumn("last trial (UTC)",
                                                     format="YYYY-MM-DD HH:mm"),
    "best_so_far_ms": st.column_config.NumberColumn("best so far (ms)", format="%.3f"),
    "change_pct": st.column_config.NumberColumn("change (%)", format="%+.1f"),
    "before_ms": st.column_config.NumberColumn("before: p50 (ms)", format="%.3f"),
    "speedup_a": st.column_config.NumberColumn("speedup on A (x)", format="%.2fx"),
    "speedup_b": st.column_config.NumberColumn("speedup on B (x)", format="%.2fx"),
    "rank_a": st.column_config.NumberColumn("rank on A", format="%d"),
    "rank_b": st.column_config.NumberColumn("rank on B", format="%d"),
    "verdict_a": st.column_config.TextColumn("on A"),
    "verdict_b": st.column_config.TextColumn("on B"),
    "after_ms": st.column_config.NumberColumn("after: p50 (ms)", format="%.3f"),
    "kind": st.column_config.TextColumn(
        "on the two devices", help="faster on one, slower on the other (than eager fp32); "
        "failed or rejected on one side; as fast as eager on one side; or agree (the same "
        "verdict on both)"),
    "deciding_ms": st.column_config.NumberColumn(
        "deciding figure (ms)", format="%.3f", help="what the recommendation decides on: the "
        "steady-state p50, or under varying traffic the cost per request over a serving "
        "process's life; the table is sorted by it, failed and rejected trials last"),
    "kernels_per_call": st.column_config.NumberColumn("kernels per call", format="%d"),
    "launches_per_call": st.column_config.NumberColumn("launches per call", format="%d"),
    "graph_breaks": st.column_config.NumberColumn("graph breaks", format="%d"),
}  # fmt: skip


def table(frame: pd.DataFrame, columns: list[str] | None = None,
          hidden: list[str] | tuple[str, ...] = (), *, all_rows: bool = False,
          **kwargs: Any) -> None:
    """A sortable, filterable table with the shared column formats; ``hidden`` columns are
    there but not shown until asked for (the table's column menu), so that the table fits the
    page instead of scrolling sideways. Milliseconds get one format per column
    (`units.column_format`: three significant figures of its smallest figure). ``all_rows``:
    as tall as its rows (Streamlit caps that at 10,000 px, then it scrolls), not ten rows."""
    wanted = list(frame.columns) if columns is None else [*columns, *hidden]
    shown = frame[[c for c in dict.fromkeys(wanted) if c in frame]].apply(_numeric)
    config: dict[str, Any] = {}
    for c in shown.columns:
        entry = dict(COLUMNS.get(c, {}))
        if c.endswith("_ms") and entry.get("type_config", {}).get("type") == "number":
            entry["type_config"] = {**entry["type_config"],
                                    "format": units.column_format(shown[c])}  # fmt: skip
        if c in hidden:
            entry["hidden"] = True
        if entry:
            config[c] = entry
    if all_rows:
        kwargs.setdefault("height", "content")
    st.dataframe(shown, hide_index=True, column_config=config, placeholder="–", **kwargs)


def _numeric(column: pd.Series) -> pd.Series:
    """Figures stored next to None (an object column) as floats, so that the table formats
    them and shows an empty cell for a missing one."""
    if column.dtype != object:
        return column
    values = column.dropna()
    numbers = values.map(lambda v: isinstance(v, (int, float)) and not isinstance(v, bool))
    return column.astype(float) if len(values) and numbers.all() else column
