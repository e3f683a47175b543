"""Trials -> a recommendation: pooled figures per config, the policy's order, the tie rule,
noise, equivalence, a confirmation's paired figures.

The decision (`Recommendation.decision`): a simpler config (eager < default < reduce-overhead <
max-autotune-no-cudagraphs < max-autotune, then fewer graphs, then the shorter cold compile)
wins only a **tie**: paired figures (a confirmation) within `TIE_RATIO`. Configs the evidence
cannot order against the leader (unpaired figures within `TIE_RATIO`, or overlapping intervals:
the doubt set) are **equivalent** when the leader and every one of them beat the eager fp32
baseline clearly under the policy (better by more than `TIE_RATIO`, and the interval clear of
the baseline's: the policy's own figure and interval, a figure without an interval read as a
point; on paired latency figures, a paired speedup interval above 1). Then the choice does not
matter for the user, and one is picked by a stated rule: the lower cold compile (eager
compiles nothing: 0 s; an unknown cold compile of a compiled config counts last), then the
simpler (`simplicity`), then the better figure; the note names the pick, the rule and the
others with their figures. This holds on noisy and quiet timings alike: overlapping intervals
say the order is unknown either way, and when every candidate clearly beats eager fp32 the
cheaper start is the better answer, whereas "the leader stands" would rest on a point figure
the evidence does not carry. The choice **matters** when a config of the doubt set does not
clearly beat the baseline (eager fp32 itself, a config overlapping it or within `TIE_RATIO`
of it), or when there is no baseline: then the decision is **undecided** (the leader stands
and the note says so), or **undecided: noise** on noisy timings, with no pick. A short
measurement never ties and never casts doubt.

A stored confirmation (`advisor.search.confirm`) re-measured the leaders and eager fp32 in one
process, interleaved. When it covers the current leader, the `latency` and `break-even` policies
decide among the confirmed configs on the paired figures; otherwise the note says to confirm
again.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from advisor import settings
from advisor.config import EAGER_FP32, CompileConfig
from advisor.hostload import describe
from advisor.recommendation.constraints import Constraints
from advisor.recommendation.evidence import (
    NEAR_RATIO,
    Ranked,
    Recommendation,
    break_even_calls,
    deciding_ms,
    overlaps,
    rank_record,
    simplicity,
    steady_ms,
)
from advisor.recommendation.policies import TIE_RATIO, BreakEven, Policy, make_policy
from advisor.records import Confirmation, ConfirmationEntry, TrialRecord
from advisor.stats import CONFIDENCE, Stats, ordered_tail
from advisor.units import duration_ms, interval_ms

# Trials of one config whose figures lie more than this far apart were measured in different
# host regimes (a quiet run and a busy one: 75.8 us and 30.2 ms minutes apart on a loaded
# 2-core host): the config is flagged (``moved``, noisy), not silently pooled.
FAR_RATIO = 3.0
# The paired re-measurement's eager fp32 against its trials': further apart than this, and
# beyond both intervals, the host changed between the two (a busy re-measurement ran 25x slower
# than its quiet trials): the re-measurement is not used and no speedup spans the two. Between
# processes on a quiet host a median moves by up to about 1.7x (docs/performance.md). The ratio
# is $ADVISOR_REGIME_RATIO (advisor.settings, 2 by default), the one setting this module reads.


def _with_score(r: Ranked, policy: Policy) -> Ranked:
    if isinstance(policy, BreakEven):
        r = replace(r, total_s=policy.score(r))
    return replace(r, score=policy.score(r))


def _verdict(r: Ranked, leader: Ranked, policy: Policy) -> str | None:
    """How ``r`` stands against the leader: "tie" (paired figures within `TIE_RATIO`: the
    simpler may win), "undecided" (the evidence cannot order them: unpaired figures within
    `TIE_RATIO`, or overlapping intervals), or None (the leader is ahead). A short (screened)
    measurement is never a tie nor a reason for doubt."""
    if r.short:
        return None
    within = policy.within_ratio(r, leader)
    if r.confirmed and leader.confirmed:
        if within:
            return "tie"
        if policy.speedup_decides:  # paired: the speedups over the same rounds decide
            return "undecided" if overlaps(r.speedup_ci, leader.speedup_ci) else None
    if within or overlaps(policy.interval(r), policy.interval(leader)):
        return "undecided"
    return None


@dataclass(frozen=True)
class _Choice:
    best: Ranked | None
    note: str
    contenders: list[str]
    decision: str
    undecided: list[str]


def _choose(ranked: list[Ranked], policy: Policy, baseline: Ranked | None = None) -> _Choice:
    """The pick among configs already sorted by the policy. A simpler config wins only a tie
    on paired figures; configs the evidence cannot order are "equivalent" when they and the
    leader all beat ``baseline`` clearly (a pick by `_equivalence_key`, the note says which
    rule), else they leave the decision "undecided" (the leader stands, the note says so), or
    "undecided: noise" when their timings are noisy (no pick). The contenders: keys of the
    leader and the configs tied with it, undecided against it or within `NEAR_RATIO` of it
    (empty when there are none besides the leader)."""
    if not ranked:
        return _Choice(None, "", [], "none", [])
    leader = ranked[0]
    verdicts = {id(r): v for r in ranked[1:] if (v := _verdict(r, leader, policy)) is not None}
    near = [r.config_key for r in ranked[1:] if id(r) in verdicts
            or (not r.short and policy.within_ratio(r, leader, NEAR_RATIO))]
    contenders = [leader.config_key, *near] if near else []
    ties = [r for r in ranked if verdicts.get(id(r)) == "tie"]
    doubt = [r for r in ranked if verdicts.get(id(r)) == "undecided"]
    best = min([leader, *ties], key=simplicity)
    alike = [leader, *ties, *doubt]
    if doubt and baseline is not None and all(_clearly_beats(r, baseline, policy) for r in alike):
        pick = min(alike, key=_equivalence_key)  # stable: among equals, the better figure
        return _Choice(pick, _equivalent_note(pick, alike, baseline, policy), contenders,
                       "equivalent", [r.label for r in doubt])
    if doubt and (leader.noisy or any(r.noisy for r in doubt)):
        return _Choice(None, _doubt_note(leader, doubt, policy, noise=True), contenders,
                       "undecided: noise", [r.label for r in doubt])
    notes = [_tie_note(best, leader, policy)] if best is not leader else []
    if doubt:
        notes.append(_doubt_note(leader, doubt, policy, noise=False))
    decision = "undecided" if doubt else ("tie" if best is not leader else "decided")
    return _Choice(best, " ".join(notes), contenders, decision, [r.label for r in doubt])


def _span(r: Ranked, policy: Policy) -> list[float]:
    """The policy's interval of ``r``, or its figure as a point where it has none."""
    assert r.score is not None
    return policy.interval(r) or [r.score, r.score]


