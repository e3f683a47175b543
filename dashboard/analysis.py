"""The dashboard's arithmetic: plain records and frames in, frames out. No Streamlit, no store.

labels           device, stack and group labels: a device (and its stack) by its short id, as
                 every surface names it ("H200 @gpu-a · 7f023bc2", `advisor.devices`), stacks
                 by versions ("torch 2.11 · ..."); chart axes add the torch version when the
                 groups span several stacks ("H200 @gpu-a · 7f023bc2 · torch 2.11.0")
staleness        a group is stale when its device model was measured with a newer stack: newer
                 versions (torch first, `advisor.recommendation.staleness.stack_order`), never
                 merely a later measurement; stacks of the same versions: the later one
recommendations  the one answer (`advisor.recommendation.answers`) per workload x device x
                 stack, as rows
trials_frame     one row per trial, failures with their reasons
...              the fleet page's matrices: speedups, upgrades, two devices that disagree
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from advisor import serving, units
from advisor.config import EAGER_FP32, ConfigDict
from advisor.devices import DeviceNames
from advisor.presentation import charts
from advisor.recommendation import TIE_RATIO, Recommendation
from advisor.recommendation.staleness import stack_order
from advisor.records import TrialRecord
from advisor.rows import DeviceComparisonRow, SweepRow

ENV_FIELDS = (
    ("torch_version", "torch"),
    ("triton_version", "triton"),
    ("driver_version", "driver"),
    ("cuda_runtime_version", "CUDA"),
    ("cuda_driver_version", "CUDA driver"),
    ("cudnn_version", "cuDNN"),
    ("python_version", "Python"),
)
STACK_LABEL_FIELDS = ("torch_version", "triton_version", "driver_version", "cuda_runtime_version")
GROUP_KEY = ["workload", "device_hash", "env_hash"]
# The recommendations page gives the policy only the trials within this fraction of each group's
# fastest (plus the eager fp32 baseline): fast on 100,000 trials, and wide enough for the policy's
# tie-breaks (TIE_RATIO, overlapping confidence intervals). The workload page uses every trial.
NEAR_BEST = max(0.10, 5 * TIE_RATIO)
# Two devices "disagree" on a config when one finds it faster than eager and the other slower.
SAME_AS_EAGER = 0.02


# -- labels ------------------------------------------------------------------------------------


def config_label(config: Mapping[str, Any] | None, key: str | None = None) -> str:
    """``bf16 + reduce-overhead`` for a stored config dict (its key when it is not valid)."""
    return charts.config_label(config, key)


def device_model(row: dict[str, Any] | pd.Series) -> str:
    """What devices of one kind share: the GPU's name, or the CPU model."""
    return str(row.get("device_name") or row.get("cpu_model") or "unknown device")


def device_label(row: dict[str, Any] | pd.Series, names: DeviceNames | None = None) -> str:
    """The short id of the device and stack of ``row`` (its device_hash and env_hash, or its
    fingerprint_hash, and its model fields): `advisor.devices.DeviceNames.name`."""
    names = names if names is not None else DeviceNames()
    fp_hash = row.get("fingerprint_hash")
    if not isinstance(fp_hash, str) or not fp_hash:
        fp_hash = names.fingerprint_hash(str(row["device_hash"]), str(row["env_hash"]))
    return names.name(fp_hash, {k: row.get(k) for k in ("device_kind", "device_name", "cpu_model",
                                                         "cpu_isa", "cpu_flags")})


def short_groups(groups: pd.DataFrame) -> list[str]:
    """Chart-axis labels of labelled groups, one per row, unique: the device's short id (its
    fingerprint hash tells the groups apart); the torch version too when the groups span
    several stacks."""
    devices = [str(d) for d in groups["device"]]
    if groups["env_hash"].nunique() <= 1:
        return devices
    return [f"{d} · torch {v}" if _present(v) else d
            for d, v in zip(devices, groups["torch_version"], strict=True)]  # fmt: skip


def stack_label(row: dict[str, Any] | pd.Series) -> str:
    """``torch 2.11.0+cu130 · triton 3.6.0 · driver 580.159.04 · CUDA 13.0``."""
    names = dict(ENV_FIELDS)
    parts = [f"{names[f]} {row[f]}" for f in STACK_LABEL_FIELDS if _present(row.get(f))]
    return " · ".join(parts) or f"stack {str(row['env_hash'])[:8]}"


