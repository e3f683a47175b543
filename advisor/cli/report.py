"""`advisor report WORKLOAD -o report.html`: the recommendation and its evidence, to share;
`advisor report --fleet -o fleet.html`: every workload's pick on every device, to send round."""

from __future__ import annotations

from pathlib import Path

import typer

from advisor.cli.app import app
from advisor.cli.common import DbOption, fail, fail_on, workload_argument
from advisor.errors import AdvisorError

SUFFIXES = {".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown"}


@app.command("report")
def report_cmd(
    workload: str | None = workload_argument(
        "Workload name (see `advisor list`); with --fleet, optional: that workload only.",
        default=None),
    output: Path = typer.Option(
        Path("report.html"), "--output", "-o", readable=False,
        help="Where to write it: .html (one self-contained page) or .md (Markdown); - prints "
        "Markdown to stdout.",
    ),
    db: str | None = DbOption,
    device: str | None = typer.Option(
        None, "--device", help="Report for this device (default: cuda when present, else cpu)."
    ),
    fingerprint: str | None = typer.Option(
        None, "--fingerprint",
        help="Report for this fingerprint hash (see `advisor recommend --json`) instead of "
        "this device: a report of results measured elsewhere.",
    ),
    policy: str = typer.Option("latency", "--policy", help="As `advisor recommend --policy`."),
    calls_per_process: int | None = typer.Option(
        None, "--calls-per-process", help="As `advisor recommend --calls-per-process`."
    ),
    fleet: bool = typer.Option(
        False, "--fleet", help="Report every workload (or WORKLOAD) on every device and stack "
        "instead: each pick, its decision and speedup with its noise, and where devices "
        "disagree.",
    ),
) -> None:
    """Write a shareable report: the recommendation with its device and stack, the snippet to
    paste (`recommend -f python`), its charts, then the evidence against one named baseline,
    noise and flags (no network needed to open). With --fleet, one page for the whole fleet."""
    from advisor.cli.output import check_path
    from advisor.cli.results import device_names, resolve_recommendation
    from advisor.db.store import ResultStore
    from advisor.presentation import report
    from advisor.recommendation import Constraints, check_policy

    kind = "markdown" if str(output) == "-" else SUFFIXES.get(output.suffix.lower())
    if kind is None:
        fail(f"{output}: write the report to a .html or .md file (or - for Markdown on stdout)")
    if fleet and (device is not None or fingerprint is not None):
        fail("--fleet reports every device and stack: drop --device and --fingerprint")
    if not fleet and workload is None:
        fail("give the WORKLOAD to report (see `advisor list`), or --fleet for every workload")
    try:
        if str(output) != "-":
            check_path(output)  # a folder, a read-only one: one line before anything is read
        check_policy(policy, calls_per_process)
        if fleet:
            text, said = _fleet(workload, db, policy, calls_per_process, kind)
            _write(output, text, said)
            return
        assert workload is not None
        rec = resolve_recommendation(
            workload, db, device, fingerprint, policy, calls_per_process, Constraints(),
            confirm=False, top=1, artifact=False, file=None,
        )
        store = ResultStore.from_url(db, read_only=True)
        records = store.trials(workload=workload, fingerprint_hash=rec.fingerprint_hash)
        fp = next((f for f in store.fingerprints(workload)
                   if f["fingerprint_hash"] == rec.fingerprint_hash), None)
        # the short id `recommend` prints too: its `-f python` snippet is the report's, verbatim
        name = device_names(store, workload).name(rec.fingerprint_hash)
        data = report.build(rec, records, fp, database=store.masked_url, device_id=name)
    except AdvisorError as e:
        fail_on(e)
    text = report.to_html(data) if kind == "html" else report.to_markdown(data)
    _write(output, text, f"{workload} on {data['device']}, recommended "
                         f"{data['pick'] or data['decision']}")


def _fleet(workload: str | None, db: str | None, policy: str, calls_per_process: int | None,
           kind: str) -> tuple[str, str]:
    """The fleet report's text and what the closing line says of it."""
    from advisor.db.store import ResultStore
    from advisor.frames import compare_devices
    from advisor.presentation import fleet_report

    with ResultStore.from_url(db, read_only=True) as store:
        names = store.workloads()
        if workload is not None and workload not in names:
            fail(f"no results for workload {workload!r}; run `advisor sweep FILE` first")
        if not names:
            fail(f"no results in {store.masked_url} yet; run `advisor sweep FILE` first")
        devices = {name: compare_devices(store, name, policy=policy,
                                         calls_per_process=calls_per_process)
                   for name in ([workload] if workload is not None else names)}
        data = fleet_report.build(devices, database=store.masked_url)
    text = fleet_report.to_html(data) if kind == "html" else fleet_report.to_markdown(data)
    return text, f"the fleet report: {data['sentence']}"


def _write(output: Path, text: str, said: str) -> None:
    """The report to ``output`` (``-``: stdout), then one line on stderr saying what it is."""
    from advisor.cli.output import write_file

    if str(output) == "-":
        typer.echo(text, nl=False)
        return
    write_file(output, text)  # whole or not at all; a failure (a full disk) is one line
    typer.echo(f"wrote {output}: {said}", err=True)
