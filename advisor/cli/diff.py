"""`advisor diff SWEEP_A SWEEP_B`: two sweeps of one workload compared config by config."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from advisor import units
from advisor.cli import output, render
from advisor.cli.app import app
from advisor.cli.common import DbOption, check_id, fail_on, sweep_argument
from advisor.errors import AdvisorError, ConfigError

if TYPE_CHECKING:
    from advisor.presentation.diff import Row, Side


@app.command("diff")
def diff_cmd(
    sweep_a: int = sweep_argument("The sweep compared against (A; see `advisor list`)."),
    sweep_b: int = sweep_argument("The sweep compared (B)."),
    db: str | None = DbOption,
    fmt: str = output.format_option(),
    as_json: bool = output.JsonOption,
    out: Path | None = output.OutputOption,
    flat: bool = output.FlattenOption,
) -> None:
    """Compare two sweeps of a workload config by config (two devices, two stacks, or before
    and after a change): each config's median and 95% interval in both, and B against A on the
    intervals: faster, slower, within noise or cannot tell."""
    from advisor.db.store import ResultStore
    from advisor.devices import DeviceNames
    from advisor.presentation import diff

    try:
        fmt = output.resolve(fmt, as_json, out)
        check_id(sweep_a)
        check_id(sweep_b)
        store = ResultStore.from_url(db, read_only=True)
        a, b = store.get_sweep(sweep_a), store.get_sweep(sweep_b)
        workload = a["workload"]["name"]
        if b["workload"]["name"] != workload:
            raise ConfigError(f"sweeps {sweep_a} and {sweep_b} are of different workloads "
                              f"({workload}, {b['workload']['name']}): diff compares the "
                              "sweeps of one workload (`advisor list --workload W` shows them)")
        names = DeviceNames.of_store(store)
        sides = [diff.sides(workload, store.trials(sweep_id=s["id"]), s["fingerprint_hash"])
                 for s in (a, b)]
    except AdvisorError as e:
        fail_on(e)
    rows = diff.compare(*sides)
    ids = [names.name(s["fingerprint_hash"], s["fingerprint"]) for s in (a, b)]
    document = {
        "workload": workload,
        "a": {"sweep_id": sweep_a, "device_id": ids[0]},
        "b": {"sweep_id": sweep_b, "device_id": ids[1]},
        "same_device_and_stack": a["fingerprint_hash"] == b["fingerprint_hash"],
        "summary": diff.summary(rows),
        "configs": [r.to_dict() for r in rows],
    }
    output.emit(fmt, out, document=document, rows=lambda: [_csv_row(r) for r in rows],
                table=lambda: _table(document, rows), flat=flat)


def _csv_row(row: Row) -> dict[str, Any]:
    return {"config": row.config, "config_key": row.config_key,
            "a_median_ms": row.a.median_ms if row.a else None,
            "a_median_ci_ms": row.a.ci_ms if row.a else None,
            "b_median_ms": row.b.median_ms if row.b else None,
            "b_median_ci_ms": row.b.ci_ms if row.b else None,
            "change": row.change, "verdict": row.verdict}


def _figure(side: Side | None) -> str:
    if side is None:
        return "-"
    return units.duration_ms(side.median_ms) + (" (noisy)" if side.noisy else "")


def _table(document: dict[str, Any], rows: list[Row]) -> None:
    a, b = document["a"], document["b"]
    title = (f"{document['workload']}: sweep {b['sweep_id']} (B, {b['device_id']}) against "
             f"sweep {a['sweep_id']} (A, {a['device_id']}), config by config; verdicts on the "
             "95% intervals")
    columns = (("config", 0), ("A median", 0), ("B median", 0), ("change", 0), ("verdict", 0),
               ("A 95% CI", 2), ("B 95% CI", 2), ("trials A/B", 3))
    cells = [[r.config, _figure(r.a), _figure(r.b),
              f"{r.change:+.1%}" if r.change is not None else "-", r.verdict,
              render.interval(r.a.ci_ms if r.a else None),
              render.interval(r.b.ci_ms if r.b else None),
              f"{r.a.trials if r.a else 0}/{r.b.trials if r.b else 0}"] for r in rows]
    render.console.print(render.fitted_table(title, columns, cells))
    render.paragraph(document["summary"] or "no config measured in either sweep", "B against A")
    if not document["same_device_and_stack"]:
        render.paragraph("the two sweeps ran on different devices or software stacks: each "
                         "figure is its own device's", "note")
