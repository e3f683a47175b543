"""`advisor doctor`: check torch, the GPU, NVML and the database; print the fingerprint."""

from __future__ import annotations

from typing import Any

import typer

from advisor.cli import render
from advisor.cli.app import app
from advisor.cli.common import DbOption, print_json

CLOCK_SKEW_LIMIT_S = 5.0  # heartbeats of fleet workers compare times across hosts
WARN_ONLY = ("host load",)  # checks that warn (the answer would be unsafe) but do not fail


@app.command()
def doctor(
    db: str | None = DbOption,
    device: str | None = typer.Option(None, "--device", help="Device to check."),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """Check that torch, the GPU, NVML and the database work; print this machine's fingerprint."""
    from advisor.cli.common import fail_on
    from advisor.db.engine import parse_url, resolve_url
    from advisor.devices import check_device_name, cuda_device_count, resolve_device
    from advisor.errors import AdvisorError
    from advisor.search.launcher import Launcher

    try:  # a mistake in what to check is the user's one line; a check that fails, a FAIL
        check_device_name(device)
        parse_url(resolve_url(db))
    except AdvisorError as e:
        fail_on(e)
    checks: list[tuple[str, bool, str]] = []
    gpus = cuda_device_count()
    checks.append(("NVML", gpus > 0, f"{gpus} GPU(s) visible" if gpus else "no GPU (CPU only)"))
    fp: Any = {}
    try:
        fp = Launcher(timeout_s=300).probe(resolve_device(device))
        checks.append(("torch", True, f"{fp['torch_version']} on {fp['device_name']}"))
        checks.append(("CPU", True, cpu_line(fp)))
    except AdvisorError as e:
        checks.append(("torch", False, str(e).splitlines()[0]))
    from advisor.presentation.noise import current_load, host_load_warning

    load, cores = current_load()
    busy = host_load_warning(load, cores)
    checks.append(("host load", busy is None, busy or f"{load:.1f} on {cores} cores: quiet "
                                                       "enough to measure"))
    try:
        from datetime import UTC, datetime

        from advisor.db.store import ResultStore

        store = ResultStore.from_url(db)
        checks.append(("database", True, f"{store.masked_url}, schema revision {store.revision()}"))
        skew_s = (store.server_time() - datetime.now(UTC)).total_seconds()
        checks.append(("clock", abs(skew_s) < CLOCK_SKEW_LIMIT_S,
                       f"database server clock {skew_s:+.2f} s from this host's"))
    except AdvisorError as e:
        checks.append(("database", False, str(e).splitlines()[0]))
    if as_json:
        print_json({"checks": [{"name": n, "ok": ok, "detail": d} for n, ok, d in checks],
                    "fingerprint": fp})
    else:
        for name, ok, detail in checks:
            mark = "[green]ok[/green]" if ok or name == "NVML" else "[red]FAIL[/red]"
            if name in WARN_ONLY and not ok:
                mark = "[yellow]WARN[/yellow]"
            render.console.print(f"{mark:>16} {name}: {detail}")
        for key, value in fp.items():
            render.console.print(f"  {key}: {value}")
    if not all(ok for name, ok, _ in checks if name not in ("NVML", *WARN_ONLY)):
        raise typer.Exit(1)


def cpu_line(fp: dict[str, Any]) -> str:
    """The host CPU and what it runs: ``Intel(R) Xeon(R) Processor, torch dispatches to AVX512;
    AMX, AVX-512 BF16, AVX-512 FP16 (amx_bf16 amx_int8 amx_tile avx2 avx512_bf16 ...)``."""
    flags = str(fp.get("cpu_flags") or "").split()
    named = [name for flag, name in (("amx_tile", "AMX"), ("avx512_bf16", "AVX-512 BF16"),
                                     ("avx512_fp16", "AVX-512 FP16")) if flag in flags]
    isa = fp.get("cpu_isa")
    text = f"{fp.get('cpu_model') or 'unknown CPU'}, " + (
        f"torch dispatches to {isa}" if isa else "ISA unknown (torch does not say)")
    if fp.get("cpu_flags") is not None:
        text += f"; {', '.join(named) or 'no AMX, AVX-512 BF16 or FP16'} ({' '.join(flags) or '-'})"
    return text
