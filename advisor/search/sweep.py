"""A sweep: search the configs of one workload on one device, with Optuna, one child per trial.

The Optuna study lives in the results database (Optuna's RDB storage on the same URL:
`advisor.search.study`), so a sweep can be resumed and `optuna-dashboard <url>` can open it. The
eager fp32 baseline runs first. When the space fits the trial budget every config is measured (in
order, cheapest first); otherwise Optuna's TPE picks the next config. Objective: steady-state
median latency; a trial that fails correctness or quality is infeasible (an Optuna constraint); a
failed trial is stored with its reason and the sweep goes on; a replay proven worse than the best
finished one stops early (`prune_bar`) and is stored with its bound, told PRUNED. SIGINT/SIGTERM
kill the running trial, keep every finished one and mark the sweep interrupted; `resume=True`
continues it without re-running a config. Once the trials are done, the leader and the configs near
it are re-measured side by side in one child, and a second process compiling from the recommended
config's kept cache measures its warm start (every compiled config's with ``warm_all``): beside
that re-measurement for the leader, after it when the re-measurement picks another config
(those steps: advisor.search.closing).
"""

from __future__ import annotations

import contextlib
import logging
import signal
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from advisor import sizing
from advisor.config import EAGER_FP32, CompileConfig
from advisor.db.spill import mark_ended, spill_dir, store_spilled, store_trial
from advisor.errors import ConfigError, StoreError
from advisor.recommendation import Recommendation, deciding_ms, steady_ms
from advisor.recommendation.answers import answer
from advisor.records import Fingerprint, PruneBar, TrialRecord, WorkloadInfo
from advisor.search.closing import AfterTrials, to_confirm
from advisor.search.heartbeat import sweep_heartbeat
from advisor.search.launcher import Launcher, Probe
from advisor.search.neighbours import fleet_picks
from advisor.search.plan import Plan, sampler_reason
from advisor.search.request import SweepSettings
from advisor.search.resume import RESUMABLE, study_of
from advisor.search.space import Space
from advisor.search.study import (
    fail_orphans,
    held_configs,
    open_study,
    suggest_config,
    tell_outcome,
    trial_params,
    trial_state,
)
from advisor.serving import DEFAULT_CALLS_PER_PROCESS, decides
from advisor.workload import DescribedWorkload

if TYPE_CHECKING:
    import optuna

    from advisor.db.store import ResultStore

log = logging.getLogger(__name__)
MAX_ASKS_PER_TRIAL = 50  # TPE proposals of measured or out-of-space configs before falling back
# Fleet workers beat every $ADVISOR_HEARTBEAT_S while they hold a trial; a trial without a beat
# for $ADVISOR_HEARTBEAT_GRACE_S is stale and queued again. The parent of a running sweep
# refreshes the sweep row's heartbeat every $ADVISOR_SWEEP_HEARTBEAT_S; readers report a running
# sweep without one for $ADVISOR_SWEEP_DEAD_AFTER_S as dead (advisor.settings).
# A replay is stopped (status "pruned") once its process-life cost is proven above (1 + this) x
# the best finished trial's so far (`prune_bar`): a slack for the noise between two processes'
# start-ups and new-shape compiles (docs/shapes.md, "Replays pruned honestly").
PRUNE_MARGIN = 0.10
# A budget is the time the user waits, the steps after the trials included: trials stop starting,
# and the trials still running are stopped, once less than this share of it is left (when those
# steps are due), and every step after the trials runs only in what is left of it.
AFTER_TRIALS_SHARE = 0.2
# The eager fp32 baseline runs first, within this share of the budget (its replay sized to it and
# stopped at its end: advisor.sizing.BASELINE_SHARE), so that the trials after it keep most of the
# budget whatever the baseline costs on this host; every speedup is against it.
BASELINE_SHARE = sizing.BASELINE_SHARE