def _clearly_beats(r: Ranked, baseline: Ranked, policy: Policy) -> bool:
    """Whether ``r`` beats the eager fp32 ``baseline`` beyond doubt under ``policy``: by more
    than `TIE_RATIO`, and on paired latency figures with its paired speedup interval above 1,
    otherwise with its interval clear of the baseline's (a figure without one: a point)."""
    if r.config_key == baseline.config_key or baseline.score is None:
        return False
    if policy.within_ratio(baseline, r):  # the baseline is within TIE_RATIO of r, or ahead
        return False
    if r.confirmed and baseline.confirmed and policy.speedup_decides and r.speedup_ci:
        return r.speedup_ci[0] > 1
    mine, base = _span(r, policy), _span(baseline, policy)
    return mine[0] > base[1] if policy.higher_is_better else mine[1] < base[0]


def _cold_s(r: Ranked) -> float:
    """The cold compile the equivalence rule compares: eager compiles nothing; an unknown
    cold compile of a compiled config counts last."""
    if not r.config.compiled:
        return 0.0
    return float("inf") if r.cold_compile_s is None else r.cold_compile_s


def _equivalence_key(r: Ranked) -> tuple[float, ...]:
    """The stated rule among equivalent configs: the lower cold compile, then the simpler."""
    return (_cold_s(r), *simplicity(r))


