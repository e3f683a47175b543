"""The latency policy on hand-built trial records whose right answer is known."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from advisor.config import CompileConfig
from advisor.recommend import TIE_RATIO, recommend
from advisor.record import empty_record

_uuids = itertools.count()


def trial(
    mode: str,
    dtype: str = "fp32",
    median_ms: float | None = 1.0,
    *,
    passed: bool | None = True,
    status: str = "ok",
    **fields: Any,
) -> dict[str, Any]:
    """A stored-looking trial record of one config."""
    config = CompileConfig(mode=mode, dtype=dtype)
    record = empty_record()
    record.update(
        trial_uuid=f"trial-{next(_uuids)}",
        status=status,
        config=config.to_dict(),
        config_key=config.key,
        median_ms=median_ms,
        p90_ms=median_ms and median_ms * 1.1,
        passed=passed,
        cold_compile_s=None if mode == "eager" else 10.0,
    )
    if status != "ok":
        record.update(median_ms=None, p90_ms=None, passed=None, failure_reason="compile_error")
    record.update(fields)
    return record


def eager_fp32(median_ms: float = 10.0, **fields: Any) -> dict[str, Any]:
    return trial("eager", "fp32", median_ms, **fields)


# --- the best by median -----------------------------------------------------------------------


def test_best_is_the_lowest_median_and_speedups_are_against_eager_fp32() -> None:
    records = [
        eager_fp32(10.0),
        trial("default", "fp32", 5.0),
        trial("default", "bf16", 2.0),
        trial("eager", "bf16", 8.0),
    ]
    rec = recommend("w", records, "fp-hash")
    assert rec.best is not None and rec.baseline is not None
    assert rec.best.label == "bf16 + default"
    assert rec.best.speedup == pytest.approx(5.0)
    assert rec.baseline.median_ms == 10.0 and rec.baseline.speedup == pytest.approx(1.0)
    assert [r.median_ms for r in rec.ranked] == [2.0, 5.0, 8.0, 10.0]
    assert [r.speedup for r in rec.ranked] == pytest.approx([5.0, 2.0, 1.25, 1.0])
    assert (rec.workload, rec.fingerprint_hash, rec.n_trials) == ("w", "fp-hash", 4)
    assert (rec.n_failed, rec.n_rejected, rec.note) == (0, 0, "")
    assert rec.sentence.startswith("bf16 + default: 2 ms vs 10 ms eager fp32 (5.00x)")
    assert "10.0 s cold compile" in rec.sentence


def test_sentence_compares_launches_per_call_with_the_baseline() -> None:
    records = [
        eager_fp32(6.2, launches_per_call=118),
        trial("reduce-overhead", "bf16", 0.96, cold_compile_s=13.0, launches_per_call=2),
    ]
    assert recommend("reranker", records).sentence == (
        "bf16 + reduce-overhead: 0.96 ms vs 6.2 ms eager fp32 (6.46x), 13.0 s cold compile, "
        "2 launches per call vs 118 launches per call"
    )


def test_one_entry_per_config_its_best_trial() -> None:
    records = [
        eager_fp32(10.0),
        eager_fp32(9.0),
        trial("default", median_ms=4.0),
        trial("default", median_ms=3.0),
        trial("default", median_ms=5.0),
    ]
    rec = recommend("w", records)
    assert [r.median_ms for r in rec.ranked] == [3.0, 9.0]
    assert rec.baseline is not None and rec.baseline.median_ms == 9.0
    assert rec.best is not None and rec.best.speedup == pytest.approx(3.0)
    assert rec.n_trials == 5


# --- failures and rejected trials -------------------------------------------------------------


def test_failed_and_rejected_trials_are_never_recommended() -> None:
    records = [
        eager_fp32(10.0),
        trial("default", "fp32", 4.0),
        trial("default", "bf16", 1.0, passed=False),  # fastest, but wrong
        trial("reduce-overhead", "fp16", status="failed"),
        trial("max-autotune", "bf16", 0.5, passed=None),  # no verdict is no pass
    ]
    rec = recommend("w", records)
    assert rec.best is not None and rec.best.label == "fp32 + default"
    assert {r.label for r in rec.ranked} == {"fp32 + eager", "fp32 + default"}
    assert (rec.n_trials, rec.n_failed, rec.n_rejected) == (5, 1, 2)


def test_nothing_passed_means_no_best() -> None:
    records = [trial("default", median_ms=1.0, passed=False), trial("eager", status="failed")]
    rec = recommend("w", records)
    assert rec.best is None and rec.ranked == []
    assert (rec.n_failed, rec.n_rejected) == (1, 1)
    assert rec.sentence == "no config of w ran and passed; nothing to recommend"


def test_no_records_means_no_best() -> None:
    rec = recommend("w", [])
    assert (rec.best, rec.baseline, rec.n_trials) == (None, None, 0)
    assert "nothing to recommend" in rec.sentence


# --- ties: the simpler config wins ------------------------------------------------------------


def test_simpler_config_within_the_tie_ratio_wins_with_a_note() -> None:
    records = [
        eager_fp32(10.0),
        trial("default", median_ms=2.0),
        trial("max-autotune", median_ms=2.0 / (1 + TIE_RATIO / 2)),
    ]
    rec = recommend("w", records)
    assert rec.best is not None and rec.best.label == "fp32 + default"
    assert rec.ranked[0].label == "fp32 + max-autotune"  # still ranked by median
    assert "within 2% of the fastest (fp32 + max-autotune" in rec.note
    assert "simpler" in rec.note


def test_outside_the_tie_ratio_the_faster_config_wins() -> None:
    records = [
        eager_fp32(10.0),
        trial("default", median_ms=2.0),
        trial("max-autotune", median_ms=2.0 / (1 + 2 * TIE_RATIO)),
    ]
    rec = recommend("w", records)
    assert rec.best is not None and rec.best.label == "fp32 + max-autotune"
    assert rec.note == ""


def test_tie_in_one_mode_goes_to_the_shorter_cold_compile() -> None:
    records = [
        eager_fp32(10.0),
        trial("default", "fp32", 2.00, cold_compile_s=30.0),
        trial("default", "bf16", 2.01, cold_compile_s=12.0),
    ]
    rec = recommend("w", records)
    assert rec.best is not None and rec.best.label == "bf16 + default"
    assert "bf16 + default is within 2%" in rec.note


# --- eager wins -------------------------------------------------------------------------------


def test_eager_winning_says_compiling_does_not_pay_off() -> None:
    records = [eager_fp32(1.0), trial("default", median_ms=2.0), trial("default", "bf16", 4.0)]
    rec = recommend("w", records)
    assert rec.best is not None and rec.best.config["mode"] == "eager"
    assert rec.sentence == (
        "fp32 + eager: 1 ms; compiling does not pay off here "
        "(fastest compiled: fp32 + default, 2 ms, 0.50x)"
    )


def test_eager_within_the_tie_ratio_of_a_compiled_config_wins() -> None:
    records = [eager_fp32(1.0), trial("default", median_ms=0.995)]
    rec = recommend("w", records)
    assert rec.best is not None and rec.best.label == "fp32 + eager"
    assert "compiling does not pay off" in rec.sentence
    assert rec.note


# --- no baseline ------------------------------------------------------------------------------


def test_without_a_baseline_speedups_are_none() -> None:
    records = [
        trial("default", median_ms=2.0),
        trial("eager", "bf16", 3.0),
        eager_fp32(status="failed"),
    ]
    rec = recommend("w", records)
    assert rec.baseline is None
    assert rec.best is not None and rec.best.label == "fp32 + default"
    assert all(r.speedup is None for r in rec.ranked)
    assert "eager fp32" not in rec.sentence
    assert rec.sentence.startswith("fp32 + default: 2 ms")


def test_without_a_baseline_an_eager_winner_is_reported_plainly() -> None:
    rec = recommend("w", [trial("eager", "bf16", 1.0), trial("default", "bf16", 3.0)])
    assert rec.best is not None and rec.best.speedup is None
    assert rec.sentence.startswith("bf16 + eager: 1 ms")


def test_a_rejected_baseline_still_sets_the_speedups() -> None:
    # The baseline is the oracle; if it is flagged it still anchors the speedups.
    records = [eager_fp32(10.0, passed=False), trial("default", median_ms=5.0)]
    rec = recommend("w", records)
    assert rec.baseline is not None and rec.best is not None
    assert rec.best.speedup == pytest.approx(2.0)


# --- output -----------------------------------------------------------------------------------


def test_to_dict_is_json_and_carries_the_sentence() -> None:
    records = [eager_fp32(10.0), trial("default", median_ms=5.0), trial("eager", status="failed")]
    rec = recommend("w", records, "abc")
    data = json.loads(json.dumps(rec.to_dict()))
    assert data["sentence"] == rec.sentence
    assert data["best"]["config"] == CompileConfig(mode="default").to_dict()
    assert data["best"]["speedup"] == pytest.approx(2.0)
    assert data["baseline"]["label"] == "fp32 + eager"
    assert data["fingerprint_hash"] == "abc" and data["n_failed"] == 1
    assert len(data["ranked"]) == 2
