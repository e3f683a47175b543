"""A shareable report of one workload on one device and stack: `advisor report`.

`build(rec, records, fingerprint)` gathers what the report shows, as plain data: the one answer
(`advisor.recommendation.answers`) with the device and stack named, the evidence table against its
one named baseline, the noise and the flags, the failed and rejected trials, and the chart rows of
`advisor.presentation.charts` (the same rows the dashboard plots), and the paste-ready snippet
(`advisor.recommendation.to_python`, what `advisor recommend -f python` prints). `to_html` writes it
as one self-contained HTML page (inline CSS and hand-written SVG: nothing is fetched, it opens
air-gapped and attaches to a pull request); `to_markdown` writes the same as Markdown tables.

Both read in the same order at any size: the answer and its warnings, the charts, the snippet
to paste, then the tables. A fleet's sweep ranks a hundred configs: the charts draw the fastest
``TOP_BARS`` (the pick always), the evidence table gives ``EVIDENCE_ROWS`` rows in full and the
other configs in a short table below it, and a warning names ``NAMED`` configs at most, then
counts the rest. Chart labels never overlap: a label that would touch another is left to the
point's tooltip."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from advisor import serving, units
from advisor.devices import device_id as make_device_id
from advisor.presentation import charts
from advisor.presentation.noise import interval_warning
from advisor.recommendation import Ranked, Recommendation, flag_legend, to_python
from advisor.records import TrialRecord

STACK_FIELDS = (
    ("device_name", "device"), ("cpu_model", "CPU"), ("cpu_isa", "CPU ISA"),
    ("cpu_flags", "CPU features"), ("torch_version", "torch"),
    ("triton_version", "triton"), ("driver_version", "driver"),
    ("cuda_runtime_version", "CUDA"), ("cudnn_version", "cuDNN"),
    ("python_version", "Python"), ("fingerprint_hash", "fingerprint"),
)  # fmt: skip
EVIDENCE_COLUMNS = ("config", "speedup", "median", "95% CI", "noise", "trials", "p99",
                    "cold compile", "warm compile", "pays off after", "kernels", "launches",
                    "peak memory", "max abs err")  # fmt: skip
REST_COLUMNS = ("config", "speedup", "median", "95% CI", "noise", "trials", "cold compile")
TOP_BARS = 15  # bars of a chart; the other rows are in a table below it
EVIDENCE_ROWS = 15  # evidence rows in full (plus the pick and the baseline beyond them)
NAMED = 5  # configs a warning names before "and N more"
BAR_NAME_CHARS = 56  # a bar's name beyond this ends in "…" (a config label is at most ~50)
CHAR_W = 6.6  # px a character of the 11 px chart text takes at most (labels are spaced by it)
MODE_COLOURS = {"eager": "#7f7f7f", "default": "#1f77b4", "reduce-overhead": "#2ca02c",
                "max-autotune": "#d62728", "max-autotune-no-cudagraphs": "#9467bd"}  # fmt: skip


# --- the data ---------------------------------------------------------------------------------


def build(rec: Recommendation, records: Sequence[TrialRecord],
          fingerprint: Mapping[str, Any] | None, *, database: str = "",
          generated_at: datetime | None = None, device_id: str | None = None) -> dict[str, Any]:
    """What the report shows, as plain data (JSON-ready). ``device_id``: the device's short id
    as the CLI names it (`advisor.devices`; default: from the fingerprint and the records'
    hosts)."""
    fp = fingerprint or {}
    best = next((r for r in records if rec.best and r.get("trial_uuid") == rec.best.trial_uuid),
                None)
    named = {u: n for u, n in ((rec.baseline and rec.baseline.trial_uuid, "eager fp32"),
                               (best and best.get("trial_uuid"), "recommended")) if u}
    # its short id, as every surface names it (the hosts: those its records were measured on)
    hosts = [f.get("hostname") if (f := r.get("fingerprint")) else None for r in records]
    device = device_id or make_device_id(
        {**fp, "fingerprint_hash": fp.get("fingerprint_hash") or rec.fingerprint_hash}, hosts)
    stack = [(name, str(fp[key])) for key, name in STACK_FIELDS if fp.get(key)]
    return {
        "workload": rec.workload,
        "device": device,
        "stack": stack,
        "database": database,
        "generated_at": (generated_at or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC"),
        "pick": rec.best.label if rec.best else None,
        "decision": rec.decision,
        "sentence": claim(rec),
        "note": rec.note or None,
        "policy": rec.policy,
        "decided_by": rec.decided_by,
        "baseline": rec.baseline_name,
        "counts": {"trials": rec.n_trials, "failed": rec.n_failed, "rejected": rec.n_rejected,
                   **({"pruned": rec.n_pruned} if rec.n_pruned else {}),
                   "over limits": rec.n_excluded},
        "warnings": _warnings(rec),
        "flags": list(rec.best.flags or []) if rec.best else [],
        "snippet": to_python(rec, device_id=device),  # `advisor recommend -f python`, verbatim
        "evidence": [_evidence_row(r, rec) for r in charts.evidence(rec)],
        "legend": flag_legend(charts.evidence(rec)),
        "doubt": rec.doubt,
        "failures": [_failure_row(r) for r in records if not _passed(r)],
        "phases": charts.phases(records),
        "charts": {
            "latency": charts.latency_points(rec),
            "speedups": charts.speedups(rec),
            "strategies": charts.strategy_bars(charts.shape_strategies(records)),
            "kernels": charts.kernel_counts(best) if best else [],
            # per shape from each named run's own trial: drawn where there are several
            # shapes (a quantity of its own); with one, it would give the headline's quantity
            # another figure (the headline pools trials or pairs them)
            "shapes": _several_shapes(charts.shape_latencies(records, named)),
        },
    }


def _several_shapes(rows: list[charts.ShapeLatency]) -> list[charts.ShapeLatency]:
    """The per-shape rows of the runs measured on more than one shape."""
    runs = [row["run"] for row in rows]
    return [row for row in rows if runs.count(row["run"]) > 1]


def _warnings(rec: Recommendation) -> list[str]:
    """The warnings before the answer; the noise said once: why the headline's figures cannot
    carry it, with how many configs' timings were noisy, in one warning (the headline then
    says "on noisy evidence" and its claim without saying why again)."""
    out = []
    if rec.staleness and rec.staleness.get("warning"):
        out.append(rec.staleness["warning"])
    unsafe = interval_warning(rec)
    noisy = [r.label for r in rec.ranked if r.noisy]
    which = ""
    if noisy:
        of = ("configs" if len(noisy) <= NAMED else f"all {len(noisy)} configs"
              if len(noisy) == len(rec.ranked) else f"{len(noisy)} of {len(rec.ranked)} configs")
        which = (f"noisy timings in {of} (a pooled trial's interval was wide): "
                 f"{named(noisy)}; the noise column of the evidence says which")
    if unsafe and unsafe != rec.sentence:
        out.append(f"{unsafe}; {which}" if which else unsafe)
    elif which and unsafe != rec.sentence:
        out.append(which)
    return out


NOISY_PREFIX = "noisy evidence ("  # how `Recommendation.sentence` leads on noisy evidence
NOISY_CLAIM = ", so these figures may not hold: "


def claim(rec: Recommendation) -> str:
    """The answer's sentence without its lead on noisy evidence (the warning above it says
    that once): ``fp16 + max-autotune: 1.03 ms vs 7.48 ms eager fp32 (...)``."""
    text = rec.sentence
    if rec.doubt and text.startswith(NOISY_PREFIX) and NOISY_CLAIM in text:
        return text.split(NOISY_CLAIM, 1)[1]
    return text


def named(items: Sequence[str], most: int = NAMED) -> str:
    """``a, b, c`` or, past ``most`` of them, ``a, b, c, d, e and 81 more``."""
    if len(items) <= most:
        return ", ".join(items)
    return f"{', '.join(items[:most])} and {len(items) - most} more"


def _evidence_row(r: Ranked, rec: Recommendation) -> dict[str, str]:
    ci = r.median_ci_ms
    pays = "-" if not r.config.compiled else (
        f"{r.break_even_calls:,} calls" if r.break_even_calls is not None else "never")
    role = " (recommended)" if rec.best is not None and r.trial_uuid == rec.best.trial_uuid else (
        " (baseline)" if rec.baseline is not None and r.trial_uuid == rec.baseline.trial_uuid
        else "")
    values = (
        r.label + role, units.ratio(r.speedup), units.duration_ms(r.median_ms),
        units.interval_ms(ci[0], ci[1]) if ci else "-",
        "short" if r.short else ("noisy" if r.noisy else ""),
        "paired" if r.confirmed else str(r.n_trials), units.duration_ms(r.p99_ms),
        units.duration_s(r.cold_compile_s) if r.config.compiled else "-",
        units.duration_s(r.warm_compile_s), pays,
        "-" if r.kernels_per_call is None else str(r.kernels_per_call),
        "-" if r.launches_per_call is None else str(r.launches_per_call),
        units.size(r.peak_mem_bytes), "-" if r.max_abs_err is None else f"{r.max_abs_err:.1e}",
    )
    return dict(zip(EVIDENCE_COLUMNS, values, strict=True))


def _passed(record: TrialRecord) -> bool:
    return record.get("status") == "ok" and bool(record.get("passed"))


def _failure_row(record: TrialRecord) -> dict[str, str]:
    if record.get("status") == "pruned":  # its proven bound, never a measured figure
        outcome = serving.pruned_text(record.get("pruned") or {})
    elif record.get("status") == "stopped":  # its time ended first: no figure
        outcome = serving.stopped_text(record.get("stopped") or {})
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
    """``recommended`` (``... on noisy evidence`` when its figures are), ``undecided: noise``
    or ``nothing to recommend``."""
    if data["pick"] is not None:
        return "recommended on noisy evidence" if data.get("doubt") else "recommended"
    return data["decision"] if data["decision"] != "none" else "nothing to recommend"


# --- Markdown ---------------------------------------------------------------------------------


def md_table(columns: list[str] | tuple[str, ...], rows: list[list[str]]) -> str:
    """A Markdown table (``|`` in a cell escaped); the fleet report's too."""
    def cell(text: Any) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def _role(row: Mapping[str, str]) -> str:
    """``recommended``, ``baseline`` or ``""``: what an evidence row's config says it is."""
    config = str(row.get("config", ""))
    return next((r for r in ("recommended", "baseline") if config.endswith(f"({r})")), "")