def utc_times(values: pd.Series) -> pd.Series:
    """Stored times (ISO 8601 strings or datetimes; None for none) as UTC timestamps, in one
    vectorised conversion (element by element costs a millisecond each)."""
    return pd.to_datetime(values.astype(object), utc=True, format="ISO8601")


def _present(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def stack_change(old: dict[str, Any] | pd.Series, new: dict[str, Any] | pd.Series) -> str:
    """What differs between two software stacks: ``torch 2.10.0 → 2.11.0, driver 570 → 580``."""
    changes = [
        f"{name} {old.get(field) or '-'} → {new.get(field) or '-'}"
        for field, name in ENV_FIELDS
        if (old.get(field) or None) != (new.get(field) or None)
    ]
    return ", ".join(changes) or "same versions, other stack details"


def add_labels(groups: pd.DataFrame, names: DeviceNames | None = None) -> pd.DataFrame:
    """Device, stack and group labels on a frame of workload x device x stack groups: the
    fingerprint hash of each, the device by its short id (``names``: the store's,
    `advisor.devices.DeviceNames`, hosts from its sweeps); stack labels that would collide
    (stacks differing only in cuDNN, say) get the env hash."""
    out = groups.copy()
    names = names if names is not None else DeviceNames()
    devices = out.drop_duplicates("device_hash")
    models = {r["device_hash"]: device_model(r) for r in devices.to_dict("records")}
    out["model"] = out["device_hash"].map(models)
    out["fingerprint_hash"] = [names.fingerprint_hash(str(d), str(e)) for d, e in
                               zip(out["device_hash"], out["env_hash"], strict=True)]  # fmt: skip
    out["device"] = [device_label(r, names) for r in out.to_dict("records")]
    envs = out.drop_duplicates("env_hash").to_dict("records")
    stacks: dict[str, str] = {r["env_hash"]: stack_label(r) for r in envs}
    seen: dict[str, list[str]] = defaultdict(list)
    for env, label in stacks.items():
        seen[label].append(env)
    for label, envs in seen.items():
        if len(envs) > 1:
            stacks.update({env: f"{label} · {env[:6]}" for env in envs})
    out["stack"] = out["env_hash"].map(stacks).astype(object)
    out["group"] = [f"{d} | {s}" for d, s in zip(out["device"], out["stack"], strict=True)]
    out["short_group"] = short_groups(out)
    return out


def add_staleness(groups: pd.DataFrame) -> pd.DataFrame:
    """``stale`` and ``stale_reason`` on labelled groups: a group is stale when its device
    model has been measured with a newer software stack (`newest_stacks`); a device on the
    newest versions is not stale, however recently an older stack was measured."""
    out = groups.copy()
    newest = newest_stacks(out)
    stacks = {r["env_hash"]: r for r in out.drop_duplicates("env_hash").to_dict("records")}
    changes: dict[tuple[str, str], str] = {}
    stale, reasons = [], []
    for model, env in zip(out["model"], out["env_hash"], strict=True):
        latest, when = newest[model]
        stale.append(env != latest)
        if env == latest:
            reasons.append("")
            continue
        if (env, latest) not in changes:
            changes[(env, latest)] = stack_change(stacks[env], stacks[latest])
        newer = stack_order(stacks[latest]) > stack_order(stacks[env])
        reasons.append(f"{model} measured {'with a newer stack' if newer else 'since with'}: "
                       f"{changes[(env, latest)]} ({str(when)[:10]})")  # fmt: skip
    out["stale"] = stale
    out["stale_reason"] = reasons
    return out


def newest_stacks(groups: pd.DataFrame) -> dict[str, tuple[str, Any]]:
    """Per device model: the env hash of its newest stack (the highest versions, by
    `stack_order`; of equal versions, the one measured last) and that stack's last trial."""
    rows = groups.to_dict("records")
    found: dict[str, tuple[Any, str, Any]] = {}
    for r in rows:
        key = (stack_order(r), str(r.get("last_started_at") or ""))
        if r["model"] not in found or key > found[r["model"]][0]:
            found[r["model"]] = (key, r["env_hash"], r.get("last_started_at"))
    return {model: (env, when) for model, (_, env, when) in found.items()}


def stacks_oldest_first(stacks: pd.DataFrame) -> list[str]:
    """The env hashes of ``stacks`` (rows with env_hash, the version fields and
    last_started_at), oldest stack first by versions (`stack_order`), then by when last
    measured: an upgrade goes from an earlier entry to a later one."""
    rows = stacks.to_dict("records")
    rows.sort(key=lambda r: (stack_order(r), str(r.get("last_started_at") or "")))
    return list(dict.fromkeys(r["env_hash"] for r in rows))


# -- recommendations ---------------------------------------------------------------------------


def recommendations(groups: pd.DataFrame, recs: list[Recommendation]) -> pd.DataFrame:
    """One row per labelled group (workload x device x stack): the one answer there
    (`advisor.recommendation.answers.answer`, in the same order as ``groups``), its figures
    with their interval and noise, and the group's counts."""
    if groups.empty:
        return groups
    chosen = pd.DataFrame([recommended_row(rec) for rec in recs])
    frame = pd.concat([groups.reset_index(drop=True), chosen], axis=1)
    frame["n_rejected"] = frame["n_ok"] - frame["n_passed"]
    return frame


def recommended_row(rec: Recommendation) -> dict[str, Any]:
    """The pick of one recommendation as a row: config, figures, interval, noise, decision."""
    best, base = rec.best, rec.baseline
    out: dict[str, Any] = {
        "config": None, "config_key": None, "mode": None, "dtype": None, "speedup": None,
        "p50_ms": None, "p50_ci": None, "noisy": None, "p90_ms": None, "p99_ms": None,
        "cold_compile_s": None, "eager_p50_ms": base.median_ms if base else None,
        "baseline": rec.baseline_name, "break_even_calls": None, "trial_uuid": None,
        "decision": rec.decision, "note": rec.note,
    }  # fmt: skip
    if rec.decision == "undecided: noise":
        out["config"] = "undecided: noise"
    if best is None:
        return out
    ci = best.median_ci_ms
    out.update(
        config=best.label, config_key=best.config_key,
        mode=best.config.mode, dtype=best.config.dtype, speedup=best.speedup,
        p50_ms=best.median_ms, p50_ci=units.interval_ms(*ci) if ci else None,
        noisy=best.noisy, p90_ms=best.p90_ms, p99_ms=best.p99_ms,
        cold_compile_s=best.cold_compile_s, trial_uuid=best.trial_uuid,
        break_even_calls=best.break_even_calls,
    )  # fmt: skip
    return out


# -- one workload on one device: its trials ----------------------------------------------------


def _last_line(text: str | None) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def outcome(record: TrialRecord) -> str:
    """``ok``, ``failed: <reason>``, ``rejected: <why>`` (ran, but wrong or low quality) or
    ``pruned: at least <bound> a request`` (a replay stopped once proven worse: no figure) or
    ``stopped by the budget ...`` (its time ended first: how far it got, no figure)."""
    if record["status"] == "pruned":
        return serving.pruned_text(record.get("pruned") or {})
    if record["status"] == "stopped":
        return serving.stopped_text(record.get("stopped") or {})
    if record["status"] != "ok":
        return f"failed: {record.get('failure_reason') or 'unknown'}"
    if record.get("passed"):
        return "ok"
    if record.get("correct") is False:
        return "rejected: outputs differ from eager fp32"
    if record.get("quality_passed") is False:
        return f"rejected: {record.get('quality_name') or 'quality'} below threshold"
    return "rejected"


def eager_baseline_ms(records: Iterable[TrialRecord]) -> float | None:
    """The lowest eager fp32 median among ok records (the speedup's denominator)."""
    medians = [
        median
        for r in records
        if r["status"] == "ok" and (median := r.get("median_ms"))
        and r.get("config_key") == EAGER_FP32.key
    ]
    return min(medians) if medians else None


def trials_frame(records: Sequence[TrialRecord],
                 calls_per_process: int | None = None) -> pd.DataFrame:
    """One row per trial, oldest first: config, outcome (failures with their reason), figures,
    and ``deciding_ms``: the figure the recommendation decides on (the steady-state median, or
    under varying traffic the cost per request over a process of ``calls_per_process`` calls:
    `advisor.recommendation.deciding_ms`) for a trial that passed, empty for the others."""
    from advisor.recommendation import deciding_ms

    base = eager_baseline_ms(records)
    rows = []
    for r in records:
        config = r.get("config") or {}
        speedup = base / median if base and (median := r.get("median_ms")) else None
        peak = r["peak_mem_bytes"]
        rows.append({
            "started": r["started_at"],
            "config": config_label(config, r["config_key"]),
            "mode": config.get("mode"), "dtype": config.get("dtype"),
            "fullgraph": config.get("fullgraph"), "dynamic": config.get("dynamic"),
            "shapes": config.get("shapes", "static"), "outcome": outcome(r), "speedup": speedup,
            "deciding_ms": deciding_ms(r, calls_per_process)
            if r["status"] == "ok" and r.get("passed") and r["median_ms"] is not None else None,
            "p50_ms": r["median_ms"], "noisy": r.get("noisy") if r["status"] == "ok" else None,
            "p90_ms": r["p90_ms"], "p99_ms": r["p99_ms"],
            "cold_compile_s": r["cold_compile_s"], "warm_compile_s": r["warm_compile_s"],
            "kernels_per_call": r["kernels_per_call"],
            "launches_per_call": r["launches_per_call"],
            "graphs": r["graph_count"], "graph_breaks": r["graph_break_count"],
            "recompiles": r["recompiles"],
            "peak_mem_mib": peak / 2**20 if peak is not None else None,
            "max_abs_err": r["max_abs_err"], "quality": r["quality_value"],
            "quality_worst": r.get("quality_worst"),
            "quality_advisory": r.get("quality_advisory"),  # why the check rejected nothing
            "error": _last_line(r["error_tail"]),
            "sweep": r.get("sweep_id"), "trial_uuid": r["trial_uuid"],
        })  # fmt: skip
    frame = pd.DataFrame(rows)
    if not frame.empty:
        frame["started"] = utc_times(frame["started"])
    return frame


def measured(trials: pd.DataFrame) -> pd.DataFrame:
    """The trials that ran and passed, best trial per config (lowest p50)."""
    ok = trials[(trials["outcome"] == "ok") & trials["p50_ms"].notna()]
    return ok.sort_values("p50_ms").drop_duplicates("config").reset_index(drop=True)


def speedup_matrix(trials: pd.DataFrame) -> pd.DataFrame:
    """Per mode x dtype: the best speedup over eager fp32 among passed trials, with the number
    of trials and failures of that cell (a cell with trials but no pass has speedup NaN)."""
    if trials.empty:
        return pd.DataFrame(columns=["mode", "dtype", "speedup", "trials", "failed", "text"])
    cells = trials.groupby(["mode", "dtype"], dropna=True)
    out = cells.agg(
        trials=("outcome", "size"),
        failed=("outcome", lambda s: int(s.str.startswith("failed").sum())),
    ).reset_index()
    ok = trials[trials["outcome"] == "ok"].groupby(["mode", "dtype"])["speedup"].max()
    out["speedup"] = [
        ok.get((m, d), math.nan) for m, d in zip(out["mode"], out["dtype"], strict=True)
    ]
    out["text"] = [
        f"{s:.2f}x" if not math.isnan(s) else ("failed" if f == n else "no pass")
        for s, f, n in zip(out["speedup"], out["failed"], out["trials"], strict=True)
    ]
    return out


def kernel_counts(best: TrialRecord) -> pd.DataFrame:
    """Kernels and launches per call of one trial and of its fp32 eager reference."""
    return pd.DataFrame(charts.kernel_counts(best), columns=["run", "what", "count"])


def kernel_names(best: TrialRecord) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The distinct kernels one call ran: eager fp32 and the recommended config."""
    eager = pd.DataFrame({"eager fp32 kernel": list(best.get("eager_kernel_names") or [])})
    compiled = pd.DataFrame({"recommended config kernel": list(best.get("kernel_names") or [])})
    return eager, compiled


def graph_breaks(records: Sequence[TrialRecord]) -> pd.DataFrame:
    """Every graph break reason seen, with how often and under which configs."""
    counts: dict[str, int] = defaultdict(int)
    configs: dict[str, set[str]] = defaultdict(set)
    for r in records:
        label = config_label(r.get("config"), r.get("config_key"))
        for item in r.get("graph_breaks") or []:
            reason = str(item.get("reason") if isinstance(item, dict) else item)
            counts[reason] += int(item.get("count") or 1) if isinstance(item, dict) else 1
            configs[reason].add(label)
        if r.get("failure_reason") == "graph_break":
            reason = _last_line(r.get("error_tail")) or "fullgraph refused a graph break"
            counts[reason] += 1
            configs[reason].add(label)
    rows = [
        {"reason": reason, "count": counts[reason], "configs": ", ".join(sorted(configs[reason]))}
        for reason in sorted(counts, key=lambda k: -counts[k])
    ]
    return pd.DataFrame(rows, columns=["reason", "count", "configs"])


def shape_latencies(records: Sequence[TrialRecord], uuids: dict[str, str]) -> pd.DataFrame:
    """Per traffic shape, the median of the trials named in ``uuids`` (trial uuid -> name)."""
    return pd.DataFrame(charts.shape_latencies(records, uuids),
                        columns=["run", "shape", "weight", "p50_ms", "p99_ms"])


def replay_frame(records: Sequence[TrialRecord]) -> pd.DataFrame:
    """Shape strategies side by side (`advisor.presentation.charts.shape_strategies`): one row
    per trial that carries a ``replay`` result, its scalar figures as columns. Empty when none
    has one."""
    return pd.DataFrame(charts.shape_strategies(records))


# -- fleet ---------------------------------------------------------------------------------------


def fleet_frame(
    comparison: list[DeviceComparisonRow], configs: dict[str, ConfigDict], groups: pd.DataFrame
) -> pd.DataFrame:
    """`ResultStore.device_comparison` rows with their group's labels (from ``groups``, the
    labelled groups of the workload) and each config's speedup over the eager fp32 best of the
    same device and stack."""
    frame = pd.DataFrame(comparison)
    if frame.empty:
        return frame
    labels = groups[["device_hash", "env_hash", "model", "device", "stack", "group",
                     "short_group", "last_started_at"]]  # fmt: skip
    frame = frame.merge(labels, on=["device_hash", "env_hash"], how="left")
    names = {k: config_label(configs.get(k), k) for k in frame["config_key"].unique()}
    frame["config"] = frame["config_key"].map(names).astype(object)
    eager = frame[frame["config_key"] == EAGER_FP32.key]
    base = eager.set_index(["device_hash", "env_hash"])["best_median_ms"]
    frame = frame.join(base.rename("eager_ms"), on=["device_hash", "env_hash"])
    frame["speedup"] = frame["eager_ms"] / frame["best_median_ms"]
    return frame


def config_ranking(fleet: pd.DataFrame) -> list[str]:
    """Configs by their median speedup across groups, best first (a group where a config has
    no passing trial counts as 0)."""
    by_group = fleet.pivot_table(index="config", columns="group", values="speedup",
                                 aggfunc="max", dropna=False)  # fmt: skip
    median = by_group.reindex(fleet["config"].unique()).fillna(0.0).median(axis=1)
    return list(median.sort_values(ascending=False, kind="stable").index)


def upgrade_moves(fleet: pd.DataFrame, model: str, old_env: str, new_env: str) -> pd.DataFrame:
    """Per config, the best p50 on one device model before and after a stack change."""
    on_model = fleet[fleet["model"] == model]
    best = on_model.groupby(["config", "env_hash"])["best_median_ms"].min().unstack()
    if old_env not in best or new_env not in best:
        return pd.DataFrame(columns=["config", "before_ms", "after_ms", "change_pct"])
    out = pd.DataFrame({"before_ms": best[old_env], "after_ms": best[new_env]}).dropna()
    out["change_pct"] = (out["after_ms"] / out["before_ms"] - 1.0) * 100.0
    return out.reset_index().sort_values("change_pct")


def disagreements(fleet: pd.DataFrame, group_a: str, group_b: str) -> pd.DataFrame:
    """Configs measured on both groups, with each one's speedup, rank and verdict (faster or
    slower than eager fp32, or failed); ``disagree`` when the verdicts differ."""
    columns = ["config", "speedup_a", "speedup_b", "rank_a", "rank_b", "verdict_a", "verdict_b"]
    sides = []
    for group in (group_a, group_b):
        side = fleet[fleet["group"] == group].set_index("config")
        side = side.assign(rank=side["best_median_ms"].rank(method="min"))
        sides.append(side)
    a, b = sides
    both = a.index.intersection(b.index)
    out = pd.DataFrame({
        "config": both,
        "speedup_a": a.loc[both, "speedup"].to_numpy(),
        "speedup_b": b.loc[both, "speedup"].to_numpy(),
        "rank_a": a.loc[both, "rank"].to_numpy(),
        "rank_b": b.loc[both, "rank"].to_numpy(),
    }) if len(both) else pd.DataFrame(columns=columns[:5])  # fmt: skip
    out["verdict_a"] = [_verdict(s) for s in out["speedup_a"]]
    out["verdict_b"] = [_verdict(s) for s in out["speedup_b"]]
    out["disagree"] = out["verdict_a"] != out["verdict_b"]
    out["kind"] = [kind(a, b) for a, b in zip(out["verdict_a"], out["verdict_b"], strict=True)]
    ratio = out["speedup_a"].astype(float) / out["speedup_b"].astype(float)
    out["gap"] = ratio.map(lambda v: abs(math.log(v)) if v and v > 0 else math.inf)
    out["order"] = out["kind"].map(KINDS.index)
    return (out.sort_values(["order", "gap"], ascending=[True, False])
            .drop(columns="order").reset_index(drop=True))


# The kinds of (dis)agreement between two devices on one config, the most telling first.
OPPOSITE = "faster on one, slower on the other"
FAILED_ONE_SIDE = "failed or rejected on one side"
SAME_ONE_SIDE = "as fast as eager on one side"
AGREE = "agree"
KINDS = (OPPOSITE, FAILED_ONE_SIDE, SAME_ONE_SIDE, AGREE)


def kind(verdict_a: str, verdict_b: str) -> str:
    """What two devices' verdicts on one config (`_verdict`) amount to, in words (`KINDS`):
    one faster than eager fp32 and the other slower; one failed or rejected and the other
    not; one as fast as eager and the other not; or the same verdict on both."""
    if verdict_a == verdict_b:
        return AGREE
    if FAILED in (verdict_a, verdict_b):
        return FAILED_ONE_SIDE
    if {verdict_a, verdict_b} == {FASTER, SLOWER}:
        return OPPOSITE
    return SAME_ONE_SIDE


def disagreement_counts(both: pd.DataFrame) -> dict[str, int]:
    """How many configs of each kind (`KINDS`, in that order, the kinds with none left out)."""
    counts = both["kind"].value_counts() if len(both) else pd.Series(dtype=int)
    return {k: int(counts[k]) for k in KINDS if k in counts}


def most_different(fleet: pd.DataFrame) -> tuple[str, str]:
    """The two groups to compare first: the pair that disagrees most, by the configs both
    measured and passed: the most configs faster on one and slower on the other, then the
    widest mean gap between their speedups (log ratio), then the most configs shared; never
    two groups that measured nothing in common while another pair did."""
    table = fleet.pivot_table(index="config", columns="group", values="speedup", aggfunc="max")
    groups = list(table.columns)
    if len(groups) < 2:
        names = list(dict.fromkeys(fleet["group"]))
        return (names[0], names[0]) if len(names) == 1 else (names[0], names[1])
    logs = table.apply(lambda c: c.map(lambda v: math.log(v) if _present(v) and v > 0
                                       else math.nan))  # fmt: skip
    best: tuple[tuple[int, float, int], str, str] | None = None
    for i, a in enumerate(groups):
        for b in groups[i + 1:]:
            pair = logs[[a, b]].dropna()
            if pair.empty:
                continue
            threshold = math.log(1 + SAME_AS_EAGER)
            opposite = int(((pair[a] > threshold) & (pair[b] < -threshold)).sum()
                           + ((pair[b] > threshold) & (pair[a] < -threshold)).sum())
            score = (opposite, float((pair[a] - pair[b]).abs().mean()), len(pair))
            if best is None or score > best[0]:
                best = (score, a, b)
    if best is None:
        return most_overlap(fleet)
    return best[1], best[2]


def log_domain(values: Iterable[Any], pad: float = 1.15) -> list[float]:
    """A log axis's domain from the data: the lowest and highest positive finite value, each
    ``pad`` times further out (so that no point sits on the frame); [1/pad, pad] without any."""
    found = [float(v) for v in values if _present(v) and math.isfinite(float(v)) and float(v) > 0]
    if not found:
        return [1 / pad, pad]
    return [min(found) / pad, max(found) * pad]


def most_overlap(fleet: pd.DataFrame) -> tuple[str, str]:
    """Two groups to compare first: the one with the most configs measured, and the other one
    sharing the most configs with it (the first two groups when nothing is shared)."""
    configs = fleet.groupby("group")["config"].apply(set)
    first = max(configs.index, key=lambda g: (len(configs[g]), g))
    others = [g for g in configs.index if g != first]
    second = max(others, key=lambda g: (len(configs[g] & configs[first]), g))
    return first, second


FAILED, FASTER, SLOWER, SAME = ("failed or rejected", "faster than eager",
                                "slower than eager", "same as eager")


def _verdict(speedup: Any) -> str:
    if not _present(speedup):
        return FAILED
    if speedup > 1 + SAME_AS_EAGER:
        return FASTER
    if speedup < 1 - SAME_AS_EAGER:
        return SLOWER
    return SAME


# -- sweeps --------------------------------------------------------------------------------------


def sweeps_frame(sweeps: list[SweepRow], names: DeviceNames | None = None) -> pd.DataFrame:
    """One row per sweep, newest first: progress (trials done of planned), best, failures; the
    device by its short id (``names``: the store's; default: from these sweeps)."""
    names = names if names is not None else DeviceNames(sweeps)
    rows = []
    for s in sweeps:
        planned = s.get("planned_trials")
        rows.append({
            "id": s["id"], "workload": s["workload"]["name"],
            "device": device_label({"device_name": s.get("device_name"),
                                    "cpu_model": (s.get("fingerprint") or {}).get("cpu_model"),
                                    "fingerprint_hash": s.get("fingerprint_hash"),
                                    "device_hash": s.get("device_hash"),
                                    "env_hash": s.get("env_hash")}, names),
            "status": s["status"], "trials": s["n_trials"], "planned": planned,
            "progress": min(s["n_trials"] / planned, 1.0) if planned else None,
            "ok": s["n_ok"], "failed": s["n_failed"], "best_ms": s.get("best_median_ms"),
            "started": s.get("started_at"), "finished": s.get("finished_at"),
            "study": s.get("study_name"), "device_hash": s.get("device_hash"),
            "env_hash": s.get("env_hash"),
        })  # fmt: skip
    columns = ["id", "workload", "device", "status", "trials", "planned", "progress", "ok",
               "failed", "best_ms", "started", "finished", "study", "device_hash",
               "env_hash"]  # fmt: skip
    frame = pd.DataFrame(rows, columns=columns)
    return frame.assign(started=utc_times(frame["started"]),
                        finished=utc_times(frame["finished"]))  # fmt: skip


def sweep_progress(records: Sequence[TrialRecord]) -> pd.DataFrame:
    """A sweep's trials in order: each one's p50 (None when it failed) and the best so far."""
    rows, best = [], math.inf
    for n, r in enumerate(records, start=1):
        median = r.get("median_ms") if r["status"] == "ok" and r.get("passed") else None
        if median:
            best = min(best, median)
        rows.append({
            "trial": n, "config": config_label(r.get("config"), r.get("config_key")),
            "outcome": outcome(r), "p50_ms": median or None,
            "best_so_far_ms": best if best < math.inf else None,
        })  # fmt: skip
    return pd.DataFrame(rows, columns=["trial", "config", "outcome", "p50_ms", "best_so_far_ms"])
