"""What is recommended here: the one answer every surface shows.

`answer(store, workload, fingerprint_hash)` reads every trial of one workload on one fingerprint
and the newest stored confirmation of it, and decides with `advisor.recommendation.recommend`
(pooled figures per config, paired figures first, the tie rule, noise). The sweep's final
table, `advisor list`, `show`, `recommend`, `compare`, every dashboard page and `advisor.apply`
call it; none of them decides on its own figures. `answers(store, workload)` is the same per
fingerprint the workload was measured on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from advisor.config import CompileConfig
from advisor.recommendation import Constraints, Recommendation, cover, recommend
from advisor.records import Confirmation, TrialRecord
from advisor.rows import SweepRow


class Store(Protocol):
    """What the recommendation package reads of a store (`advisor.db.ResultStore` is one)."""

    def trials(self, *, workload: str | None = None,
               fingerprint_hash: str | None = None) -> Sequence[TrialRecord]: ...

    def confirmations(self, workload: str, fingerprint_hash: str | None = None,
                      limit: int | None = None) -> Sequence[Confirmation]: ...

    def sweeps(self, workload: str | None = None) -> Sequence[SweepRow]: ...


def answer(
    store: Store,
    workload: str,
    fingerprint_hash: str | None,
    *,
    policy: str = "latency",
    calls_per_process: int | None = None,
    constraints: Constraints | None = None,
    records: Sequence[TrialRecord] | None = None,
) -> Recommendation:
    """The recommendation for ``workload`` on ``fingerprint_hash`` from the store (``records``:
    that workload's trials on that fingerprint, when the caller has read them already)."""
    if records is None:
        records = store.trials(workload=workload, fingerprint_hash=fingerprint_hash)
    found = store.confirmations(workload, fingerprint_hash, limit=1) if fingerprint_hash else []
    rec = recommend(workload, records, fingerprint_hash, policy=policy,
                    calls_per_process=calls_per_process, constraints=constraints,
                    confirmation=found[0] if found else None)
    return cover(rec, planned(store, workload, fingerprint_hash), records)


def planned(store: Store, workload: str, fingerprint_hash: str | None) -> list[CompileConfig]:
    """Every config a sweep of ``workload`` on ``fingerprint_hash`` set out to measure (the
    union of their spaces, as stored with each sweep's settings)."""
    configs: dict[str, CompileConfig] = {}
    for sweep in store.sweeps(workload=workload):
        if sweep["fingerprint_hash"] != fingerprint_hash:
            continue
        for data in (sweep["settings"] or {}).get("space") or []:
            config = CompileConfig.from_dict(data)
            configs.setdefault(config.key, config)
    return list(configs.values())


def pick_label(rec: Recommendation) -> str:
    """The pick in a few words: its label, or why there is none (``undecided: noise``)."""
    if rec.best is not None:
        # an answer short of its coverage says so wherever its pick is shown in brief
        return rec.best.label + (" (provisional)" if rec.decision == "provisional" else "")
    if rec.decision.startswith("undecided: "):
        return rec.decision
    return "none"
