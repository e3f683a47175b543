"""`advisor list`, `advisor show SWEEP`, `advisor recommend WORKLOAD`: read the results."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from advisor import units
from advisor.cli import output, render
from advisor.cli.app import app
from advisor.cli.common import (
    DEFAULT_TIMEOUT_S,
    DbOption,
    check_calls_per_process,
    check_id,
    complete_workloads,
    fail_on,
    sweep_argument,
    workload_argument,
)
from advisor.devices import DeviceNames
from advisor.errors import AdvisorError, ConfigError, TrialFailed
from advisor.search.request import SweepSettings

if TYPE_CHECKING:  # the types alone: `advisor --help` imports neither the rows nor the records
    from advisor.db.store import ResultStore
    from advisor.recommendation import Constraints, Recommendation
    from advisor.records import TrialRecord
    from advisor.rows import SweepRow

    class NamedSweep(SweepRow):
        """A sweep as `show` prints it: its device by its short id (`advisor.devices`)."""

        device_id: str

    class ListedSweep(NamedSweep):
        """A sweep as `advisor list` prints it: with the pick of the one answer on its device
        and stack, in brief (`_picks`; None when it has none)."""

        recommendation: dict[str, Any] | None

SHOW_FORMATS = (*output.FORMATS, "toml")  # toml: the sweep's flags, a file `sweep --config` reads


def _store(db: str | None) -> ResultStore:
    from advisor.db.store import ResultStore

    return ResultStore.from_url(db, read_only=True)  # a reader never creates a database


@app.command("list")
def list_sweeps(
    db: str | None = DbOption,
    workload: str | None = typer.Option(
        None, "--workload", help="Only this workload.", autocompletion=complete_workloads),
    fmt: str = output.format_option(),
    as_json: bool = output.JsonOption,
    out: Path | None = output.OutputOption,
    flat: bool = output.FlattenOption,
) -> None:
    """List sweeps, newest first."""
    try:
        fmt = output.resolve(fmt, as_json, out)
        if workload is not None and not workload.strip():
            raise ConfigError("--workload is empty: give a workload name (`advisor list` shows "
                              "them), or leave the flag out for every sweep")
        store = _store(db)
        sweeps = store.sweeps(workload=workload)
        names = DeviceNames(sweeps if workload is None else store.sweeps())
    except AdvisorError as e:
        fail_on(e)
    sweeps = sorted(sweeps, key=lambda s: s["id"], reverse=True)
    picks = _picks(db, sweeps)
    listed: list[ListedSweep] = [
        {**s, "device_id": names.name(s["fingerprint_hash"], s["fingerprint"]),
         "recommendation": picks.get((s["workload"]["name"], s["fingerprint_hash"]))}
        for s in sweeps
    ]
    output.emit(fmt, out, document=listed, rows=lambda: listed,
                table=lambda: _list_table(listed), flat=flat)


def _list_table(sweeps: list[ListedSweep]) -> None:
    if not sweeps:
        render.console.print("no sweeps yet: run `advisor sweep workloads/reranker.py`")
        return
    workloads = {s["workload"]["name"] for s in sweeps}
    one = next(iter(workloads)) if len(workloads) == 1 else None
    title = (f"sweeps of {one}" if one else "sweeps") + (
        " (recommended: the one answer for the workload on the sweep's device and stack, all "
        "its sweeps pooled; decision: how it was reached)")
    # the device (its short id) and the decision stay at any width: status, trial counts and
    # the speedup go first on a narrow terminal; one workload is named in the title instead
    columns = (("id", 0), *((("workload", 0),) if one is None else ()), ("device", 0),
               ("status", 2), ("trials", 3), ("failed", 3), ("decision", 0),
               ("recommended", 0), ("figure", 0), ("speedup", 1), ("started", 4))
    rows = []
    for s in sweeps:
        pick = s["recommendation"] or {}
        rows.append([
            str(s["id"]), *([s["workload"]["name"]] if one is None else []), s["device_id"],
            s["status"], f"{s['n_trials']}/{s['planned_trials'] or '?'}", str(s["n_failed"]),
            str(pick.get("decision") or "-"), str(pick.get("label") or "-"),
            render.figure(pick.get("median_ms"), None, pick.get("noisy")),
            units.ratio(pick.get("speedup")), str(s["started_at"] or "-")[:16],
        ])
    render.console.print(render.fitted_table(title, columns, rows))


def _picks(
    db: str | None, sweeps: list[SweepRow]
) -> dict[tuple[str, str | None], dict[str, Any]]:
    """(workload, fingerprint) -> the pick of the one answer, in brief."""
    from advisor.recommendation.answers import answer, pick_label

    store = _store(db)
    out: dict[tuple[str, str | None], dict[str, Any]] = {}
    for s in sweeps:
        key = (s["workload"]["name"], s["fingerprint_hash"])
        if key in out:
            continue
        rec = answer(store, key[0], key[1])
        best = rec.best
        out[key] = {
            "pick": pick_label(rec), "label": best.label if best else None,
            "decision": rec.decision,
            "median_ms": best.median_ms if best else None,
            "median_ci_ms": best.median_ci_ms if best else None,
            "noisy": best.noisy if best else None,
            "speedup": best.speedup if best else None, "baseline": rec.baseline_name,
        }
    return out


@app.command()
def show(
    sweep_id: int = sweep_argument(),
    db: str | None = DbOption,
    fmt: str = output.format_option(choices=SHOW_FORMATS),
    as_json: bool = output.JsonOption,
    out: Path | None = output.OutputOption,
    flat: bool = output.FlattenOption,
) -> None:
    """Show one sweep: every trial, failures with their reasons, and its recommendation.
    ``-f toml``: the sweep's flags as a sweep file that `advisor sweep --config` reruns."""
    from advisor.recommendation.answers import answer

    try:
        fmt = output.resolve(fmt, as_json, out, SHOW_FORMATS)
        check_id(sweep_id)
        store = _store(db)
        found = store.get_sweep(sweep_id)
        if fmt == "toml":
            stored = found["settings"]
            flags = SweepSettings.from_dict(stored).flags if stored else None
            if not flags:
                raise ConfigError(f"sweep {sweep_id} has no stored flags (it was started by an "
                                  "advisor that did not keep them, or not from the command "
                                  "line): no sweep file to write")
            output.emit(fmt, out, document={"sweep": flags}, rows=list, table=lambda: None)
            return
        records = store.trials(sweep_id=sweep_id)
        rec = answer(store, found["workload"]["name"], found["fingerprint_hash"])
        sweep: NamedSweep = {**found, "device_id": DeviceNames.of_store(store).name(
            found["fingerprint_hash"], found["fingerprint"])}
    except AdvisorError as e:
        fail_on(e)
    output.emit(fmt, out, document={"sweep": sweep, "trials": records,
                                    "recommendation": rec.to_dict()},
                rows=lambda: records, table=lambda: _show_table(sweep, records, rec), flat=flat)


