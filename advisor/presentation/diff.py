"""Two sweeps compared config by config (`advisor diff SWEEP_A SWEEP_B`), as pytest-benchmark's
``compare`` does for two runs: each config's pooled figure in each sweep (its deciding median
with its 95% interval, `advisor.recommendation.recommend` over that sweep's trials alone) and a
verdict from the intervals, never from the two medians alone:

| verdict | when |
| --- | --- |
| ``faster`` / ``slower`` | B's interval lies wholly under / over A's |
| ``within noise`` | the intervals overlap |
| ``cannot tell`` | a side has no interval, or its timings were noisy or contended |
| ``only in A`` / ``only in B`` | measured and passed in one sweep only |

Two sweeps of different devices or stacks are compared all the same (that is the point of a
fleet), and said to be so."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from advisor.records import TrialRecord

VERDICTS = ("faster", "slower", "within noise", "cannot tell", "only in A", "only in B")


@dataclass(frozen=True)
class Side:
    """One config's pooled figure in one sweep."""

    median_ms: float
    ci_ms: list[float] | None
    noisy: bool
    trials: int


@dataclass(frozen=True)
class Row:
    """One config of either sweep: its figure in each and the verdict on B against A."""

    config: str
    config_key: str
    a: Side | None
    b: Side | None
    change: float | None  # B's median over A's, minus 1 (-0.2: 20% faster in B)
    verdict: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def sides(workload: str, records: Sequence[TrialRecord],
          fingerprint_hash: str | None) -> dict[str, tuple[str, Side]]:
    """config key -> (label, its pooled figure) over one sweep's passed trials."""
    from advisor.recommendation import recommend

    rec = recommend(workload, records, fingerprint_hash)
    ranked = [*rec.ranked, *([rec.baseline] if rec.baseline is not None else [])]
    out: dict[str, tuple[str, Side]] = {}
    for r in ranked:
        out.setdefault(r.config.key, (r.label, Side(
            median_ms=r.median_ms, ci_ms=list(r.median_ci_ms) if r.median_ci_ms else None,
            noisy=bool(r.noisy or r.contended), trials=r.n_trials)))
    return out


def verdict(a: Side | None, b: Side | None) -> str:
    """B against A on their intervals (`VERDICTS`)."""
    if a is None or b is None:
        return "only in B" if a is None else "only in A"
    if a.ci_ms is None or b.ci_ms is None or a.noisy or b.noisy:
        return "cannot tell"
    if b.ci_ms[1] < a.ci_ms[0]:
        return "faster"
    if b.ci_ms[0] > a.ci_ms[1]:
        return "slower"
    return "within noise"


def compare(a: Mapping[str, tuple[str, Side]],
            b: Mapping[str, tuple[str, Side]]) -> list[Row]:
    """Every config of either sweep, those measured in both first (B's fastest first), then
    those of one sweep only."""
    rows = []
    for key in dict.fromkeys([*a, *b]):
        label = (a.get(key) or b[key])[0]
        side_a, side_b = (a[key][1] if key in a else None), (b[key][1] if key in b else None)
        change = (side_b.median_ms / side_a.median_ms - 1
                  if side_a is not None and side_b is not None and side_a.median_ms else None)
        rows.append(Row(label, key, side_a, side_b, change, verdict(side_a, side_b)))
    return sorted(rows, key=_order)


def _order(row: Row) -> tuple[bool, float]:
    """In both sweeps first, then by B's median (A's for a config of A only)."""
    side = row.b if row.b is not None else row.a
    return (row.a is None or row.b is None, side.median_ms if side is not None else 0.0)


def summary(rows: Sequence[Row]) -> str:
    """``3 faster, 1 slower, 12 within noise, 2 cannot tell`` (the verdicts that occur)."""
    counts = {v: sum(1 for r in rows if r.verdict == v) for v in VERDICTS}
    return ", ".join(f"{n} {v}" for v, n in counts.items() if n)
