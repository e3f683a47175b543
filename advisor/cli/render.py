"""Human-readable output of records and recommendations (rich).

Figures print in human units (`advisor.units`: ``1.22 s``, not ``1220.000 ms``); tables are
built by `fitted_table`, which drops the columns of least priority until the table fits the
terminal (80 columns keep the config, its figure and its speedup), and name configs by
`short_label`
(shortened, with a legend, where a table is too narrow: `abbreviate`).
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
# A config's label, shortened where a table is too narrow for it: the mode names and the
# flags in a few letters, every part kept (three different configs never read alike), the
# abbreviations used said below the table (`LEGEND`).
ABBREVIATIONS = {"max-autotune-no-cudagraphs": "ma-nocg", "max-autotune": "ma",
                 "reduce-overhead": "ro", "fullgraph": "fg", "dynamic": "dyn"}
LABEL_COLUMNS = ("config", "recommended", "pick")  # the columns whose cells are config labels


def short_label(config: CompileConfig | None) -> str:
    """A config as every table names it: its label (``bf16 + reduce-overhead + fullgraph``,
    `CompileConfig.label`); `abbreviate` shortens it where a table is too narrow."""
    return "?" if config is None else config.label


def abbreviate(label: str) -> tuple[str, list[str]]:
    """``fp16 + reduce-overhead + fullgraph + dynamic=false`` -> ``fp16 + ro + fg + dyn=false``
    and the full names it shortened (``reduce-overhead``, ``fullgraph``, ``dynamic``): each
    part of the label in a few letters, none left out. Text after the label (``(noisy)``) and
    a cell that is no label (``-``, ``undecided: noise``) stay as they are."""
    head, sep, tail = label.partition(" (")
    parts, used = [], []
    for part in head.split(" + "):
        name, eq, value = part.partition("=")
        short = ABBREVIATIONS.get(name)
        if short is None:
            parts.append(part)
            continue
        parts.append(short + eq + value)
        used.append(name)
    return " + ".join(parts) + sep + tail, used


def legend(names: Sequence[str]) -> str:
    """The abbreviations a table used, in words: ``ro = reduce-overhead, fg = fullgraph``."""
    seen = [n for n in ABBREVIATIONS if n in set(names)]
    return ", ".join(f"{ABBREVIATIONS[n]} = {n}" for n in seen)


def _longest_word(texts: Sequence[str]) -> int:
    return max((len(w) for t in texts for w in t.split()), default=1)


def _shrink(natural: list[int], minimum: list[int], room: int,
            first: Sequence[int] = ()) -> list[int]:
    """Column widths that fit ``room``: the columns ``first`` (config labels, which wrap
    between their parts) give way before the others, the widest first, none below its
    ``minimum`` (its longest word: a cell wraps between words, never inside one)."""
    widths = list(natural)
    for pool in (list(first), list(range(len(widths)))):
        widths = _narrowed(widths, minimum, room, pool)
    return widths


def _narrowed(natural: list[int], minimum: list[int], room: int,
              pool: Sequence[int]) -> list[int]:
    widths = list(natural)
    while sum(widths) > room:
        shrinkable = [i for i in pool if widths[i] > minimum[i]]
        if not shrinkable:
            break
        top = max(widths[i] for i in shrinkable)
        widest = [i for i in shrinkable if widths[i] == top]
        below = [widths[i] for i in shrinkable if widths[i] < top]
        step = min(top - max(below, default=0), -(-(sum(widths) - room) // len(widest)))
        for i in widest:
            widths[i] = max(minimum[i], widths[i] - max(step, 1))
    return widths


def fitted_table(title: str, columns: Sequence[tuple[str, int]], rows: Sequence[Sequence[str]],
                 width: int | None = None) -> Table:
    """A table of ``columns`` (name, priority: 0 is never dropped, higher drops first) that
    fits ``width`` (the console's): columns nothing was measured for (every cell ``-`` or
    empty) go first, then the columns of the highest priority number, until it fits. Where the
    columns that stay are still too wide, config labels (`LABEL_COLUMNS`) are abbreviated (the
    legend is the table's caption) and the dropped columns that then fit come back; where that
    is not enough, cells wrap between words, never inside one and never cut. The first column
    is left-aligned; the others holding figures are right-aligned."""
    width = width or console.width
    cells = [[str(c) for c in row] for row in rows]
    shown = [i for i, (name, _) in enumerate(columns)
             if i == 0 or any(row[i] not in ("-", "") for row in cells)]
    keep = _kept(columns, cells, shown, width)
    caption = ""
    labels = [i for i, (name, _) in enumerate(columns) if name in LABEL_COLUMNS]
    if labels and (_needed(columns, cells, keep) > width or len(keep) < len(shown)):
        short = [list(row) for row in cells]
        used: list[str] = []
        for row in short:
            for i in labels:
                row[i], names = abbreviate(row[i])
                used += names
        short_keep = _kept(columns, short, shown, width)
        # abbreviated where the full labels do not fit, or cost a column of the first rank
        first = [i for i in shown if columns[i][1] <= 1]
        if used and (_needed(columns, cells, keep) > width
                     or len(set(first) & set(short_keep)) > len(set(first) & set(keep))):
            cells, keep, caption = short, short_keep, legend(used)
    # a narrow table (few columns, or no rows yet) still has its title on one line
    table = Table(title=title, title_justify="left", min_width=min(width, len(title) + 4),
                  caption=caption or None, caption_justify="left")
    natural = [max([len(columns[i][0])] + [len(r[i]) for r in cells]) for i in keep]
    minimum = [_longest_word([columns[i][0], *(r[i] for r in cells)]) for i in keep]
    labels_kept = [n for n, i in enumerate(keep) if columns[i][0] in LABEL_COLUMNS]
    widths = _shrink(natural, minimum, width - 1 - 3 * len(keep), labels_kept)
    for n, i in enumerate(keep):
        figures = all(_FIGURE.match(row[i]) for row in cells if row[i])
        table.add_column(columns[i][0], justify="right" if figures and n else "left",
                         width=widths[n] if widths[n] < natural[n] else None,
                         no_wrap=widths[n] >= natural[n], overflow="fold")
    for row in cells:
        table.add_row(*(row[i] for i in keep))
    return table


def _needed(columns: Sequence[tuple[str, int]], cells: Sequence[Sequence[str]],
            kept: Sequence[int]) -> int:
    """The width of a table of the ``kept`` columns, each cell on one line."""
    return 1 + sum(3 + max([len(columns[i][0])] + [len(r[i]) for r in cells]) for i in kept)


def _kept(columns: Sequence[tuple[str, int]], cells: Sequence[Sequence[str]],
          shown: Sequence[int], width: int) -> list[int]:
    """The columns that stay: one at a time, the highest priority number first (the
    rightmost of equals first), until the rest fit on one line; then a dropped column comes
    back if it fits after all (a narrow one behind a wide one)."""
    keep = list(shown)
    dropped = []
    for drop in sorted((i for i in keep if columns[i][1] > 0),
                       key=lambda i: (-columns[i][1], -i)):
        if _needed(columns, cells, keep) <= width:
            break
        keep.remove(drop)
        dropped.append(drop)
    for back in sorted(dropped, key=lambda i: (columns[i][1], i)):
        if _needed(columns, cells, sorted([*keep, back])) <= width:
            keep = sorted([*keep, back])
    return keep


_WORD = re.compile(r"`[^`]*`\S*|\S+")  # a word, or a command in backticks with what follows it


def wrap(text: str, width: int) -> str:
    """``text`` wrapped to ``width`` between words only: a word longer than the line, and a
    command in backticks (what a user copies), stays whole on its line. A line that starts
    with a space is a command printed on its own line: left as it is."""
    out = []
    for line in text.splitlines() or [""]:
        if line.startswith(" ") or len(line) <= width:
            out.append(line)
            continue
        current = ""
        for word in _WORD.findall(line):
            if current and len(current) + 1 + len(word) > width:
                out.append(current)
                current = word
            else:
                current = f"{current} {word}" if current else word
        out.append(current)
    return "\n".join(out)


def echo(text: str, err: bool = True) -> None:
    """A message (a warning, a `next:` command) on stderr (or stdout): on a terminal wrapped
    to its width between words (`wrap`), never inside a word or a command; piped, each line
    whole."""
    import shutil
    import sys

    import typer

    stream = sys.stderr if err else sys.stdout
    if stream.isatty():
        text = wrap(text, shutil.get_terminal_size().columns)
    typer.echo(text, err=err)


def paragraph(text: str, lead: str = "", style: str = "") -> None:
    """``lead`` (bold) and ``text`` on the console, wrapped to its width between words
    (`wrap`): a command in backticks is never split."""
    from rich.text import Text

    head = f"{lead}: " if lead else ""
    wrapped = wrap(head + text, console.width)
    body = Text(wrapped, style=style)
    if lead:
        body.stylize("bold", 0, len(lead))
    console.print(body, soft_wrap=True)


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
        paragraph(unsafe, "warning", "yellow")


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
        paragraph(rec.provisional, "provisional")
    paragraph(rec.sentence, "recommendation")
    if rec.note:
        paragraph(rec.note, "note")
