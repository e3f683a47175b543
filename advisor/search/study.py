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

import logging
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from advisor import dimensions
from advisor import settings as env_settings
from advisor.errors import ConfigError
from advisor.recommendation import deciding_ms
from advisor.search.request import SAMPLERS, SweepSettings

if TYPE_CHECKING:
    import optuna

    from advisor.config import CompileConfig
    from advisor.records import TrialRecord
    from advisor.rows import SweepRow
    from advisor.search.space import Space

log = logging.getLogger(__name__)


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
    study = optuna.create_study(study_name=study_name, storage=storage,
                                sampler=make_sampler(sampler, seed),
                                direction="minimize", load_if_exists=True)
    describe_from_store(study, url)
    return study


# -- what optuna-dashboard shows of advisor's sweep -----------------------------------------------

STUDY_ATTRS = ("workload", "workload_path", "source_sha256", "device_id", "device", "torch",
               "policy", "advisor_sweep_id")


def stored_settings(sweep: SweepRow) -> SweepSettings | None:
    """The settings a sweep row keeps, for its study's description. None: a sweep imported
    without them, or whose settings cannot be read (no device): its study still opens, described
    as a sweep of one shape (resuming or joining it says what is wrong)."""
    if not sweep["settings"]:
        return None
    try:
        return SweepSettings.from_dict(sweep["settings"])
    except ConfigError:
        return None


def metric_name(settings: SweepSettings | None) -> str:
    """The name of the value a sweep tells its study (`advisor.recommendation.deciding_ms`):
    the steady-state ``median_ms``, or under a traffic replay the expected ``ms_per_request``
    over a serving process's life."""
    return "ms_per_request" if settings is not None and settings.traffic else "median_ms"


def study_attrs(sweep: SweepRow, device_id: str) -> dict[str, Any]:
    """The study's user attributes for optuna-dashboard: the workload (name, path, source
    sha256), the device (its short id and model), torch, the policy and the sweep's id."""
    fp = sweep["fingerprint"] or {}
    settings = stored_settings(sweep)
    # a sweep's answer is the latency policy's (`advisor.recommendation.answers.answer`): on
    # the steady-state median, or under a traffic replay the cost per request over a process
    policy = "latency" if settings is None or not settings.traffic else (
        f"latency over a process of {settings.calls_per_process or 10_000:,} calls")
    return {
        "workload": sweep["workload"]["name"], "workload_path": sweep["workload"].get("path"),
        "source_sha256": sweep["workload"].get("source_sha256"), "device_id": device_id,
        "device": fp.get("device_name") or fp.get("cpu_model"),
        "torch": fp.get("torch_version"),
        "policy": policy,
        "advisor_sweep_id": sweep["id"],
    }


def describe(study: optuna.Study, sweep: SweepRow, device_id: str) -> None:
    """Name the study's objective (`metric_name`) and set its user attributes (`study_attrs`),
    each only where it differs (workers open the same study)."""
    name = metric_name(stored_settings(sweep))
    if study.metric_names != [name]:
        study.set_metric_names([name])
    current = study.user_attrs
    for key, value in study_attrs(sweep, device_id).items():
        if current.get(key) != value:
            study.set_user_attr(key, value)


def describe_from_store(study: optuna.Study, url: str) -> None:
    """`describe` the study of the sweep that names it, read from the store at ``url`` (none
    yet, or no advisor tables there: left as it is; the study's own use never fails on it)."""
    from advisor.db.store import ResultStore
    from advisor.devices import DeviceNames
    from advisor.errors import AdvisorError

    try:
        with ResultStore.from_url(url, read_only=True) as store:
            sweep = store.sweep_of_study(study.study_name)
            if sweep is None:
                return
            device_id = DeviceNames.of_store(store).name(sweep["fingerprint_hash"],
                                                         sweep["fingerprint"])
    except AdvisorError as e:
        log.debug("study %s left undescribed: %s", study.study_name, e)
        return
    describe(study, sweep, device_id)


def outcome_text(record: TrialRecord) -> str:
    """A trial's outcome in words for optuna-dashboard: ``ok``, ``ok (noisy)``, ``rejected:
    accuracy``, ``failed: oom``, ``pruned``, ``stopped``."""
    status = record["status"]
    if status == "ok":
        if not record.get("passed"):
            return "rejected: " + ("accuracy" if not record.get("correct") else "quality")
        return "ok (noisy)" if record.get("noisy") else "ok"
    if status == "failed":
        return f"failed: {record.get('failure_reason') or 'unknown'}"
    return str(status)