class Observer(Protocol):
    """What a sweep reports as it goes (the CLI draws a progress bar from it)."""

    def started(self, sweep_id: int, planned: int, done: int, budget_s: float | None) -> None: ...
    def trial_started(self, config: CompileConfig) -> None: ...
    def phase(self, name: str) -> None: ...
    def trial_progress(self, info: Mapping[str, Any]) -> None: ...
    def notice(self, text: str) -> None: ...
    def trial_finished(self, record: TrialRecord, best_ms: float | None) -> None: ...


class QuietObserver:
    def started(self, sweep_id: int, planned: int, done: int, budget_s: float | None) -> None:
        pass

    def trial_started(self, config: CompileConfig) -> None:
        pass

    def phase(self, name: str) -> None:
        pass

    def trial_progress(self, info: Mapping[str, Any]) -> None:
        """A running trial's progress, every few seconds (advisor.child.measure.Ticker's
        ``phase``, ``done`` of ``total`` ``unit``, ``phase_s``, ``elapsed_s``)."""

    def notice(self, text: str) -> None:
        pass

    def trial_finished(self, record: TrialRecord, best_ms: float | None) -> None:
        pass


@dataclass
class SweepOutcome:
    sweep_id: int
    status: str  # finished | interrupted
    records: list[TrialRecord]
    recommendation: Recommendation
    fingerprint: Fingerprint
    study_name: str
    signum: int | None = None  # the signal that interrupted it (exit code 128 + signum)
    # what the answer rests on without: configs of the space not measured and steps not run,
    # and why (the budget ended, the user stopped it); empty when nothing was left out
    unmeasured: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    stopped_by: str = ""  # "budget" | "interrupt" | ""
    budget_s: float | None = None  # the time budget it ran with (None: none)


