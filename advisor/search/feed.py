"""The queue of a budgeted sweep shared by workers (`--jobs`, `--workers`): the plan, fed in turn.

The sweep's parent queues the plan's opening (the fleet's picks, the eager fp32 baseline) and
fills the other workers' first slots with the priors' picks made before any profile is known.
Once the baseline is stored it queues the priors' ranking, read from the baseline's profile, up to
the plan's quota; then the workers ask the sampler themselves (Optuna's distributed search) while
the trial cap and the time budget leave room. The workers read the state from the study's user
attributes (`PLAN_ATTR`: pending, sampler or closed; `DEADLINE_ATTR`; `CAP_ATTR`): while the
plan is pending a worker with nothing queued waits instead of leaving.
"""

from __future__ import annotations

import time
from typing import Any

from advisor.config import EAGER_FP32
from advisor.search.plan import Plan, Step
from advisor.search.sweep import trial_params, trial_state

PLAN_ATTR = "advisor_plan"
DEADLINE_ATTR = "advisor_deadline_unix"
CAP_ATTR = "advisor_max_trials"


class Feeder:
    """Feeds a budgeted pooled sweep's queue from its `Plan`; `tick` is called while it runs."""

    def __init__(self, store: Any, study: Any, plan: Plan, sweep_id: int, slots: int,
                 budget_s: float | None, say: Any = print) -> None:
        self.store, self.study, self.plan = store, study, plan
        self.sweep_id, self.slots, self.budget_s, self.say = sweep_id, slots, budget_s, say
        self.queued: list[Step] = []
        self.ranked = 0
        self.state = "pending"

    def open(self) -> int:
        """Queue the opening and the first slots' picks; returns how many configs were queued."""
        if self.budget_s is not None:
            self.study.set_user_attr(DEADLINE_ATTR, time.time() + self.budget_s)
        self.study.set_user_attr(CAP_ATTR, self.plan.cap)
        steps = self.plan.opening()
        waits_for_baseline = any(s.config == EAGER_FP32 for s in steps)
        spare = max(0, self.slots - len(steps)) if waits_for_baseline else self.plan.quota
        self._queue(steps)
        self._queue_ranked([], spare)
        self._settle(waits_for_baseline and self.plan.priors)
        return len(self.queued)

    def tick(self) -> None:
        """Once the baseline is stored, queue the priors' ranking read from its profile."""
        if self.state != "pending":
            return
        records = self.store.trials(sweep_id=self.sweep_id)
        if not any(r["config_key"] == EAGER_FP32.key for r in records):
            return
        self._queue_ranked(records, self.plan.quota)
        self._settle(False)

    def _queue_ranked(self, records: list[dict[str, Any]], most: int) -> None:
        exclude = {s.config.key for s in self.queued} | {r["config_key"] for r in records}
        room = min(most, self.plan.quota - self.ranked)
        steps = self.plan.ranked(records, exclude)[:max(0, room)]
        self.ranked += self._queue(steps)

    def _queue(self, steps: list[Step]) -> int:
        steps = steps[:max(0, self.plan.cap - len(self.queued))]
        for step in steps:
            self.study.enqueue_trial(trial_params(step.config, self.plan.space),
                                     user_attrs={"queued": True, "reason": step.reason})
            self.say(f"queued {step.config.label}: {step.reason}")
        self.queued += steps
        return len(steps)

    def _settle(self, pending: bool) -> None:
        if pending:
            self.state = "pending"
        else:
            self.state = "sampler" if len(self.queued) < self.plan.cap else "closed"
        self.study.set_user_attr(PLAN_ATTR, self.state)


def past_deadline(study: Any) -> bool:
    deadline = study.user_attrs.get(DEADLINE_ATTR)
    return deadline is not None and time.time() >= deadline


def room_for_more(study: Any, done: set[str]) -> bool:
    """Below the sweep's trial cap, counting what is stored, running and queued."""
    cap = study.user_attrs.get(CAP_ATTR)
    if cap is None:
        return True
    held = study.get_trials(deepcopy=False, states=(trial_state("WAITING"), trial_state("RUNNING")))
    return bool(len(done) + len(held) < cap)
