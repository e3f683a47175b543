"""Trials -> a recommendation with its evidence. Pure: plain records in, plain data out.

Policy `latency` (the default): among trials that ran and passed correctness and quality, the
lowest steady-state median (traffic-weighted over the measured shapes). When a simpler config is
within `TIE_RATIO` of the leader, the simpler one wins (eager < default < reduce-overhead <
max-autotune-no-cudagraphs < max-autotune, then the shorter cold compile), and the note says so.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from advisor.config import EAGER_FP32, MODE_COST_ORDER, CompileConfig

TIE_RATIO = 0.02  # medians closer than 2% count as a tie


@dataclass(frozen=True)
class Ranked:
    """One config's evidence, relative to the eager fp32 baseline."""

    config: dict[str, Any]
    label: str
    median_ms: float
    p90_ms: float | None
    p99_ms: float | None
    speedup: float | None
    cold_compile_s: float | None
    warm_compile_s: float | None
    kernels_per_call: int | None
    launches_per_call: int | None
    max_abs_err: float | None
    quality_name: str | None
    quality_value: float | None
    trial_uuid: str


@dataclass(frozen=True)
class Recommendation:
    """The recommended config for one workload on one fingerprint, with its evidence."""

    workload: str
    fingerprint_hash: str | None
    best: Ranked | None
    baseline: Ranked | None
    ranked: list[Ranked] = field(default_factory=list)
    n_trials: int = 0
    n_failed: int = 0
    n_rejected: int = 0
    note: str = ""

    @property
    def sentence(self) -> str:
        """The evidence in one sentence."""
        if self.best is None:
            return f"no config of {self.workload} ran and passed; nothing to recommend"
        b, base = self.best, self.baseline
        if b.config["mode"] == "eager" and base is not None:
            compiled = [r for r in self.ranked if r.config["mode"] != "eager"]
            text = f"{b.label}: {b.median_ms:.3g} ms; compiling does not pay off here"
            if compiled:
                c = compiled[0]
                text += f" (fastest compiled: {c.label}, {c.median_ms:.3g} ms"
                text += f", {c.speedup:.2f}x)" if c.speedup else ")"
            return text
        text = f"{b.label}: {b.median_ms:.3g} ms"
        if base is not None and b.speedup is not None:
            text += f" vs {base.median_ms:.3g} ms eager fp32 ({b.speedup:.2f}x)"
        if b.cold_compile_s is not None and b.config["mode"] != "eager":
            text += f", {b.cold_compile_s:.1f} s cold compile"
        calls = _per_call(b)
        if calls:
            text += f", {calls}"
            if base is not None and _per_call(base):
                text += f" vs {_per_call(base)}"
        return text

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["sentence"] = self.sentence
        return data


def _per_call(r: Ranked) -> str:
    if r.launches_per_call is not None:
        return f"{r.launches_per_call} launches per call"
    if r.kernels_per_call is not None:
        return f"{r.kernels_per_call} kernels per call"
    return ""


def _ranked(rec: dict[str, Any], baseline_ms: float | None) -> Ranked:
    config = CompileConfig.from_dict(rec["config"])
    return Ranked(
        config=config.to_dict(), label=config.label, median_ms=rec["median_ms"],
        p90_ms=rec.get("p90_ms"), p99_ms=rec.get("p99_ms"),
        speedup=baseline_ms / rec["median_ms"] if baseline_ms and rec["median_ms"] else None,
        cold_compile_s=rec.get("cold_compile_s"), warm_compile_s=rec.get("warm_compile_s"),
        kernels_per_call=rec.get("kernels_per_call"),
        launches_per_call=rec.get("launches_per_call"), max_abs_err=rec.get("max_abs_err"),
        quality_name=rec.get("quality_name"), quality_value=rec.get("quality_value"),
        trial_uuid=rec["trial_uuid"],
    )


def _simplicity(r: Ranked) -> tuple[int, float]:
    return MODE_COST_ORDER[r.config["mode"]], r.cold_compile_s or 0.0


def recommend(workload: str, records: list[dict[str, Any]],
              fingerprint_hash: str | None = None) -> Recommendation:
    """The `latency` policy over `records` (trials of one workload on one fingerprint)."""
    ok = [r for r in records if r["status"] == "ok" and r.get("median_ms")]
    passed = [r for r in ok if r.get("passed")]
    base_recs = [r for r in ok if r["config"] == EAGER_FP32.to_dict()]
    base_ms = min(r["median_ms"] for r in base_recs) if base_recs else None
    baseline = _ranked(min(base_recs, key=lambda r: r["median_ms"]), base_ms) if base_recs else None
    # One entry per config: its best measured trial.
    best_per_key: dict[str, dict[str, Any]] = {}
    for rec in passed:
        key = rec["config_key"]
        if key not in best_per_key or rec["median_ms"] < best_per_key[key]["median_ms"]:
            best_per_key[key] = rec
    ranked = sorted((_ranked(r, base_ms) for r in best_per_key.values()),
                    key=lambda r: r.median_ms)
    best, note = None, ""
    if ranked:
        leader = ranked[0]
        ties = [r for r in ranked if r.median_ms <= leader.median_ms * (1 + TIE_RATIO)]
        best = min(ties, key=_simplicity)
        if best is not leader:
            note = (f"{best.label} is within {TIE_RATIO:.0%} of the fastest ({leader.label}, "
                    f"{leader.median_ms:.3g} ms) and simpler, so it is preferred")
    return Recommendation(
        workload=workload, fingerprint_hash=fingerprint_hash, best=best, baseline=baseline,
        ranked=ranked, n_trials=len(records),
        n_failed=sum(1 for r in records if r["status"] != "ok"),
        n_rejected=len(ok) - len(passed), note=note,
    )
