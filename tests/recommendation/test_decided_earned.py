""""Decided" is earned: coverage, busy hosts, regime changes and figures that moved, decided on
hand-built records with known answers (the pure decision; the real sweeps are in
tests/search/test_coverage.py and tests/child/test_hostload.py)."""

from __future__ import annotations

from typing import Any

import pytest
from recommend_support import record

from advisor.config import EAGER_FP32, CompileConfig
from advisor.recommendation import cover, recommend
from advisor.search.confirm import summarize

FP = {"fingerprint_hash": "f" * 16}
SPACE = [CompileConfig(mode=m, dtype=d) for m in ("eager", "default", "max-autotune")
         for d in ("fp32", "bf16")]


def host(contended: bool, others: float = 1.8) -> dict[str, Any]:
    return {"cores": 2, "online_cores": 2, "threads": 2, "others_cores": others,
            "load_start": 5.5, "load_end": 5.7, "psi_some": 0.6, "wall_s": 1.0,
            "contended": contended, "waited_s": 20.0}


def test_only_the_baseline_measured_is_provisional_and_never_says_does_not_pay_off() -> None:
    records = [record(FP, "eager", "fp32", 74.4)]
    rec = cover(recommend("w", records, "f" * 16), SPACE, records)
    assert rec.decision == "provisional"
    assert len(rec.unmeasured) == 5 and rec.unmeasured_compiled == 4
    assert rec.sentence == (
        "provisional (measured 1 of 6 configs; not measured: bf16 + eager, fp32 + default, "
        "bf16 + default, fp32 + max-autotune, bf16 + max-autotune): fp32 + eager: 74.4 ms; "
        "compiling was not measured (4 compiled configs not measured)")


def test_every_config_measured_is_decided_and_compiled_losers_do_not_pay_off() -> None:
    records = [record(FP, "eager", d, ms) for d, ms in (("fp32", 10.0), ("bf16", 4.0))]
    records += [record(FP, m, d, 9.0) for m in ("default", "max-autotune")
                for d in ("fp32", "bf16")]
    rec = cover(recommend("w", records, "f" * 16), SPACE, records)
    assert rec.decision == "decided" and rec.best is not None
    assert rec.best.label == "bf16 + eager"
    assert "compiling does not pay off here" in rec.sentence
    assert not rec.unmeasured and rec.coverage == ""


def test_a_failed_config_is_measured_not_missing() -> None:
    records = [record(FP, "eager", "fp32", 10.0), record(FP, "default", "fp32", 5.0)]
    broken = record(FP, "default", "bf16", 1.0)
    broken.update(status="failed", failure_reason="compile_error", median_ms=None, passed=None)
    space = [SPACE[0], SPACE[2], SPACE[3]]  # fp32 eager, fp32 + default, bf16 + default
    rec = cover(recommend("w", [*records, broken], "f" * 16), space, [*records, broken])
    assert rec.unmeasured == [] and rec.decision == "decided"


def test_a_contended_figure_never_decides() -> None:
    quiet = record(FP, "eager", "fp32", 60.0, host=host(False, 0.1))
    busy = record(FP, "default", "bf16", 20.0, host=host(True))
    rec = recommend("w", [quiet, busy], "f" * 16)
    assert rec.decision == "undecided: host busy" and rec.best is None
    assert rec.sentence.startswith("cannot decide here: host busy (other processes used 1.8 "
                                   "of 2 cores, load 5.7)")
    assert "measure again on a quiet host" in rec.note


def test_a_quiet_figure_supersedes_a_contended_one_of_the_same_config() -> None:
    records = [record(FP, "eager", "fp32", 60.0, host=host(False, 0.1)),
               record(FP, "default", "bf16", 900.0, host=host(True)),
               record(FP, "default", "bf16", 20.0, host=host(False, 0.2))]
    rec = recommend("w", records, "f" * 16)
    assert rec.decision == "decided" and rec.best is not None
    assert rec.best.median_ms == 20.0 and not rec.best.contended


def test_figures_that_moved_beyond_3x_are_flagged_not_silently_pooled() -> None:
    records = [record(FP, "eager", "fp32", 1.0),
               record(FP, "default", "fp32", 0.0758), record(FP, "default", "fp32", 30.2)]
    rec = recommend("w", records, "f" * 16)
    moved = next(r for r in rec.ranked if r.config.mode == "default")
    assert moved.moved == [0.0758, 30.2] and moved.noisy
    assert "fp32 + default's 2 trials lie 398x apart (75.8 µs to 30.2 ms)" in rec.note


def _confirmation(base_trial: dict[str, Any], pick: dict[str, Any], eager_ms: float,
                  pick_ms: float, contended: bool = False) -> dict[str, Any]:
    configs = [EAGER_FP32, CompileConfig.from_dict(pick["config"])]
    shapes = [{"shape": "batch=16", "dims": {"batch": 16}, "weight": 1.0}]
    result = {"status": "ok", "method": "perf_counter", "rounds": 30,
              "samples_ms": {EAGER_FP32.key: [[eager_ms * (1 + i / 1000) for i in range(30)]],
                             configs[1].key: [[pick_ms * (1 + i / 1000) for i in range(30)]]},
              "host": host(contended, 1.9 if contended else 0.1)}
    trials = {EAGER_FP32.key: base_trial["trial_uuid"], configs[1].key: pick["trial_uuid"]}
    return dict(summarize(result, configs, shapes, trials))


def test_a_regime_change_is_said_and_no_speedup_spans_it(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    monkeypatch.setenv("ADVISOR_REGIME_RATIO", "2")  # the default (the suite's conftest: off)
    base = record(FP, "eager", "fp32", 63.2, ci=(62.0, 64.0))
    bf16 = record(FP, "eager", "bf16", 30.0, ci=(29.0, 31.0))
    fast = record(FP, "default", "fp32", 71.7, ci=(70.0, 73.0))
    confirmation = _confirmation(base, bf16, 1580.0, 749.0)
    rec = recommend("w", [base, bf16, fast], "f" * 16, confirmation=confirmation)  # type: ignore[arg-type]
    assert "the host changed between the trials and the paired re-measurement" in rec.note
    assert not any(r.confirmed for r in rec.ranked)  # the paired figures are not used
    assert rec.baseline is not None and rec.baseline.median_ms == 63.2
    assert rec.decision == "undecided: host changed"
    assert rec.best is not None and rec.best.label == "bf16 + eager"
    assert all(r.median_ms >= rec.best.median_ms for r in rec.ranked)


def test_a_busy_paired_re_measurement_is_not_used() -> None:
    base = record(FP, "eager", "fp32", 10.0, ci=(9.8, 10.2))
    pick = record(FP, "default", "fp32", 5.0, ci=(4.9, 5.1))
    confirmation = _confirmation(base, pick, 10.0, 5.0, contended=True)
    rec = recommend("w", [base, pick], "f" * 16, confirmation=confirmation)  # type: ignore[arg-type]
    assert "the paired re-measurement ran on a busy host" in rec.note
    assert not rec.paired and rec.decision == "decided"
