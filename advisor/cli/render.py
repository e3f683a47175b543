"""Human-readable output of records and recommendations (rich).

Figures print in human units (`advisor.units`: ``1.22 s``, not ``1220.000 ms``); tables are
built by `fitted_table`, which drops the columns of least priority until the table fits the
terminal (80 columns keep the config, its figure and its speedup), and name configs by
`short_label`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from advisor import units

if TYPE_CHECKING:
    from advisor.config import CompileConfig
    from advisor.records import TrialRecord

console = Console(highlight=False)
if not console.is_terminal:
    console = Console(highlight=False, width=160)  # piped output: don't wrap tables at 80


def fmt(value: Any, unit: str = "", digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}{unit}"
    return f"{value}{unit}"


def figure(median_ms: float | None, ci: Any = None, noisy: bool | None = None,
           short: bool = False) -> str:
    """``1.23 ms [1.20-1.30]`` with ``noisy`` or ``short`` beside it: no figure without its
    interval and flags."""
    if median_ms is None:
        return "-"
    text = units.duration_ms(median_ms)
    if ci:
        text += f" [{interval(ci)}]"
    flags = [f for f, on in (("noisy", noisy), ("short", short)) if on]
    return text + (f" ({', '.join(flags)})" if flags else "")


def interval(ci: Sequence[float] | None) -> str:
    """A 95% interval in one unit, its larger end's: ``0.940-0.980 ms``, ``0.813-1.82 s``
    (`units.interval_ms`)."""
    return units.interval_ms(ci[0], ci[1]) if ci else "-"


_FIGURE = re.compile(r"^[-+~<>]?[0-9.,]+|^-$")  # cells of a right-aligned column
MODE_SHORT = {"max-autotune-no-cudagraphs": "max-autotune-nocg"}


def short_label(config: CompileConfig | None) -> str:
    """A config in a few words for narrow tables: ``bf16 reduce-overhead fullgraph``,
    ``fp32 max-autotune-nocg buckets:pow2 +2 options``."""
    if config is None:
        return "?"
    parts = [config.dtype, MODE_SHORT.get(config.mode, config.mode)]
    if config.fullgraph:
        parts.append("fullgraph")
    if config.dynamic != "auto":
        parts.append(f"dynamic={config.dynamic}")
    if config.shapes != "static":
        parts.append(config.shapes)
    if config.options:
        n = len(config.options)
        parts.append(f"+{n} option{'s' if n != 1 else ''}")
    return " ".join(parts)


def fitted_table(title: str, columns: Sequence[tuple[str, int]], rows: Sequence[Sequence[str]],
                 width: int | None = None) -> Table:
    """A table of ``columns`` (name, priority: 0 is never dropped, higher drops first) that
    fits ``width`` (the console's): columns nothing was measured for (every cell ``-`` or
    empty) go first, then the columns of the highest priority number, until it fits. The first
    column is left-aligned and never wraps; the others are right-aligned."""
    width = width or console.width
    keep = [i for i, (name, _) in enumerate(columns)
            if i == 0 or any(str(row[i]) not in ("-", "") for row in rows)]

    def needed(kept: list[int]) -> int:
        return 1 + sum(3 + max([len(columns[i][0])] + [len(str(r[i])) for r in rows])
                       for i in kept)

    # one column at a time: the highest priority number first, the rightmost of equals first;
    # then a dropped column comes back if it fits after all (a narrow one behind a wide one)
    dropped = []
    for drop in sorted((i for i in keep if columns[i][1] > 0),
                       key=lambda i: (-columns[i][1], -i)):
        if needed(keep) <= width:
            break
        keep.remove(drop)
        dropped.append(drop)
    for back in sorted(dropped, key=lambda i: (columns[i][1], i)):
        if needed(sorted([*keep, back])) <= width:
            keep = sorted([*keep, back])
    # a narrow table (few columns, or no rows yet) still has its title on one line
    table = Table(title=title, title_justify="left", min_width=min(width, len(title) + 4))
    for n, i in enumerate(keep):
        figures = all(_FIGURE.match(str(row[i])) for row in rows if str(row[i]))
        table.add_column(columns[i][0], justify="right" if figures and n else "left",
                         no_wrap=n == 0, overflow="ellipsis" if n == 0 else "fold")
    for row in rows:
        table.add_row(*(str(row[i]) for i in keep))
    return table


def closing_line(sweep_id: int, workload: str, where: str, db_flag: bool) -> str:
    """The sweep's last lines: where its results went, then each command to run next on a
    line of its own (``--db`` named when the database is not the default one)."""
    flag = f" --db {where}" if db_flag else ""
    return (f"sweep {sweep_id} of {workload} is in {where}; next:\n"
            f"  advisor show {sweep_id}{flag}\n"
            f"  advisor report {workload}{flag} -o {workload}-report.html")


def last_line(text: str | None) -> str:
    """The last non-empty line of an error tail (what a failure was, in one line)."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def trial_record(record: TrialRecord) -> None:
    """One trial record as a two-column table."""
    from advisor.serving import pruned_text, stopped_text  # not for `--help`

    cfg, workload = record["config"], record.get("workload")
    name = workload["name"] if workload else "?"
    title = f"{name}: {cfg['dtype']} + {cfg['mode']}"
    table = Table(title=title, show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value")
    if record["status"] == "pruned":  # stopped once proven worse: its bound, no figure
        pruned = record.get("pruned")
        table.add_row("status", pruned_text(pruned or {}))
        table.add_row("why", pruned["reason"] if pruned else "")
        console.print(table)
        return
    if record["status"] == "stopped":  # its time ended first: how far it got, no figure
        stopped = record.get("stopped")
        table.add_row("status", stopped_text(stopped or {}))
        table.add_row("why", stopped["reason"] if stopped else "")
        console.print(table)
        return
    if record["status"] != "ok":
        table.add_row("status", f"[red]failed: {record['failure_reason']}[/red]")
        tail = (record.get("error_tail") or "").strip().splitlines()
        table.add_row("error", "\n".join(tail[-6:]))
        console.print(table)
        return
    rows: list[tuple[str, object]] = [
        ("device", record["device"]),
        ("shapes", ", ".join(s["shape"] for s in record["shapes"])),
        ("median", units.duration_ms(record["median_ms"])),
        ("p90 / p99",
         f"{units.duration_ms(record['p90_ms'])} / {units.duration_ms(record['p99_ms'])}"),
        ("samples", ", ".join(str(s["n_samples"]) for s in record["shapes"])
         + f" ({record['method']}, {record['warmup_iters']} warm-up)"),
        ("noisy", fmt(record["noisy"])),
        ("cold start", units.duration_s(record["cold_compile_s"])),
        ("warm start", units.duration_s(record["warm_compile_s"])),
        ("graphs / breaks", f"{record['graph_count']} / {record['graph_break_count']}"),
        ("recompiles", fmt(record["recompiles"])),
        ("kernels per call", f"{fmt(record['kernels_per_call'])} "
         f"(eager fp32: {fmt(record['eager_kernels_per_call'])})"),
        ("launches per call", f"{fmt(record['launches_per_call'])} "
         f"(eager fp32: {fmt(record['eager_launches_per_call'])})"),
        ("max abs / rel err", f"{record['max_abs_err']:.2e} / {record['max_rel_err']:.2e}"),
        ("correct", fmt(record["correct"]) + f" (atol {record['atol']}, rtol {record['rtol']})"),
    ]
    quality = record.get("quality_name")
    if quality:
        rows.append((quality, quality_text(record)))
    rows.append(("peak memory", fmt((record["peak_mem_bytes"] or 0) / 2**20, " MiB", 1)))
    names = record.get("kernel_names") or []
    rows.append(("kernels", ", ".join(names[:6]) + (" ..." if len(names) > 6 else "")))
    fp = record.get("fingerprint")
    device_name, torch_version = (fp.get("device_name"), fp.get("torch_version")) if fp else (
        None, None)
    rows.append(("device model", f"{device_name} (torch {torch_version})"))
    for name, value in rows:
        table.add_row(name, str(value))
    console.print(table)


def quality_text(record: Mapping[str, Any]) -> str:
    """A record's quality check in words: ``0.9870 mean, worst 0.8330 (threshold 0.9, pass)``,
    and when the check only advised, that it rejected nothing and why."""
    value, worst = record.get("quality_value"), record.get("quality_worst")
    combine = record.get("quality_combine") or "worst"  # records before combine rules: the min
    text = "-" if value is None else f"{value:.4f}"
    if combine != "worst" and worst is not None:
        text += f" {combine}, worst {worst:.4f}"
    elif record.get("quality_combine"):
        text += f" {combine}"
    verdict = "pass" if record.get("quality_passed") else "FAIL"
    advisory = record.get("quality_advisory")
    if advisory:
        verdict = ("pass" if record.get("quality_passed") else "below") + (
            f"; advisory, not used to reject: {advisory}")
    return f"{text} (threshold {record.get('quality_threshold')}, {verdict})"


def phases(records: Sequence[TrialRecord]) -> None:
    """Where each trial's time went (`advisor.presentation.charts.phases`), when the trials
    timed it: a trial stalled behind others' compiles shows its lock wait."""
    from advisor.presentation import charts

    rows = charts.phases(records)
    if not rows:
        return
    names = list(rows[0])
    columns = tuple((name, 0 if name in ("config", "total", "compile", "lock wait") else 2)
                    for name in names)
    console.print(fitted_table("where each trial's time went (in the order they finished)",
                               columns, [[row[n] for n in names] for row in rows]))


def lead_warning(rec: Any) -> None:
    """The warning that comes before any figure when the evidence is noisy
    (`advisor.presentation.noise.interval_warning`)."""
    from advisor.presentation.noise import interval_warning

    unsafe = interval_warning(rec)
    if unsafe:
        console.print(f"[yellow]warning: {unsafe}[/yellow]")


def noise_cell(r: Any) -> str:
    """A row's flag: ``short`` (screened), ``busy`` (contended), ``noisy``, or nothing."""
    return "short" if r.short else "busy" if r.contended else "noisy" if r.noisy else ""


def recommendation(rec: Any, top: int = 8) -> None:
    """The table of the best configs and the recommendation sentence: every figure with its
    interval and flags, every speedup against the one baseline figure the title names."""
    pruned = f", {rec.n_pruned} pruned" if rec.n_pruned else ""
    title = (f"{rec.workload}: best configs ({rec.n_trials} trials, {rec.n_failed} failed, "
             f"{rec.n_rejected} rejected{pruned}); speedup vs {rec.baseline_name}")
    columns = (("config", 0), ("speedup", 0), ("median", 0), ("95% CI", 2), ("noise", 1),
               ("trials", 4), ("p90", 5), ("cold", 1), ("warm", 3), ("kernels", 4),
               ("launches", 3), ("max err", 5), ("quality", 5))
    rows = list(rec.ranked[:top])
    if rec.baseline is not None and rec.baseline.trial_uuid not in {r.trial_uuid for r in rows}:
        rows.append(rec.baseline)
    cells = [[
        short_label(r.config), units.ratio(r.speedup), units.duration_ms(r.median_ms),
        interval(r.median_ci_ms), noise_cell(r),
        "paired" if r.confirmed else str(r.n_trials), units.duration_ms(r.p90_ms),
        units.duration_s(r.cold_compile_s) if r.config.compiled else "-",
        units.duration_s(r.warm_compile_s), fmt(r.kernels_per_call), fmt(r.launches_per_call),
        f"{r.max_abs_err:.1e}" if r.max_abs_err is not None else "-",
        (f"{r.quality_value:.3f}" + ("*" if r.quality_advisory else ""))
        if r.quality_value is not None else "-",
    ] for r in rows]
    lead_warning(rec)
    console.print(fitted_table(title, columns, cells))
    from advisor.recommendation import flag_legend

    legend = flag_legend(rows)
    if legend:
        console.print(legend)
    if rec.provisional:
        console.print(f"[bold]provisional[/bold]: {rec.provisional}")
    console.print(f"[bold]recommendation[/bold]: {rec.sentence}")
    if rec.note:
        console.print(f"note: {rec.note}")