class Sweeper:
    """Runs one sweep; see the module docstring."""

    def __init__(self, store: ResultStore, loaded: DescribedWorkload, space: Space,
                 settings: SweepSettings, launcher: Launcher | None = None,
                 observer: Observer | None = None, probe: Probe | None = None,
                 finishing: Callable[[SweepOutcome], SweepOutcome] | None = None) -> None:
        """`probe`: the device's probe, started ahead (`advisor.search.launcher.Probe`); else the
        sweep probes when it opens. `finishing`: a last step of a finished sweep (the caller's
        --confirm, which re-measures the top configs paired, in place of the sweep's own paired
        re-measurement), run before its row is marked finished (`close`)."""
        self.finishing = finishing
        self.store = store
        self.probe = probe
        self.loaded = loaded
        self.space = space
        self.settings = settings
        self.launcher = launcher or Launcher(timeout_s=settings.timeout_s)
        self.observer = observer or QuietObserver()
        self.interrupted = False
        self.signum: int | None = None  # the signal that interrupted the sweep
        self.plan: Plan | None = None  # a budgeted sweep's order, set when it runs
        self._sweep_id = 0
        self.deadline: float | None = None  # time.monotonic() when a budget ends
        self.budget_ended = False  # a trial or step was cut short (or skipped) by the budget
        self.left_out: list[str] = []  # steps after the trials that the budget left out

    # -- set-up ---------------------------------------------------------------------------
    def _workload_dict(self) -> WorkloadInfo:
        wl = self.loaded.workload
        return {"name": wl.name, "path": str(self.loaded.path),
                "source_sha256": self.loaded.source_sha256, "info": {}}

    def _open(self, fingerprint: Fingerprint, resume: bool | int) -> tuple[int, str]:
        """The sweep's id and study: a new one, or (``resume``) the newest unfinished one on
        this device, or the one whose id ``resume`` is (an int, not a bool)."""
        name = self.loaded.workload.name
        if resume:
            candidates = [
                s for s in self.store.sweeps(workload=name)
                if s["status"] in RESUMABLE
                and s.get("fingerprint_hash") == fingerprint["fingerprint_hash"]
                and (isinstance(resume, bool) or s["id"] == resume)
            ]
            if not candidates:
                raise ConfigError(
                    f"no interrupted sweep of {name} on this device to resume; "
                    "run it without --resume"
                )
            sweep = max(candidates, key=lambda s: s["id"])
            log.info("resuming sweep %d (%s; the newest of %d unfinished on this fingerprint)",
                     sweep["id"], sweep["status"], len(candidates))
            self.store.finish_sweep(sweep["id"], "running")
            return sweep["id"], study_of(sweep)
        study_name = f"advisor-{name}-{fingerprint['fingerprint_hash']}-{uuid.uuid4().hex[:8]}"
        planned = self._planned()
        settings = {**self.settings.to_dict(), "space": [c.to_dict() for c in self.space.configs]}
        sweep_id = self.store.create_sweep(
            self._workload_dict(), fingerprint, settings, study_name, planned
        )
        return sweep_id, study_name

    def _planned(self) -> int:
        n = self.settings.n_trials
        return len(self.space) if n is None else min(n, len(self.space))

    def prepare(self, resume: bool | int = False) -> tuple[Fingerprint, int, str]:
        """Probe the device and open (or reopen) the sweep: (fingerprint, sweep id, study name);
        a reopened sweep first stores the trials it spilled (`advisor.db.spill`)."""
        fingerprint = (self.probe.result() if self.probe is not None
                       else self.launcher.probe(self.settings.device))
        sweep_id, study_name = self._open(fingerprint, resume)
        # another database's spills are left, said in one line (advisor.db.spill)
        spilled = store_spilled(self.store, sweep_id, self.observer.notice) if resume else 0
        if spilled:  # advisor.db.spill: trials measured while the database was locked
            self.observer.notice(f"stored {spilled} measured trial(s) this sweep kept in "
                                 f"{spill_dir(self.store.url)} while its database was locked")
        return fingerprint, sweep_id, study_name

    # -- the loop ---------------------------------------------------------------------------
    def run(self, resume: bool | int = False) -> SweepOutcome:
        fingerprint, sweep_id, study_name = self.prepare(resume)
        study = open_study(self.store.url, study_name, self.settings.seed,
                           sampler=self.settings.sampler)
        orphans = fail_orphans(study) if resume else 0
        # a config a live worker of this sweep still measures is left to it (advisor.db.studies)
        done = set(self.store.config_keys_done(sweep_id)) | (held_configs(study) if resume
                                                             else set())
        if resume:
            log.info("sweep %d resumed: %d configs stored already, %d trials its last run left "
                     "running marked failed (measured again)", sweep_id, len(done), orphans)
        planned = self._planned()
        self._sweep_id = sweep_id
        self.plan = self.make_plan(fingerprint) if self.settings.budgeted else None
        self.observer.started(sweep_id, planned, len(done & set(self.space.keys())),
                              self.settings.budget_s)
        previous = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        self.start_budget()
        beating = sweep_heartbeat(self.store, sweep_id).start()
        try:
            for config, trial in self._next_configs(study, done, planned):
                if self._over_budget():
                    self.budget_ended = True
                    trial.set_user_attr("skipped", "the budget ended")
                    study.tell(trial, state=trial_state("FAIL"))
                    break
                remaining = planned - len(done & set(self.space.keys()))
                record = self._run_one(config, fingerprint, sweep_id, trial, study, remaining)
                if record is None:
                    break
                done.add(config.key)
        except StoreError as e:  # a trial spilled, or the database is gone: resumable at once
            mark_ended(self.store, sweep_id, e)  # (advisor.db.spill)
            raise
        finally:
            beating.stop()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        status = "interrupted" if self.interrupted else "finished"
        outcome = self.close(sweep_id, status, fingerprint, study_name)
        outcome.signum = self.signum
        return outcome

    def close(self, sweep_id: int, status: str, fingerprint: Fingerprint, study_name: str,
              startups_shared: bool = False) -> SweepOutcome:
        """The sweep's outcome (`outcome`, then ``finishing``), and only then its row's status:
        a sweep whose trials all ran stays ``running``, its heartbeat beating, until the steps
        after them (the paired re-measurement, serving alone, the warm start, --confirm's
        artifact) stored what they promise. A parent killed among them leaves a row that reads
        ``dead`` once its heartbeat ages (never ``finished``), and --resume runs those steps
        again; a step stopped by Ctrl-C or an error marks the sweep interrupted."""
        if status != "finished":
            self.store.finish_sweep(sweep_id, status)
            return self.outcome(sweep_id, status, fingerprint, study_name, startups_shared)
        try:
            with sweep_heartbeat(self.store, sweep_id):
                outcome = self.outcome(sweep_id, status, fingerprint, study_name,
                                       startups_shared)
                if self.finishing is not None:
                    outcome = self.finishing(outcome)
        except StoreError as e:  # the database away: resumable at once (advisor.db.spill)
            mark_ended(self.store, sweep_id, e)
            raise
        except BaseException:
            self.store.finish_sweep(sweep_id, "interrupted")
            raise
        if self.interrupted:
            outcome.status = "interrupted"
        elif outcome.stopped_by == "budget" and outcome.unmeasured:
            outcome.status = "stopped"  # resumable: the configs the budget left are still due
        try:
            self.store.finish_sweep(sweep_id, outcome.status)
        except StoreError as e:
            mark_ended(self.store, sweep_id, e)
            raise
        return outcome

    def outcome(self, sweep_id: int, status: str, fingerprint: Fingerprint,
                study_name: str, startups_shared: bool = False) -> SweepOutcome:
        """The sweep's records and recommendation; for a finished sweep, the leader and its
        contenders re-measured side by side, the leaders' serving processes measured again
        alone when the trials ran at once (`startups_shared`) and the process-life cost
        decides, and the recommended config's warm start measured first (unless the settings
        say otherwise)."""
        name, fp_hash = self.loaded.workload.name, fingerprint["fingerprint_hash"]
        records = self.store.trials(sweep_id=sweep_id)
        calls = self.settings.calls_per_process
        # The one answer (advisor.recommendation.answers): every sweep of it here, the newest
        # confirmation.
        rec = answer(self.store, name, fp_hash, calls_per_process=calls)
        failed = ""
        steps = AfterTrials(self)
        # (a finishing step, --confirm, re-measures the top configs paired itself)
        confirming = (self.settings.confirm_leaders and self.settings.traffic is None
                      and self.finishing is None and rec.baseline is not None
                      and bool(to_confirm(rec)))
        if status == "finished" and self._step_due("the paired re-measurement against eager "
                                                   "fp32", confirming):
            with self._bounded():
                _, failed = steps.confirm_leaders(rec, records, fingerprint)
            records = self.store.trials(sweep_id=sweep_id)  # with the leader's warm start
            rec = answer(self.store, name, fp_hash, calls_per_process=calls)
        if status == "finished" and startups_shared and self._step_due(
                "the leaders' serving processes alone", self.settings.traffic is not None):
            with self._bounded():
                served = steps.serve_alone(rec, records)
            if served:
                records = self.store.trials(sweep_id=sweep_id)
                rec = answer(self.store, name, fp_hash, calls_per_process=calls)
        if status == "finished" and self._step_due(
                "the warm start", steps.warm_start_due(rec, records) is not None):
            with self._bounded():
                warmed = steps.warm_start(rec, records)
            if warmed:
                records = self.store.trials(sweep_id=sweep_id)
                rec = answer(self.store, name, fp_hash, calls_per_process=calls)
            elif self._budget_spent():
                self.left_out.append("the warm start")  # started, and cut by the budget's end
        if failed:
            rec = replace(rec, note=" ".join(n for n in (rec.note, failed) if n))
        # a trial the budget stopped measured nothing: its config is still to measure
        stored = {r["config_key"] for r in records if r["status"] != "stopped"}
        unmeasured = [c.label for c in self.space.configs if c.key not in stored]
        stopped_by = ("interrupt" if self.interrupted else
                      "budget" if self.budget_ended or self.left_out else "")
        return SweepOutcome(sweep_id, status, records, rec, fingerprint, study_name,
                            unmeasured=unmeasured if stopped_by or self.settings.budgeted
                            else [], left_out=list(self.left_out), stopped_by=stopped_by,
                            budget_s=self.settings.budget_s)

    # -- the budget -------------------------------------------------------------------------
    def start_budget(self) -> None:
        """Start the budget's clock (a sweep without one has no deadline)."""
        if self.settings.budget_s is not None:
            self.deadline = time.monotonic() + self.settings.budget_s

    def time_left(self) -> float | None:
        """Seconds left of the budget (None: no budget)."""
        return None if self.deadline is None else self.deadline - time.monotonic()

    def trials_budget_s(self) -> float | None:
        """Seconds of the budget the trials may start in (the rest is the steps' after them:
        `AFTER_TRIALS_SHARE`, when any is due); None: no budget."""
        budget = self.settings.budget_s
        if budget is None:
            return None
        after = self.settings.confirm_leaders or self.settings.measure_warm
        return budget * (1 - AFTER_TRIALS_SHARE) if after else budget

    def trials_time_left(self) -> float | None:
        """Seconds left of the trials' share of the budget (None: no budget). When it is
        spent no trial starts and the trials still running are stopped, so that the steps
        after them (the paired re-measurement first) keep their share."""
        left, trials = self.time_left(), self.trials_budget_s()
        if left is None or trials is None or self.settings.budget_s is None:
            return None
        return left - (self.settings.budget_s - trials)

    def _over_budget(self) -> bool:
        """No more trials: what is left of the budget is the steps' after the trials (their
        share, `AFTER_TRIALS_SHARE`, when any is due), or nothing is left."""
        left = self.trials_time_left()
        return left is not None and left <= 0

    def _step_due(self, what: str, wanted: bool) -> bool:
        """Whether a step after the trials runs: wanted, and some budget is left (a step the
        budget leaves out is named in the outcome's ``left_out``)."""
        if not wanted or self.interrupted:
            return False
        if self._budget_spent():
            self.left_out.append(what)
            return False
        return True

    def _budget_spent(self) -> bool:
        """Whether the budget has (all but) run out: no step after the trials starts."""
        left = self.time_left()
        return left is not None and left <= 1.0

    @contextlib.contextmanager
    def _bounded(self, left: float | None = None) -> Iterator[None]:
        """The children started inside end with the budget (their time limit: what is left of
        it, or ``left`` seconds when given)."""
        left = self.time_left() if left is None else left
        own = self.launcher.timeout_s
        if left is not None:
            self.launcher.timeout_s = max(1.0, min(own, left))
        try:
            yield
        finally:
            self.launcher.timeout_s = own

    def shapes(self) -> list[dict[str, Any]] | None:
        return trial_shapes(self.settings.shape, self.settings.traffic)

    def _on_signal(self, signum: int, frame: Any) -> None:
        self.interrupted = True
        self.signum = self.signum or signum
        self.launcher.kill()

    def make_plan(self, fingerprint: Fingerprint) -> Plan:
        """A budgeted sweep's order (advisor.search.plan), the fleet's picks looked up first; says
        which configs the fleet contributed."""
        picks = []
        if self.settings.priors:
            picks = fleet_picks(self.store, self.loaded.workload.name,
                                self.loaded.source_sha256, fingerprint, self.space)
            log.debug("fleet's picks for %s: %d (%s)", self.loaded.workload.name, len(picks),
                      ", ".join(p.config.label for p in picks) or "no neighbour measured it")
        for pick in picks:
            self.observer.notice(f"warm start from the fleet: {pick.config.label} queued "
                                 f"right after the baseline ({pick.reason})")
        return Plan(self.space, self.settings.device, picks, self.settings.priors,
                    self.settings.n_trials, replays=bool(self.settings.traffic))

    def _planned_step(self, done: set[str], ranked: int) -> Any:
        """The plan's next step (None: the sampler's turn): the opening, then the priors'
        ranking while its quota lasts (`ranked`: ranked steps taken so far)."""
        assert self.plan is not None
        step = next((s for s in self.plan.opening() if s.config.key not in done), None)
        if step is None and ranked < self.plan.quota:
            records = self.store.trials(sweep_id=self._sweep_id)
            step = next(iter(self.plan.ranked(records, done)), None)
        return step

    def _next_configs(self, study: optuna.Study, done: set[str], planned: int
                      ) -> Iterator[tuple[CompileConfig, Any]]:
        """Configs to measure, each with its Optuna trial: baseline, then exhaustive or TPE;
        a budgeted sweep follows its plan (advisor.search.plan) before the sampler."""
        exhaustive = planned >= len(self.space) and self.plan is None
        ranked = 0
        while not self.interrupted and len(done & set(self.space.keys())) < planned:
            todo = [c for c in self.space.configs if c.key not in done]
            if not todo:
                return
            step = None if self.plan is None else self._planned_step(done, ranked)
            if step is not None:
                ranked += step.reason.startswith("prior rank")
                study.enqueue_trial(trial_params(step.config, self.space),
                                    user_attrs={"reason": step.reason})
                trial = study.ask()
                yield suggest_config(trial, self.space), trial
            elif self.plan is None and (exhaustive or EAGER_FP32.key not in done):
                config = todo[0]
                study.enqueue_trial(trial_params(config, self.space))
                trial = study.ask()
                yield suggest_config(trial, self.space), trial
            else:
                yield self._ask_tpe(study, done, todo)

    def _ask_tpe(self, study: optuna.Study, done: set[str], todo: list[CompileConfig]
                 ) -> tuple[CompileConfig, Any]:
        keys = set(self.space.keys())
        for _ in range(MAX_ASKS_PER_TRIAL):
            trial = study.ask()
            config = suggest_config(trial, self.space)
            if config.key in keys and config.key not in done:
                trial.set_user_attr("reason", sampler_reason(self.settings.sampler))
                return config, trial
            # Already measured (or not in the space): tell Optuna so TPE moves on; nothing re-runs.
            trial.set_user_attr("skipped", "already measured" if config.key in keys else
                                "outside the space")
            study.tell(trial, state=trial_state("PRUNED"))
        study.enqueue_trial(trial_params(todo[0], self.space), user_attrs={
            "reason": f"the sampler proposed only measured configs {MAX_ASKS_PER_TRIAL} times: "
                      "the first config left"})
        trial = study.ask()
        return suggest_config(trial, self.space), trial

    def trial_time(self, config: CompileConfig, remaining: int
                   ) -> tuple[float | None, float | None]:
        """A budgeted trial's (share, limit) in seconds from its start; (None, None) without a
        time budget. The eager fp32 baseline of a sweep that replays traffic: `BASELINE_SHARE`
        of the budget as its share, twice that as its limit (a replay's cost grows with the
        traffic's shapes, and its stream is sampled to fit the share, but a slow host's smallest
        sample can outgrow it; a per-shape trial's does not, and its baseline runs as the others
        do). Another
        config: an even share of what is left of the trials' time among the ``remaining``
        configs still to measure, this one included (what its replay's steady state and
        reference are sized to: advisor.child.replay), and all that is left as its limit (a
        replay goes past its share only while projected to end before it). A trial that ends
        early leaves its time to the next ones."""
        left, budget = self.trials_time_left(), self.settings.budget_s
        if left is None or budget is None:
            return None, None
        left = max(1.0, left)
        if config == EAGER_FP32 and self.settings.traffic:
            share = min(left, budget * BASELINE_SHARE)
            return share, min(left, 2 * share)
        return left / max(1, remaining), left

    def _run_one(self, config: CompileConfig, fingerprint: Fingerprint, sweep_id: int,
                 trial: optuna.trial.Trial, study: optuna.Study, remaining: int = 1
                 ) -> TrialRecord | None:
        self.observer.trial_started(config)
        left = self.trials_time_left()
        share, limit = self.trial_time(config, remaining)
        with self._bounded(left if limit is None else limit):  # a trial ends with its time
            record = self.launcher.run(
                self.loaded.path, config, self.settings.device, self.shapes(),
                measure_warm=self.settings.measure_warm and self.settings.warm_all,
                policy=self.settings.policy,
                on_phase=self.observer.phase,
                screen_above_ms=screen_above_ms(self.store, sweep_id, config,
                                                self.settings.screen),
                prune=prune_bar(self.store, sweep_id, config, self.settings),
                on_progress=self.observer.trial_progress,
                time_budget_s=share, time_limit_s=limit,
                calls_per_process=self.settings.calls_per_process,
            )
        if record["status"] == "stopped":  # its time ended: kept with how far it got
            self.budget_ended = True
        cut = (left is not None and left < self.settings.timeout_s
               and record.get("failure_reason") == "timeout")
        if self.interrupted or cut:  # stopped, not measured: nothing stored, Optuna told so
            self.budget_ended = self.budget_ended or cut
            trial.set_user_attr("interrupted" if self.interrupted else "budget_ended", True)
            study.tell(trial, state=trial_state("FAIL"))
            return None
        record["workload"] = record.get("workload") or self._workload_dict()
        record["fingerprint"] = record.get("fingerprint") or fingerprint
        best_ms = record_outcome(self.store, study, trial, record, config, sweep_id,
                                 self.settings.calls_per_process)
        self.observer.trial_finished(record, best_ms)
        return record


