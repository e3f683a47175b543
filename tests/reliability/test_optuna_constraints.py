"""A sweep's study shows a trial that failed correctness as infeasible to Optuna's readers
(optuna-dashboard, samplers, `FrozenTrial.constraints`): its constraint values are stored under
the trial's system attribute `constraints` as a sequence of floats, <= 0 feasible."""

from __future__ import annotations

from pathlib import Path

import optuna
import pytest
from reliability_support import HERE, sweep_support

import advisor as api

INACCURATE = HERE / "workloads" / "bf16_inaccurate.py"


@pytest.mark.slow
def test_a_trial_that_failed_correctness_is_infeasible_in_the_study(tmp_path: Path) -> None:
    from optuna.study._constrained_optimization import _CONSTRAINTS_KEY, _get_feasible_trials

    url = sweep_support.sqlite_url(tmp_path / "a.db")
    outcome = api.sweep(INACCURATE, db=url, device="cpu", modes=["eager"],
                        dtypes=["fp32", "bf16"], warm=False, confirm_leaders=False,
                        notice=lambda _: None)
    assert outcome.status == "finished"
    passed = {r["config_key"]: r["passed"] for r in outcome.records}
    assert passed == {"eager/fp32": True, "eager/bf16": False}

    (summary,) = optuna.get_all_study_summaries(url)
    study = optuna.load_study(study_name=summary.study_name, storage=url)
    by_key = {t.user_attrs["config_key"]: t for t in study.get_trials()}
    assert by_key["eager/fp32"].system_attrs[_CONSTRAINTS_KEY] == [0.0]
    assert by_key["eager/bf16"].system_attrs[_CONSTRAINTS_KEY] == [1.0]
    # one constraint each, read the same by Optuna itself: only fp32 is feasible
    assert [t.constraints for t in (by_key["eager/fp32"], by_key["eager/bf16"])] == [
        {"0": 0.0}, {"0": 1.0}]
    assert [t.user_attrs["config_key"] for t in _get_feasible_trials(study.get_trials())] == [
        "eager/fp32"]
    assert study.best_trial.user_attrs["config_key"] == "eager/fp32"
