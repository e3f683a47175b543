"""Warm start from the fleet: the best configs of the same workload on the nearest fingerprints.

Nearest, in order: the same device model on another software stack (same ``device_hash``),
then another device on this stack (same ``env_hash``). Only trials of the same workload file
(name and source sha256) count, and each neighbour's best is what `advisor.recommendation.recommend`
says for it: the one answer every surface gives. A sweep enqueues these configs before any other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from advisor.config import CompileConfig
from advisor.devices import device_model
from advisor.recommendation import recommend, steady_ms
from advisor.records import Fingerprint
from advisor.rows import FingerprintRow
from advisor.search.space import Space
from advisor.units import duration_ms

if TYPE_CHECKING:
    from advisor.db.store import ResultStore

MAX_NEIGHBOURS = 3  # fingerprints whose best is tried first, at most


@dataclass(frozen=True)
class FleetPick:
    config: CompileConfig
    fingerprint_hash: str
    relation: str  # "same device, another stack" | "another device, this stack"
    device_name: str
    median_ms: float

    @property
    def reason(self) -> str:
        return (f"fleet: best on {self.device_name} ({self.relation}, fingerprint "
                f"{self.fingerprint_hash[:8]}, {duration_ms(self.median_ms)} there)")


def _relation(fp: FingerprintRow, mine: Fingerprint) -> str | None:
    if fp["fingerprint_hash"] == mine["fingerprint_hash"]:
        return None
    if fp["device_hash"] == mine["device_hash"]:
        return "same device, another stack"
    if fp["env_hash"] == mine["env_hash"]:
        return "another device, this stack"
    return None


def fleet_picks(store: ResultStore, workload: str, source_sha256: str | None,
                fingerprint: Fingerprint, space: Space) -> list[FleetPick]:
    """The nearest fingerprints' best configs that are in `space`, nearest first, one per
    config (the first neighbour that picked it)."""
    near = [(rel, fp) for fp in store.fingerprints(workload)
            if (rel := _relation(fp, fingerprint)) is not None]
    near.sort(key=lambda item: (item[0] != "same device, another stack",
                                -(item[1]["n_passed"] or 0)))
    picks: list[FleetPick] = []
    for relation, fp in near[:MAX_NEIGHBOURS]:
        records = [r for r in store.trials(workload=workload,
                                           fingerprint_hash=fp["fingerprint_hash"])
                   if source_sha256 is None
                   or (w.get("source_sha256") if (w := r.get("workload")) else None)
                   == source_sha256]
        best = recommend(workload, records, fp["fingerprint_hash"]).best if records else None
        if best is None:
            continue
        record = next(r for r in records if r["trial_uuid"] == best.trial_uuid)
        config = CompileConfig.from_dict(record["config"])
        if config in space.configs and all(p.config != config for p in picks):
            name = device_model(fp) if fp["device_name"] or fp["cpu_model"] \
                else fp["device_hash"][:8]
            picks.append(FleetPick(config, fp["fingerprint_hash"], relation, str(name),
                                   steady_ms(record)))
    return picks
