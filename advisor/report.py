"""A shareable report of one workload on one device and stack: `advisor report`.

`build(rec, records, fingerprint)` gathers what the report shows, as plain data: the one answer
(`advisor.recommendation.answers`) with the device and stack named, the evidence table against its
one named baseline, the noise and the flags, the failed and rejected trials, and the chart rows of
`advisor.charts` (the same rows the dashboard plots). `to_html` writes it as one self-contained HTML
page (inline CSS and hand-written SVG: nothing is fetched, it opens air-gapped and attaches to a
pull request); `to_markdown` writes the same as Markdown tables."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from advisor import charts, serving, units
from advisor.noise import interval_warning

STACK_FIELDS = (
    ("device_name", "device"), ("cpu_model", "CPU"), ("torch_version", "torch"),
    ("triton_version", "triton"), ("driver_version", "driver"),
    ("cuda_runtime_version", "CUDA"), ("cudnn_version", "cuDNN"),
    ("python_version", "Python"), ("fingerprint_hash", "fingerprint"),
)  # fmt: skip
EVIDENCE_COLUMNS = ("config", "speedup", "median", "95% CI", "noise", "trials", "p99",
                    "cold compile", "warm compile", "pays off after", "kernels", "launches",
                    "peak memory", "max abs err")  # fmt: skip
MODE_COLOURS = {"eager": "#7f7f7f", "default": "#1f77b4", "reduce-overhead": "#2ca02c",
                "max-autotune": "#d62728", "max-autotune-no-cudagraphs": "#9467bd"}  # fmt: skip


# --- the data ---------------------------------------------------------------------------------


def build(rec: Any, records: Sequence[Mapping[str, Any]], fingerprint: dict[str, Any] | None,
          *, database: str = "", generated_at: datetime | None = None) -> dict[str, Any]:
    """What the report shows, as plain data (JSON-ready)."""
    fp = fingerprint or {}
    best = next((r for r in records if rec.best and r.get("trial_uuid") == rec.best.trial_uuid),
                None)
    named = {u: n for u, n in ((rec.baseline and rec.baseline.trial_uuid, "eager fp32"),
                               (best and best.get("trial_uuid"), "recommended")) if u}
    device = fp.get("device_name") or fp.get("cpu_model") or "unknown device"
    stack = [(name, str(fp[key])) for key, name in STACK_FIELDS if fp.get(key)]
    return {
        "workload": rec.workload,
        "device": device,
        "stack": stack,
        "database": database,
        "generated_at": (generated_at or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC"),
        "pick": rec.best.label if rec.best else None,
        "decision": rec.decision,
        "sentence": rec.sentence,
        "note": rec.note or None,
        "policy": rec.policy,
        "decided_by": rec.decided_by,
        "baseline": rec.baseline_name,
        "counts": {"trials": rec.n_trials, "failed": rec.n_failed, "rejected": rec.n_rejected,
                   **({"pruned": rec.n_pruned} if rec.n_pruned else {}),
                   "over limits": rec.n_excluded},
        "warnings": _warnings(rec),
        "flags": list(rec.best.flags or []) if rec.best else [],
        "evidence": [_evidence_row(r, rec) for r in charts.evidence(rec)],
        "failures": [_failure_row(r) for r in records if not _passed(r)],
        "phases": charts.phases(records),
        "charts": {
            "latency": charts.latency_points(rec),
            "speedups": charts.speedups(rec),
            "strategies": charts.strategy_bars(charts.shape_strategies(records)),
            "kernels": charts.kernel_counts(best) if best else [],
            "shapes": charts.shape_latencies(records, named),
        },
    }


def _warnings(rec: Any) -> list[str]:
    out = []
    if rec.staleness and rec.staleness.get("warning"):
        out.append(rec.staleness["warning"])
    unsafe = interval_warning(rec)
    if unsafe and unsafe != rec.sentence:
        out.append(unsafe)
    noisy = [r.label for r in rec.ranked if r.noisy]
    if noisy:
        out.append(f"noisy timings (a pooled trial's interval was wide): {', '.join(noisy)}")
    return out


def _evidence_row(r: Any, rec: Any) -> dict[str, str]:
    ci = r.median_ci_ms
    pays = "-" if r.config.get("mode") == "eager" else (
        f"{r.break_even_calls:,} calls" if r.break_even_calls is not None else "never")
    role = " (recommended)" if rec.best is not None and r.trial_uuid == rec.best.trial_uuid else (
        " (baseline)" if rec.baseline is not None and r.trial_uuid == rec.baseline.trial_uuid
        else "")
    values = (
        r.label + role, units.ratio(r.speedup), units.duration_ms(r.median_ms),
        f"{units.duration_ms(ci[0])} - {units.duration_ms(ci[1])}" if ci else "-",
        "short" if r.short else ("noisy" if r.noisy else ""),
        "paired" if r.confirmed else str(r.n_trials), units.duration_ms(r.p99_ms),
        units.duration_s(r.cold_compile_s) if r.config.get("mode") != "eager" else "-",
        units.duration_s(r.warm_compile_s), pays,
        "-" if r.kernels_per_call is None else str(r.kernels_per_call),
        "-" if r.launches_per_call is None else str(r.launches_per_call),
        units.size(r.peak_mem_bytes), "-" if r.max_abs_err is None else f"{r.max_abs_err:.1e}",
    )
    return dict(zip(EVIDENCE_COLUMNS, values, strict=True))


def _passed(record: Mapping[str, Any]) -> bool:
    return record.get("status") == "ok" and bool(record.get("passed"))


def _failure_row(record: Mapping[str, Any]) -> dict[str, str]:
    if record.get("status") == "pruned":  # its proven bound, never a measured figure
        outcome = serving.pruned_text(record.get("pruned") or {})
    elif record.get("status") != "ok":
        outcome = f"failed: {record.get('failure_reason') or 'unknown'}"
    elif record.get("correct") is False:
        outcome = "rejected: outputs differ from eager fp32"
    elif record.get("quality_passed") is False:
        outcome = f"rejected: {record.get('quality_name') or 'quality'} below threshold"
    else:
        outcome = "rejected"
    lines = [x.strip() for x in (record.get("error_tail") or "").splitlines() if x.strip()]
    return {"config": charts.config_label(record.get("config"), record.get("config_key")),
            "outcome": outcome, "last error line": lines[-1] if lines else ""}


def _headline(data: dict[str, Any]) -> str:
    """``recommended``, ``undecided: noise`` or ``nothing to recommend``."""
    if data["pick"] is not None:
        return "recommended"
    return data["decision"] if data["decision"] != "none" else "nothing to recommend"


# --- Markdown ---------------------------------------------------------------------------------


def _md_table(columns: list[str] | tuple[str, ...], rows: list[list[str]]) -> str:
    def cell(text: Any) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def to_markdown(data: dict[str, Any]) -> str:
    """The report as Markdown (tables; the charts as the tables of their figures)."""
    c = data["charts"]
    parts = [f"# {data['workload']} on {data['device']}\n",
             f"Generated {data['generated_at']} from {data['database'] or 'the results store'}.\n",
             "## Recommendation\n", f"**{_headline(data)}**: {data['sentence']}\n",
             f"- decision: {data['decision']}; policy {data['policy']}; decided by the "
             f"{data['decided_by']}",
             f"- every speedup is against {data['baseline']}",
             "- " + ", ".join(f"{v} {k}" for k, v in data["counts"].items())]
    if data["note"]:
        parts.append(f"- note: {data['note']}")
    parts += [f"- **warning**: {w}" for w in data["warnings"]]
    parts += [f"- flag `{f['flag']}`: {f['message']}" for f in data["flags"]]
    parts += ["", "## Device and stack\n", _md_table(["field", "value"],
                                                    [list(x) for x in data["stack"]])]
    parts += ["## Evidence\n", _md_table(EVIDENCE_COLUMNS, [list(r.values())
                                                           for r in data["evidence"]])]
    parts += ["## Latency vs cold compile (Pareto front marked)\n", _md_table(
        ["config", "median", "cold compile", "Pareto front", "recommended"],
        [[p["config"], units.duration_ms(p["median_ms"]), units.duration_s(p["cold_compile_s"]),
          "yes" if p["pareto"] else "", "yes" if p["recommended"] else ""]
         for p in c["latency"]])]
    parts += ["## Speedup per config\n", _md_table(
        ["config", "speedup", "bar"],
        [[s["config"], units.ratio(s["speedup"]), "█" * max(1, round(s["speedup"] * 4))]
         for s in c["speedups"]])]
    if c["strategies"]:
        parts += ["## Shape strategies\n", _md_table(
            ["strategy", "figure", "per request"],
            [[s["strategy"], s["figure"], units.duration_ms(s["ms"])] for s in c["strategies"]])]
    if c["kernels"]:
        parts += ["## Kernels and launches per call\n", _md_table(
            ["run", "what", "count"], [[k["run"], k["what"], str(k["count"])]
                                       for k in c["kernels"]])]
    if data.get("phases"):
        names = list(data["phases"][0])
        parts += ["## Where each trial's time went\n", _md_table(
            names, [[row[n] for n in names] for row in data["phases"]])]
    if data["failures"]:
        parts += ["## Failed, rejected and pruned trials\n", _md_table(
            ["config", "outcome", "last error line"], [list(f.values())
                                                      for f in data["failures"]])]
    return "\n".join(parts).rstrip() + "\n"


# --- HTML -------------------------------------------------------------------------------------

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1b1b;
 margin:24px auto;max-width:1240px;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd}
.meta{color:#666}.pick{background:#eef7ee;border-left:4px solid #2ca02c;padding:10px 14px}
.undecided{background:#fff6e5;border-left-color:#e69500}.none{background:#fdecec;
 border-left-color:#d62728}.warn{background:#fff6e5;padding:6px 12px;margin:6px 0}
table{border-collapse:collapse;font-size:13px;margin:6px 0}
th,td{padding:3px 7px;border-bottom:1px solid #eee;text-align:left;white-space:nowrap}
.num th,.num td{text-align:right}.num th:first-child,.num td:first-child{text-align:left}
th{background:#f6f6f6}.scroll{overflow-x:auto}
tr.rec td{font-weight:600;background:#f1f8f1}.grid{display:flex;flex-wrap:wrap;gap:18px}
figure{margin:0}figcaption{color:#555;font-size:12px;max-width:540px}
svg text{font:11px system-ui,sans-serif;fill:#333}
"""


