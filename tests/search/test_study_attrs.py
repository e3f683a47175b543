"""What optuna-dashboard shows of advisor's sweeps, read back through Optuna's own storage API
(`optuna.load_study` on the results database's URL, as optuna-dashboard opens it): the metric
name, the study's user attributes (workload, source sha, device id and name, torch, policy),
each trial's config label and outcome, and advisor's answer beside Optuna's best trial where
the two differ. On the fleet-size seed (its studies written as a sweep leaves them) and on a
study a sweep opens and tells."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import optuna
import pytest
from support.seed import (
    FLEET_DEVICES,
    FLEET_WORKLOADS,
    GPU_STACK,
    Trial,
    _record,
    fingerprint,
    seed_fleet,
    workload,
)

from advisor.config import EAGER_FP32, CompileConfig
from advisor.db import ResultStore
from advisor.frames import compare_devices
from advisor.search.study import STUDY_ATTRS, open_study, tell_outcome

WORKLOAD = "guardrail"  # the fleet's smallest: 40 trials on each of twelve devices


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('fleet') / 'fleet.db'}"
    seed_fleet(url, studies=[WORKLOAD]).close()
    return url


def test_every_fleet_study_names_its_metric_workload_and_device(fleet: str) -> None:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    with ResultStore.from_url(fleet, read_only=True) as store:
        devices = {row["fingerprint_hash"]: row for row in compare_devices(store, WORKLOAD)}
        sweeps = {s["study_name"]: s for s in store.sweeps(workload=WORKLOAD)}
    summaries = optuna.get_all_study_summaries(fleet)
    assert sorted(s.study_name for s in summaries) == sorted(sweeps)
    assert len(summaries) == len(FLEET_DEVICES)
    for name, sweep in sweeps.items():
        study = optuna.load_study(study_name=name, storage=fleet)
        assert study.metric_names == ["median_ms"]  # not "Objective 0"
        attrs = study.user_attrs
        assert set(STUDY_ATTRS) <= set(attrs)
        device = devices[sweep["fingerprint_hash"]]
        assert attrs["workload"] == WORKLOAD
        assert attrs["source_sha256"] == sweep["workload"]["source_sha256"]
        assert attrs["device_id"] == device["device_id"]  # `H200 @node-h200-0 · 5e1b6ab8`
        assert attrs["device"] == device["device"] and attrs["torch"] == device["torch"]
        assert attrs["policy"] == "latency" and attrs["advisor_sweep_id"] == sweep["id"]
        trials = study.get_trials(deepcopy=False)
        assert len(trials) == FLEET_WORKLOADS[WORKLOAD][1]
        for trial in trials:
            config = CompileConfig.from_dict(_config_of(trial))
            assert trial.user_attrs["config"] == config.label
            assert trial.user_attrs["outcome"].split(":")[0] in ("ok", "ok (noisy)",
                                                                 "rejected", "failed")
        # advisor's answer, and where Optuna's best single trial is another one, why
        assert attrs["advisor_pick"] == device["config"]
        assert attrs["advisor_decision"] == device["decision"]
        best = study.best_trial
        if best.user_attrs["config"] != device["config"]:
            why = attrs["advisor_vs_best_trial"]
            assert device["config"] in why and best.user_attrs["config"] in why
            assert f"#{best.number}" in why


def _config_of(trial: optuna.trial.FrozenTrial) -> dict[str, object]:
    """The config a trial stands for, from its advisor key (`CompileConfig.key`)."""
    from advisor.config import MODES

    key = trial.user_attrs["config_key"]
    mode, dtype, *rest = key.split("/")
    assert mode in MODES
    out: dict[str, object] = {"mode": mode, "dtype": dtype}
    for part in rest:
        if part in ("fullgraph", "graphbreaks-ok"):
            out["fullgraph"] = part == "fullgraph"
        elif part.startswith("dynamic-"):
            out["dynamic"] = part[len("dynamic-"):]
    return out


def test_a_sweep_study_is_described_when_opened_and_told_its_trials(tmp_path: Path) -> None:
    """What a sweep does: its row stored, its study opened (described from the store), each
    trial told (`tell_outcome`): the attributes come from those calls, not from a seed."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    url = f"sqlite:///{tmp_path / 'r.db'}"
    wl, fp = workload("embedder"), fingerprint("gpu-a", GPU_STACK, "gpu-new")
    with ResultStore.from_url(url) as store:
        sweep_id = store.create_sweep(wl, fp, {"device": "cuda"}, "embedder-sweep", 2)
        study = open_study(url, "embedder-sweep", seed=None)
        for i, trial in enumerate([Trial(EAGER_FP32, 2.0),
                                   Trial(CompileConfig(mode="default", dtype="bf16"),
                                         failure="oom")]):
            record = _record(i, wl, fp, trial, datetime.now(UTC))
            store.add_trials([record], sweep_id)
            asked = study.ask({"mode": optuna.distributions.CategoricalDistribution(
                ["eager", "default"]), "dtype": optuna.distributions.CategoricalDistribution(
                ["fp32", "bf16"])})
            tell_outcome(study, asked, record, trial.config)
    loaded = optuna.load_study(study_name="embedder-sweep", storage=url)
    assert loaded.metric_names == ["median_ms"]
    assert loaded.user_attrs["workload"] == "embedder"
    assert loaded.user_attrs["device_id"].startswith("H200 @host-gpu-a · ")
    assert loaded.user_attrs["torch"] == GPU_STACK["torch_version"]
    told = [(t.user_attrs["config"], t.user_attrs["outcome"]) for t in loaded.trials]
    assert told == [("fp32 + eager", "ok"), ("bf16 + default", "failed: oom")]


def test_stored_settings_are_read_typed_and_a_damaged_row_still_describes_its_study() -> None:
    from advisor.errors import ConfigError
    from advisor.search.request import SweepSettings
    from advisor.search.study import metric_name, stored_settings

    traffic = [{"dims": {"n": 4}, "weight": 1.0}]
    stored = {**SweepSettings(device="cpu", traffic=traffic).to_dict(), "space": []}
    read = stored_settings({"settings": stored})
    assert read == SweepSettings(device="cpu", traffic=traffic)
    assert metric_name(read) == "ms_per_request"
    with pytest.raises(ConfigError, match="name no device"):  # resuming or joining says so
        SweepSettings.from_dict({"traffic": traffic})
    # its study still opens, described as a sweep of one shape
    assert stored_settings({"settings": {"traffic": traffic}}) is None
    assert metric_name(None) == "median_ms"
