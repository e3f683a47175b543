"""The order a budgeted sweep tries configs in, each with the reason it comes when it does.

First the eager fp32 baseline (the correctness oracle, whose profile the priors read), then every
other eager config (cheap: no compile; not in a sweep that replays traffic, where an eager
replay costs as much as a compiled one's stream and steady state, and the compiled strategies are
the question), then the fleet's best configs for this workload
(`advisor.search.neighbours`), then the share of the space
the priors rank highest (`advisor.search.priors`), then whatever the Optuna sampler proposes
(`advisor.search.study.make_sampler`). Without priors (``priors=False``) only the baseline is
queued and the sampler does the rest. Pure: the caller (the sweep, or the pool's feeder) queues
the steps and measures them.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from advisor.config import EAGER_FP32, CompileConfig
from advisor.records import TrialRecord
from advisor.search.neighbours import FleetPick
from advisor.search.priors import Profile, rank
from advisor.search.space import Space

PRIOR_SHARE = 0.5  # of the space, queued in the priors' order before the sampler takes over
BASELINE_REASON = "baseline: eager fp32, the correctness oracle; its profile sets the priors"
EAGER_REASON = "cheap first: an eager dtype, seconds to measure and nothing to compile"


@dataclass(frozen=True)
class Step:
    config: CompileConfig
    reason: str


class Plan:
    """See the module docstring. `n_trials`: the sweep's cap (None: a time budget only)."""

    def __init__(self, space: Space, device: str, fleet: Sequence[FleetPick] = (),
                 priors: bool = True, n_trials: int | None = None,
                 replays: bool = False) -> None:
        self.space, self.device, self.priors = space, device, priors
        self.replays = replays  # its trials replay traffic: eager is not cheap
        self.fleet = list(fleet) if priors else []
        cap = len(space) if n_trials is None else min(n_trials, len(space))
        self.cap = cap
        self.quota = math.ceil(PRIOR_SHARE * len(space)) if priors else 0

    def opening(self) -> list[Step]:
        """What runs before the baseline's profile is known: the baseline (the correctness
        oracle, cheap, and what every speedup is measured against), then every other eager
        config of the space (seconds each, nothing to compile: under a budget, bf16 eager
        often beats fp32 eager by 2x on a CPU, and an answer without them would be "eager fp32"
        by default), then the fleet's picks."""
        steps = [Step(EAGER_FP32, BASELINE_REASON)] if EAGER_FP32 in self.space.configs else []
        if not self.replays:
            steps += [Step(c, EAGER_REASON) for c in self.space.configs
                      if not c.compiled and c != EAGER_FP32]
        queued = {s.config.key for s in steps}
        steps += [Step(p.config, p.reason) for p in self.fleet if p.config.key not in queued]
        return steps[:self.cap]

    def ranked(self, records: Iterable[TrialRecord], exclude: Collection[str | None]
               ) -> list[Step]:
        """The configs not in `exclude`, best first by the priors, read from the baseline's
        record among `records` (unknown profile while it is missing); [] without priors."""
        if not self.priors:
            return []
        records = list(records)
        baseline = next((r for r in records if r.get("config_key") == EAGER_FP32.key), None)
        profile = Profile.of(self.device, baseline)
        measured = {key: r for r in records if (key := r.get("config_key"))}
        todo = [c for c in self.space.configs if c.key not in exclude]
        return [Step(r.config, f"prior rank {i}: {profile.describe()}; {r.reason}")
                for i, r in enumerate(rank(todo, profile, measured), start=1)]


def sampler_reason(name: str) -> str:
    return f"{name} sampler: proposed after the queued configs"
