"""`advisor check WORKLOAD --against FINGERPRINT | --baseline FILE --fail-if-slower 5%`: a
regression gate for CI that decides on 95% intervals (advisor.presentation.check): exit code 3
when the recommended config got slower on this stack, 4 when noise leaves it unknown."""

from __future__ import annotations

import typer

from advisor.cli import exits
from advisor.cli.app import app
from advisor.cli.common import DbOption, fail, fail_on, print_json, workload_argument
from advisor.errors import AdvisorError


@app.command("check")
def check_cmd(
    workload: str = workload_argument(),
    against: str | None = typer.Option(
        None, "--against",
        help="The baseline: the one answer on this device of the database (its short id, a "
        "fingerprint hash prefix or its host, as `advisor recommend --fingerprint`; or, with "
        "--baseline, which fingerprint hash of an export file).",
    ),
    baseline: str | None = typer.Option(
        None, "--baseline",
        help="The baseline from a file: an `advisor export` (JSON or CSV) or an `advisor "
        "recommend --format json` / `--json` document.",
    ),
    fail_if_slower: str = typer.Option(
        "5%", "--fail-if-slower",
        help="Fail (exit 3) when the 95% intervals show it slower than the baseline by more."
    ),
    db: str | None = DbOption,
    device: str | None = typer.Option(
        None, "--device", help="This stack: the device to check (default: cuda when present, "
        "else cpu)."
    ),
    fingerprint: str | None = typer.Option(
        None, "--fingerprint",
        help="This stack as a device of the database (as `advisor recommend --fingerprint`), "
        "instead of probing --device.",
    ),
    policy: str = typer.Option("latency", "--policy", help="As `advisor recommend --policy`."),
    as_json: bool = typer.Option(False, "--json", help="Print the verdict as JSON."),
) -> None:
    """Fail when the config recommended on this stack is slower than on a baseline.

    The recommended config here is compared with the same config on the baseline (the
    baseline's own pick when it never measured that config): each side's deciding median under
    the same policy, with its 95% interval. It is "slower" only when the intervals are clear of
    each other by more than the threshold; "faster" when here's interval lies under the
    baseline's; "within" when even the largest slowdown the intervals allow is within the
    threshold; else, or when either side's timings are flagged noisy or have no interval,
    "cannot tell": never a pass.

    Exit codes: 0 faster or within the threshold; 3 slower by more; 4 cannot tell (measure
    again on a quiet host); 1 nothing to compare; 2 bad input."""
    from advisor.cli.baseline import read_baseline
    from advisor.cli.results import device_names, resolve_fingerprint, resolve_recommendation
    from advisor.db.store import ResultStore
    from advisor.presentation import check
    from advisor.recommendation import Constraints, check_policy
    from advisor.recommendation.answers import answer

    if against is None and baseline is None:
        fail("say what to check against: --against FINGERPRINT or --baseline FILE")
    try:
        threshold = check.parse_threshold(fail_if_slower)
        check_policy(policy, None)
        if baseline is not None:
            base = read_baseline(baseline, workload, against)
        else:
            assert against is not None
            against = resolve_fingerprint(db, workload, against, "--against")
            with ResultStore.from_url(db, read_only=True) as store:
                if not store.trials(workload=workload, fingerprint_hash=against):
                    fail(f"no trials of {workload} on fingerprint {against} in "
                         f"{store.masked_url}; see `advisor list`")
                base = check.from_recommendation(answer(store, workload, against, policy=policy),
                                                 device_names(store, workload).name(against))
        here = resolve_recommendation(workload, db, device, fingerprint, policy, None,
                                      Constraints(), confirm=False, top=1, artifact=False,
                                      file=None)
    except AdvisorError as e:
        fail_on(e)
    outcome = check.verdict(here, base, threshold)
    if outcome is None:
        why = (f"nothing is recommended here ({here.sentence})" if here.best is None
               else f"the baseline ({base.source}) recommends nothing to compare with")
        typer.echo(f"advisor: {workload}: {why}", err=True)
        raise typer.Exit(exits.FAILURE)
    if here.decision != "decided":  # what the pick compared rests on, said before the verdict
        typer.echo(f"advisor: {workload}: the answer here is {here.decision}: "
                   f"{here.coverage or here.sentence}", err=True)
    if as_json:
        print_json(outcome.to_dict() | {"decision_here": here.decision,
                                        "coverage_here": here.coverage})
    else:
        typer.echo(outcome.sentence)
    if outcome.slower:
        raise typer.Exit(exits.SLOWER)
    if outcome.cannot_tell:
        raise typer.Exit(exits.CANNOT_TELL)
