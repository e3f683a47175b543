"""`advisor trial FILE`: run one configuration of a workload and print its record."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from advisor import units
from advisor.cli import output, render
from advisor.cli.app import app
from advisor.cli.common import DEFAULT_TIMEOUT_S, HOLDOUT, fail, fail_on
from advisor.config import CompileConfig, parse_shape
from advisor.dimensions import BY_NAME as DIM
from advisor.dimensions import OPTIONS_BY_NAME, parse_options
from advisor.errors import AdvisorError, ConfigError
from advisor.search.request import check_holdout, check_timeout, flag_help

if TYPE_CHECKING:
    from advisor.records import TrialRecord


def print_replays(records: Sequence[TrialRecord], calls: int | None = None) -> None:
    """The shape strategies of replay records side by side (best mode and dtype only), with the
    figure that decides, the stream beside the steady state, and the flags."""
    from advisor.serving import (
        DEFAULT_CALLS_PER_PROCESS,
        format_boundaries,
        pruned_text,
        split_note,
        stopped_text,
        strategy_rows,
    )

    rows = strategy_rows(records, calls)
    if not rows:
        return
    n = calls or DEFAULT_CALLS_PER_PROCESS
    process = any(row["decided"] == "process" for row in rows)
    title = "shape strategies, replaying the traffic"
    table = Table(title=title)
    first = f"per request ({n:,}-call process)" if process else "expected"
    columns = (first, "steady", "stream", "new shapes", "new-shape cost", "start-up", "waste",
               "graphs", "flags", "buckets")
    table.add_column("config", justify="left")
    for column in columns:
        table.add_column(column, justify="left" if column in ("flags", "buckets") else "right")
    for row in rows:
        figure = units.duration_ms(row["per_request_ms"])
        if row["eager_fallbacks"]:
            figure = f"[red]eager fallback ({row['eager_fallbacks']} shapes)[/red]"
        share = row["new_shape_share"]
        table.add_row(
            row["config"], figure, units.duration_ms(row["steady_mean_ms"]),
            units.duration_ms(row["stream_mean_ms"]),
            "-" if share is None else f"{row['new_shape_events']} ({share:.0%})",
            units.duration_ms(row["new_shape_mean_ms"]),
            units.duration_s(row["startup_s"]) + (" alone" if row["alone"] else ""),
            f"{row['padding_waste']:.0%}", str(row["graphs"]), ", ".join(row["flags"]) or "-",
            format_boundaries(row["boundaries"]),
        )
    render.console.print(table)
    decided = (f"decided by the expected cost per request over a process serving {n:,} "
               "requests (start-up, the stream's new shapes, then steady state)"
               if process else "decided by the steady-state expected latency")
    render.console.print(decided)
    if any(row["alone"] for row in rows):
        render.console.print("\"alone\": start-up and stream served again after the trials, one "
                             "at a time, cold (the trials compiled beside each other)")
    note = split_note(records)
    if note:
        render.console.print(note)
    measured_on = steady_sample_note(records)
    if measured_on:
        render.console.print(measured_on)
    for r in records:
        replay = r.get("replay") if r.get("status") == "ok" else None
        for flag in (replay.get("flags") if replay else None) or []:
            label = CompileConfig.from_dict(r["config"]).label
            render.console.print(f"[yellow]flag[/yellow] {label}: {flag['message']}")
    for r in records:  # stopped once proven worse: the bound they proved, never a figure
        if r.get("status") == "pruned" and r.get("pruned"):
            label = CompileConfig.from_dict(r["config"]).label
            render.console.print(f"{label}: {pruned_text(r['pruned'])} "
                                 f"({r['pruned']['requests_served']} of "
                                 f"{r['pruned']['requests_total']} requests served; over a "
                                 f"{r['pruned']['calls_per_process']:,}-request process)")
    for r in records:  # stopped by its time: how far it got, never a figure
        if r.get("status") == "stopped" and r.get("stopped"):
            label = CompileConfig.from_dict(r["config"]).label
            render.console.print(f"{label}: {stopped_text(r['stopped'])} "
                                 f"({r['stopped']['reason']})")


def steady_sample_note(records: Sequence[TrialRecord]) -> str:
    """What each replay was measured on, in one line: the requests of its stream served (a
    sampled stream: ``replay.stream.sample``, N of M in order) and its steady state
    (``replay.steady_sample``: N of M shapes, passes; a sample's mean interval); "" when every
    replay served its whole stream and timed every shape."""
    parts, sampled = [], False
    for r in records:
        replay = r.get("replay") if r.get("status") == "ok" else None
        sample = replay.get("steady_sample") if replay else None
        if not replay or not sample:
            continue
        stream = replay.get("stream")
        served = stream.get("sample") if stream else None
        sampled = sampled or sample["sampled"] or bool(served)
        what = (f"{stream['requests']} of {served['of_requests']} requests, "
                if stream and served else "")
        what += (f"{sample['shapes']} of {sample['of_shapes']} shapes, {sample['passes']} "
                 f"pass{'es' if sample['passes'] != 1 else ''}")
        ci = sample.get("mean_ci_ms")
        if sample["sampled"] and ci and replay["mean_ms"] > 0:
            half = (ci[1] - ci[0]) / 2 / replay["mean_ms"]
            what += f", mean ±{half:.1%} (95%)"
        parts.append(f"{CompileConfig.from_dict(r['config']).label}: {what}")
    if not sampled:  # every request and every shape, as always: nothing to say
        return ""
    return ("measured on samples to fit the budget (the stream's requests in order, each "
            "standing for those skipped after it; the shapes stratified by size and weighted "
            "by the traffic, the reference checking the same): " + "; ".join(parts))


@app.command()
def trial(
    ctx: typer.Context,
    file: Path = typer.Argument(..., help="Workload file (.py) defining `workload`.",
                                readable=False),  # advisor.paths says why, in one line
    mode: str = typer.Option("default", "--mode", help=DIM["mode"].help + "."),
    dtype: str = typer.Option("fp32", "--dtype", help=DIM["dtype"].help + "."),
    shape: str | None = typer.Option(None, "--shape", help=flag_help("shape")),
    fullgraph: bool = typer.Option(False, "--fullgraph", help=DIM["fullgraph"].help + "."),
    dynamic: str = typer.Option("auto", "--dynamic", help=DIM["dynamic"].help + "."),
    shapes: str = typer.Option(
        "static", "--shapes", help=DIM["shapes"].help + " (not static: replays the traffic)."
    ),
    option: list[str] = typer.Option(
        [], "--option", help="An Inductor option NAME=VALUE (repeatable); the sweepable ones: "
        + ", ".join(OPTIONS_BY_NAME) + "."
    ),
    traffic: Path | None = typer.Option(None, "--traffic", readable=False,
                                        help=flag_help("traffic")),
    holdout: float = typer.Option(HOLDOUT, "--holdout", help=flag_help("holdout")),
    device: str | None = typer.Option(None, "--device", help=flag_help("device")),
    fmt: str = output.format_option(),
    as_json: bool = typer.Option(False, "--json", help="Print the record as JSON on stdout "
                                 "(the same as -f json)."),
    out: Path | None = output.OutputOption,
    timeout_s: float = typer.Option(DEFAULT_TIMEOUT_S, "--timeout",
                                    help=flag_help("timeout_s")),
    warm: bool = typer.Option(True, "--warm/--no-warm", help="Also measure the warm start."),
) -> None:
    """Run one configuration of a workload in a fresh process and print its record."""
    from advisor import settings
    from advisor.api import check_shape, replay_options  # not for `--help`
    from advisor.cli import waiting
    from advisor.devices import resolve_device
    from advisor.search.launcher import Launcher, describe

    try:
        fmt = output.resolve(fmt, as_json, out)
        check_timeout(timeout_s)
        source = ctx.get_parameter_source("holdout")
        check_holdout(holdout, traffic, source is not None and source.name != "DEFAULT")
        options = {}
        for name, values in parse_options(option).items():
            if len(values) != 1:
                raise ConfigError(f"--option {name}: a trial takes one value (a sweep compares "
                                  "several)")
            options[name] = values[0]
        config = CompileConfig(mode=mode, dtype=dtype, fullgraph=fullgraph, dynamic=dynamic,
                               shapes=shapes, options=options)
        given = parse_shape(shape) if shape else None  # its bounds before the workload's import
        if traffic is not None:  # the file itself too (its dims: once the workload is read)
            from advisor.traffic import load_traffic

            load_traffic(traffic).with_holdout(holdout)
        wl = describe(file, settings.import_timeout_s(timeout_s),
                      waiting.importing(file)).workload
        if dtype not in wl.dtypes:
            raise ConfigError(f"dtype {dtype} is not allowed by {file.name} "
                              f"(allowed: {', '.join(wl.dtypes)})")
        dims = given or wl.shape
        check_shape(dims, wl.shape, file)
        replay = replay_options(file, wl, [shapes], traffic, shape is not None, holdout)
        device = resolve_device(device)
    except AdvisorError as e:
        fail_on(e)
    with waiting.Phases(f"trial of {file}") as said:  # a long build or compile, said
        record = Launcher(timeout_s=timeout_s).run(
            file, config, device, replay or [{"dims": dims, "weight": 1.0}], measure_warm=warm,
            on_phase=said.phase)
    if record["failure_reason"] == "workload_error":
        tail = (record.get("error_tail") or "").strip().splitlines()
        last = tail[-1] if tail else "broke the workload contract"
        fail(f"{file}: {last.removeprefix('advisor.errors.WorkloadError: ')}")
    def table() -> None:
        render.trial_record(record)
        print_replays([record])

    output.emit(fmt, out, document=record, rows=lambda: [record], table=table, flat=True)
    if record["status"] != "ok":
        raise typer.Exit(1)