def _show_table(sweep: NamedSweep, records: Sequence[TrialRecord],
                rec: Recommendation) -> None:
    from advisor.config import CompileConfig
    from advisor.serving import pruned_text, stopped_text

    sweep_id = sweep["id"]
    title = f"sweep {sweep_id}: {sweep['workload']['name']} on {sweep['device_id']}"
    columns = (("config", 0), ("status", 0), ("median", 0), ("95% CI", 2), ("p99", 3),
               ("cold compile", 1), ("passed", 4), ("reason", 0), ("last error line", 5))
    rows = []
    for r in records:
        short = " (short)" if r.get("screened_out") else ""
        config = CompileConfig.from_dict(r["config"])
        rows.append([
            render.short_label(config), r["status"],
            units.duration_ms(r["median_ms"]) + (" (noisy)" if r.get("noisy") else short),
            render.interval(r.get("median_ci_ms")), units.duration_ms(r["p99_ms"]),
            units.duration_s(r["cold_compile_s"]) if config.compiled else "-",
            render.fmt(r["passed"]),
            pruned_text(r["pruned"]) if r["status"] == "pruned" and r.get("pruned") else
            stopped_text(r["stopped"]) if r["status"] == "stopped" and r.get("stopped") else
            r["failure_reason"] or ("" if r["passed"] or r["status"] != "ok" else "rejected"),
            render.last_line(r.get("error_tail"))[:60] if r["status"] == "failed" else "",
        ])
    render.console.print(render.fitted_table(f"{title} ({sweep['status']})", columns, rows))
    render.phases(records)
    if any(isinstance(r.get("replay"), dict) for r in records):
        from advisor.cli.trial import print_replays

        print_replays(records, rec.calls_per_process)  # the stream, the steady state, flags
    render.console.print(f"the recommendation for {rec.workload} on this device and stack "
                         "(every sweep of it pooled):")
    render.recommendation(rec)