def _equivalent_note(pick: Ranked, alike: list[Ranked], baseline: Ranked,
                     policy: Policy) -> str:
    """Which equivalent config is picked, by which rule, and the others with their figures."""
    others = [r for r in alike if r is not pick]
    if all(_cold_s(pick) < _cold_s(r) for r in others):
        rule = "the lower cold compile"
    elif all(simplicity(pick) < simplicity(r) for r in others if _cold_s(r) == _cold_s(pick)):
        rule = "simplicity (the same cold compile, a simpler config)"
    else:
        rule = "the better figure (the same cold compile, equally simple)"
    verb = "is" if len(others) == 1 else "are"
    tail = ("" if all(r.confirmed for r in alike) else
            "; `advisor recommend --confirm` measures them side by side")
    return (f"equivalent: {_shown(pick, policy, cold=True)} is picked by {rule}; "
            f"{'; '.join(_shown(r, policy, cold=True) for r in others)} {verb} equivalent to it "
            f"within the noise (the evidence cannot order them: within {TIE_RATIO:.0%} of the "
            f"fastest or overlapping intervals), and each beats eager fp32 "
            f"({_shown(baseline, policy, named=False)}) clearly, so the choice does not matter"
            f"{tail}")


def _tie_note(best: Ranked, leader: Ranked, policy: Policy) -> str:
    """Why ``best`` is preferred over the fastest, ``leader``: a tie on paired figures."""
    return (f"{best.label} ({policy.figure(best)}) is within {TIE_RATIO:.0%} of the fastest, "
            f"{leader.label} ({policy.figure(leader)}), on paired figures (measured "
            f"interleaved in one process) and simpler, so it is preferred")


def _shown(r: Ranked, policy: Policy, *, cold: bool = False, named: bool = True) -> str:
    """A config with its figure: ``label (figure, 95% CI low-high unit[, paired][, noisy])``;
    ``cold``: its cold compile too; not ``named``: the parenthesised figures alone."""
    ci = policy.interval(r)
    text = policy.figure(r)
    if ci:
        shown = (interval_ms(ci[0], ci[1]) if policy.unit == "ms" else
                 interval_ms(ci[0] * 1000, ci[1] * 1000) if policy.unit == "s" else
                 f"{ci[0]:.3g}-{ci[1]:.3g} {policy.unit}")
        text += f", {CONFIDENCE:.0%} CI {shown}"
    if r.confirmed:
        text += ", paired"
    if r.noisy:
        text += ", noisy"
    if cold:
        text += ("; no compile" if not r.config.compiled else
                 "; cold compile unknown" if r.cold_compile_s is None else
                 f"; {r.cold_compile_s:.1f} s cold compile")
    return f"{r.label} ({text})" if named else text


def _doubt_note(leader: Ranked, doubt: list[Ranked], policy: Policy, noise: bool) -> str:
    """Which configs the evidence cannot order against the leader, and why."""
    others = "; ".join(_shown(r, policy) for r in doubt)
    head = "undecided: noise" if noise else "undecided"
    tail = ("no pick on noisy timings: measure again on a quiet host, or run `advisor "
            "recommend --confirm`" if noise else
            f"{leader.label} stays the pick on its figure; `advisor recommend --confirm` "
            "measures them side by side")
    return (f"{head}: the fastest, {_shown(leader, policy)}, cannot be told apart from {others} "
            f"(within {TIE_RATIO:.0%} on unpaired figures or overlapping intervals); {tail}")


