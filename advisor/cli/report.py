"""`advisor report WORKLOAD -o report.html`: the recommendation and its evidence, to share."""

from __future__ import annotations

from pathlib import Path

import typer

from advisor.cli.app import app
from advisor.cli.common import DbOption, fail, fail_on
from advisor.errors import AdvisorError

SUFFIXES = {".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown"}


@app.command("report")
def report_cmd(
    workload: str = typer.Argument(..., help="Workload name (see `advisor list`)."),
    output: Path = typer.Option(
        Path("report.html"), "--output", "-o",
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
) -> None:
    """Write a shareable report: the recommendation with its device and stack, the evidence
    against one named baseline, noise and flags, and its charts (no network needed to open)."""
    from advisor import report
    from advisor.cli.results import resolve_recommendation
    from advisor.db.store import ResultStore
    from advisor.recommendation import Constraints, check_policy

    kind = "markdown" if str(output) == "-" else SUFFIXES.get(output.suffix.lower())
    if kind is None:
        fail(f"{output}: write the report to a .html or .md file (or - for Markdown on stdout)")
    if str(output) != "-" and not output.parent.is_dir():
        fail(f"{output}: the folder {output.parent} does not exist")
    try:
        check_policy(policy, calls_per_process)
        rec = resolve_recommendation(
            workload, db, device, fingerprint, policy, calls_per_process, Constraints(),
            confirm=False, top=1, artifact=False, file=None,
        )
        store = ResultStore.from_url(db, read_only=True)
        records = store.trials(workload=workload, fingerprint_hash=rec.fingerprint_hash)
        fp = next((f for f in store.fingerprints(workload)
                   if f["fingerprint_hash"] == rec.fingerprint_hash), None)
        data = report.build(rec, records, fp, database=store.masked_url)
    except AdvisorError as e:
        fail_on(e)
    text = report.to_html(data) if kind == "html" else report.to_markdown(data)
    if str(output) == "-":
        typer.echo(text, nl=False)
        return
    output.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {output}: {workload} on {data['device']}, recommended "
               f"{data['pick'] or data['decision']}", err=True)