FORMATS = (*output.FORMATS, "python")


@app.command("recommend")
def recommend_cmd(
    workload: str = workload_argument(),
    db: str | None = DbOption,
    device: str | None = typer.Option(
        None, "--device", help="Device to recommend for (default: cuda when present, else cpu)."
    ),
    fingerprint: str | None = typer.Option(
        None, "--fingerprint", help="Recommend for another device of the database instead of "
        "this one: its short id (`H200 @gpu-a · 7f023bc2`, see `advisor compare`), a prefix of "
        "its fingerprint hash, or its host name."
    ),
    policy: str = typer.Option(
        "latency", "--policy",
        help="latency (traffic-weighted p50), tail (p99), throughput, or break-even.",
    ),
    calls_per_process: int | None = typer.Option(
        None, "--calls-per-process",
        help="break-even: calls a process serves in its life (compile time + N x latency).",
    ),
    max_compile_s: float | None = typer.Option(
        None, "--max-compile-s", help="Only configs whose cold compile takes at most this."
    ),
    max_memory: str | None = typer.Option(
        None, "--max-memory", help="Only configs whose peak memory is at most this, e.g. 2GiB."
    ),
    confirm: bool = typer.Option(
        False, "--confirm",
        help="Re-measure the top configs and eager fp32 interleaved in one process on this "
        "device, decide on those paired figures, and save the winner's warm-start artifact.",
    ),
    top: int = typer.Option(3, "--top", help="--confirm: how many compiled configs."),
    artifact: bool = typer.Option(
        True, "--artifact/--no-artifact", help="--confirm: save the warm-start artifact."
    ),
    file: Path | None = typer.Option(
        None, "--file", readable=False,
        help="--confirm: the workload file (default: the path its trials name)."
    ),
    timeout_s: float = typer.Option(
        DEFAULT_TIMEOUT_S, "--timeout",
        help="--confirm: kill the confirmation's process after this many seconds (the "
        "workload's import is bounded by it too, and by $ADVISOR_IMPORT_TIMEOUT_S).",
    ),
    fmt: str = typer.Option(
        "table", "--format", "-f",
        help="table, json, yaml (the recommendation, its evidence and what to paste into a "
        "serving process: one document), csv (the ranked configs) or python (a snippet).",
    ),
    as_json: bool = output.JsonOption,
    out: Path | None = output.OutputOption,
    flat: bool = output.FlattenOption,
) -> None:
    """Recommend the best measured config of a workload for this device and software stack."""
    from advisor.recommendation import Constraints, check_policy, parse_bytes
    from advisor.search.request import check_timeout

    try:
        check_policy(policy, calls_per_process)
        constraints = Constraints(max_compile_s,
                                  parse_bytes(max_memory) if max_memory is not None else None)
        fmt = output.resolve(fmt, as_json, out, FORMATS)
        if top < 1:
            raise ConfigError("--top must be at least 1")
        check_timeout(timeout_s)
        if file is not None:  # a workload file: a .py file, read bounded (advisor.paths)
            from advisor import paths
            from advisor.workload import read_workload_file

            paths.readable_file(file, "--file", missing=f"{file}: no such workload file")
            read_workload_file(file)
        if confirm and file is not None:
            _check_workload_file(file, workload, timeout_s)
        rec = resolve_recommendation(
            workload, db, device, fingerprint, policy, calls_per_process, constraints,
            confirm=confirm, top=top, artifact=artifact, file=file, timeout_s=timeout_s,
        )
        device_id = device_names(_store(db), workload).name(rec.fingerprint_hash)
    except TrialFailed as e:
        typer.echo(f"advisor: error: {(str(e).splitlines() or [e.reason])[0]}", err=True)
        raise typer.Exit(1) from None
    except AdvisorError as e:
        fail_on(e)
    _print_recommendation(rec, fmt, out, flat, device_id)


