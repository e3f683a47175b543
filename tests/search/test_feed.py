"""The pooled sweep's queue (advisor.search.feed.Feeder) on a real SQLite store and Optuna study:
cheap and likely-best first, a short queue, each autotuning config after every cheaper config
(its twin among them) and never more than `MAX_EXPENSIVE_AT_ONCE` of them at once. Workers
are played by this test: it pops the queue with Optuna's own `ask` and stores records as a
worker would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support import records

from advisor.config import EAGER_FP32, CompileConfig
from advisor.db.store import ResultStore
from advisor.search.feed import (
    MAX_EXPENSIVE_AT_ONCE,
    PLAN_ATTR,
    QUEUED_AT_ATTR,
    Feeder,
    expensive,
    held_back,
)
from advisor.search.plan import BASELINE_REASON, Plan
from advisor.search.priors import twin_of
from advisor.search.space import build_space
from advisor.search.study import open_study, suggest_config, trial_params, trial_state


class Pool:
    """A sweep's store, study and feeder; `take` plays a worker popping the queue."""

    def __init__(self, tmp_path: Path, *, budgeted: bool, slots: int = 4,
                 priors: bool = True) -> None:
        helpers = records
        self.helpers = helpers
        self.url = f"sqlite:///{tmp_path / 'feed.db'}"
        self.space = build_space(("fp32", "bf16"), "cuda", {"dtype": ["fp32", "bf16"]})
        self.store = ResultStore.from_url(self.url)
        self.workload = helpers.make_workload()
        self.fingerprint = helpers.make_fingerprint()
        self.sweep_id = self.store.create_sweep(self.workload, self.fingerprint,
                                                {"device": "cuda"}, "feed", len(self.space))
        self.study = open_study(self.url, "feed")
        plan = Plan(self.space, "cuda", (), priors, 4 if budgeted else None)
        self.feeder = Feeder(self.store, self.study, plan, self.sweep_id, slots, None,
                             say=lambda text: None, full=not budgeted)
        self.n = 0

    def take(self) -> tuple[CompileConfig, Any] | None:
        if not self.study.get_trials(deepcopy=False, states=(trial_state("WAITING"),)):
            return None
        trial = self.study.ask()
        return suggest_config(trial, self.space), trial

    def finish(self, config: CompileConfig, trial: Any, median_ms: float = 1.0) -> None:
        self.n += 1
        record = self.helpers.make_record(self.n, config=config, workload=self.workload,
                                          fingerprint=self.fingerprint, median_ms=median_ms)
        self.store.add_trial(record, self.sweep_id)
        self.study.tell(trial, median_ms)

    def running_expensive(self) -> int:
        running = self.study.get_trials(deepcopy=False, states=(trial_state("RUNNING"),))
        return sum(expensive(suggest_config(t, self.space)) for t in running)


def test_a_full_sweep_is_fed_cheap_first_autotuning_configs_last(
        tmp_path: Path) -> None:
    pool = Pool(tmp_path, budgeted=False, slots=4)
    pool.feeder.open()
    first = pool.take()
    assert first is not None and first[0] == EAGER_FP32  # the baseline opens every sweep
    assert first[1].user_attrs["reason"] == BASELINE_REASON
    assert first[1].user_attrs[QUEUED_AT_ATTR] > 0
    taken: list[CompileConfig] = [first[0]]
    held: list[tuple[CompileConfig, Any]] = [first]
    finished: set[str] = set()
    for _ in range(200):  # four workers, each finishing its oldest trial in turn
        while len(held) < 4 and (got := pool.take()) is not None:
            config, trial = got
            twin = twin_of(config)
            if twin is not None:  # its twin, and every cheaper config, finished before it
                assert twin.key in finished, f"{config.label} queued before {twin.label}"
                cheap = {c.key for c in pool.space.configs if not expensive(c)}
                assert cheap <= finished, f"{config.label} queued before the cheap configs"
            taken.append(config)
            held.append(got)
            assert pool.running_expensive() <= MAX_EXPENSIVE_AT_ONCE
        if not held:
            break
        config, trial = held.pop(0)
        pool.finish(config, trial)
        finished.add(config.key)
        pool.feeder.tick()
    assert sorted(c.key for c in taken) == sorted(pool.space.keys())  # every config, once
    assert pool.study.user_attrs[PLAN_ATTR] == "closed"
    # the first wave (what four workers took before any trial finished) compiles no autotuning
    assert not any(expensive(c) for c in taken[:4])
    costly = [i for i, c in enumerate(taken) if expensive(c)]
    assert costly and min(costly) >= 4