def to_html(data: dict[str, Any]) -> str:
    """The report as one self-contained HTML page: inline CSS and SVG, no script, no link."""
    e = html.escape
    c = data["charts"]
    kind = ("none" if data["pick"] is None else
            "undecided" if data["decision"].startswith("undecided") else "")
    body = [f"<h1>{e(data['workload'])} on {e(data['device'])}</h1>",
            f"<div class=meta>{e(' · '.join(f'{k} {v}' for k, v in data['stack']))}<br>"
            f"generated {e(data['generated_at'])} from {e(data['database'] or 'the store')}"
            "</div>",
            "<h2>Recommendation</h2>",
            f"<div class='pick {kind}'><b>{e(_headline(data))}</b>: "
            f"{e(data['sentence'])}</div>",
            f"<p>decision: <b>{e(data['decision'])}</b>; policy {e(data['policy'])}; decided by "
            f"the {e(data['decided_by'])}; every speedup is against <b>{e(data['baseline'])}</b>."
            f"<br>{e(', '.join(f'{v} {k}' for k, v in data['counts'].items()))}</p>"]
    if data["note"]:
        body.append(f"<p>note: {e(data['note'])}</p>")
    body += [f"<div class=warn>warning: {e(w)}</div>" for w in data["warnings"]]
    body += [f"<div class=warn>flag <code>{e(f['flag'])}</code>: {e(f['message'])}</div>"
             for f in data["flags"]]
    body += ["<h2>Evidence</h2>", _html_table(_known_columns(data["evidence"]), numeric=True)]
    figures = [_figure(scatter_svg(c["latency"]), "Median latency (pooled, as the answer "
                       "decided) against cold compile time; eager configs compile nothing. "
                       "Dashed: the Pareto front. Ringed: the recommended config."),
               _figure(bars_svg([(s["config"], s["speedup"], s["recommended"])
                                 for s in c["speedups"]], units.ratio, reference=1.0),
                       f"Speedup per config against {data['baseline']}; the line marks 1x.")]
    if c["strategies"]:
        figures.append(_figure(bars_svg([(f"{s['strategy']} · {s['figure']}", s["ms"], False)
                                         for s in c["strategies"]], units.duration_ms),
                               "Shape strategies: each figure per request of the replayed "
                               "traffic (process_life_ms decides under varying traffic)."))
    if c["kernels"]:
        figures.append(_figure(bars_svg([(f"{k['run']} · {k['what']}", k["count"],
                                          k["run"] == "recommended") for k in c["kernels"]],
                                        lambda v: f"{v:,.0f}"),
                               "Kernels and launches per call: eager fp32 vs the recommended "
                               "config."))
    if c["shapes"]:
        figures.append(_figure(bars_svg([(f"{s['shape']} · {s['run']}", s["p50_ms"],
                                          s["run"] == "recommended") for s in c["shapes"]
                                         if s["p50_ms"] is not None], units.duration_ms),
                               "Median latency per traffic shape: eager fp32 vs the "
                               "recommended config."))
    body += ["<h2>Charts</h2>", "<div class=grid>", *figures, "</div>"]
    if data.get("phases"):
        body += ["<h2>Where each trial's time went</h2>", _html_table(data["phases"])]
    if data["failures"]:
        body += ["<h2>Failed, rejected and pruned trials</h2>", _html_table(data["failures"])]
    body.append("<h2>Device and stack</h2>")
    body.append(_html_table([{"field": k, "value": v} for k, v in data["stack"]]))
    title = e(f"advisor report: {data['workload']} on {data['device']}")
    return (f"<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8><title>{title}</title>"
            f"<style>{CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")


