"""The data of the charts `advisor report` and the dashboard draw: one recommendation in, plain
rows out (typed dicts: `LatencyPoint`, `SpeedupRow`, `StrategyBar`, `KernelCount`,
`ShapeLatency`; no pandas, no drawing, no I/O). Both surfaces plot these rows, so a chart means
the same wherever it is seen, and renaming a field fails mypy at every reader; the dashboard's
Altair field names are checked against these types by tests/presentation/test_chart_rows.py.

latency_points    per config of the one answer (`advisor.recommendation.answers`): pooled
                  median, cold compile, speedup, whether it is on the Pareto front and
                  whether it is the pick
pareto            the rows no other row beats on both of two figures (lower is better)
speedups          per config: the speedup against the recommendation's one named baseline
top_rows          the first N rows (the pick kept whatever its rank) and the rest: a chart
                  draws the first, a table beside it lists the rest
labelled          which points of the latency chart get a written name: the pick, the Pareto
                  front, the fastest few (the others by their tooltip)
shape_strategies  per trial that replayed traffic: its shape strategy and figures
kernel_counts     kernels and launches per call: eager fp32 vs the recommended trial
shape_latencies   per traffic shape, the median of the named trials
phases            per trial: where its time went (queue, start, import, build, lock wait,
                  compile, measure), so that a stall shows
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from advisor import serving, units
from advisor.config import CompileConfig
from advisor.errors import ConfigError
from advisor.records import PHASE_ORDER, TrialRecord

if TYPE_CHECKING:
    from advisor.recommendation import Ranked, Recommendation

Row = TypeVar("Row", bound=Mapping[str, Any])


class LatencyPoint(TypedDict):
    """A config of the one answer on the latency chart (`latency_points`)."""

    config: str  # its label
    mode: str
    dtype: str
    median_ms: float  # the pooled median it was decided on
    median_ci_ms: list[float] | None
    cold_compile_s: float | None  # 0 for an eager config
    speedup: float | None
    noisy: bool
    recommended: bool
    pareto: bool  # no other config both faster and quicker to compile


class SpeedupRow(TypedDict):
    """A config's speedup against the one named baseline (`speedups`)."""

    config: str
    speedup: float
    speedup_ci: list[float] | None  # paired only
    median_ms: float
    noisy: bool
    baseline: bool
    recommended: bool


class StrategyBar(TypedDict):
    """One latency figure of one shape strategy (`strategy_bars`)."""

    strategy: str
    figure: str  # the figure's name: mean_ms, process_life_ms, stream.mean_ms, ...
    ms: float


class KernelCount(TypedDict):
    """Kernels or launches per call of one run (`kernel_counts`)."""

    run: str  # "eager fp32" | "recommended"
    what: str  # "kernels per call" | "launches per call"
    count: float


class ShapeLatency(TypedDict):
    """One traffic shape's figures for one named trial (`shape_latencies`)."""

    run: str
    shape: str | None
    weight: float | None
    p50_ms: float | None
    p99_ms: float | None


def config_label(config: Mapping[str, Any] | None, key: str | None = None) -> str:
    """``bf16 + reduce-overhead`` for a stored config dict (its key when it is not valid)."""
    if not config:
        return key or "?"
    try:
        return CompileConfig.from_dict(config).label
    except (ConfigError, TypeError):
        return key or str(config)


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def pareto(rows: Iterable[Row], x: str, y: str) -> list[Row]:
    """The rows no other row beats on both ``x`` and ``y`` (both lower is better), by ``x``.
    Rows missing either figure are left out."""
    clean = sorted((r for r in rows if _finite(r.get(x)) and _finite(r.get(y))),
                   key=lambda r: (r[x], r[y]))
    front, best_y = [], math.inf
    for row in clean:
        if row[y] < best_y:
            front.append(row)
            best_y = row[y]
    return front


def evidence(rec: Recommendation) -> list[Ranked]:
    """The recommendation's ranked configs, the baseline appended when it is not among them."""
    rows = list(rec.ranked)
    if rec.baseline is not None and rec.baseline.trial_uuid not in {r.trial_uuid for r in rows}:
        rows.append(rec.baseline)
    return rows


def latency_points(rec: Recommendation) -> list[LatencyPoint]:
    """One point per config the recommendation ranked (and its baseline): the pooled median it
    decided on against the cold compile (eager configs compile nothing: 0 s), ``pareto`` when no
    other config is both faster and quicker to compile, ``recommended`` for the pick."""
    pick = rec.best.trial_uuid if rec.best is not None else None
    points: list[LatencyPoint] = []
    for r in evidence(rec):
        eager = not r.config.compiled
        points.append({
            "config": r.label, "mode": r.config.mode, "dtype": r.config.dtype,
            "median_ms": r.median_ms, "median_ci_ms": r.median_ci_ms,
            "cold_compile_s": 0.0 if eager else r.cold_compile_s, "speedup": r.speedup,
            "noisy": bool(r.noisy), "recommended": r.trial_uuid == pick, "pareto": False,
        })  # fmt: skip
    for point in pareto(points, "cold_compile_s", "median_ms"):
        point["pareto"] = True
    return points