def trial_shapes(shape: dict[str, int] | None, traffic: list[dict[str, Any]] | None
                 ) -> list[dict[str, Any]] | None:
    """What every trial of a sweep measures: the traffic replay (every config serves the same
    trace), one shape, or (None) the workload's own."""
    if traffic:
        return traffic
    return [{"dims": shape, "weight": 1.0}] if shape else None


def screen_above_ms(store: ResultStore, sweep_id: int, config: CompileConfig,
                    factor: float | None) -> float | None:
    """The screening threshold for the next trial: `factor` x the sweep's best passed median
    so far (None: no screening, no passed trial yet, or the eager fp32 baseline, which is
    always measured in full since every speedup is relative to it)."""
    if not factor or config == EAGER_FP32:
        return None
    best = [steady_ms(r) for r in store.trials(sweep_id=sweep_id)
            if r["status"] == "ok" and r.get("passed") and not r.get("screened_out")
            and not contended(r)]  # a figure taken on a busy host screens nothing out
    return factor * min(best) if best else None


def contended(record: TrialRecord) -> bool:
    """Whether a trial measured beside other processes' CPU work (advisor.hostload)."""
    host = record.get("host")
    return bool(host and host.get("contended"))


def prune_bar(store: ResultStore, sweep_id: int, config: CompileConfig,
              settings: SweepSettings) -> PruneBar | None:
    """The bar a replay trial is stopped at (advisor.child.replay): `PRUNE_MARGIN` above the
    best process-life cost among the sweep's finished trials (status ok, passed, their replay
    priced as a serving process of `calls_per_process` requests: `deciding_ms`). None: the
    sweep replays no traffic, no such trial finished yet, or the eager fp32 baseline (always
    measured in full: every speedup is against it)."""
    if not settings.traffic or config == EAGER_FP32:
        return None
    calls = settings.calls_per_process or DEFAULT_CALLS_PER_PROCESS
    best = [deciding_ms(r, calls) for r in store.trials(sweep_id=sweep_id)
            if r["status"] == "ok" and r.get("passed") and decides(r.get("replay"))
            and not contended(r)]
    if not best:
        return None
    return {"above_ms": (1 + PRUNE_MARGIN) * min(best), "calls_per_process": calls,
            "margin": PRUNE_MARGIN}


def record_outcome(store: ResultStore, study: optuna.Study, trial: optuna.trial.Trial,
                   record: TrialRecord, config: CompileConfig, sweep_id: int,
                   calls_per_process: int | None = None) -> float | None:
    """Store a finished trial's record and tell Optuna (`advisor.search.study.tell_outcome`);
    returns the sweep's best median so far."""
    reason = trial.user_attrs.get("reason")
    if reason:  # why the config was tried when it was (advisor.search.plan), kept with the record
        record["tried_because"] = reason
    store_trial(store, record, sweep_id)  # retried while the database is busy; else spilled
    tell_outcome(study, trial, record, config, calls_per_process)
    best = [steady_ms(r) for r in store.trials(sweep_id=sweep_id)
            if r["status"] == "ok" and r.get("passed")]
    return min(best) if best else None