def _known_columns(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """The rows without the columns nothing was measured for (every cell ``-`` or empty)."""
    keep = [k for k in (rows[0] if rows else {}) if any(r[k] not in ("-", "") for r in rows)]
    return [{k: r[k] for k in keep} for r in rows]


def _html_table(rows: list[dict[str, Any]], numeric: bool = False) -> str:
    if not rows:
        return "<p>none</p>"
    e = html.escape
    head = "".join(f"<th>{e(k)}</th>" for k in rows[0])
    lines = []
    for row in rows:
        cls = " class=rec" if str(next(iter(row.values()))).endswith("(recommended)") else ""
        lines.append(f"<tr{cls}>" + "".join(f"<td>{e(str(v))}</td>" for v in row.values())
                     + "</tr>")
    cls = " class=num" if numeric else ""
    return f"<div class=scroll><table{cls}><tr>{head}</tr>{''.join(lines)}</table></div>"


def _figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{html.escape(caption)}</figcaption></figure>"


# --- SVG (hand-written: no plotting library, nothing fetched) ---------------------------------


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high] (1, 2, 5 x 10^k steps)."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        high = low + 1
    raw = (high - low) / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    start = math.floor(low / step) * step
    ticks, value = [], start
    while value <= high + step * 1e-9:
        ticks.append(round(value, 12))
        value += step
    if ticks[-1] < high:
        ticks.append(round(value, 12))
    return ticks