def resolve_recommendation(
    workload: str, db: str | None, device: str | None, fingerprint: str | None, policy: str,
    calls: int | None, constraints: Constraints, *, confirm: bool, top: int, artifact: bool,
    file: Path | None, timeout_s: float = DEFAULT_TIMEOUT_S,
) -> Recommendation:
    """`advisor.api.recommendation_for`, saying what it notices on stderr: what `recommend`,
    `report` and `check` show. ``fingerprint``: any selector `resolve_fingerprint` reads."""
    from advisor.api import recommendation_for

    check_calls_per_process(calls)
    if fingerprint is not None and device is not None and not confirm:
        raise ConfigError(f"--device {device} applies only without --fingerprint, which names "
                          "the device already: drop one of them")
    if fingerprint is not None:
        fingerprint = resolve_fingerprint(db, workload, fingerprint)

    def say(text: str) -> None:
        render.echo(f"advisor: {text}" if text.startswith("warning") else text)

    return recommendation_for(
        workload, db=db, device=device, fingerprint=fingerprint, policy=policy,
        calls_per_process=calls, constraints=constraints, confirm=confirm, top=top,
        artifact=artifact, file=file, notice=say, timeout_s=timeout_s)


def _check_workload_file(file: Path, workload: str, timeout_s: float) -> None:
    """``--confirm --file FILE``: a workload file of `workload`, described first by a child that
    imports it (bounded: `advisor.search.launcher.describe`, at most ``timeout_s``; the wait
    said), so that a bad one is the user's one line, not a confirmation child that dies of
    it."""
    from advisor import settings
    from advisor.cli import waiting
    from advisor.search.launcher import describe

    name = describe(file, settings.import_timeout_s(timeout_s),
                    waiting.importing(file)).workload.name
    if name != workload:
        raise ConfigError(f"--file {file} defines workload {name!r}, not {workload!r}: pass the "
                          f"file {workload} was swept with")


def device_names(store: ResultStore, workload: str) -> DeviceNames:
    """The short ids of the store's devices (`advisor.devices.DeviceNames`: hosts from every
    sweep), knowing every fingerprint ``workload`` was measured on."""
    names = DeviceNames.of_store(store)
    for fp in store.fingerprints(workload):
        names.learn(fp)
    return names


def resolve_fingerprint(db: str | None, workload: str, selector: str,
                        what: str = "--fingerprint") -> str:
    """The fingerprint hash that ``selector`` names among those ``workload`` was measured on:
    a short id (``H200 @gpu-a · 7f023bc2``), a hash or a prefix of it, or a host name.
    ConfigError (exit 2) when it names none or several; a workload never measured is left to
    `advisor.api.recommend` to explain."""
    from advisor import api

    return api.resolve_fingerprint(_store(db), workload, selector, what)