def recommend(
    workload: str,
    records: Sequence[TrialRecord],
    fingerprint_hash: str | None = None,
    *,
    policy: str = "latency",
    calls_per_process: int | None = None,
    constraints: Constraints | None = None,
    confirmation: Confirmation | None = None,
) -> Recommendation:
    """The recommendation under ``policy`` over ``records`` (trials of one workload on one
    fingerprint), optionally decided on a stored ``confirmation``'s paired figures."""
    pol = make_policy(policy, calls_per_process)
    constraints = constraints or Constraints()
    ok = [r for r in records if r["status"] == "ok" and r.get("median_ms")]
    passed = [r for r in ok if r.get("passed")]
    calls = calls_per_process
    base_recs = [r for r in ok if r["config"] == EAGER_FP32.to_dict()]
    baseline = _pooled(base_recs, None, calls) if base_recs else None
    base_ms = baseline.median_ms if baseline else None
    if baseline is not None:
        baseline = _pooled(base_recs, base_ms, calls)
    excluded: dict[str, int] = {}
    by_key: dict[str | None, list[TrialRecord]] = {}
    for rec in passed:  # one entry per config: its pooled evidence, never its best trial
        by_key.setdefault(rec["config_key"], []).append(rec)
    pooled = [_pooled(group, base_ms, calls) for group in by_key.values()]
    pooled = _against_best_eager(pooled, base_ms)
    candidates = []
    for r in pooled:
        why = constraints.violation(r)
        if why is None:
            candidates.append(r)
        else:
            excluded[why] = excluded.get(why, 0) + 1
    scored = [_with_score(r, pol) for r in candidates]
    unscorable = [r for r in scored if r.score is None]
    if unscorable:
        excluded[f"no {policy} figure"] = len(unscorable)
    ranked = sorted((r for r in scored if r.score is not None), key=pol.sort_key)
    if baseline is not None:
        baseline = _with_score(baseline, pol)
    source = _source(baseline)
    conf_note, conf_info = "", None
    if confirmation is not None:
        ranked, baseline, conf_info, conf_note = _confirmed(ranked, baseline, confirmation, pol)
        if conf_info["used"]:
            source = (f"paired confirmation, {confirmation.get('rounds')} rounds; re-measured "
                      "configs: paired per-round ratios")
    pool = [r for r in ranked if r.confirmed] if conf_info and conf_info["used"] else ranked
    choice = _busy(pool, baseline, workload) or _choose(pool, pol, baseline)
    if conf_info and conf_info.get("regime") and choice.decision == "decided":
        choice = replace(choice, decision="undecided: host changed")
    moved = "; ".join(
        f"{r.label}'s {r.n_trials} trials lie {r.moved[1] / r.moved[0]:,.0f}x apart "
        f"({duration_ms(r.moved[0])} to {duration_ms(r.moved[1])}): measured in different host "
        "regimes, so its pooled figure is flagged noisy"
        for r in [*ranked, *([baseline] if baseline else [])] if r.moved and not r.confirmed)
    # each note a sentence of its own
    note = " ".join(n if n.endswith(".") else n + "."
                    for n in (choice.note, conf_note, moved) if n)
    eager = [r for r in ranked if not r.config.compiled]
    made = Recommendation(
        workload=workload, fingerprint_hash=fingerprint_hash, best=choice.best, baseline=baseline,
        ranked=ranked, n_trials=len(records),
        n_failed=sum(1 for r in records if r["status"] == "failed"),
        n_pruned=sum(1 for r in records if r["status"] == "pruned"),
        n_rejected=len(ok) - len(passed), note=note, policy=policy,
        calls_per_process=calls_per_process,
        constraints={k: v for k, v in asdict(constraints).items() if v is not None},
        n_excluded=sum(excluded.values()), excluded=excluded, confirmation=conf_info,
        contenders=choice.contenders, decision=choice.decision, undecided=choice.undecided,
        eager_best=min(eager, key=lambda r: r.median_ms) if eager else None,
        baseline_source=source,
        compiled_measured=len({r["config_key"] for r in records
                               if CompileConfig.from_dict(r["config"]).compiled}),
    )
    return replace(made, headline=pol.headline(made)) if made.best is not None else made