def _tick_text(value: float) -> str:
    return f"{value:g}"


def scatter_svg(points: list[dict[str, Any]], width: int = 540, height: int = 340) -> str:
    """Median (ms) against cold compile (s): one dot per config coloured by mode, the Pareto
    front dashed, the recommended config ringed; only front and pick are labelled (labels of
    a crowded plot would overlap)."""
    shown = [p for p in points if p["median_ms"] is not None and p["cold_compile_s"] is not None]
    if not shown:
        return "<p>nothing measured to plot</p>"
    left, right, top, bottom = 58, 16, 30, 42
    xt = nice_ticks(0.0, max(p["cold_compile_s"] for p in shown))
    yt = nice_ticks(0.0, max(p["median_ms"] for p in shown))

    def x(v: float) -> float:
        return left + (v - xt[0]) / (xt[-1] - xt[0]) * (width - left - right)

    def y(v: float) -> float:
        return height - bottom - (v - yt[0]) / (yt[-1] - yt[0]) * (height - top - bottom)

    e = html.escape
    out = [f"<svg width='{width}' height='{height}' "
           f"viewBox='0 0 {width} {height}' role='img'>"]
    out += _axes(xt, yt, x, y, width, height, left, right, top, bottom,
                 "cold compile (s)", "median latency (ms)")
    front = sorted((p for p in shown if p["pareto"]), key=lambda p: p["cold_compile_s"])
    if len(front) > 1:
        path = " ".join(f"{x(p['cold_compile_s']):.1f},{y(p['median_ms']):.1f}" for p in front)
        out.append(f"<polyline points='{path}' fill='none' stroke='#888' "
                   "stroke-dasharray='5 4'/>")
    for p in shown:
        cx, cy = x(p["cold_compile_s"]), y(p["median_ms"])
        colour = MODE_COLOURS.get(str(p["mode"]), "#444")
        out.append(f"<circle cx='{cx:.1f}' cy='{cy:.1f}' r='5' fill='{colour}'>"
                   f"<title>{e(p['config'])}: {e(units.duration_ms(p['median_ms']))}, "
                   f"{e(units.duration_s(p['cold_compile_s']))} cold compile</title></circle>")
        if p["recommended"]:
            out.append(f"<circle cx='{cx:.1f}' cy='{cy:.1f}' r='10' fill='none' "
                       "stroke='#111' stroke-width='2'/>")
        if p["pareto"] or p["recommended"]:
            anchor = "end" if cx > width * 0.6 else "start"
            dx = -12 if anchor == "end" else 12
            out.append(f"<text x='{cx + dx:.1f}' y='{cy - 6:.1f}' text-anchor='{anchor}'>"
                       f"{e(p['config'])}</text>")
    modes = list(dict.fromkeys(str(p["mode"]) for p in shown))
    lx = left
    for mode in modes:
        out.append(f"<circle cx='{lx}' cy='10' r='4' "
                   f"fill='{MODE_COLOURS.get(mode, '#444')}'/><text x='{lx + 8}' "
                   f"y='14'>{e(mode)}</text>")
        lx += 24 + 7 * len(mode)
    out.append("</svg>")
    return "".join(out)


