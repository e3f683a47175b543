"""Human-readable output of records and recommendations (rich)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

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
    """``1.23 ms [1.2-1.3]`` with ``noisy`` or ``short`` beside it: no figure without its
    interval and flags."""
    if median_ms is None:
        return "-"
    text = f"{median_ms:.3f} ms"
    if ci:
        text += f" [{ci[0]:.3g}-{ci[1]:.3g}]"
    flags = [f for f, on in (("noisy", noisy), ("short", short)) if on]
    return text + (f" ({', '.join(flags)})" if flags else "")


def last_line(text: str | None) -> str:
    """The last non-empty line of an error tail (what a failure was, in one line)."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def trial_record(record: dict[str, Any]) -> None:
    """One trial record as a two-column table."""
    cfg = record.get("config") or {}
    name = (record.get("workload") or {}).get("name", "?")
    title = f"{name}: {cfg.get('dtype')} + {cfg.get('mode')}"
    table = Table(title=title, show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value")
    if record["status"] != "ok":
        table.add_row("status", f"[red]failed: {record['failure_reason']}[/red]")
        tail = (record.get("error_tail") or "").strip().splitlines()
        table.add_row("error", "\n".join(tail[-6:]))
        console.print(table)
        return
    rows = [
        ("device", record["device"]),
        ("shapes", ", ".join(s["shape"] for s in record["shapes"])),
        ("median", fmt(record["median_ms"], " ms")),
        ("p90 / p99", f"{fmt(record['p90_ms'], ' ms')} / {fmt(record['p99_ms'], ' ms')}"),
        ("samples", ", ".join(str(s["n_samples"]) for s in record["shapes"])
         + f" ({record['method']}, {record['warmup_iters']} warm-up)"),
        ("noisy", fmt(record["noisy"])),
        ("cold start", fmt(record["cold_compile_s"], " s", 2)),
        ("warm start", fmt(record["warm_compile_s"], " s", 2)),
        ("graphs / breaks", f"{record['graph_count']} / {record['graph_break_count']}"),
        ("recompiles", fmt(record["recompiles"])),
        ("kernels per call", f"{fmt(record['kernels_per_call'])} "
         f"(eager fp32: {fmt(record['eager_kernels_per_call'])})"),
        ("launches per call", f"{fmt(record['launches_per_call'])} "
         f"(eager fp32: {fmt(record['eager_launches_per_call'])})"),
        ("max abs / rel err", f"{record['max_abs_err']:.2e} / {record['max_rel_err']:.2e}"),
        ("correct", fmt(record["correct"]) + f" (atol {record['atol']}, rtol {record['rtol']})"),
    ]
    if record.get("quality_name"):
        rows.append((record["quality_name"],
                     f"{record['quality_value']:.4f} (threshold {record['quality_threshold']}, "
                     f"{'pass' if record['quality_passed'] else 'FAIL'})"))
    rows.append(("peak memory", fmt((record["peak_mem_bytes"] or 0) / 2**20, " MiB", 1)))
    names = record.get("kernel_names") or []
    rows.append(("kernels", ", ".join(names[:6]) + (" ..." if len(names) > 6 else "")))
    fp = record.get("fingerprint") or {}
    rows.append(("device model", f"{fp.get('device_name')} (torch {fp.get('torch_version')})"))
    for name, value in rows:
        table.add_row(name, str(value))
    console.print(table)


def recommendation(rec: Any, top: int = 8) -> None:
    """The table of the best configs and the recommendation sentence: every figure with its
    interval and flags, every speedup against the one baseline figure the title names."""
    table = Table(title=f"{rec.workload}: best configs ({rec.n_trials} trials, "
                        f"{rec.n_failed} failed, {rec.n_rejected} rejected); speedup vs "
                        f"{rec.baseline_name}")
    for column in ("config", "speedup", "median [95% CI]", "trials", "p90", "cold", "warm",
                   "kernels", "launches", "max err", "quality"):
        table.add_column(column, justify="left" if column == "config" else "right")
    rows = list(rec.ranked[:top])
    if rec.baseline is not None and rec.baseline.trial_uuid not in {r.trial_uuid for r in rows}:
        rows.append(rec.baseline)
    for r in rows:
        quality = f"{r.quality_value:.3f}" if r.quality_value is not None else "-"
        table.add_row(
            r.label, fmt(r.speedup, "x", 2),
            figure(r.median_ms, r.median_ci_ms, r.noisy, r.short),
            "paired" if r.confirmed else str(r.n_trials), fmt(r.p90_ms, " ms"),
            fmt(r.cold_compile_s, " s", 1), fmt(r.warm_compile_s, " s", 1),
            fmt(r.kernels_per_call), fmt(r.launches_per_call),
            f"{r.max_abs_err:.1e}" if r.max_abs_err is not None else "-", quality,
        )
    console.print(table)
    console.print(f"[bold]recommendation[/bold]: {rec.sentence}")
    if rec.note:
        console.print(f"note: {rec.note}")
