"""Human-readable output of records and recommendations (rich)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

console = Console(stderr=False, highlight=False)


def fmt(value: Any, unit: str = "", digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}{unit}"
    return f"{value}{unit}"


def trial_record(record: dict[str, Any]) -> None:
    """One trial record as a two-column table."""
    cfg = record.get("config") or {}
    title = f"{(record.get('workload') or {}).get('name', '?')}: {cfg.get('dtype')} + {cfg.get('mode')}"
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