def _axes(xt: list[float], yt: list[float], x: Any, y: Any, width: int, height: int,
          left: int, right: int, top: int, bottom: int, xlabel: str, ylabel: str) -> list[str]:
    out = []
    for t in xt:
        out.append(f"<line x1='{x(t):.1f}' x2='{x(t):.1f}' y1='{top}' y2='{height - bottom}' "
                   "stroke='#eee'/>")
        out.append(f"<text x='{x(t):.1f}' y='{height - bottom + 14}' text-anchor='middle'>"
                   f"{_tick_text(t)}</text>")
    for t in yt:
        out.append(f"<line x1='{left}' x2='{width - right}' y1='{y(t):.1f}' y2='{y(t):.1f}' "
                   "stroke='#eee'/>")
        out.append(f"<text x='{left - 6}' y='{y(t) + 4:.1f}' text-anchor='end'>"
                   f"{_tick_text(t)}</text>")
    out.append(f"<line x1='{left}' x2='{width - right}' y1='{height - bottom}' "
               f"y2='{height - bottom}' stroke='#999'/>")
    out.append(f"<line x1='{left}' x2='{left}' y1='{top}' y2='{height - bottom}' "
               "stroke='#999'/>")
    out.append(f"<text x='{(left + width - right) / 2:.0f}' y='{height - 8}' "
               f"text-anchor='middle'>{html.escape(xlabel)}</text>")
    out.append(f"<text transform='translate(14 {(top + height - bottom) / 2:.0f}) rotate(-90)' "
               f"text-anchor='middle'>{html.escape(ylabel)}</text>")
    return out


def bars_svg(rows: list[tuple[str, float, bool]], label: Any, *, reference: float | None = None,
             width: int = 540) -> str:
    """Horizontal bars, one per (name, value, highlighted) row, the value printed at the end
    of each; ``reference`` draws a vertical line (1x for speedups)."""
    rows = [r for r in rows if r[1] is not None and math.isfinite(r[1])]
    if not rows:
        return "<p>nothing to plot</p>"
    e = html.escape
    names_w = min(300, 16 + int(6.6 * max(len(r[0]) for r in rows)))
    bar_h, gap, top = 16, 6, 6
    height = top + len(rows) * (bar_h + gap) + 24
    high = max([r[1] for r in rows] + ([reference] if reference else []))
    ticks = nice_ticks(0.0, high)
    span = width - names_w - 70

    def x(v: float) -> float:
        return names_w + v / ticks[-1] * span

    out = [f"<svg width='{width}' height='{height}' "
           f"viewBox='0 0 {width} {height}' role='img'>"]
    for i, (name, value, marked) in enumerate(rows):
        y0 = top + i * (bar_h + gap)
        shown = name if len(name) <= 42 else name[:40] + "…"
        weight = " font-weight='bold'" if marked else ""
        out.append(f"<text x='{names_w - 6}' y='{y0 + 12}' text-anchor='end'{weight}>"
                   f"{e(shown)}<title>{e(name)}</title></text>")
        out.append(f"<rect x='{names_w}' y='{y0}' width='{max(x(value) - names_w, 1):.1f}' "
                   f"height='{bar_h}' fill='{'#2ca02c' if marked else '#8fb3d9'}'/>")
        out.append(f"<text x='{x(value) + 4:.1f}' y='{y0 + 12}'>{e(label(value))}</text>")
    axis_y = top + len(rows) * (bar_h + gap)
    out.append(f"<line x1='{names_w}' x2='{names_w + span}' y1='{axis_y}' y2='{axis_y}' "
               "stroke='#999'/>")
    for t in ticks:
        out.append(f"<text x='{x(t):.1f}' y='{axis_y + 14}' text-anchor='middle'>"
                   f"{_tick_text(t)}</text>")
    if reference is not None:
        out.append(f"<line x1='{x(reference):.1f}' x2='{x(reference):.1f}' y1='{top - 4}' "
                   f"y2='{axis_y}' stroke='#d62728' stroke-dasharray='4 3'/>")
    out.append("</svg>")
    return "".join(out)