def _busy(pool: list[Ranked], baseline: Ranked | None, workload: str) -> _Choice | None:
    """No pick when a figure that could decide was measured on a busy host only (contended:
    advisor.hostload), whichever it is: contention slows a figure by anything up to 25x, so
    the leader's lead, a rival's place and the baseline's speedup all rest on it."""
    busy = [r for r in [*pool, *([baseline] if baseline is not None else [])] if r.contended]
    if not busy:
        return None
    worst = busy[0]
    labels = list(dict.fromkeys(r.label for r in busy))  # the baseline may be in the pool too
    names = ", ".join(labels)
    note = (f"cannot decide here: host busy ({worst.host} while {names} measured); no pick "
            "from contended figures: measure again on a quiet host (the same `advisor sweep "
            f"FILE` again, or `advisor recommend {workload} --confirm`)")
    return _Choice(None, note, [], "undecided: host busy", labels)


def cover(rec: Recommendation, planned: Sequence[CompileConfig],
          records: Sequence[TrialRecord]) -> Recommendation:
    """``rec`` with its coverage: the configs its sweeps planned (``planned``) that none of
    ``records`` measured (a failed, rejected, screened or pruned trial measured its config:
    it is out by a reason or a bound). "Decided" (or a tie, or an equivalence) is earned only
    when none is left: an unmeasured config could still beat the pick, so the answer is then
    "provisional", the best the measured configs support, saying what it rests on without."""
    measured = {r["config_key"] for r in records if r["status"] != "stopped"}
    pick = rec.best or rec.leader
    for r in records:  # a stopped trial is out only by a bound that puts it above the pick
        stopped = r.get("stopped")
        bound = stopped["lower_bound_ms"] if stopped else None
        if r["status"] == "stopped" and pick is not None and bound and bound > pick.median_ms:
            measured.add(r["config_key"])
    keys = {c.key: c for c in planned}
    left = [c for key, c in keys.items() if key not in measured]
    decision = rec.decision
    if left and decision in ("decided", "tie", "equivalent"):
        decision = "provisional"
    return replace(rec, planned=len(keys), unmeasured=[c.label for c in left],
                   unmeasured_compiled=sum(1 for c in left if c.compiled), decision=decision)


def _paired(entry: ConfirmationEntry | None) -> float | None:
    return entry.get("speedup") if entry else None


def _source(baseline: Ranked | None) -> str:
    if baseline is None:
        return ""
    what = "steady-state median" if baseline.figure == "steady" else "process-life cost"
    if baseline.n_trials == 1:
        return f"{what} of 1 trial"
    return f"median of {baseline.n_trials} trials' {what}s"