def recommendation_document(rec: Recommendation, device_id: str | None = None) -> dict[str, Any]:
    """`recommend`'s one JSON/YAML document: every field of the recommendation and its
    evidence (`Recommendation.to_dict`), then what to paste into a serving process
    (`advisor.recommendation.export_dict`: device_id, label, torch_compile, dtype, ...)."""
    from advisor.recommendation import export_dict

    return {"workload": rec.workload, "device_id": device_id, **rec.to_dict(),
            **export_dict(rec, device_id=device_id)}


def _print_recommendation(rec: Recommendation, fmt: str, out: Path | None, flat: bool,
                          device_id: str) -> None:
    from advisor.recommendation import to_python

    if fmt == "python":
        text = to_python(rec, device_id=device_id)
        if out is None:
            typer.echo(text, nl=False)
        else:
            output.write_file(out, text)
        return
    evidence = [*rec.ranked, *([rec.baseline] if rec.baseline is not None and
                               rec.baseline.trial_uuid not in {r.trial_uuid for r in rec.ranked}
                               else [])]
    output.emit(fmt, out, document=recommendation_document(rec, device_id),
                rows=lambda: [r.to_dict() for r in evidence],
                table=lambda: _table(rec, device_id=device_id), flat=flat)


def _table(rec: Recommendation, top: int = 8, device_id: str = "") -> None:
    """The configs under the policy, with intervals and break-even, then the sentence."""
    pruned = f"{rec.n_pruned} pruned, " if rec.n_pruned else ""
    on = f" on {device_id}" if device_id else ""
    title = (f"{rec.workload}{on}: best configs by {rec.policy} ({rec.n_trials} trials, "
             f"{rec.n_failed} failed, {rec.n_rejected} rejected, {pruned}"
             f"{rec.n_excluded} over the limits); speedup vs {rec.baseline_name}")
    # a policy's own columns (calls/s, a back-to-back burst of its own taken apart from the
    # median's samples, only under the throughput policy, which decides on it)
    from advisor.recommendation.policies import policy_named

    rate = policy_named(rec.policy).columns
    columns = (("config", 0), ("speedup", 0), ("median", 0), ("95% CI", 2), ("noise", 1),
               ("trials", 5), ("p99", 4), *rate, ("cold", 1), ("warm", 3),
               ("pays off after", 2), ("peak mem", 5))
    cells = []
    rows = list(rec.ranked[:top])
    if rec.baseline is not None and rec.baseline.trial_uuid not in {r.trial_uuid for r in rows}:
        rows.append(rec.baseline)
    for r in rows:
        pays = "-" if not r.config.compiled else (
            f"{r.break_even_calls:,} calls" if r.break_even_calls is not None else "never")
        if r.break_even_calls_fp32 not in (None, r.break_even_calls):
            pays += f" ({r.break_even_calls_fp32:,} vs fp32)"
        cells.append([
            render.short_label(r.config), units.ratio(r.speedup), units.duration_ms(r.median_ms),
            render.interval(r.median_ci_ms),
            render.noise_cell(r),
            "paired" if r.confirmed else str(r.n_trials), units.duration_ms(r.p99_ms),
            *([units.rate(r.throughput_per_s)] if rate else []),
            units.duration_s(r.cold_compile_s) if r.config.compiled else "-",
            units.duration_s(r.warm_compile_s), pays, units.size(r.peak_mem_bytes),
        ])
    staleness = rec.staleness
    if staleness and staleness["warning"]:
        render.paragraph(staleness["warning"], "warning", "yellow")
    render.lead_warning(rec)
    render.console.print(render.fitted_table(title, columns, cells))
    from advisor.recommendation import flag_legend

    legend = flag_legend(rows)
    if legend:
        render.console.print(legend)
    render.paragraph(rec.sentence, "recommendation")
    if rec.note:
        render.paragraph(rec.note, "note")
    if rec.artifact:
        a = rec.artifact
        render.console.print(
            f"warm-start artifact: {a['size_bytes'] / 2**10:.0f} KiB, cold start "
            f"{units.duration_s(a['cold_start_s'])}, with the artifact "
            f"{units.duration_s(a['warm_start_s'])} (advisor.apply loads it)")
