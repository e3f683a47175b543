"""The sweep's time left keeps moving: it counts down during a trial, and after the trials it
names the step under way (the warm start, the leaders' re-measurement) with its time so far,
on the redrawn bar and in piped lines. The clock is the test's, so no figure depends on load."""

from __future__ import annotations

import io

from rich.console import Console

from advisor.cli.progress import ProgressObserver, time_left_text
from advisor.config import CompileConfig

EAGER = CompileConfig(mode="eager", dtype="fp32")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def ok(median_ms: float) -> dict[str, object]:
    return {"status": "ok", "median_ms": median_ms, "passed": True, "config": EAGER.to_dict()}


def test_the_time_left_counts_down_then_names_the_warm_start_with_its_time() -> None:
    clock, out = Clock(), io.StringIO()
    observer = ProgressObserver(Console(file=out, width=200, force_terminal=True), clock)
    assert not observer.plain
    with observer:
        observer.started(1, 3, 0, None)
        observer.trial_started(EAGER)
        clock.now += 10
        observer.trial_finished(ok(1.0), 1.0)
        assert observer.time_left() == "~20.0 s left"
        observer.trial_started(EAGER)
        observer.phase("compiling")
        clock.now += 4
        assert observer.time_left() == "~16.0 s left"  # moving while the trial runs
        clock.now += 30  # past the mean: what runs and its time, then the trials not started
        assert observer.time_left() == "compiling, 34.0 s so far, ~10.0 s after"
        observer.trial_finished(ok(0.5), 0.5)
        observer.trial_started(EAGER)
        clock.now += 5
        observer.trial_finished(ok(0.7), 0.5)
        assert observer.time_left() == ""  # no trial left and no step under way
        observer.phase("warm start of the recommended config")
        clock.now += 12
        assert observer.time_left() == "warm start of the recommended config 12.0 s"
        observer.progress.refresh()
        clock.now += 3
        assert observer.time_left() == "warm start of the recommended config 15.0 s"
        observer.progress.refresh()
    drawn = out.getvalue()
    assert "warm start of the recommended config 12.0 s" in drawn
    assert "warm start of the recommended config 15.0 s" in drawn


def test_a_budgeted_sweep_counts_its_budget_down_then_names_the_step() -> None:
    clock = Clock()
    observer = ProgressObserver(Console(file=io.StringIO()), clock)
    with observer:
        observer.started(1, 5, 0, 600.0)
        observer.trial_started(EAGER)
        clock.now += 90
        assert observer.time_left() == "8.50 min of budget left"
        observer.trial_finished(ok(1.0), 1.0)
        observer.phase("re-measuring fp32 + eager, bf16 + eager side by side")
        clock.now += 2
        assert observer.time_left() == "re-measuring fp32 + eager, bf16 + eager side by side 2.00 s"


def test_piped_steps_after_the_trials_print_a_line_with_the_time_elapsed() -> None:
    clock, out = Clock(), io.StringIO()
    observer = ProgressObserver(Console(file=out, width=200), clock)
    assert observer.plain
    with observer:
        observer.started(4, 1, 0, None)
        observer.trial_started(EAGER)
        observer.phase("compiling")  # a trial's own phase: no line of its own
        clock.now += 75
        observer.trial_finished(ok(1.0), 1.0)
        observer.phase("warm start of the recommended config")
    lines = out.getvalue().splitlines()
    assert "compiling" not in out.getvalue()
    assert lines[-1] == "  warm start of the recommended config (75.0 s elapsed)"


def test_the_time_left_is_an_estimate_only_while_one_holds() -> None:
    # normal: the mean trial time times the trials left, less the running one's time
    assert time_left_text(3, 10.0, 4.0, "compiling") == "~26.0 s left"
    assert time_left_text(3, 10.0, None) == "~30.0 s left"  # between trials
    # estimate exceeded: never "~0 s left" while the trial runs on
    assert time_left_text(1, 10.0, 10.0, "compiling") == "compiling, 10.0 s so far"
    assert time_left_text(1, 10.0, 9.5, "compiling") == "compiling, 9.50 s so far"
    assert time_left_text(1, 10.0, 150.0, "compiling") == "compiling, 2.50 min so far"
    assert time_left_text(2, 10.0, 45.0, "replaying") == "replaying, 45.0 s so far, ~10.0 s after"
    # no estimate: no trial finished yet
    assert time_left_text(4, None, 150.0, "compiling") == "compiling, 2.50 min so far"
    assert time_left_text(4, None, 3.0, "") == "running, 3.00 s so far"
    assert time_left_text(4, None, None) == ""
    assert time_left_text(0, 10.0, None) == ""  # nothing left


def test_the_first_trial_says_its_phase_and_a_spent_budget_says_what_runs() -> None:
    clock = Clock()
    observer = ProgressObserver(Console(file=io.StringIO()), clock)
    with observer:
        observer.started(1, 3, 0, None)
        observer.trial_started(EAGER)
        assert observer.time_left() == "starting, 0 ms so far"
        observer.trial_progress({"phase": "waiting for a quiet host: 1.5 of 2 cores busy",
                                 "phase_s": 2.0})
        clock.now += 5
        assert observer.time_left() == "waiting for a quiet host, 5.00 s so far"
        observer.phase("compiling")
        clock.now += 145
        assert observer.time_left() == "compiling, 2.50 min so far"
    observer = ProgressObserver(Console(file=io.StringIO()), clock)
    with observer:
        observer.started(2, 3, 0, 30.0)
        observer.trial_started(EAGER)
        observer.phase("measuring")
        clock.now += 40
        assert observer.time_left() == "budget spent; measuring, 40.0 s so far"