def speedups(rec: Recommendation) -> list[SpeedupRow]:
    """Per config, fastest first: its speedup against ``rec.baseline_name`` (the baseline
    itself is 1.0), its interval when paired, and whether it is the pick."""
    pick = rec.best.trial_uuid if rec.best is not None else None
    rows: list[SpeedupRow] = [
        {"config": r.label, "speedup": r.speedup, "speedup_ci": r.speedup_ci,
         "median_ms": r.median_ms, "noisy": bool(r.noisy),
         "baseline": rec.baseline is not None and r.trial_uuid == rec.baseline.trial_uuid,
         "recommended": r.trial_uuid == pick}
        for r in evidence(rec) if r.speedup is not None and _finite(r.speedup)]  # fmt: skip
    return sorted(rows, key=lambda row: -row["speedup"])


def top_rows(rows: Sequence[Row], n: int, keep: Callable[[Row], bool] = lambda row: False,
             ) -> tuple[list[Row], list[Row]]:
    """The first ``n`` of ``rows`` and every later row ``keep`` asks for (the pick, say), in
    their order; then the rest, in their order. Together they are ``rows``, each once."""
    shown = [r for i, r in enumerate(rows) if i < n or keep(r)]
    ids = {id(r) for r in shown}
    return shown, [r for r in rows if id(r) not in ids]


def labelled(points: Sequence[LatencyPoint], fastest: int = 3) -> list[LatencyPoint]:
    """The `latency_points` worth a written name, most wanted first: the recommended one, the
    Pareto front (quickest compile first), then the ``fastest`` lowest medians. A chart writes
    as many as fit without touching; the others keep their tooltip."""
    measured = [p for p in points if _finite(p.get("median_ms"))
                and _finite(p.get("cold_compile_s"))]  # fmt: skip
    ranked = [
        *(p for p in measured if p["recommended"]),
        *sorted((p for p in measured if p["pareto"]), key=lambda p: p["cold_compile_s"] or 0.0),
        *sorted(measured, key=lambda p: p["median_ms"])[:fastest],
    ]
    return list({id(p): p for p in ranked}.values())


def shape_strategies(records: Sequence[TrialRecord]) -> list[dict[str, Any]]:
    """Shape strategies side by side: one row per ok trial that carries a ``replay`` result
    (the replay of sampled traffic), its scalar figures flattened (``stream.mean_ms``), the
    process-life figure when it decides, and its flags."""
    rows = []
    for r in records:
        replay = r.get("replay")
        if not isinstance(replay, dict) or r.get("status") != "ok":
            continue
        row: dict[str, Any] = {
            "strategy": (r.get("config") or {}).get("shapes", "static"),
            "config": config_label(r.get("config"), r.get("config_key")),
        }
        if serving.decides(replay):  # the figure a recommendation under varying traffic uses
            row["process_life_ms"] = serving.process_life_ms(
                replay, serving.DEFAULT_CALLS_PER_PROCESS)
        row["flags"] = ", ".join(f["flag"] for f in replay.get("flags") or []) or "-"
        for key, value in replay.items():
            if key == "flags":
                continue
            if isinstance(value, dict):
                row.update({f"{key}.{k}": v for k, v in value.items() if _scalar(v)})
            elif isinstance(value, list):
                row[key] = ", ".join(str(v) for v in value) if len(value) <= 12 else len(value)
            else:
                row[key] = value
        rows.append(row)
    return rows


def strategy_bars(rows: list[dict[str, Any]]) -> list[StrategyBar]:
    """The latency figures (``*_ms``) of `shape_strategies` rows, one bar per strategy x
    figure: strategy, figure, ms."""
    return [{"strategy": row["strategy"], "figure": key, "ms": value}
            for row in rows for key, value in row.items()
            if key.endswith("_ms") and _finite(value)]  # fmt: skip


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def kernel_counts(best: TrialRecord) -> list[KernelCount]:
    """Kernels and launches per call of one trial and of its fp32 eager reference: run, what,
    count (unknown counts left out)."""
    rows = [
        ("eager fp32", "kernels per call", best["eager_kernels_per_call"]),
        ("eager fp32", "launches per call", best["eager_launches_per_call"]),
        ("recommended", "kernels per call", best["kernels_per_call"]),
        ("recommended", "launches per call", best["launches_per_call"]),
    ]
    return [{"run": run, "what": what, "count": float(count)} for run, what, count in rows
            if count is not None and _finite(count)]  # fmt: skip


def shape_latencies(
    records: Sequence[TrialRecord], uuids: dict[str, str]
) -> list[ShapeLatency]:
    """Per traffic shape, the median of the trials named in ``uuids`` (trial uuid -> name)."""
    rows: list[ShapeLatency] = []
    for r in records:
        name = uuids.get(r.get("trial_uuid") or "")
        if not name:
            continue
        for shape in r.get("shapes") or []:
            rows.append({
                "run": name, "shape": shape.get("shape"), "weight": shape.get("weight"),
                "p50_ms": shape.get("median_ms"), "p99_ms": shape.get("p99_ms"),
            })  # fmt: skip
    return rows


def phases(records: Iterable[Mapping[str, Any]]) -> list[dict[str, str]]:
    """Per trial that timed its phases (``phases_s``), in the order they finished: its config,
    the seconds of each phase of `PHASE_ORDER` that any of them has ("-" where this one has
    none), and their total."""
    timed = [r for r in records if r.get("phases_s")]
    timed.sort(key=lambda r: str(r.get("finished_at") or ""))
    names = [p for p in PHASE_ORDER if any(p in r["phases_s"] for r in timed)]
    rows = []
    for r in timed:
        got = r["phases_s"]
        row = {"config": config_label(r.get("config"), r.get("config_key"))}
        row.update({p: units.duration_s(got[p]) if p in got else "-" for p in names})
        row["total"] = units.duration_s(sum(v for v in got.values() if _finite(v)))
        rows.append(row)
    return rows
