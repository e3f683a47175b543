"""The queue of a sweep shared by workers (`--jobs`, `--workers`): the plan, fed in turn.

Every pooled sweep, full or budgeted, is fed cheap and likely-best first. The sweep's parent
queues the plan's opening (the eager fp32 baseline, then the fleet's picks) and fills the other
workers' first slots with the priors' picks made before any profile is known. Once the baseline
is stored it ranks the rest by the priors, read from the baseline's profile (a budgeted sweep
up to the plan's quota; a full sweep all of its space, the priors' order first and then the
space's own, cheapest first). The queue is kept short (at most one waiting config per worker),
so that what the parent learns reorders what comes next. An autotuning config (`expensive`)
is queued only once every cheaper config has finished (its twin among them) and while fewer
than `MAX_EXPENSIVE_AT_ONCE` of them hold a worker: one max-autotune compile holds the device
lock's shared side for minutes, and every measurement waits for it (advisor.device_lock). On an
H200, with autotuning configs queued as soon as their twin had finished, the cheap configs
queued behind them waited 1.9-2.5 minutes each to measure (ResNet-50 and the reranker,
bench/results/time_to_answer_cuda_20261203T152831Z.md and ..._154650Z.md).
When the backlog is empty a budgeted sweep's workers ask the sampler themselves (Optuna's
distributed search) while the trial cap and the time budget leave room; a full sweep is closed.
The sampler's turn comes only once the baseline is stored, and an autotuning config the sampler
draws waits too (`held_back`: for its twin to finish, where the queue waits for every cheaper
config, and for fewer than `MAX_EXPENSIVE_AT_ONCE` to be held): on an H100 a budgeted sweep
without priors whose workers asked the sampler at once stored no trial at all in 86 s, the
eager ones waiting behind autotuning compiles (bench/results/search_bench_cuda_20261205T213248Z.md).
The workers read the state from the study's user attributes (`PLAN_ATTR`: pending, sampler or
closed; `DEADLINE_ATTR`; `CAP_ATTR`): while the plan is pending a worker with nothing queued
waits instead of leaving.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from advisor.config import EAGER_FP32, CompileConfig
from advisor.records import TrialRecord
from advisor.search.plan import Plan, Step
from advisor.search.priors import twin_of
from advisor.search.study import trial_params, trial_state

if TYPE_CHECKING:
    import optuna

    from advisor.db.store import ResultStore

PLAN_ATTR = "advisor_plan"
DEADLINE_ATTR = "advisor_deadline_unix"
CAP_ATTR = "advisor_max_trials"
QUEUED_AT_ATTR = "queued_unix"  # a queued trial's user attribute: when it was queued
MAX_EXPENSIVE_AT_ONCE = 2  # autotuning compiles holding a worker at once
SPACE_ORDER_REASON = "the space's order, cheapest first, after the priors' ranking"


def expensive(config: CompileConfig) -> bool:
    """An autotuning config (max-autotune, with or without CUDA graphs): its compile benchmarks
    kernel choices for minutes on a convnet, where its cheaper twin (`twin_of`) takes seconds."""
    return twin_of(config) is not None


def held_back(config: CompileConfig, space_configs: Sequence[CompileConfig], finished: set[str],
              held: Sequence[CompileConfig]) -> str | None:
    """Why a config the sampler drew must wait (None: it may be measured now): an autotuning
    config waits for its cheaper twin (when the space has it) to finish and for fewer than
    `MAX_EXPENSIVE_AT_ONCE` autotuning configs to be held (queued or running); the queue
    (`Feeder._release`) holds one back longer, until every cheaper config has finished.
    ``finished``: config keys stored in this sweep; ``held``: the configs of its waiting and
    running trials."""
    if not expensive(config):
        return None
    twin = twin_of(config)
    if twin is not None and twin in space_configs and twin.key not in finished:
        return f"its cheaper twin {twin.label} has not finished"
    busy = sum(expensive(c) for c in held)
    if busy >= MAX_EXPENSIVE_AT_ONCE:
        return f"{busy} autotuning configs hold workers already"
    return None


class Feeder:
    """Feeds a pooled sweep's queue from its `Plan`; `tick` is called while it runs.
    ``full``: the sweep measures its whole space (no sampler turn)."""

    def __init__(self, store: ResultStore, study: optuna.Study, plan: Plan, sweep_id: int,
                 slots: int, budget_s: float | None, say: Any = print, full: bool = False,
                 done: set[str] | None = None) -> None:
        self.store, self.study, self.plan = store, study, plan
        self.sweep_id, self.slots, self.budget_s, self.say = sweep_id, slots, budget_s, say
        self.full = full
        self.done = set(done or ())  # stored before this run (a resumed sweep)
        self.queued: list[Step] = []
        self.backlog: list[Step] = []
        self.ranked = 0
        self.ranked_after_baseline = False
        self.state = "pending"

    @property
    def cap(self) -> int:
        return len(self.plan.space) if self.full else self.plan.cap

    def open(self) -> int:
        """Queue the opening and the first slots' picks; returns how many configs were queued."""
        if self.budget_s is not None:  # the trials' share of the budget (the sweep's own)
            self.study.set_user_attr(DEADLINE_ATTR, time.time() + self.budget_s)
        self.study.set_user_attr(CAP_ATTR, self.cap)
        steps = [s for s in self.plan.opening() if s.config.key not in self.done]
        # the rest waits for the baseline: ranked from its profile, or (a budgeted sweep without
        # priors) the sampler's turn, whose configs no rule holds back: autotuning compiles at
        # once, and every measurement, the baseline's too, waits for the compiles in flight
        waits = any(s.config == EAGER_FP32 for s in steps) and (self.plan.priors or not self.full)
        self.backlog = steps
        self.backlog += self._ranked([], len(self.plan.space))
        if not waits:
            self._rank_rest([])
        self._release(self._records())
        self._settle()
        return len(self.queued)

    def tick(self) -> None:
        """Once the baseline is stored, rank the rest from its profile; queue what may go."""
        if self.state != "pending":
            return
        records = self._records()
        if not self.ranked_after_baseline and any(
                r["config_key"] == EAGER_FP32.key for r in records):
            self._rank_rest(records)
        self._release(records)
        self._settle()

    # -- the backlog --------------------------------------------------------------------------
    def _records(self) -> list[TrialRecord]:
        return list(self.store.trials(sweep_id=self.sweep_id))

    def _ranked(self, records: list[TrialRecord], most: int) -> list[Step]:
        exclude = {s.config.key for s in [*self.queued, *self.backlog]} | self.done | {
            r["config_key"] for r in records}
        room = min(most, self.plan.quota - self.ranked) if not self.full else most
        return self.plan.ranked(records, exclude)[:max(0, room)]

    def _rank_rest(self, records: list[TrialRecord]) -> None:
        """The backlog re-ranked from the baseline's profile (the opening's steps kept first);
        a full sweep then appends the rest of its space, cheapest first."""
        self.ranked_after_baseline = True
        self.backlog = [s for s in self.backlog if not s.reason.startswith("prior rank")]
        opening = list(self.backlog)
        ranked = self._ranked(records, len(self.plan.space))
        held = {s.config.key for s in opening} | {s.config.key for s in ranked}
        rest = []
        if self.full:
            exclude = held | self.done | {s.config.key for s in self.queued} | {
                r["config_key"] for r in records}
            rest = [Step(c, SPACE_ORDER_REASON) for c in self.plan.space.configs
                    if c.key not in exclude]
        self.backlog = opening + ranked + rest

    def _release(self, records: list[TrialRecord]) -> None:
        """Queue backlog steps in order while fewer than ``slots`` configs wait and the cap
        leaves room; an autotuning config waits for its twin and for a free expensive slot."""
        finished = self.done | {r["config_key"] for r in records}
        waiting = len(self.study.get_trials(deepcopy=False, states=(trial_state("WAITING"),)))
        busy = sum(expensive(s.config) for s in self.queued if s.config.key not in finished)
        cheap_left = any(not expensive(s.config) and s.config.key not in finished
                         for s in [*self.backlog, *self.queued])
        for step in list(self.backlog):
            if waiting >= self.slots or len(self.queued) >= self.cap:
                return
            if expensive(step.config):
                if cheap_left or busy >= MAX_EXPENSIVE_AT_ONCE:
                    continue
                busy += 1
            self.backlog.remove(step)
            self._queue(step)
            waiting += 1

    def _queue(self, step: Step) -> None:
        self.study.enqueue_trial(trial_params(step.config, self.plan.space), user_attrs={
            "queued": True, "reason": step.reason, QUEUED_AT_ATTR: time.time()})
        self.say(f"queued {step.config.label}: {step.reason}")
        self.queued.append(step)
        self.ranked += step.reason.startswith("prior rank")

    def _settle(self) -> None:
        if len(self.queued) >= self.cap:
            self.state = "closed"
        elif self.backlog or not self.ranked_after_baseline:
            self.state = "pending"
        elif self.full:
            self.state = "closed"
        else:
            self.state = "sampler"
        self.study.set_user_attr(PLAN_ATTR, self.state)


def past_deadline(study: optuna.Study) -> bool:
    deadline = study.user_attrs.get(DEADLINE_ATTR)
    return deadline is not None and time.time() >= deadline


def room_for_more(study: optuna.Study, done: set[str]) -> bool:
    """Below the sweep's trial cap, counting what is stored, running and queued."""
    cap = study.user_attrs.get(CAP_ATTR)
    if cap is None:
        return True
    held = study.get_trials(deepcopy=False, states=(trial_state("WAITING"), trial_state("RUNNING")))
    return bool(len(done) + len(held) < cap)
