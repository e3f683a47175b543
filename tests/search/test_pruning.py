"""Replays pruned honestly, the parent's side: the bar a sweep gives a replay trial, what Optuna
and the store are told of a pruned one, and that no surface takes it for a figure or a failure.

Records are built by hand with figures whose process-life cost is computed here by hand; the
child's side (a real replay stopped early) is in tests/search/test_replay.py, and a sweep that
prunes end to end in tests/search/test_sweep_shapes.py.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from advisor.config import EAGER_FP32, CompileConfig
from advisor.db.store import ResultStore
from advisor.recommendation import recommend
from advisor.records import empty_record
from advisor.search.request import SweepSettings
from advisor.search.study import open_study, trial_state
from advisor.search.sweep import PRUNE_MARGIN, prune_bar, record_outcome

CALLS = 100
TRAFFIC = [{"dims": {"batch": 2, "seq": 5}, "weight": 0.5},
           {"dims": {"batch": 2, "seq": 7}, "weight": 0.5}]
FINGERPRINT = {"device_hash": "d" * 16, "env_hash": "e" * 16, "fingerprint_hash": "f" * 16,
               "device_kind": "cpu", "hostname": "test-host"}
WORKLOAD = {"name": "tiny-seq", "path": "tiny_seq.py", "source_sha256": "s" * 64, "info": {}}
STATIC = CompileConfig(dynamic="false")
BUCKETED = CompileConfig(shapes="buckets:fitted-2")
ROUGH = CompileConfig(mode="reduce-overhead")
_uuids = itertools.count()


def replayed(config: CompileConfig, startup_s: float, per_request_ms: list[float],
             steady_ms: float, **fields: Any) -> dict[str, Any]:
    """A finished replay trial: its stream meets no new shape, so a process of CALLS requests
    costs (start-up + the stream + the rest at the steady state) / CALLS."""
    record = empty_record()
    stream = {"startup_s": startup_s, "per_request_ms": per_request_ms, "new_shape": [],
              "requests": len(per_request_ms)}
    record.update(
        trial_uuid=f"00000000-0000-4000-8000-{next(_uuids):012d}", status="ok",
        config=config.to_dict(), config_key=config.key, device="cpu", passed=True,
        correct=True, median_ms=steady_ms, p90_ms=steady_ms, p99_ms=steady_ms,
        mean_ms=steady_ms, workload=dict(WORKLOAD), fingerprint=dict(FINGERPRINT),
        replay={"mean_ms": steady_ms, "expected_ms": steady_ms, "varying_dims": ["seq"],
                "stream": stream},
    )
    record.update(fields)
    return record


def pruned(config: CompileConfig, lower_bound_ms: float, above_ms: float) -> dict[str, Any]:
    """A replay stopped once proven above the bar, as advisor.child.replay returns it."""
    record = empty_record()
    record.update(
        trial_uuid=f"00000000-0000-4000-8000-{next(_uuids):012d}", status="pruned",
        config=config.to_dict(), config_key=config.key, device="cpu", cold_compile_s=2.5,
        method="perf_counter", workload=dict(WORKLOAD), fingerprint=dict(FINGERPRINT),
        pruned={"lower_bound_ms": lower_bound_ms, "above_ms": above_ms, "requests_served": 3,
                "requests_total": 60, "calls_per_process": CALLS,
                "reason": "after 3 of 60 requests ... above the bar"},
    )
    return record


# eager fp32: (0.01 s + 4 x 1 ms + 96 x 1 ms) / 100 = 1.1 ms a request
EAGER = replayed(EAGER_FP32, 0.01, [1.0] * 4, 1.0)
# bucketed: (0.5 s + 4 x 0.5 ms + 96 x 0.5 ms) / 100 = 5.5 ms a request
FAST = replayed(BUCKETED, 0.5, [0.5] * 4, 0.5)
# static: (1 s + 10 + 2 + 2 + 2 ms + 96 x 2 ms) / 100 = 12.08 ms a request
SLOW = replayed(STATIC, 1.0, [10.0, 2.0, 2.0, 2.0], 2.0)


@pytest.fixture
def store(tmp_path: Path) -> Any:
    with ResultStore.from_url(f"sqlite:///{tmp_path / 'advisor.sqlite'}") as store:
        yield store


def _sweep(store: Any) -> int:
    stored = SweepSettings(device="cpu", traffic=TRAFFIC).to_dict()  # as a sweep stores them
    return int(store.create_sweep(WORKLOAD, FINGERPRINT, stored, "study", 4))


def test_the_bar_is_the_margin_above_the_best_finished_process_life_cost(store: Any) -> None:
    settings = SweepSettings(device="cpu", traffic=TRAFFIC, calls_per_process=CALLS)
    sweep_id = _sweep(store)
    assert prune_bar(store, sweep_id, ROUGH, settings) is None  # nothing finished yet
    store.add_trials([EAGER, SLOW, replayed(STATIC, 0.0, [0.1] * 4, 0.1, passed=False)],
                     sweep_id)
    # the lowest passed: eager's 1.1 ms (the rejected one's 0.1 ms is no bar)
    bar = prune_bar(store, sweep_id, ROUGH, settings)
    assert bar == {"above_ms": pytest.approx((1 + PRUNE_MARGIN) * 1.1),
                   "calls_per_process": CALLS, "margin": PRUNE_MARGIN}
    assert PRUNE_MARGIN == 0.10
    # the sweep's settings as stored and read back (a fleet worker's) give the same bar
    stored = SweepSettings.from_dict({**settings.to_dict(), "space": []})
    assert prune_bar(store, sweep_id, ROUGH, stored) == bar
    # the baseline is always measured in full; a sweep without traffic replays nothing
    assert prune_bar(store, sweep_id, EAGER_FP32, settings) is None
    assert prune_bar(store, sweep_id, ROUGH, SweepSettings(device="cpu")) is None
    # the default process (10,000 requests) when the sweep names none
    long = prune_bar(store, sweep_id, ROUGH, SweepSettings(device="cpu", traffic=TRAFFIC))
    assert long is not None and long["calls_per_process"] == 10_000
    assert long["above_ms"] == pytest.approx(1.1 * (10 + 4 + 9996) / 10_000)


def test_a_pruned_trial_is_optunas_pruned_and_stored_without_a_figure(store: Any) -> None:
    import optuna

    sweep_id = _sweep(store)
    study = open_study(store.url, "study", seed=0)
    for record in (FAST, pruned(ROUGH, 7.5, 6.05)):
        trial = study.ask()
        record_outcome(store, study, trial, dict(record), CompileConfig.from_dict(
            record["config"]), sweep_id, CALLS)
    done, stopped = study.get_trials(deepcopy=False)
    assert done.state == trial_state("COMPLETE") and done.value == pytest.approx(5.5)
    assert stopped.state == optuna.trial.TrialState.PRUNED and stopped.value is None
    assert stopped.user_attrs["pruned_lower_bound_ms"] == 7.5
    assert stopped.user_attrs["pruned_reason"].startswith("after 3 of 60 requests")
    assert "failure_reason" not in stopped.user_attrs
    (kept,) = store.trials(sweep_id=sweep_id, status="pruned")
    assert kept["median_ms"] is None and kept["passed"] is None
    assert kept["pruned"]["lower_bound_ms"] == 7.5 and kept["pruned"]["above_ms"] == 6.05
    sweep = store.get_sweep(sweep_id)
    assert (sweep["n_trials"], sweep["n_ok"], sweep["n_failed"], sweep["n_pruned"]) == (2, 1, 0, 1)
    assert sweep["best_median_ms"] == 0.5  # the finished trial's, never the pruned one's bound
    assert ROUGH.key in store.config_keys_done(sweep_id)  # a resumed sweep does not redo it


def test_a_pruned_config_is_never_the_pick_nor_a_failure() -> None:
    # its bound (0.2 ms) is lower than every measured figure: still no candidate
    stopped = pruned(ROUGH, 0.2, 0.1)
    failed = {**empty_record(), "trial_uuid": "failed-1", "status": "failed",
              "failure_reason": "compile_error", "config": STATIC.to_dict(),
              "config_key": STATIC.key}
    rec = recommend("tiny-seq", [EAGER, FAST, SLOW, stopped, failed], calls_per_process=CALLS)
    assert rec.best is not None and rec.best.config_key == EAGER_FP32.key
    assert ROUGH.key not in {r.config_key for r in rec.ranked}
    assert (rec.n_trials, rec.n_failed, rec.n_pruned, rec.n_rejected) == (5, 1, 1, 0)
    alone = recommend("tiny-seq", [stopped], calls_per_process=CALLS)
    assert alone.best is None and alone.ranked == [] and alone.n_failed == 0


def test_surfaces_show_the_bound_never_a_figure() -> None:
    pytest.importorskip("pandas")  # the dashboard's extra
    from advisor.presentation import report
    from dashboard import analysis

    stopped = pruned(ROUGH, 7.5, 6.05)
    rec = recommend("tiny-seq", [EAGER, FAST, stopped], calls_per_process=CALLS)
    assert analysis.outcome(stopped) == "pruned: at least 7.50 ms a request"
    frame = analysis.trials_frame([EAGER, FAST, stopped])
    row = frame[frame["outcome"].str.startswith("pruned")].iloc[0]
    assert row["p50_ms"] is None or row["p50_ms"] != row["p50_ms"]  # None or NaN: no figure
    data = report.build(rec, [EAGER, FAST, stopped], FINGERPRINT)
    assert data["counts"]["pruned"] == 1 and data["counts"]["failed"] == 0
    (row,) = [f for f in data["failures"] if f["outcome"].startswith("pruned")]
    assert row["outcome"] == "pruned: at least 7.50 ms a request"
    assert "pruned: at least 7.50 ms a request" in report.to_markdown(data)