def evidence_split(data: dict[str, Any]) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """The evidence rows shown in full (the first `EVIDENCE_ROWS`, the pick and the baseline
    wherever they rank) and the rest, each in rank order."""
    return charts.top_rows(data["evidence"], EVIDENCE_ROWS, keep=lambda r: bool(_role(r)))


def speedup_split(data: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The speedup rows a chart draws (the fastest `TOP_BARS`, the pick wherever it ranks)
    and the rest."""
    return charts.top_rows(data["charts"]["speedups"], TOP_BARS,
                           keep=lambda r: bool(r["recommended"]))


def _rest_rows(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    return [{k: r.get(k, "-") for k in REST_COLUMNS} for r in rows]


def to_markdown(data: dict[str, Any]) -> str:
    """The report as Markdown: the answer, the charts as the tables of their figures (the
    fastest configs), the snippet to paste, then the evidence and the other tables."""
    c = data["charts"]
    parts = [f"# {data['workload']} on {data['device']}\n",
             f"Generated {data['generated_at']} from {data['database'] or 'the results store'}.\n",
             "## Recommendation\n",
             *[f"**warning**: {w}\n" for w in data["warnings"]],
             f"**{_headline(data)}**: {data['sentence']}\n",
             f"- decision: {data['decision']}; policy {data['policy']}; decided by the "
             f"{data['decided_by']}",
             f"- every speedup is against {data['baseline']}",
             "- " + ", ".join(f"{v} {k}" for k, v in data["counts"].items())]
    if data["note"]:
        parts.append(f"- note: {data['note']}")
    parts += [f"- flag `{f['flag']}`: {f['message']}" for f in data["flags"]]
    drawn = [p for p in c["latency"] if p["pareto"] or p["recommended"]]
    parts += ["", "## Latency vs cold compile (Pareto front marked)\n", md_table(
        ["config", "median", "cold compile", "Pareto front", "recommended"],
        [[p["config"], units.duration_ms(p["median_ms"]), units.duration_s(p["cold_compile_s"]),
          "yes" if p["pareto"] else "", "yes" if p["recommended"] else ""]
         for p in drawn])]
    if len(drawn) < len(c["latency"]):
        parts.append(f"The Pareto front and the pick; the other {len(c['latency']) - len(drawn)} "
                     "configs are in the evidence below.\n")
    bars, rest = speedup_split(data)
    parts += ["## Speedup per config\n", md_table(
        ["config", "speedup", "bar"],
        [[s["config"], units.ratio(s["speedup"]), "█" * max(1, round(s["speedup"] * 4))]
         for s in bars])]
    if rest:
        parts.append(f"The fastest {len(bars)} of {len(bars) + len(rest)} configs; the other "
                     f"{len(rest)} are in the evidence below.\n")
    if c["strategies"]:
        parts += ["## Shape strategies\n", md_table(
            ["strategy", "figure", "per request"],
            [[s["strategy"], s["figure"], units.duration_ms(s["ms"])] for s in c["strategies"]])]
    if c["kernels"]:
        parts += ["## Kernels and launches per call\n", md_table(
            ["run", "what", "count"], [[k["run"], k["what"], str(k["count"])]
                                       for k in c["kernels"]])]
    if data.get("snippet"):
        parts += ["## Paste into your serving code\n",
                  "What `advisor recommend -f python` prints for this device:\n",
                  "```python\n" + data["snippet"].rstrip("\n") + "\n```\n"]
    full, others = evidence_split(data)
    parts += ["## Evidence\n", md_table(EVIDENCE_COLUMNS, [list(r.values()) for r in full])]
    if data.get("legend"):
        parts.append(f"{data['legend']}.\n")
    if others:
        parts += [f"### The other {len(others)} configs\n",
                  md_table(REST_COLUMNS, [list(r.values()) for r in _rest_rows(others)])]
    if data["failures"]:
        parts += ["## Failed, rejected and pruned trials\n", md_table(
            ["config", "outcome", "last error line"], [list(f.values())
                                                      for f in data["failures"]])]
    if data.get("phases"):
        names = list(data["phases"][0])
        parts += ["## Where each trial's time went\n", md_table(
            names, [[row[n] for n in names] for row in data["phases"]])]
    parts += ["## Device and stack\n", md_table(["field", "value"],
                                                 [list(x) for x in data["stack"]])]
    return "\n".join(parts).rstrip() + "\n"


# --- HTML -------------------------------------------------------------------------------------

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1b1b;
 margin:24px auto;max-width:1240px;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd}
h3{font-size:15px;margin:18px 0 6px}
.meta{color:#666}.pick{background:#eef7ee;border-left:4px solid #2ca02c;padding:10px 14px}
.undecided{background:#fff6e5;border-left-color:#e69500}.none{background:#fdecec;
 border-left-color:#d62728}.warn{background:#fff6e5;padding:6px 12px;margin:6px 0}
table{border-collapse:collapse;font-size:13px;margin:6px 0}
th,td{padding:3px 7px;border-bottom:1px solid #eee;text-align:left;white-space:nowrap}
td:first-child{white-space:normal;min-width:16em}
.num th,.num td{text-align:right}.num th:first-child,.num td:first-child{text-align:left}
th{background:#f6f6f6}.scroll{overflow-x:auto;max-width:100%}
tr.rec td{font-weight:600;background:#f1f8f1}.grid{display:flex;flex-wrap:wrap;gap:18px}
figure{margin:0;max-width:100%;overflow-x:auto}figcaption{color:#555;font-size:12px;max-width:540px}
svg text{font:11px system-ui,sans-serif;fill:#333}
pre.snippet{background:#f6f8fa;border:1px solid #e4e4e4;padding:10px 14px;overflow-x:auto;
 font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;white-space:pre}
details{margin:8px 0}summary{cursor:pointer;color:#333}
"""


def to_html(data: dict[str, Any]) -> str:
    """The report as one self-contained HTML page: inline CSS and SVG, no script, no link. In
    order: the answer and its warnings, the charts, the snippet to paste, then the tables."""
    e = html.escape
    # green only for an answer its evidence carries: an undecided, provisional or noisy one is
    # amber (its warning says why), no pick red
    kind = ("none" if data["pick"] is None else
            "undecided" if data["decision"].startswith("undecided")
            or data["decision"] == "provisional" or data.get("doubt") else "")
    body = [f"<h1>{e(data['workload'])} on {e(data['device'])}</h1>",
            f"<div class=meta>{e(' · '.join(f'{k} {v}' for k, v in data['stack']))}<br>"
            f"generated {e(data['generated_at'])} from {e(data['database'] or 'the store')}"
            "</div>",
            "<h2>Recommendation</h2>",
            *[f"<div class=warn>warning: {e(w)}</div>" for w in data["warnings"]],
            f"<div class='pick {kind}'><b>{e(_headline(data))}</b>: "
            f"{e(data['sentence'])}</div>",
            f"<p>decision: <b>{e(data['decision'])}</b>; policy {e(data['policy'])}; decided by "
            f"the {e(data['decided_by'])}; every speedup is against <b>{e(data['baseline'])}</b>."
            f"<br>{e(', '.join(f'{v} {k}' for k, v in data['counts'].items()))}</p>"]
    if data["note"]:
        body.append(f"<p>note: {e(data['note'])}</p>")
    body += [f"<div class=warn>flag <code>{e(f['flag'])}</code>: {e(f['message'])}</div>"
             for f in data["flags"]]
    body += ["<h2>Charts</h2>", "<div class=grid>", *_figures(data), "</div>"]
    if data.get("snippet"):
        body += ["<h2>Paste into your serving code</h2>",
                 "<p class=meta>What <code>advisor recommend -f python</code> prints for this "
                 "device:</p>", f"<pre class=snippet>{e(data['snippet'])}</pre>"]
    full, others = evidence_split(data)
    body += ["<h2>Evidence</h2>", html_table(_known_columns(full), numeric=True)]
    if data.get("legend"):
        body.append(f"<p class=meta>{e(data['legend'])}.</p>")
    if others:
        body += [f"<p class=meta>{len(full)} of {len(full) + len(others)} configs in full "
                 f"(the fastest, the pick and the baseline); the other {len(others)} below.</p>",
                 f"<details><summary>The other {len(others)} configs</summary>",
                 html_table(_known_columns(_rest_rows(others)), numeric=True), "</details>"]
    if data["failures"]:
        body += ["<h2>Failed, rejected and pruned trials</h2>", html_table(data["failures"])]
    if data.get("phases"):
        body += ["<h2>Where each trial's time went</h2>",
                 f"<details><summary>{len(data['phases'])} trials, in the order they "
                 "finished</summary>", html_table(data["phases"]), "</details>"]
    body.append("<h2>Device and stack</h2>")
    body.append(html_table([{"field": k, "value": v} for k, v in data["stack"]]))
    title = e(f"advisor report: {data['workload']} on {data['device']}")
    return (f"<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8><title>{title}</title>"
            f"<style>{CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")


def _figures(data: dict[str, Any]) -> list[str]:
    """The charts, each with its caption: what they draw and what they leave to a table."""
    c = data["charts"]
    bars, rest = speedup_split(data)
    fastest = (f"the fastest {len(bars)} of {len(bars) + len(rest)} configs (the pick always); "
               "the others are in the evidence tables below" if rest else "every config")
    figures = [_figure(scatter_svg(c["latency"]), "Median latency (pooled, as the answer "
                       "decided) against cold compile time; eager configs compile nothing. "
                       "Dashed: the Pareto front. Ringed: the recommended config. Named: the "
                       "pick, the front and the fastest, where a name fits; hover a point for "
                       "any other."),
               _figure(bars_svg([(s["config"], s["speedup"], s["recommended"]) for s in bars],
                                units.ratio, reference=1.0),
                       f"Speedup against {data['baseline']}: {fastest}; the line marks 1x.")]
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
    return figures


def _known_columns(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """The rows without the columns nothing was measured for (every cell ``-`` or empty)."""
    keep = [k for k in (rows[0] if rows else {}) if any(r[k] not in ("-", "") for r in rows)]
    return [{k: r[k] for k in keep} for r in rows]


def html_table(rows: list[dict[str, Any]], numeric: bool = False) -> str:
    """An HTML table of ``rows`` (their keys the header; ``numeric``: right-aligned figures),
    a row whose first cell ends in ``(recommended)`` in bold; the fleet report's too."""
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
    """A tick value as a plain decimal, never an exponent (``0.2``, ``100``, ``2000000``)."""
    return f"{value:.12f}".rstrip("0").rstrip(".") or "0"


def _cold(p: charts.LatencyPoint) -> float:
    """A plotted point's cold compile (the points plotted have one)."""
    return float(p["cold_compile_s"] or 0.0)


def scatter_svg(points: Sequence[charts.LatencyPoint], width: int = 540,
                height: int = 340) -> str:
    """Median (ms) against cold compile (s): one dot per config coloured by mode (its name,
    median and cold compile in its tooltip), the Pareto front dashed, the recommended config
    ringed. Names are written for `charts.labelled` points (the pick, the front, the fastest)
    only where they touch no other name, dot nor the legend (`place_labels`)."""
    shown = [p for p in points if p["median_ms"] is not None and p["cold_compile_s"] is not None]
    if not shown:
        return "<p>nothing measured to plot</p>"
    e = html.escape
    legend, legend_boxes, lx, ly = [], [], 58.0, 14.0
    for mode in dict.fromkeys(str(p["mode"]) for p in shown):
        w = 12 + CHAR_W * len(mode)
        if lx + w > width - 4 and lx > 58:  # the next line of the legend, not off the edge
            lx, ly = 58.0, ly + 16
        legend.append(f"<circle cx='{lx:.0f}' cy='{ly - 4:.0f}' r='4' "
                      f"fill='{MODE_COLOURS.get(mode, '#444')}'/><text x='{lx + 8:.0f}' "
                      f"y='{ly:.0f}'>{e(mode)}</text>")
        legend_boxes.append((lx - 5, ly - 12, lx + w, ly + 4))
        lx += w + 14
    left, right, top, bottom = 58, 16, int(ly) + 16, 42
    height += top - 30
    xt = nice_ticks(0.0, max(_cold(p) for p in shown))
    yt = nice_ticks(0.0, max(p["median_ms"] for p in shown))

    def x(v: float) -> float:
        return left + (v - xt[0]) / (xt[-1] - xt[0]) * (width - left - right)

    def y(v: float) -> float:
        return height - bottom - (v - yt[0]) / (yt[-1] - yt[0]) * (height - top - bottom)

    out = [f"<svg width='{width}' height='{height}' "
           f"viewBox='0 0 {width} {height}' role='img'>", *legend]
    out += _axes(xt, yt, x, y, width, height, left, right, top, bottom,
                 "cold compile (s)", "median latency (ms)")
    front = sorted((p for p in shown if p["pareto"]), key=_cold)
    if len(front) > 1:
        path = " ".join(f"{x(_cold(p)):.1f},{y(p['median_ms']):.1f}" for p in front)
        out.append(f"<polyline points='{path}' fill='none' stroke='#888' "
                   "stroke-dasharray='5 4'/>")
    dots: list[Box] = []
    for p in shown:
        cx, cy = x(_cold(p)), y(p["median_ms"])
        colour = MODE_COLOURS.get(str(p["mode"]), "#444")
        out.append(f"<circle cx='{cx:.1f}' cy='{cy:.1f}' r='5' fill='{colour}'>"
                   f"<title>{e(p['config'])}: {e(units.duration_ms(p['median_ms']))}, "
                   f"{e(units.duration_s(p['cold_compile_s']))} cold compile</title></circle>")
        r = 10 if p["recommended"] else 5
        dots.append((cx - r, cy - r, cx + r, cy + r))
        if p["recommended"]:
            out.append(f"<circle cx='{cx:.1f}' cy='{cy:.1f}' r='10' fill='none' "
                       "stroke='#111' stroke-width='2'/>")
    wanted = [(x(_cold(p)), y(p["median_ms"]), str(p["config"]))
              for p in charts.labelled(shown)]
    frame = (float(left + 2), float(top), float(width - 2), float(height - bottom))
    for tx, ty, anchor, text in place_labels(wanted, frame, taken=[*legend_boxes, *dots]):
        out.append(f"<text class='label' x='{tx:.1f}' y='{ty:.1f}' text-anchor='{anchor}'>"
                   f"{e(text)}</text>")
    out.append("</svg>")
    return "".join(out)


Box = tuple[float, float, float, float]  # left, top, right, bottom (px)
# Where a label may sit beside its point: (dx, dy of its baseline, text-anchor), in turn.
LABEL_SPOTS = ((12, 4, "start"), (-12, 4, "end"), (12, -8, "start"), (12, 16, "start"),
               (-12, -8, "end"), (-12, 16, "end"), (0, -14, "middle"), (0, 24, "middle"),
               (0, -28, "middle"), (0, 38, "middle"))  # fmt: skip


def text_box(x: float, y: float, text: str, anchor: str) -> Box:
    """The box 11 px text at (x, y: its baseline) takes at most: `CHAR_W` a character, 10 px
    above the baseline and 3 below."""
    w = CHAR_W * len(text)
    x0 = x - w if anchor == "end" else x - w / 2 if anchor == "middle" else x
    return (x0, y - 10, x0 + w, y + 3)


def overlaps_box(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def place_labels(wanted: Sequence[tuple[float, float, str]], frame: Box,
                 taken: Sequence[Box] = ()) -> list[tuple[float, float, str, str]]:
    """Labels for points, most wanted first: each at the first of `LABEL_SPOTS` where it stays
    inside ``frame`` and touches no box already ``taken`` nor a label placed before it; a
    label with no such spot is left out. Returns (x, y, text-anchor, text) of those placed."""
    boxes, placed = list(taken), []
    for px, py, text in wanted:
        for dx, dy, anchor in LABEL_SPOTS:
            box = text_box(px + dx, py + dy, text, anchor)
            inside = (box[0] >= frame[0] and box[1] >= frame[1] and box[2] <= frame[2]
                      and box[3] <= frame[3])  # fmt: skip
            if inside and not any(overlaps_box(box, b) for b in boxes):
                boxes.append(box)
                placed.append((px + dx, py + dy, anchor, text))
                break
    return placed


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
    of each; ``reference`` draws a vertical line (1x for speedups). Names longer than
    `BAR_NAME_CHARS` end in "…" (the whole name in their tooltip); the name column is as wide as
    the longest name shown, and the chart widens rather than clip one."""
    rows = [r for r in rows if r[1] is not None and math.isfinite(r[1])]
    if not rows:
        return "<p>nothing to plot</p>"
    e = html.escape
    names = [name if len(name) <= BAR_NAME_CHARS else name[:BAR_NAME_CHARS - 1] + "…"
             for name, _, _ in rows]  # fmt: skip
    values = [label(value) for _, value, _ in rows]
    names_w = 12 + math.ceil(CHAR_W * max(len(n) for n in names))
    value_w = 8 + math.ceil(CHAR_W * max(len(v) for v in values))
    width = max(width, names_w + value_w + 200)
    bar_h, gap, top = 16, 6, 6
    height = top + len(rows) * (bar_h + gap) + 24
    high = max([r[1] for r in rows] + ([reference] if reference else []))
    ticks = nice_ticks(0.0, high)
    span = width - names_w - value_w

    def x(v: float) -> float:
        return names_w + v / ticks[-1] * span

    out = [f"<svg width='{width}' height='{height}' "
           f"viewBox='0 0 {width} {height}' role='img'>"]
    for i, ((name, value, marked), shown, text) in enumerate(zip(rows, names, values,
                                                                  strict=True)):
        y0 = top + i * (bar_h + gap)
        weight = " font-weight='bold'" if marked else ""
        out.append(f"<text class='name' x='{names_w - 6}' y='{y0 + 12}' text-anchor='end'"
                   f"{weight}>{e(shown)}<title>{e(name)}</title></text>")
        out.append(f"<rect x='{names_w}' y='{y0}' width='{max(x(value) - names_w, 1):.1f}' "
                   f"height='{bar_h}' fill='{'#2ca02c' if marked else '#8fb3d9'}'/>")
        out.append(f"<text class='value' x='{x(value) + 4:.1f}' y='{y0 + 12}'>{e(text)}</text>")
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