def trial_attrs(record: TrialRecord, config: CompileConfig) -> dict[str, Any]:
    """A trial's user attributes: the advisor trial it stands for (``trial_uuid``,
    ``config_key``), its config as every advisor surface names it (``config``) and its outcome
    in words (``outcome``, `outcome_text`)."""
    return {"trial_uuid": record["trial_uuid"], "config_key": config.key,
            "config": config.label, "outcome": outcome_text(record)}


def write_study(url: str, study_name: str, records: Sequence[TrialRecord],
                space: Sequence[CompileConfig]) -> optuna.Study:
    """The study of a sweep whose trials were stored without one (a generated data set, an
    import): each record added as a finished Optuna trial as `tell_outcome` would have told
    it (its deciding figure and accuracy constraint, or FAIL/PRUNED), described from the store
    (`describe_from_store`)."""
    import optuna

    from advisor.config import CompileConfig
    from advisor.recommendation import deciding_ms

    study: optuna.Study = open_study(url, study_name, seed=None)
    choices = dimensions.varying(space)
    trials = []
    for record in records:
        config = CompileConfig.from_dict(record["config"])
        params = dimensions.params_of(config, space)
        ok = record["status"] == "ok"
        state = "COMPLETE" if ok else "PRUNED" if record["status"] == "pruned" else "FAIL"
        system = {"constraints": [0.0 if record.get("passed") else 1.0]} if ok else {}
        trials.append(optuna.trial.create_trial(
            params=params, state=trial_state(state),
            distributions={n: optuna.distributions.CategoricalDistribution(choices[n])
                           for n in params},
            value=deciding_ms(record, None) if ok else None,
            user_attrs={**trial_attrs(record, config),
                        **({"constraint_names": ["accuracy"]} if ok else {})},
            system_attrs=system))
    study.add_trials(trials)
    return study


def record_answer(study: optuna.Study, rec: Any) -> None:
    """advisor's answer beside Optuna's best trial: the study's user attributes
    ``advisor_pick`` (its config), ``advisor_decision``, ``advisor_pick_ms`` (its figure,
    paired where a confirmation re-measured it beside eager fp32) and, where Optuna's best
    trial is another config or another figure, ``advisor_vs_best_trial``: why they differ."""
    best = rec.best
    attrs: dict[str, Any] = {"advisor_decision": rec.decision,
                             "advisor_pick": best.label if best else None,
                             "advisor_pick_ms": best.median_ms if best else None,
                             "advisor_pick_paired": bool(rec.paired)}
    why = _why_not_best(study, rec)
    if why:
        attrs["advisor_vs_best_trial"] = why
    for key, value in attrs.items():
        study.set_user_attr(key, value)


def _why_not_best(study: optuna.Study, rec: Any) -> str:
    """Why Optuna's best trial (the lowest single value) is not advisor's answer, or ""."""
    best = rec.best
    trials = [t for t in study.get_trials(deepcopy=False, states=(trial_state("COMPLETE"),))
              if t.values and not _infeasible(t)]
    if not trials:
        return ""
    if best is None:
        return f"advisor makes no pick ({rec.decision}): {rec.sentence}"
    top = min(trials, key=lambda t: t.values[0])
    same = top.user_attrs.get("config_key") == best.config_key
    if same and abs(top.values[0] - best.median_ms) <= 1e-9 * max(1.0, best.median_ms):
        return ""
    from advisor import units

    how = ("paired: re-measured beside eager fp32 in one process" if rec.paired else
           f"pooled over {best.n_trials} trial(s)")
    figure = f"{units.duration_ms(best.median_ms)} ({how})"
    shown = top.user_attrs.get("config") or top.user_attrs.get("config_key") or "?"
    if same:
        return (f"advisor answers {best.label} at {figure}; Optuna's best trial #{top.number} "
                f"is the same config at {units.duration_ms(top.values[0])}, one unpaired trial")
    return (f"advisor answers {best.label} at {figure}, decision {rec.decision}; Optuna's best "
            f"trial #{top.number} ({shown}, {units.duration_ms(top.values[0])}) is one "
            f"unpaired trial: {rec.note or 'see `advisor recommend`'}")


def _infeasible(trial: Any) -> bool:
    return any(v > 0 for v in trial.system_attrs.get("constraints") or [])


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
    for key, value in trial_attrs(record, config).items():
        trial.set_user_attr(key, value)
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
