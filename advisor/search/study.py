"""The Optuna side of a sweep: its study, kept in the results database, and what it is told.

`open_study` opens (or creates) a sweep's study on the results database's URL: Optuna's RDB
storage, its errors retried and told in one line (`advisor.db.studies.RetryingStorage`), its
tables created once under a lock (`advisor.db.store.prepare_optuna`), with the sampler the sweep
names (`make_sampler`, one of `SAMPLERS`). A config is an Optuna trial's parameters
(`trial_params`, `suggest_config`, through `advisor.dimensions`). A measured trial is told to the
study (`tell_outcome`): its deciding figure with accuracy as a constraint (`set_constraints`),
PRUNED with its bound, or FAIL. A resumed sweep fails the trials its dead run left
(`fail_orphans`) and leaves to a live worker the ones it still holds (`held_configs`). The
sweep (`advisor.search.sweep`) and the fleet's workers (`advisor.search.fleet`) drive the study
through these; the order of what they ask for is `advisor.search.plan`'s.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from advisor import dimensions
from advisor import settings as env_settings
from advisor.errors import ConfigError
from advisor.recommendation import deciding_ms

if TYPE_CHECKING:
    import optuna

    from advisor.config import CompileConfig
    from advisor.records import TrialRecord
    from advisor.search.space import Space

SAMPLERS = ("tpe", "random", "grid")


def open_study(url: str, study_name: str, seed: int | None = 0, heartbeat: bool = False,
               sampler: str = "tpe") -> Any:
    """The sweep's Optuna study, in the results database. `heartbeat`: workers of a fleet beat
    while they hold a trial; a trial whose worker died is failed and queued again. `sampler`:
    one of `SAMPLERS`."""
    import optuna

    from advisor.db.store import prepare_optuna
    from advisor.db.studies import RetryingStorage

    prepare_optuna(url)  # Optuna's tables once, under a lock: its own first use races
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    # advisor drives the heartbeat itself around ask/tell (advisor.search.fleet), which Optuna's
    # experimental heartbeat API warns about.
    warnings.filterwarnings("ignore", message="Heartbeat of storage", category=UserWarning)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    kwargs: dict[str, Any] = {}
    if url.startswith("sqlite"):
        kwargs["engine_kwargs"] = {"connect_args": {"timeout": env_settings.db_busy_timeout_s()}}
    else:  # reconnect after a database restart instead of failing on a dead pooled connection
        kwargs["engine_kwargs"] = {"pool_pre_ping": True}
    if heartbeat:
        kwargs.update(
            heartbeat_interval=env_settings.heartbeat_s(),
            grace_period=env_settings.heartbeat_grace_s(),
            heartbeat_stale_trial_callback=optuna.storages.RetryHeartbeatStaleTrialCallback(
                max_retry=3),
        )
    # its errors retried while the database is busy or away, else one line (advisor.db.studies)
    storage = RetryingStorage(url, **kwargs)
    return optuna.create_study(study_name=study_name, storage=storage,
                               sampler=make_sampler(sampler, seed),
                               direction="minimize", load_if_exists=True)


def fail_orphans(study: optuna.Study) -> int:
    """Mark FAIL the trials a dead or interrupted run of the study left RUNNING (their process
    is gone; a resumed sweep measures those configs again) or queued (WAITING: the resumed run
    queues afresh, so that no config is taken twice); returns how many. A RUNNING trial a live
    worker still holds (`advisor.db.studies.held_trials`) is left to it: failing it would
    queue its config again while it is measured, and store it twice."""
    from advisor.db.studies import held_trials

    held = held_trials(study, env_settings.heartbeat_grace_s())
    running = [t for t in study.get_trials(
        deepcopy=False, states=(trial_state("RUNNING"), trial_state("WAITING")))
        if t._trial_id not in held]
    for trial in running:
        study._storage.set_trial_user_attr(trial._trial_id, "orphaned", True)
        study._storage.set_trial_state_values(trial._trial_id, state=trial_state("FAIL"))
    return len(running)


def held_configs(study: optuna.Study) -> set[str]:
    """The config keys of the study's RUNNING trials a live worker still holds
    (`advisor.db.studies.held_trials`): a resumed sweep neither queues nor measures them."""
    from advisor.db.studies import held_trials

    held = held_trials(study, env_settings.heartbeat_grace_s())
    found = (dimensions.from_params(t.params) for t in study.get_trials(
        deepcopy=False, states=(trial_state("RUNNING"),)) if t._trial_id in held)
    return {c.key for c in found if c is not None}


def make_sampler(name: str, seed: int | None) -> Any:
    """The Optuna sampler called `name` (one of `SAMPLERS`) for a small categorical space."""
    import optuna

    if name == "tpe":  # conditional categorical space: multivariate, grouped; parallel: liar
        return optuna.samplers.TPESampler(seed=seed, n_startup_trials=5, multivariate=True,
                                          group=True, constant_liar=True)
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    if name == "grid":  # every combination once, in a random order
        return optuna.samplers.BruteForceSampler(seed=seed)
    raise ConfigError(f"unknown sampler {name!r}: choose one of {', '.join(SAMPLERS)}")


def trial_params(config: CompileConfig, space: Space) -> dict[str, Any]:
    """The Optuna parameters standing for ``config`` in ``space`` (`advisor.dimensions`)."""
    return dimensions.params_of(config, space.configs)


def suggest_config(trial: optuna.trial.Trial, space: Space) -> CompileConfig:
    """Define-by-run: the config an Optuna trial proposes (or was enqueued with)."""
    return dimensions.suggest(trial, space.configs)


def tell_outcome(study: optuna.Study, trial: optuna.trial.Trial, record: TrialRecord,
                 config: CompileConfig, calls_per_process: int | None = None) -> None:
    """Tell the study how a stored trial ended: the advisor trial it stands for (user attributes
    `trial_uuid`, `config_key`), then its deciding figure (`advisor.recommendation.deciding_ms`)
    with accuracy as a constraint, or PRUNED with its bound, or FAIL with its reason (a trial
    the budget stopped: FAIL, not measured, with how far it got and its bound where it has
    one)."""
    trial.set_user_attr("trial_uuid", record["trial_uuid"])
    trial.set_user_attr("config_key", config.key)
    if record["status"] == "ok":
        set_constraints(study, trial, accuracy=0.0 if record["passed"] else 1.0)
        study.tell(trial, deciding_ms(record, calls_per_process))
    elif record["status"] == "pruned":  # proven worse than the best: Optuna's PRUNED, no value
        pruned = record["pruned"]
        trial.set_user_attr("pruned_lower_bound_ms", pruned["lower_bound_ms"])
        trial.set_user_attr("pruned_reason", pruned["reason"])
        study.tell(trial, state=trial_state("PRUNED"))
    elif record["status"] == "stopped":  # not measured (not proven worse): the sampler skips it
        stopped = record["stopped"]
        trial.set_user_attr("stopped_reason", stopped["reason"])
        trial.set_user_attr("stopped_phase", stopped["phase"])
        if stopped["lower_bound_ms"] is not None:
            trial.set_user_attr("stopped_lower_bound_ms", stopped["lower_bound_ms"])
        study.tell(trial, state=trial_state("FAIL"))
    else:
        trial.set_user_attr("failure_reason", record["failure_reason"])
        study.tell(trial, state=trial_state("FAIL"))


def set_constraints(study: optuna.Study, trial: optuna.trial.Trial, **values: float) -> None:
    """Store a trial's constraints (> 0: infeasible) where every Optuna reader looks: the system
    attribute `constraints` as a list of floats, the format of Optuna's samplers and of
    optuna-dashboard, which does not read the per-name keys of `Trial.set_constraint`. Their names,
    in the same order, go to the user attribute `constraint_names`."""
    study._storage.set_trial_system_attr(trial._trial_id, "constraints",  # Optuna's key
                                         [float(v) for v in values.values()])
    trial.set_user_attr("constraint_names", list(values))


def trial_state(name: str) -> Any:
    import optuna

    return getattr(optuna.trial.TrialState, name)
