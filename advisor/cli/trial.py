"""`advisor trial FILE`: run one configuration of a workload and print its record."""

from __future__ import annotations

from pathlib import Path

import typer

from advisor.cli import render
from advisor.cli.app import app
from advisor.cli.common import fail, fail_on, print_json
from advisor.config import DTYPES, MODES, CompileConfig, parse_shape
from advisor.errors import AdvisorError, ConfigError
from advisor.launcher import DEFAULT_TIMEOUT_S, Launcher
from advisor.workload import load_workload


def check_shape(dims: dict[str, int], expected: dict[str, int], path: Path) -> None:
    if set(dims) != set(expected):
        raise ConfigError(
            f"shape dims {', '.join(dims)} do not match {path.name}'s dims "
            f"{', '.join(expected)}; e.g. --shape "
            + ",".join(f"{k}={v}" for k, v in expected.items())
        )


@app.command()
def trial(
    file: Path = typer.Argument(..., help="Workload file (.py) defining `workload`."),
    mode: str = typer.Option("default", "--mode", help=f"One of: {', '.join(MODES)}."),
    dtype: str = typer.Option("fp32", "--dtype", help=f"One of: {', '.join(DTYPES)}."),
    shape: str | None = typer.Option(
        None, "--shape", help="Shape to measure, e.g. batch=50,seq=128 (default: the workload's)."
    ),
    fullgraph: bool = typer.Option(False, "--fullgraph", help="Fail on any graph break."),
    dynamic: str = typer.Option("auto", "--dynamic", help="auto, true or false."),
    device: str | None = typer.Option(
        None, "--device", help="cuda, cuda:N or cpu (default: cuda when present, else cpu)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the record as JSON on stdout."),
    timeout_s: float = typer.Option(DEFAULT_TIMEOUT_S, "--timeout", help="Kill after this many seconds."),
    warm: bool = typer.Option(True, "--warm/--no-warm", help="Also measure the warm start."),
) -> None:
    """Run one configuration of a workload in a fresh process and print its record."""
    from advisor.devices import resolve_device

    try:
        config = CompileConfig(mode=mode, dtype=dtype, fullgraph=fullgraph, dynamic=dynamic)
        loaded = load_workload(file)
        wl = loaded.workload
        if dtype not in wl.dtypes:
            raise ConfigError(f"dtype {dtype} is not allowed by {file.name} (allowed: {', '.join(wl.dtypes)})")
        dims = parse_shape(shape) if shape else wl.shape
        check_shape(dims, wl.shape, file)
        device = resolve_device(device)
    except AdvisorError as e:
        fail_on(e)
    record = Launcher(timeout_s=timeout_s).run(
        file, config, device, [{"dims": dims, "weight": 1.0}], measure_warm=warm
    )
    if record["failure_reason"] == "workload_error":
        tail = (record.get("error_tail") or "").strip().splitlines()
        last = tail[-1] if tail else "broke the workload contract"
        fail(f"{file}: {last.removeprefix('advisor.errors.WorkloadError: ')}")
    if as_json:
        print_json(record)
    else:
        render.trial_record(record)
    if record["status"] != "ok":
        raise typer.Exit(1)