def test_the_queue_stays_short_so_the_baseline_reorders_what_follows(tmp_path: Path) -> None:
    pool = Pool(tmp_path, budgeted=False, slots=2)
    assert pool.feeder.open() == 2  # one waiting config per worker, no more
    waiting = pool.study.get_trials(deepcopy=False, states=(trial_state("WAITING"),))
    assert len(waiting) == 2
    assert pool.study.user_attrs[PLAN_ATTR] == "pending"


def test_a_budgeted_sweep_keeps_its_cap_and_then_turns_to_the_sampler(tmp_path: Path) -> None:
    pool = Pool(tmp_path, budgeted=True, slots=8)
    pool.feeder.open()
    got = pool.take()
    assert got is not None and got[0] == EAGER_FP32
    pool.finish(*got, median_ms=5.0)
    pool.feeder.tick()
    for _ in range(20):
        got = pool.take()
        if got is None:
            pool.feeder.tick()
            if pool.take() is None and pool.feeder.state != "pending":
                break
            continue
        pool.finish(*got)
        pool.feeder.tick()
    assert len(pool.feeder.queued) <= pool.feeder.cap == 4
    assert pool.study.user_attrs[PLAN_ATTR] in ("sampler", "closed")


@pytest.mark.parametrize("priors", [True, False])
def test_without_priors_a_full_sweep_still_queues_its_whole_space(tmp_path: Path,
                                                                  priors: bool) -> None:
    space = build_space(("fp32", "bf16"), "cuda", {"dtype": ["fp32", "bf16"]})
    pool = Pool(tmp_path, budgeted=False, slots=len(space), priors=priors)
    pool.feeder.open()
    taken = []
    for _ in range(100):
        got = pool.take()
        if got is None:
            if pool.feeder.state == "closed":
                break
            pool.feeder.tick()
            continue
        taken.append(got[0])
        pool.finish(*got)
        pool.feeder.tick()
    assert sorted(c.key for c in taken) == sorted(pool.space.keys())


def test_without_priors_a_budgeted_sweep_turns_to_the_sampler_only_after_its_baseline(
        tmp_path: Path) -> None:
    """The sampler's configs pass no rule holding autotuning back: asked before the baseline
    is stored, they compile beside it and its measurement waits for them."""
    pool = Pool(tmp_path, budgeted=True, slots=8, priors=False)
    pool.feeder.open()
    assert pool.study.user_attrs[PLAN_ATTR] == "pending"  # workers wait, they do not sample
    taken = []
    while (got := pool.take()) is not None:
        taken.append(got)
    assert [c for c, _ in taken][0] == EAGER_FP32
    assert all(not c.compiled for c, _ in taken)  # the opening: eager configs only
    for config, trial in taken[1:]:  # the other eager configs end first: still no sampler turn
        pool.finish(config, trial)
        pool.feeder.tick()
        assert pool.study.user_attrs[PLAN_ATTR] == "pending"
    pool.finish(*taken[0], median_ms=5.0)
    pool.feeder.tick()
    assert pool.study.user_attrs[PLAN_ATTR] == "sampler"


def test_an_autotuning_config_the_sampler_draws_waits_as_a_queued_one_would(
        tmp_path: Path) -> None:
    """In the sampler's turn the workers ask Optuna themselves (advisor.search.fleet): a drawn
    autotuning config is measured only once its twin has finished and while fewer than
    `MAX_EXPENSIVE_AT_ONCE` autotuning configs are held."""
    pool = Pool(tmp_path, budgeted=True, slots=8, priors=False)
    configs = list(pool.space.configs)
    costly = [c for c in configs if expensive(c)]
    assert len(costly) > MAX_EXPENSIVE_AT_ONCE
    drawn = costly[0]
    twin = twin_of(drawn)
    assert twin is not None and twin in configs
    assert held_back(twin, configs, set(), []) is None  # a cheap config never waits
    reason = held_back(drawn, configs, set(), [])
    assert reason is not None and twin.label in reason
    finished = {c.key for c in configs if not expensive(c)}
    assert held_back(drawn, configs, finished, []) is None
    # the others held by workers: as many autotuning configs as may compile at once
    others = [c for c in costly if c != drawn][:MAX_EXPENSIVE_AT_ONCE]
    for config in others:
        pool.study.enqueue_trial(trial_params(config, pool.space))
        suggest_config(pool.study.ask(), pool.space)  # a worker holds it: RUNNING
    running = [suggest_config(t, pool.space) for t in pool.study.get_trials(
        deepcopy=False, states=(trial_state("RUNNING"),))]
    assert sorted(c.key for c in running) == sorted(c.key for c in others)
    reason = held_back(drawn, configs, finished, running)
    assert reason is not None and str(MAX_EXPENSIVE_AT_ONCE) in reason
    assert held_back(drawn, configs, finished, running[1:]) is None  # one ended: it may go
    # a twin outside the space (the user left its mode out) holds nothing back
    alone = [c for c in configs if c != twin]
    assert held_back(drawn, alone, set(), []) is None
