"""Trials their time stopped, the parent's side: what the store, Optuna, the answer's coverage and
every surface make of a "stopped" record (advisor.records.Stopped), and the progress a running
trial shows. Records are built by hand; a real replay stopped by its time, a sweep stopped before
its first result and the progress lines of a real sweep are in tests/search/test_replay_budget.py.
"""

from __future__ import annotations

import io
import itertools
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from advisor.cli.progress import ProgressObserver, progress_text
from advisor.cli.sweep import no_result_line, unmeasured_line
from advisor.config import EAGER_FP32, CompileConfig
from advisor.db.store import ResultStore
from advisor.errors import StoreError
from advisor.recommendation import recommend
from advisor.recommendation.decide import cover
from advisor.records import empty_record
from advisor.search.request import SweepSettings
from advisor.search.study import open_study, trial_state
from advisor.search.sweep import SweepOutcome, record_outcome
from advisor.serving import stopped_text

FINGERPRINT = {"device_hash": "d" * 16, "env_hash": "e" * 16, "fingerprint_hash": "f" * 16,
               "device_kind": "cpu", "hostname": "test-host"}
WORKLOAD = {"name": "tiny-seq", "path": "tiny_seq.py", "source_sha256": "s" * 64, "info": {}}
TRAFFIC = [{"dims": {"batch": 2, "seq": 5}, "weight": 0.5},
           {"dims": {"batch": 2, "seq": 7}, "weight": 0.5}]
STATIC = CompileConfig(dynamic="false")
_uuids = itertools.count()


def stopped(config: CompileConfig, bound: float | None, served: int = 40,
            phase: str = "replaying", **fields: Any) -> dict[str, Any]:
    """A replay its time stopped, as advisor.child.replay returns it."""
    record = empty_record()
    record.update(
        trial_uuid=f"00000000-0000-4000-8000-{next(_uuids):012d}", status="stopped",
        config=config.to_dict(), config_key=config.key, device="cpu",
        workload=dict(WORKLOAD), fingerprint=dict(FINGERPRINT),
        phases_s={"start": 1.0, "build": 4.0, "measure": 40.0},
        stopped={"lower_bound_ms": bound, "requests_served": served, "requests_total": 150,
                 "phase": phase, "reason": f"its time (60 s of the budget) ended while serving "
                 f"its stream, after {served} of 150 requests", "elapsed_s": 50.0,
                 "stream_s": 40.0, "share_s": 60.0, "calls_per_process": 10_000},
    )
    record.update(fields)
    return record


def measured(config: CompileConfig, ms: float) -> dict[str, Any]:
    record = empty_record()
    record.update(
        trial_uuid=f"00000000-0000-4000-8000-{next(_uuids):012d}", status="ok",
        config=config.to_dict(), config_key=config.key, device="cpu", passed=True,
        correct=True, median_ms=ms, p90_ms=ms, p99_ms=ms, mean_ms=ms,
        workload=dict(WORKLOAD), fingerprint=dict(FINGERPRINT))
    return record


@pytest.fixture
def store(tmp_path: Path) -> Any:
    with ResultStore.from_url(f"sqlite:///{tmp_path / 'advisor.sqlite'}") as store:
        yield store


def test_a_stopped_trial_is_stored_with_its_bound_and_told_to_optuna_as_not_measured(
        store: Any) -> None:
    import optuna

    stored = SweepSettings(device="cpu", traffic=TRAFFIC).to_dict()  # as a sweep stores them
    sweep_id = int(store.create_sweep(WORKLOAD, FINGERPRINT, stored, "study", 2))
    study = open_study(store.url, "study", seed=0)
    for record in (measured(EAGER_FP32, 3.0), stopped(STATIC, 7.5)):
        record_outcome(store, study, study.ask(), dict(record),
                       CompileConfig.from_dict(record["config"]), sweep_id)
    done, cut = study.get_trials(deepcopy=False)
    assert done.state == trial_state("COMPLETE")
    assert cut.state == optuna.trial.TrialState.FAIL and cut.value is None
    assert cut.user_attrs["stopped_lower_bound_ms"] == 7.5
    assert cut.user_attrs["stopped_phase"] == "replaying"
    assert cut.user_attrs["stopped_reason"].startswith("its time (60 s of the budget)")
    (kept,) = store.trials(sweep_id=sweep_id, status="stopped")
    assert kept["median_ms"] is None and kept["stopped"]["lower_bound_ms"] == 7.5
    assert kept["stopped"]["requests_served"] == 40 and kept["phases_s"]["measure"] == 40.0
    sweep = store.get_sweep(sweep_id)
    assert (sweep["n_trials"], sweep["n_ok"], sweep["n_failed"], sweep["n_stopped"]) == (2, 1,
                                                                                          0, 1)
    # not measured: a resumed sweep measures it again
    assert store.config_keys_done(sweep_id) == {EAGER_FP32.key}


