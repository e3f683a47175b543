"""A shareable report of every workload on every device and stack: `advisor report --fleet`.

`build(devices)` gathers what it shows, as plain data: for each workload, the rows of
`advisor.frames.compare_devices` (the one answer on each device and stack,
`advisor.recommendation.answers`: its pick, its decision, its speedup over eager fp32 measured
there, the pick's p50 with its 95% interval and whether its timings were noisy), the fastest
device first, and where the devices disagree (which devices pick which config; which have no
pick). `to_html` writes it as one self-contained page, with the CSS and the tables of
`advisor.presentation.report` (nothing fetched: it opens air-gapped and attaches to an email);
`to_markdown` writes the same as Markdown tables.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from advisor import units
from advisor.presentation.report import CSS, html_table, md_table

DEVICE_COLUMNS = ("device", "pick", "decision", "speedup", "p50", "95% CI", "noise", "vs best",
                  "torch", "trials")  # fmt: skip
SUMMARY_COLUMNS = ("workload", "devices", "picks", "agree", "speedup", "fastest device")


def build(devices: Mapping[str, Sequence[Mapping[str, Any]]], *, database: str = "",
          generated_at: datetime | None = None) -> dict[str, Any]:
    """What the fleet report shows, as plain data (JSON-ready). ``devices``: workload -> its
    `advisor.frames.compare_devices` rows (one per device and stack, the fastest pick first)."""
    workloads = [_workload(name, rows) for name, rows in devices.items()]
    agreeing = sum(1 for w in workloads if not w["disagree"] and not w["no_pick"])
    hashes = {r["fingerprint_hash"] for rows in devices.values() for r in rows}
    return {
        "database": database,
        "generated_at": (generated_at or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC"),
        "sentence": (f"{len(workloads)} workload(s) on {len(hashes)} device(s) and stack(s): "
                     f"{agreeing} pick the same config on every device they were measured on, "
                     f"{len(workloads) - agreeing} do not."),
        "summary": [w["summary"] for w in workloads],
        "workloads": workloads,
    }


def _workload(name: str, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One workload's section: its devices' rows, who picks what, its summary row."""
    by_config: dict[str, list[str]] = {}
    tied: dict[str, int] = {}  # picks among equivalent configs: a tie-break, not a difference
    for r in rows:
        if r["config"]:
            by_config.setdefault(str(r["config"]), []).append(str(r["device_id"]))
            tied[str(r["config"])] = tied.get(str(r["config"]), 0) + (r["decision"]
                                                                       == "equivalent")
    no_pick = [f"{r['device_id']} ({r['pick']})" for r in rows if not r["config"]]
    disagree = [{"config": config, "devices": found, "equivalent": tied[config]}
                for config, found in sorted(by_config.items(), key=lambda item: -len(item[1]))
                ] if len(by_config) > 1 else []  # fmt: skip
    speedups = [float(r["speedup"]) for r in rows if r["speedup"] is not None]
    agree = ("yes" if len(by_config) == 1 and not no_pick else
             f"no: {len(by_config)} picks" if len(by_config) > 1 else
             f"{len(no_pick)} without a pick")  # fmt: skip
    fastest = next((r for r in rows if r["config"]), None)
    summary = {
        "workload": name, "devices": str(len(rows)), "picks": str(len(by_config)), "agree": agree,
        "speedup": _range(speedups),
        "fastest device": str(fastest["device_id"]) if fastest else "-",
    }  # fmt: skip
    return {"workload": name, "rows": [_device_row(r) for r in rows], "disagree": disagree,
            "no_pick": no_pick, "summary": summary}


def _device_row(r: Mapping[str, Any]) -> dict[str, str]:
    ci = r.get("median_ci_ms")
    vs_best = r.get("vs_best")
    return {
        "device": str(r["device_id"]),
        "pick": str(r["pick"]),
        "decision": str(r["decision"]),
        "speedup": units.ratio(r["speedup"]),
        "p50": units.duration_ms(r["median_ms"]),
        "95% CI": units.interval_ms(*ci) if ci else "-",
        "noise": "noisy" if r.get("noisy") else "-" if r.get("noisy") is None else "quiet",
        "vs best": "-" if vs_best is None else "best" if vs_best <= 1.0005
        else f"+{vs_best - 1:.0%}",
        "torch": str(r.get("torch") or "-"),
        "trials": str(r["trials"]),
    }


def _range(values: list[float]) -> str:
    """``1.52x-6.46x`` (or one figure, or ``-``)."""
    if not values:
        return "-"
    low, high = min(values), max(values)
    return units.ratio(low) if units.ratio(low) == units.ratio(high) else \
        f"{units.ratio(low)}-{units.ratio(high)}"


def _disagreement(w: Mapping[str, Any]) -> list[str]:
    """Where one workload's devices disagree, in sentences."""
    lines = [f"{d['config']}: {', '.join(d['devices'])}" + (
        f" ({d['equivalent']} of them among equivalent configs: a tie-break, not a measured "
        "difference)" if d["equivalent"] else "") for d in w["disagree"]]
    if w["no_pick"]:
        lines.append(f"no pick: {', '.join(w['no_pick'])}")
    return lines


# --- Markdown ---------------------------------------------------------------------------------


def to_markdown(data: dict[str, Any]) -> str:
    """The fleet report as Markdown: the summary, then each workload's devices and where they
    disagree."""
    parts = ["# Fleet report\n",
             f"Generated {data['generated_at']} from {data['database'] or 'the results store'}. "
             "Each pick is the one answer on its device and stack (`advisor recommend`); every "
             "speedup is against eager fp32 measured on the same device.\n",
             f"{data['sentence']}\n",
             md_table(SUMMARY_COLUMNS, [list(s.values()) for s in data["summary"]])]
    for w in data["workloads"]:
        parts += [f"## {w['workload']}\n",
                  md_table(DEVICE_COLUMNS, [list(r.values()) for r in w["rows"]])]
        lines = _disagreement(w)
        if lines:
            parts += ["Where the devices disagree:\n", *[f"- {line}" for line in lines], ""]
        else:
            parts.append("Every device picks the same config.\n")
    return "\n".join(parts).rstrip() + "\n"


# --- HTML -------------------------------------------------------------------------------------


def to_html(data: dict[str, Any]) -> str:
    """The fleet report as one self-contained HTML page: inline CSS, no script, no link."""
    e = html.escape
    body = ["<h1>Fleet report</h1>",
            f"<div class=meta>generated {e(data['generated_at'])} from "
            f"{e(data['database'] or 'the store')}. Each pick is the one answer on its device "
            "and stack (<code>advisor recommend</code>); every speedup is against eager fp32 "
            "measured on the same device.</div>",
            f"<p>{e(data['sentence'])}</p>",
            html_table(data["summary"])]
    for w in data["workloads"]:
        body += [f"<h2>{e(w['workload'])}</h2>", html_table(w["rows"], numeric=True)]
        lines = _disagreement(w)
        if lines:
            body += ["<div class=warn>Where the devices disagree:<ul>",
                     *[f"<li>{e(line)}</li>" for line in lines], "</ul></div>"]
        else:
            body.append("<p class=meta>Every device picks the same config.</p>")
    return ("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
            f"<title>advisor fleet report</title><style>{CSS}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")