def _pooled(recs: list[TrialRecord], base_ms: float | None, calls: int | None) -> Ranked:
    """One config's figure from all its trials: the median of the full trials' deciding figures
    (screened trials only when there is nothing else: then ``short``), its interval the span of
    their intervals, and the trial nearest that median for the other facts.

    The steady-state median (``steady_ms``), ``p90_ms`` and ``p99_ms`` are pooled the same way,
    each the median over the same trials, never the representative trial's own: trials that
    disagree (1 and 47 ms pool to 24 ms) would put its tail under the pooled median. Each
    trial's p99 >= p90 >= median, and medians keep that order, so measured trials need nothing
    more; a trial without a percentile, or a record that breaks the order, is raised to it
    (`advisor.stats.ordered_tail`). Not the maximum over the trials: it grows with their number,
    and the tail policy ranks on p99. Where the figure is a process-life cost (a mean over
    start-up, new shapes and the steady state, not a median), the percentiles stay the steady
    state's, ordered against ``steady_ms``: a rare compile raises that mean above a p99 that is
    true, and raising the p99 to it would show a figure nobody measured."""
    full = [r for r in recs if not r.get("screened_out")]
    use = full or recs
    quiet = [r for r in use if not _contended(r)]  # a quiet host's figures supersede the rest
    busy = not quiet
    use = quiet or use
    figures = sorted(deciding_ms(r, calls) for r in use)
    moved = [figures[0], figures[-1]] if figures[0] > 0 and (
        figures[-1] / figures[0] > FAR_RATIO) else None
    figure = statistics.median(figures)
    steady = statistics.median(steady_ms(r) for r in use)
    tails = [[float(v) for r in use if (v := r.get("p90_ms")) is not None],
             [float(v) for r in use if (v := r.get("p99_ms")) is not None]]
    p90, p99 = ordered_tail(steady, *(statistics.median(t) if t else None for t in tails))
    rep = min(use, key=lambda r: abs(deciding_ms(r, calls) - figure))
    one = rank_record(rep, base_ms, calls)
    if len(use) == 1:
        ci = one.median_ci_ms
    elif one.figure == "process":
        ci = [figures[0], figures[-1]]
    else:
        lows = [float((r.get("median_ci_ms") or [deciding_ms(r, calls)])[0]) for r in use]
        highs = [float((r.get("median_ci_ms") or [0, deciding_ms(r, calls)])[1]) for r in use]
        ci = [min(lows), max(highs)]
    return replace(
        one, median_ms=figure, median_ci_ms=ci, n_trials=len(use), short=not full,
        steady_ms=steady, p90_ms=p90, p99_ms=p99,
        noisy=any(bool(r.get("noisy")) for r in use) or moved is not None,
        contended=busy, host=_host_of(use) if busy else "", moved=moved,
        speedup=base_ms / figure if base_ms and figure else None,
        break_even_calls_fp32=_pays_off(one, figure, base_ms),
        break_even_calls=_pays_off(one, figure, base_ms),
    )


def _contended(rec: TrialRecord) -> bool:
    host = rec.get("host")
    return bool(host and host.get("contended"))


def _host_of(recs: Sequence[TrialRecord]) -> str:
    """The busiest host the records were measured on, in words (advisor.hostload)."""
    hosts = [h for r in recs if (h := r.get("host"))]
    return describe(max(hosts, key=lambda h: h["others_cores"])) if hosts else ""


def _pays_off(r: Ranked, figure_ms: float, eager_ms: float | None) -> int | None:
    if not r.config.compiled:
        return None
    return break_even_calls(None if r.figure == "process" else r.cold_compile_s, figure_ms,
                           eager_ms)


def _against_best_eager(ranked: list[Ranked], base_ms: float | None) -> list[Ranked]:
    """Break-even against the fastest eager config (bf16 eager often beats fp32 eager: that is
    what compiling has to pay back), with eager fp32's beside it."""
    eager = [r.median_ms for r in ranked if not r.config.compiled]
    best_eager = min([*eager, *([base_ms] if base_ms else [])], default=None)
    return [replace(r, break_even_calls=_pays_off(r, r.median_ms, best_eager)) for r in ranked]


def _regime_change(baseline: Ranked | None, entry: ConfirmationEntry | None) -> str:
    """Why the paired re-measurement and the trials ran in two host regimes ("" when they did
    not): eager fp32's paired median and its trials' further apart than $ADVISOR_REGIME_RATIO and
    beyond both intervals. Then no speedup spans the two and the paired figures are not used."""
    if baseline is None or entry is None or not entry.get("median_ms"):
        return ""
    paired, trials = entry["median_ms"], baseline.median_ms
    ratio = max(paired, trials) / min(paired, trials)
    if ratio <= settings.regime_ratio() or overlaps(baseline.median_ci_ms or [trials, trials],
                                         entry.get("median_ci_ms") or [paired, paired]):
        return ""
    return (f"the host changed between the trials and the paired re-measurement: eager fp32 "
            f"measured {duration_ms(trials)} in its trials and {duration_ms(paired)} paired "
            f"({ratio:.1f}x apart, beyond both intervals), so no speedup spans the two and the "
            "paired figures are not used; measure again on a quiet host (`advisor recommend "
            "--confirm`)")