def test_the_store_refuses_a_stopped_trial_with_a_figure(store: Any) -> None:
    sweep_id = int(store.create_sweep(WORKLOAD, FINGERPRINT, {}, "study", 1))
    with pytest.raises(StoreError, match="a stopped trial has no median_ms"):
        store.add_trials([stopped(STATIC, 7.5, median_ms=2.0)], sweep_id)
    with pytest.raises(StoreError, match="needs stopped.phase"):
        store.add_trials([{**stopped(STATIC, None), "stopped": None}], sweep_id)
    store.add_trials([stopped(STATIC, None, served=0, phase="start-up")], sweep_id)  # no bound
    (kept,) = store.trials(sweep_id=sweep_id)
    assert kept["status"] == "stopped" and kept["stopped"]["lower_bound_ms"] is None


def test_a_stopped_config_is_covered_only_by_a_bound_above_the_pick() -> None:
    eager = measured(EAGER_FP32, 3.0)
    planned = [EAGER_FP32, STATIC]
    above = recommend("tiny-seq", [eager, stopped(STATIC, 7.5)])
    assert above.best is not None and above.best.config_key == EAGER_FP32.key
    assert STATIC.key not in {r.config_key for r in above.ranked}  # never a pick
    assert cover(above, planned, [eager, stopped(STATIC, 7.5)]).decision != "provisional"
    below = [eager, stopped(STATIC, 1.0)]  # its bound leaves it a chance: not measured
    assert cover(recommend("tiny-seq", below), planned, below).decision == "provisional"
    unbounded = [eager, stopped(STATIC, None, served=0, phase="start-up")]
    assert cover(recommend("tiny-seq", unbounded), planned, unbounded).decision == "provisional"


def test_surfaces_say_how_far_it_got_never_a_figure() -> None:
    assert stopped_text(stopped(STATIC, 7.5)["stopped"]) == (
        "stopped by the budget after 40 of 150 requests: at least 7.50 ms a request")
    assert stopped_text(stopped(STATIC, None, served=0, phase="start-up")["stopped"]) == (
        "stopped by the budget in its start-up")
    assert stopped_text(stopped(STATIC, 2.5, served=150, phase="measuring")["stopped"]) == (
        "stopped by the budget after 150 of 150 requests, while measuring: at least 2.50 ms a "
        "request")
    assert stopped_text({"phase": "compiling", "lower_bound_ms": None}) == (
        "stopped by the budget while compiling")
    pytest.importorskip("pandas")  # the dashboard's extra
    from advisor.presentation import report
    from dashboard import analysis

    record = stopped(STATIC, 7.5)
    assert analysis.outcome(record).startswith("stopped by the budget after 40 of 150")
    rec = recommend("tiny-seq", [measured(EAGER_FP32, 3.0), record])
    data = report.build(rec, [measured(EAGER_FP32, 3.0), record], FINGERPRINT)
    assert any(f["outcome"].startswith("stopped by the budget") for f in data["failures"])


def outcome(records: list[dict[str, Any]], unmeasured: list[str]) -> SweepOutcome:
    rec = recommend("tiny-seq", records)  # type: ignore[arg-type]
    return SweepOutcome(7, "stopped", records, rec, FINGERPRINT, "study",  # type: ignore[arg-type]
                        unmeasured=unmeasured, stopped_by="budget", budget_s=300.0)


def test_a_sweep_with_no_result_reads_stopped_with_the_budget_it_needs() -> None:
    baseline = stopped(EAGER_FP32, None)
    done = outcome([baseline], [EAGER_FP32.label, STATIC.label])
    line = no_result_line(done)
    # 10 s before its stream, 1 s a request: 150 requests and the least steady state, 240 s,
    # a fifth of the budget (its 60 s of 300): 1200 s
    assert line == ("sweep 7 stopped: the budget ended before the first result; a next run needs "
                    "about --budget 20m (fp32 + eager served 40 of 150 requests in 40 s: its "
                    "replay takes about 240 s, 20% of the budget)")
    said = unmeasured_line(done)
    assert said.startswith("the budget ended; not measured: 2 of 2 configs (fp32 + eager "
                           "(stopped by the budget after 40 of 150 requests), ")