def _confirmed(
    ranked: list[Ranked], baseline: Ranked | None, confirmation: Confirmation, pol: Policy
) -> tuple[list[Ranked], Ranked | None, dict[str, Any], str]:
    """Ranked configs with the confirmation's paired figures where it measured them."""
    entries = {
        e["config_key"]: e for e in confirmation.get("entries", []) if e.get("median_ms")
    }
    info = {
        "uuid": confirmation.get("uuid"), "created_at": confirmation.get("created_at"),
        "rounds": confirmation.get("rounds"), "method": confirmation.get("method"),
        "configs": [e["label"] for e in confirmation.get("entries", []) if e.get("label")],
        "used": False,
    }
    if not pol.paired:
        return ranked, baseline, info, (
            f"the confirmation measured medians; the {pol.name} policy uses the sweep's figures")
    if not ranked or ranked[0].config_key not in entries:
        leader = ranked[0].label if ranked else "?"
        return ranked, baseline, info, (
            f"the stored confirmation does not include the current leader ({leader}); "
            "run `advisor recommend --confirm` again")

    eager_entry = entries.get(EAGER_FP32.key)
    base_ms = eager_entry["median_ms"] if eager_entry else None
    host = eager_entry.get("host") if eager_entry else None
    if host and host.get("contended"):
        return ranked, baseline, info, (
            f"the paired re-measurement ran on a busy host ({describe(host)}), so it is not "
            "used; run `advisor recommend --confirm` on a quiet host")
    changed = _regime_change(baseline, eager_entry)
    if changed:
        info["regime"] = changed
        return ranked, baseline, info, changed

    def apply(r: Ranked) -> Ranked:
        e = entries.get(r.config_key)
        if e is None:
            return r
        # the paired median replaces the pooled one: the tails never under it
        p90, p99 = ordered_tail(e["median_ms"], e.get("p90_ms", r.p90_ms),
                                e.get("p99_ms", r.p99_ms))
        out = replace(
            r, median_ms=e["median_ms"], median_ci_ms=e.get("median_ci_ms"),
            p90_ms=p90, p99_ms=p99,
            speedup_ci=e.get("speedup_ci"), confirmed=True, short=False,
            contended=False, host="", moved=None,
            noisy=any(Stats(s).noisy for s in e.get("samples_ms") or [] if s),
            n_trials=r.n_trials,
        )
        return out

    ranked = [apply(r) for r in ranked]
    if baseline is not None:
        baseline = apply(baseline)
        base_ms = baseline.median_ms
    # One baseline figure for the whole table: every speedup and break-even against it.
    # (a confirmed row's speedup is its paired one: the median of per-round ratios against
    # the same eager fp32 rounds, which stays inside its interval)
    ranked = [_with_score(replace(
        r, speedup=_paired(entries.get(r.config_key)) if r.confirmed
        else (base_ms / r.median_ms if base_ms else None),
        break_even_calls_fp32=_pays_off(r, r.median_ms, base_ms),
    ), pol) for r in _against_best_eager(ranked, base_ms)]
    if baseline is not None:
        baseline = _with_score(replace(baseline, speedup=1.0 if base_ms else None), pol)
    confirmed = sorted((r for r in ranked if r.confirmed), key=pol.sort_key)
    ranked = confirmed + [r for r in ranked if not r.confirmed]
    info["used"] = True
    rounds = confirmation.get("rounds")
    return ranked, baseline, info, (
        f"paired figures: {len(confirmed)} configs re-measured in one process, "
        f"interleaved over {rounds} rounds with eager fp32")