def test_a_running_trial_shows_its_progress() -> None:
    info = {"phase": "replaying", "done": 86, "total": 150, "unit": "request", "phase_s": 41.0,
            "elapsed_s": 50.0}
    assert progress_text(info, "fp32 + eager") == (
        "replaying fp32 + eager: request 87 of 150, 41.0 s")
    assert progress_text(info, short=True) == "request 87/150, 41.0 s"
    assert progress_text({"phase": "compiling", "phase_s": 12.0}, "bf16 + default") == (
        "compiling bf16 + default, 12.0 s")
    assert progress_text({"phase": "waiting for a quiet host: 1.5 of 2 cores busy",
                          "phase_s": 3.0}, "bf16 + default") == (
        "bf16 + default: waiting for a quiet host: 1.5 of 2 cores busy, 3.00 s")
    # piped: one line per progress, at most every PLAIN_EVERY_S
    out = io.StringIO()
    now = [0.0]
    observer = ProgressObserver(Console(file=out, width=80), clock=lambda: now[0],
                                repeat_s=None)
    with observer:
        observer.started(1, 3, 0, 300.0)
        observer.trial_started(EAGER_FP32)
        for t in (4.0, 8.0, 12.0, 16.0, 20.0):
            now[0] = t
            observer.trial_progress({**info, "done": int(t), "phase_s": t})
        observer.trial_finished(stopped(EAGER_FP32, None), None)
    lines = out.getvalue().splitlines()
    said = [ln for ln in lines if "replaying fp32 + eager" in ln]
    assert said == ["  replaying fp32 + eager: request 5 of 150, 4.00 s",
                    "  replaying fp32 + eager: request 13 of 150, 12.0 s",
                    "  replaying fp32 + eager: request 21 of 150, 20.0 s"]
    assert any("fp32 + eager: stopped by the budget after 40 of 150 requests" in ln
               for ln in lines)


def test_a_stalled_childs_progress_is_said_again_with_its_time_moved_on() -> None:
    """A child compiling can hold its interpreter for many seconds (its progress thread waits):
    piped, its last progress is said again every PLAIN_EVERY_S, its time moved on."""
    out = io.StringIO()
    now = [0.0]
    observer = ProgressObserver(Console(file=out, width=80), clock=lambda: now[0],
                                repeat_s=None)
    observer.started(1, 2, 0, 300.0)
    observer.trial_started(CompileConfig(mode="default", dtype="bf16"))
    observer.say_progress()  # nothing said yet: nothing to repeat
    now[0] = 4.0
    observer.trial_progress({"phase": "compiling", "done": 1, "total": 8,
                             "unit": "start-up shape", "phase_s": 9.5})
    for t in (8.0, 12.0, 16.0, 21.0):  # no progress comes: the repeater's looks
        now[0] = t
        observer.say_progress()
    said = [ln for ln in out.getvalue().splitlines() if "compiling" in ln]
    assert said == ["  compiling bf16 + default: start-up shape 2 of 8, 9.50 s",  # at 4 s
                    "  compiling bf16 + default: start-up shape 2 of 8, 17.5 s",  # at 12 s
                    "  compiling bf16 + default: start-up shape 2 of 8, 26.5 s"]  # at 21 s
    assert observer.progress_now(short=True) == "start-up shape 2/8, 26.5 s"


def test_the_bar_shows_the_progress_at_80_columns() -> None:
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=True, color_system=None)
    observer = ProgressObserver(console, clock=lambda: 0.0)
    observer.plain = False  # the bar, as on a terminal
    observer.started(1, 5, 0, 300.0)
    observer.trial_started(CompileConfig(mode="default", dtype="bf16",
                                         shapes="buckets:fitted-2"))
    observer.trial_progress({"phase": "replaying", "done": 86, "total": 150,
                             "unit": "request", "phase_s": 41.0})
    console.print(observer.progress.get_renderable())
    drawn = out.getvalue()
    assert "request 87/150, 41.0 s" in drawn
    assert all(len(line) <= 80 for line in drawn.splitlines())
