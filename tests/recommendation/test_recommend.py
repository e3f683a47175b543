"""Policies, statistics, confirmation, staleness and export on hand-built trial records whose
right answer is known."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from support.records import eager_fp32, trial

from advisor.config import CompileConfig
from advisor.errors import ConfigError
from advisor.recommendation import (
    NEAR_RATIO,
    TIE_RATIO,
    Constraints,
    break_even_calls,
    export_dict,
    fingerprint_changes,
    flag_legend,
    nearest_fingerprint,
    parse_bytes,
    recommend,
    to_python,
    to_yaml,
    traffic_throughput,
)
from advisor.stats import median_ci, paired_speedup

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
    # two trials' medians: the speedup says it is not a paired one
    assert rec.sentence.startswith("bf16 + default: 2.00 ms vs 10.0 ms eager fp32 (5.00x from "
                                   "separate trials, not paired)")
    assert "10.0 s cold compile" in rec.sentence


def test_sentence_compares_launches_per_call_with_the_baseline() -> None:
    records = [
        eager_fp32(6.2, launches_per_call=118),
        trial("reduce-overhead", "bf16", 0.96, cold_compile_s=13.0, launches_per_call=2),
    ]
    assert recommend("reranker", records).sentence == (
        "bf16 + reduce-overhead: 0.960 ms vs 6.20 ms eager fp32 (6.46x from separate trials, not "
        "paired), 13.0 s cold compile, "
        "2 launches per call vs 118 launches per call"
    )


def test_one_entry_per_config_pooled_over_its_trials_never_the_best_of_n() -> None:
    records = [
        eager_fp32(10.0),
        eager_fp32(9.0),
        trial("default", median_ms=4.0),
        trial("default", median_ms=3.0),
        trial("default", median_ms=5.0),
    ]
    rec = recommend("w", records)
    assert [r.median_ms for r in rec.ranked] == [4.0, 9.5]  # medians of the trials' figures
    assert [r.n_trials for r in rec.ranked] == [3, 2]
    assert rec.baseline is not None and rec.baseline.median_ms == 9.5
    assert rec.best is not None and rec.best.speedup == pytest.approx(9.5 / 4.0)
    assert rec.baseline_name == "eager fp32 9.50 ms (median of 2 trials' steady-state medians)"
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


def test_unpaired_figures_within_the_tie_ratio_are_no_tie_but_equivalent_past_eager() -> None:
    records = [
        eager_fp32(10.0),
        trial("default", median_ms=2.0),
        trial("max-autotune", median_ms=2.0 / (1 + TIE_RATIO / 2)),
    ]
    rec = recommend("w", records)
    # Not a tie (unpaired), but both beat eager fp32 clearly: equivalent, and with the same cold
    # compile the simpler is picked by the stated rule
    assert rec.best is not None and rec.best.label == "fp32 + default"
    assert rec.decision == "equivalent" and rec.undecided == ["fp32 + default"]
    assert rec.note.startswith("equivalent: fp32 + default (2.00 ms; 10.0 s cold compile) is "
                               "picked by simplicity")
    assert "fp32 + max-autotune (1.98 ms; 10.0 s cold compile) is equivalent" in rec.note
    assert rec.contenders == [records[2]["config_key"], records[1]["config_key"]]  # leader first


def test_outside_the_tie_ratio_the_faster_config_wins() -> None:
    records = [
        eager_fp32(10.0),
        trial("default", median_ms=2.0),
        trial("max-autotune", median_ms=2.0 / (1 + 2 * TIE_RATIO)),
    ]
    rec = recommend("w", records)
    assert rec.best is not None and rec.best.label == "fp32 + max-autotune"
    assert rec.note == ""
    # Not a tie, but 4% apart, each from its own process: both are worth re-measuring together.
    assert rec.contenders == [records[2]["config_key"], records[1]["config_key"]]


def test_configs_more_than_ten_percent_behind_are_no_contenders() -> None:
    records = [
        eager_fp32(10.0),
        trial("default", median_ms=2.0),
        trial("max-autotune", median_ms=2.0 / (1 + NEAR_RATIO) - 0.01),
    ]
    rec = recommend("w", records)
    assert rec.best is not None and rec.best.label == "fp32 + max-autotune"
    assert rec.contenders == []


def test_a_simplest_leader_still_names_its_contenders() -> None:
    records = [
        eager_fp32(10.0, median_ci_ms=[9.8, 10.2]),
        trial("default", median_ms=1.90, median_ci_ms=[1.8, 2.0]),
        trial("max-autotune", median_ms=1.95, median_ci_ms=[1.85, 2.05]),  # overlaps
        trial("reduce-overhead", median_ms=2.5, median_ci_ms=[2.4, 2.6]),  # apart
    ]
    rec = recommend("w", records)
    assert rec.best is not None and rec.best.label == "fp32 + default"
    assert rec.decision == "equivalent" and rec.undecided == ["fp32 + max-autotune"]
    assert rec.contenders == [records[1]["config_key"], records[2]["config_key"]]


def test_tie_in_one_mode_goes_to_the_shorter_cold_compile() -> None:
    conf = confirmation(("eager", "fp32", 10.0, [1.0, 1.0]), ("default", "fp32", 2.00, [4.9, 5.1]),
                        ("default", "bf16", 2.01, [4.9, 5.0]))
    records = [
        eager_fp32(10.0),
        trial("default", "fp32", 2.00, cold_compile_s=30.0),
        trial("default", "bf16", 2.01, cold_compile_s=12.0),
    ]
    rec = recommend("w", records, confirmation=conf)
    assert rec.best is not None and rec.best.label == "bf16 + default"
    assert rec.decision == "tie" and "bf16 + default (2.01 ms) is within 2%" in rec.note


# --- eager wins -------------------------------------------------------------------------------


def test_eager_winning_says_compiling_does_not_pay_off() -> None:
    records = [eager_fp32(1.0), trial("default", median_ms=2.0), trial("default", "bf16", 4.0)]
    rec = recommend("w", records)
    assert rec.best is not None and rec.best.config.mode == "eager"
    assert rec.sentence == (
        "fp32 + eager: 1.00 ms; compiling does not pay off here "
        "(fastest compiled: fp32 + default, 2.00 ms, 0.50x)"
    )


def test_eager_within_the_tie_ratio_of_a_compiled_config_wins_on_paired_figures() -> None:
    records = [eager_fp32(1.0), trial("default", median_ms=0.995)]
    assert recommend("w", records).best.label == "fp32 + default"  # type: ignore[union-attr]
    conf = confirmation(("eager", "fp32", 1.0, [1.0, 1.0]), ("default", "fp32", 0.995,
                                                            [0.99, 1.02]))
    rec = recommend("w", records, confirmation=conf)
    assert rec.best is not None and rec.best.label == "fp32 + eager"
    assert "compiling does not pay off" in rec.sentence
    assert "on paired figures" in rec.note


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
    assert rec.sentence.startswith("fp32 + default: 2.00 ms")


def test_without_a_baseline_an_eager_winner_is_reported_plainly() -> None:
    rec = recommend("w", [trial("eager", "bf16", 1.0), trial("default", "bf16", 3.0)])
    assert rec.best is not None and rec.best.speedup is None
    assert rec.sentence.startswith("bf16 + eager: 1.00 ms")


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


# === policies, statistics, confirmation, staleness, export (issue 6) ==========================

def shapes(*pairs: tuple[float, float]) -> list[dict[str, Any]]:
    """Per-shape results with (weight, throughput_per_s)."""
    return [
        {"shape": f"batch={i}", "dims": {"batch": i}, "weight": w, "throughput_per_s": t}
        for i, (w, t) in enumerate(pairs, start=1)
    ]


# --- tail and throughput ----------------------------------------------------------------------


def test_tail_picks_the_lowest_p99_not_the_lowest_median() -> None:
    records = [
        eager_fp32(10.0, p99_ms=30.0),
        trial("default", median_ms=4.0, p99_ms=20.0),  # fastest median, long tail
        trial("default", "bf16", 5.0, p99_ms=6.0),
    ]
    assert recommend("w", records).best.label == "fp32 + default"  # type: ignore[union-attr]
    rec = recommend("w", records, policy="tail")
    assert rec.best is not None and rec.best.label == "bf16 + default"
    assert [r.score for r in rec.ranked] == [6.0, 20.0, 30.0]
    assert rec.sentence == "bf16 + default: p99 6.00 ms vs 30.0 ms eager fp32 (median 5.00 ms)"


def test_a_new_policy_is_one_class_its_sentence_included(monkeypatch: pytest.MonkeyPatch) -> None:
    """A policy scores, orders and words its pick in its own class: the recommendation's
    sentence takes the policy's headline (`Policy.headline`) and names no policy itself."""
    import inspect

    from advisor.recommendation import evidence, policies

    class Fewest(policies.Policy):  # fewest launches per call
        name = "fewest-launches"

        def score(self, r: Any) -> float | None:
            return float(r.launches_per_call) if r.launches_per_call is not None else None

        def headline(self, rec: Any) -> str:
            assert rec.best is not None
            return f"{rec.best.label}: {rec.best.launches_per_call} launches per call"

    monkeypatch.setitem(policies.REGISTRY, Fewest.name, Fewest)
    monkeypatch.setattr(policies, "POLICIES", tuple(policies.REGISTRY))
    records = [eager_fp32(10.0, launches_per_call=40),
               trial("default", median_ms=4.0, launches_per_call=9),
               trial("reduce-overhead", median_ms=5.0, launches_per_call=1)]
    rec = recommend("w", records, policy="fewest-launches")
    assert rec.best is not None and rec.best.label == "fp32 + reduce-overhead"
    assert rec.sentence == "fp32 + reduce-overhead: 1 launches per call"
    assert recommend("w", records).sentence.startswith("fp32 + default: 4.00 ms vs 10.0 ms")
    # the sentence's own code branches on no policy's name
    source = inspect.getsource(evidence.Recommendation)
    assert re.findall(r"self\.policy\s*(?:==|!=|in\b|not in\b)", source) == []


def test_traffic_throughput_is_the_harmonic_mix_of_the_shapes() -> None:
    # weights 0.75 / 0.25 of 1000 and 500 calls/s: 1 / (0.75/1000 + 0.25/500) = 1 / 0.00125
    assert traffic_throughput(shapes((3, 1000.0), (1, 500.0))) == pytest.approx(800.0)
    assert traffic_throughput(shapes((1, 250.0))) == pytest.approx(250.0)
    assert traffic_throughput(shapes((1, 250.0), (1, 0.0))) is None  # one shape unmeasured
    assert traffic_throughput([]) is None


def test_throughput_picks_the_most_calls_per_second() -> None:
    records = [
        eager_fp32(10.0, shapes=shapes((1, 90.0))),
        trial("default", median_ms=4.0, shapes=shapes((1, 300.0))),
        trial("default", "bf16", 5.0, shapes=shapes((1, 900.0))),  # batches better
        trial("max-autotune", median_ms=3.0, shapes=[]),  # no throughput figure: left out
    ]
    rec = recommend("w", records, policy="throughput")
    assert rec.best is not None and rec.best.label == "bf16 + default"
    assert [r.throughput_per_s for r in rec.ranked] == pytest.approx([900.0, 300.0, 90.0])
    assert rec.excluded == {"no throughput figure": 1} and rec.n_excluded == 1
    assert rec.sentence == "bf16 + default: 900 calls/s vs 90 eager fp32 (median 5.00 ms)"


def test_throughput_within_the_tie_ratio_is_no_tie_but_equivalent_past_eager() -> None:
    records = [
        eager_fp32(10.0, shapes=shapes((1, 100.0))),
        trial("max-autotune", median_ms=4.0, shapes=shapes((1, 1000.0))),
        trial("default", median_ms=4.0, shapes=shapes((1, 990.0))),  # 1% fewer: unpaired
    ]
    rec = recommend("w", records, policy="throughput")
    # no tie on unpaired figures; both 10x eager fp32's throughput: equivalent, the simpler
    assert rec.best is not None and rec.best.label == "fp32 + default"
    assert rec.decision == "equivalent" and rec.undecided == ["fp32 + default"]
    assert "(990 calls/s; 10.0 s cold compile) is picked by simplicity" in rec.note


# --- break-even -------------------------------------------------------------------------------


def test_break_even_calls_by_hand() -> None:
    # 30 s of compile saved at 10 - 5 = 5 ms per call: 30 000 ms / 5 ms = 6 000 calls
    assert break_even_calls(30.0, 5.0, 10.0) == 6000
    assert break_even_calls(30.0, 7.0, 10.0) == 10000
    assert break_even_calls(1.0, 9.999, 10.0) == 1000000
    assert break_even_calls(30.0, 10.0, 10.0) is None  # not faster: never
    assert break_even_calls(30.0, 12.0, 10.0) is None
    assert break_even_calls(None, 5.0, 10.0) == 0  # no compile: pays off at once
    assert break_even_calls(30.0, 5.0, None) is None  # no baseline


BREAK_EVEN = [
    eager_fp32(10.0),
    trial("default", median_ms=5.0, cold_compile_s=30.0),  # pays off after 6 000 calls
    trial("max-autotune", median_ms=4.0, cold_compile_s=120.0),  # after 20 000 calls
]


def test_every_config_says_when_compiling_pays_off() -> None:
    rec = recommend("w", BREAK_EVEN)
    found = {r.label: r.break_even_calls for r in rec.ranked}
    assert found == {"fp32 + eager": None, "fp32 + default": 6000, "fp32 + max-autotune": 20000}


def test_a_short_lived_process_stays_eager() -> None:
    rec = recommend("w", BREAK_EVEN, policy="break-even", calls_per_process=1000)
    # eager 1000 x 10 ms = 10 s; default 30 + 5 = 35 s; max-autotune 120 + 4 = 124 s
    assert rec.best is not None and rec.best.label == "fp32 + eager"
    assert [(r.label, r.total_s) for r in rec.ranked] == [
        ("fp32 + eager", pytest.approx(10.0)), ("fp32 + default", pytest.approx(35.0)),
        ("fp32 + max-autotune", pytest.approx(124.0)),
    ]  # fmt: skip
    assert rec.sentence == (
        "for 1,000 calls per process, fp32 + eager: 10.0 s in all; compiling does not pay off "
        "within 1,000 calls (soonest: fp32 + default pays off after 6,000 calls)"
    )


def test_a_long_lived_process_compiles_and_the_crossing_moves_with_n() -> None:
    picks = {
        n: recommend("w", BREAK_EVEN, policy="break-even", calls_per_process=n).best.label  # type: ignore[union-attr]
        for n in (5_000, 10_000, 100_000, 1_000_000)
    }
    # 10 000 calls: eager 100 s, default 30 + 50 = 80 s, max-autotune 120 + 40 = 160 s
    # 1 000 000 calls: default 5 030 s, max-autotune 4 120 s
    # 100 000 calls: default 530 s, max-autotune 520 s: 2% apart on unpaired figures, both far
    # below eager's 1000 s: equivalent, and default compiles in 30 s, not 120 s
    assert picks == {5_000: "fp32 + eager", 10_000: "fp32 + default",
                     100_000: "fp32 + default", 1_000_000: "fp32 + max-autotune"}  # fmt: skip
    close = recommend("w", BREAK_EVEN, policy="break-even", calls_per_process=100_000)
    assert close.decision == "equivalent" and close.undecided == ["fp32 + default"]
    assert "picked by the lower cold compile" in close.note
    rec = recommend("w", BREAK_EVEN, policy="break-even", calls_per_process=10_000)
    assert rec.sentence == (
        "for 10,000 calls per process, fp32 + default: 80.0 s in all (30.0 s cold compile + "
        "10,000 x 5.00 ms) vs 100 s eager fp32; compiling pays off after 6,000 calls"
    )


def test_exactly_at_the_crossing_it_is_a_tie_and_eager_wins() -> None:
    rec = recommend("w", BREAK_EVEN, policy="break-even", calls_per_process=6000)
    # eager 60 s, default 30 + 30 = 60 s: equal, and eager is simpler
    assert rec.best is not None and rec.best.label == "fp32 + eager"


def test_break_even_needs_a_call_count_and_policies_are_checked() -> None:
    with pytest.raises(ConfigError, match="--calls-per-process"):
        recommend("w", BREAK_EVEN, policy="break-even")
    with pytest.raises(ConfigError, match="--calls-per-process"):
        recommend("w", BREAK_EVEN, policy="break-even", calls_per_process=0)
    with pytest.raises(ConfigError, match="unknown policy 'fastest'"):
        recommend("w", BREAK_EVEN, policy="fastest")


# --- constraints ------------------------------------------------------------------------------


def test_parse_bytes() -> None:
    assert parse_bytes("2GiB") == 2 * 2**30
    assert parse_bytes("512 MiB") == 512 * 2**20
    assert parse_bytes("1.5GB") == 1_500_000_000
    assert parse_bytes("1000") == 1000
    assert parse_bytes("3g") == 3_000_000_000
    for bad in ("lots", "2 parsecs", "-1GiB", "0", ""):
        with pytest.raises(ConfigError, match="bad memory size"):
            parse_bytes(bad)


def test_constraints_exclude_and_say_why() -> None:
    records = [
        eager_fp32(10.0, peak_mem_bytes=1 * 2**30),
        trial("max-autotune", median_ms=2.0, cold_compile_s=90.0, peak_mem_bytes=1 * 2**30),
        trial("default", "bf16", 3.0, cold_compile_s=20.0, peak_mem_bytes=3 * 2**30),
        trial("default", median_ms=4.0, cold_compile_s=20.0, peak_mem_bytes=1 * 2**30),
        trial("reduce-overhead", median_ms=1.0, cold_compile_s=20.0, peak_mem_bytes=None),
    ]
    assert recommend("w", records).best.label == "fp32 + reduce-overhead"  # type: ignore[union-attr]
    limits = Constraints(max_compile_s=60.0, max_memory_bytes=parse_bytes("2GiB"))
    rec = recommend("w", records, constraints=limits)
    assert rec.best is not None and rec.best.label == "fp32 + default"
    assert {r.label for r in rec.ranked} == {"fp32 + default", "fp32 + eager"}
    assert rec.excluded == {
        "cold compile over 60 s": 1, "peak memory over 2 GiB": 1, "peak memory unknown": 1
    }
    assert rec.n_excluded == 3
    assert rec.constraints == {"max_compile_s": 60.0, "max_memory_bytes": 2 * 2**30}


def test_eager_meets_any_compile_limit_and_nothing_left_is_said() -> None:
    records = [
        eager_fp32(10.0, peak_mem_bytes=2**20),
        trial("default", median_ms=1.0, cold_compile_s=20.0, peak_mem_bytes=2**20),
    ]
    rec = recommend("w", records, constraints=Constraints(max_compile_s=5.0))
    assert rec.best is not None and rec.best.label == "fp32 + eager"
    nothing = recommend("w", records, constraints=Constraints(max_memory_bytes=1))
    assert nothing.best is None
    assert nothing.sentence == (
        "no config of w meets the constraints (2 with peak memory over 1 B); nothing to recommend"
    )
    with pytest.raises(ConfigError):
        Constraints(max_compile_s=0)


# --- statistics -------------------------------------------------------------------------------


def test_median_ci_by_hand() -> None:
    assert median_ci([[5.0] * 20]) == (5.0, 5.0)  # no spread, no interval
    # two constant shapes weighted 3:1 -> 0.75 * 1 + 0.25 * 3 = 1.5, whatever the resample
    assert median_ci([[1.0] * 10, [3.0] * 7], [3, 1]) == pytest.approx((1.5, 1.5))
    with pytest.raises(ValueError):
        median_ci([[]])


def test_median_ci_brackets_the_median_like_the_stats_module() -> None:
    import random

    from advisor.stats import Stats

    rng = random.Random(7)
    samples = [rng.gauss(10.0, 1.0) for _ in range(400)]
    low, high = median_ci([samples])
    ref_low, ref_high = Stats(samples).median_ci_ms()
    assert low < Stats(samples).median_ms < high
    assert low == pytest.approx(ref_low, abs=0.08) and high == pytest.approx(ref_high, abs=0.08)
    # 400 draws of sd 1: the median's standard error is about 1.25 / 20 = 0.063 -> width ~0.25
    assert 0.1 < high - low < 0.5
    assert median_ci([samples]) == (low, high)  # seeded: the same interval every time


def test_paired_speedup_removes_drift_that_widens_the_medians() -> None:
    # Both configs slow down by 2x over the run (clock drift); B is always 2x faster than A.
    eager = [10.0 * (1 + i / 100) for i in range(100)]
    fast = [x / 2 for x in eager]
    speedup, (low, high) = paired_speedup([eager], [fast])
    assert speedup == pytest.approx(2.0) and (low, high) == pytest.approx((2.0, 2.0))
    low, high = median_ci([eager])
    assert high - low > 1.0  # unpaired, the drift makes each median uncertain
    with pytest.raises(ValueError):
        paired_speedup([eager], [fast[:-1]])


def test_overlapping_intervals_alone_are_equivalent_said_as_such() -> None:
    records = [
        eager_fp32(10.0, median_ci_ms=[9.8, 10.2]),
        trial("default", median_ms=2.0, median_ci_ms=[1.85, 2.2]),
        trial("max-autotune", median_ms=1.9, median_ci_ms=[1.8, 2.0]),  # 5% faster, overlaps
    ]
    rec = recommend("w", records)
    assert rec.best is not None and rec.best.label == "fp32 + default"
    assert rec.decision == "equivalent"
    assert "fp32 + max-autotune (1.90 ms, 95% CI 1.80-2.00 ms; 10.0 s cold compile) is " \
           "equivalent to it within the noise" in rec.note
    assert ("fp32 + default (2.00 ms, 95% CI 1.85-2.20 ms; 10.0 s cold compile) is picked"
            in rec.note)


def test_separate_intervals_let_the_faster_config_win() -> None:
    records = [
        eager_fp32(10.0, median_ci_ms=[9.8, 10.2]),
        trial("default", median_ms=2.0, median_ci_ms=[1.95, 2.05]),
        trial("max-autotune", median_ms=1.9, median_ci_ms=[1.88, 1.92]),
    ]
    rec = recommend("w", records)
    assert rec.best is not None and rec.best.label == "fp32 + max-autotune"
    assert rec.note == ""


def test_in_a_tie_fewer_graphs_win_before_a_shorter_compile() -> None:
    conf = confirmation(("eager", "fp32", 10.0, [1.0, 1.0]), ("default", "fp32", 2.0, [4.9, 5.1]),
                        ("default", "bf16", 2.01, [4.9, 5.0]))
    records = [
        eager_fp32(10.0),
        trial("default", "fp32", 2.0, graph_count=3, cold_compile_s=10.0),
        trial("default", "bf16", 2.01, graph_count=1, cold_compile_s=20.0),
    ]
    rec = recommend("w", records, confirmation=conf)
    assert rec.best is not None and rec.best.label == "bf16 + default"


def test_break_even_overlapping_intervals_are_undecided_too() -> None:
    records = [
        eager_fp32(10.0, median_ci_ms=[9.0, 11.0]),
        trial("default", median_ms=9.0, cold_compile_s=1.0, median_ci_ms=[8.0, 10.0]),
    ]
    # 100 000 calls: eager 1000 s (900-1100), default 901 s (801-1001): overlapping
    rec = recommend("w", records, policy="break-even", calls_per_process=100_000)
    assert rec.best is not None and rec.best.label == "fp32 + default"
    assert rec.decision == "undecided" and rec.undecided == ["fp32 + eager"]


# --- confirmation -----------------------------------------------------------------------------


def confirmation(*entries: tuple[str, str, float, list[float]], rounds: int = 50) -> dict:
    """A stored-looking confirmation: (mode, dtype, median_ms, speedup_ci) per config."""
    out = []
    for mode, dtype, median, speedup_ci in entries:
        config = CompileConfig(mode=mode, dtype=dtype)
        out.append({
            "config": config.to_dict(), "config_key": config.key, "label": config.label,
            "median_ms": median, "median_ci_ms": [median * 0.99, median * 1.01],
            "p90_ms": median * 1.05, "p99_ms": median * 1.2,
            "speedup": sum(speedup_ci) / 2, "speedup_ci": speedup_ci,
        })  # fmt: skip
    return {"uuid": "c-1", "created_at": "2026-10-03T10:00:00+00:00", "rounds": rounds,
            "method": "cuda_events", "entries": out}  # fmt: skip


SWEPT = [
    eager_fp32(10.0),
    trial("default", median_ms=2.0),
    trial("max-autotune", median_ms=1.8),  # the sweep's leader, 10% ahead
    trial("default", "bf16", 3.0),
]


def test_confirmed_paired_figures_decide() -> None:
    assert recommend("w", SWEPT).best.label == "fp32 + max-autotune"  # type: ignore[union-attr]
    conf = confirmation(
        ("eager", "fp32", 9.0, [1.0, 1.0]),
        ("max-autotune", "fp32", 1.95, [4.5, 4.7]),
        ("default", "fp32", 1.90, [4.7, 4.9]),  # interleaved, default is the faster one
    )
    rec = recommend("w", SWEPT, confirmation=conf)
    assert rec.best is not None and rec.best.label == "fp32 + default" and rec.best.confirmed
    # Every speedup against one baseline: the confirmation's eager fp32 rounds (paired ratios
    # for the re-measured configs, its median for the others)
    assert rec.best.median_ms == 1.90 and rec.best.speedup == pytest.approx(4.8)
    assert rec.ranked[3].speedup == pytest.approx(9.0 / 3.0)
    assert rec.baseline_name.startswith("eager fp32 9.00 ms (paired confirmation, 50 rounds")
    assert rec.best.p99_ms == pytest.approx(1.90 * 1.2)
    assert rec.best.speedup_ci == [4.7, 4.9]
    assert [r.label for r in rec.ranked][:3] == [
        "fp32 + default", "fp32 + max-autotune", "fp32 + eager"
    ]
    assert not rec.ranked[3].confirmed  # bf16 + default was not re-measured
    assert rec.baseline is not None and rec.baseline.median_ms == 9.0
    assert rec.confirmation is not None and rec.confirmation["used"]
    assert "paired figures: 3 configs" in rec.note and "50 rounds" in rec.note
    # The headline's speedup is the paired one, with its interval, and says so; a row that was
    # not re-measured is named unpaired beside it (the legend under every table)
    assert rec.paired and rec.sentence.startswith(
        "fp32 + default: 1.90 ms vs 9.00 ms eager fp32 (4.80x paired, 95% 4.70-4.90x)")
    assert "separate trials" not in rec.sentence
    assert "the other rows' speedups come from separate trials, not paired" in flag_legend(
        rec.ranked)


def test_paired_figures_within_the_tie_ratio_go_to_the_simpler_config() -> None:
    conf = confirmation(
        ("eager", "fp32", 9.0, [1.0, 1.0]),
        ("max-autotune", "fp32", 1.89, [4.6, 5.0]),
        ("default", "fp32", 1.90, [4.5, 4.8]),
    )
    rec = recommend("w", SWEPT, confirmation=conf)
    assert rec.best is not None and rec.best.label == "fp32 + default" and rec.decision == "tie"
    assert "on paired figures (measured interleaved in one process) and simpler" in rec.note


def test_paired_speedups_that_overlap_beyond_the_tie_ratio_are_equivalent_past_eager() -> None:
    conf = confirmation(
        ("eager", "fp32", 9.0, [1.0, 1.0]),
        ("max-autotune", "fp32", 1.80, [4.6, 5.2]),
        ("default", "fp32", 1.90, [4.5, 4.8]),  # 5.6% slower: no tie, but the speedups overlap
    )
    rec = recommend("w", SWEPT, confirmation=conf)
    # both paired speedups far above 1: equivalent, the simpler (the same cold compile) picked
    assert rec.best is not None and rec.best.label == "fp32 + default"
    assert rec.decision == "equivalent" and "paired" in rec.note


def test_a_speedup_interval_holding_one_is_undecided_against_eager() -> None:
    # eager fp32 paired near its trials' 10 ms (one host regime: advisor.recommendation.decide
    # REGIME_RATIO), the pick's paired speedup interval holding 1
    conf = confirmation(("eager", "fp32", 9.0, [1.0, 1.0]), ("max-autotune", "fp32", 1.8,
                                                             [0.97, 1.2]))
    rec = recommend("w", SWEPT, confirmation=conf)
    assert rec.decision == "undecided" and rec.undecided == ["fp32 + eager"]


def test_a_confirmation_without_the_leader_is_not_used() -> None:
    conf = confirmation(("eager", "fp32", 9.0, [1.0, 1.0]), ("default", "fp32", 1.0, [9, 9.2]))
    rec = recommend("w", SWEPT, confirmation=conf)
    assert rec.best is not None and rec.best.label == "fp32 + max-autotune"
    assert not rec.best.confirmed
    assert rec.confirmation is not None and not rec.confirmation["used"]
    assert "does not include the current leader (fp32 + max-autotune)" in rec.note


def test_the_tail_policy_keeps_the_sweeps_figures() -> None:
    conf = confirmation(("eager", "fp32", 9.0, [1.0, 1.0]), ("max-autotune", "fp32", 1.9,
                                                             [4.6, 5.0]))
    rec = recommend("w", SWEPT, policy="tail", confirmation=conf)
    assert not any(r.confirmed for r in rec.ranked)
    assert "the tail policy uses the sweep's figures" in rec.note


# --- staleness --------------------------------------------------------------------------------

FP = {
    "device_kind": "cuda", "device_name": "NVIDIA H200", "compute_capability": "9.0",
    "device_memory_bytes": 150_000_000_000, "sm_count": 132, "cpu_model": "Xeon",
    "cpu_cores": 32, "host_memory_bytes": 2**40, "driver_version": "580.159.04",
    "cuda_driver_version": "13.0", "torch_version": "2.11.0+cu130", "triton_version": "3.6.0",
    "cuda_runtime_version": "13.0", "cudnn_version": "91002", "python_version": "3.12.3",
    "hostname": "gpu-1",
}  # fmt: skip


def fp(**changes: Any) -> dict[str, Any]:
    from advisor.fingerprint import add_hashes

    return add_hashes({**FP, **changes})


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("driver_version", "590.10.01"),
        ("cuda_driver_version", "13.1"),
        ("torch_version", "2.12.0+cu130"),
        ("triton_version", "3.7.0"),
    ],
)
def test_one_changed_stack_field_is_named(field: str, value: str) -> None:
    measured, here = fp(), fp(**{field: value})
    assert measured["fingerprint_hash"] != here["fingerprint_hash"]
    assert [c.field for c in fingerprint_changes(measured, here)] == [field]
    st = nearest_fingerprint(here, [measured])
    assert st.measured_hash == measured["fingerprint_hash"] and not st.exact
    assert f"{field}: {FP[field]} measured, {value} here" in st.warning
    assert "may be stale" in st.warning
    data = st.to_dict()
    assert data["changed"] == [{"field": field, "measured": FP[field], "current": value}]
    assert data["exact"] is False and data["warning"] == st.warning


def test_the_hostname_is_not_part_of_the_identity() -> None:
    st = nearest_fingerprint(fp(hostname="gpu-2"), [fp()])
    assert st.exact and st.warning == "" and st.changed == []


def test_the_nearest_fingerprint_prefers_the_same_device_then_the_same_stack() -> None:
    here = fp(torch_version="2.12.0+cu130")
    other_gpu = fp(device_name="NVIDIA H100", torch_version="2.12.0+cu130")
    old_stack = fp(torch_version="2.10.0+cu130", triton_version="3.5.0")
    one_off = fp(python_version="3.11.9", torch_version="2.11.0+cu130")
    near = nearest_fingerprint(here, [other_gpu, old_stack, one_off])
    assert near.measured_hash == one_off["fingerprint_hash"]
    assert [c.field for c in near.changed] == ["torch_version", "python_version"]
    near = nearest_fingerprint(here, [other_gpu, old_stack])
    assert near.measured_hash == old_stack["fingerprint_hash"]  # same GPU beats same stack


def test_another_kind_of_device_is_no_fallback() -> None:
    cpu = fp(device_kind="cpu", device_name="Xeon")
    st = nearest_fingerprint(cpu, [fp()])
    assert st.measured_hash is None and "nothing was measured on this kind of device" in st.warning


# --- export -----------------------------------------------------------------------------------


def test_export_says_how_to_compile_cast_and_what_it_rests_on() -> None:
    records = [eager_fp32(6.2), trial("reduce-overhead", "bf16", 0.96, cold_compile_s=13.0,
                                      median_ci_ms=[0.95, 0.97])]
    rec = recommend("reranker", records, "fp-1")
    data = export_dict(rec)
    assert data["torch_compile"] == {"fullgraph": False, "mode": "reduce-overhead"}
    assert data["dtype"]["torch_dtype"] == "torch.bfloat16" and data["dtype"]["cast_model"]
    assert data["cudagraphs"] is True and data["compiled"] is True
    figures = data["figures"]
    assert figures["median_ms"] == 0.96 and figures["median_ci_ms"] == [0.95, 0.97]
    assert figures["eager_fp32_median_ms"] == 6.2
    assert figures["speedup_vs_eager_fp32"] == pytest.approx(6.2 / 0.96)
    assert figures["break_even_calls"] == 2481  # 13 000 ms / 5.24 ms = 2480.9, rounded up
    assert json.loads(json.dumps(data)) == data


def test_export_expands_a_mode_with_options() -> None:
    config = CompileConfig(mode="max-autotune-no-cudagraphs", options={"freezing": True})
    rec = recommend("w", [eager_fp32(10.0), trial("default", median_ms=9.0, config=config.to_dict(),
                                                 config_key=config.key)])
    assert export_dict(rec)["torch_compile"] == {
        "fullgraph": False,
        "options": {"max_autotune": True, "coordinate_descent_tuning": True, "freezing": True},
    }


def test_python_export_is_valid_python_with_the_compile_call() -> None:
    import ast

    records = [eager_fp32(6.2), trial("reduce-overhead", "bf16", 0.96)]
    text = to_python(recommend("reranker", records, "fp-1"))
    ast.parse(text)
    assert "model = torch.compile(model, fullgraph=False, mode='reduce-overhead')" in text
    assert "model = model.to(torch.bfloat16)" in text
    assert "torch.compiler.cudagraph_mark_step_begin()" in text
    eager_text = to_python(recommend("w", [eager_fp32(1.0), trial("default", median_ms=2.0)]))
    ast.parse(eager_text)
    assert "no torch.compile" in eager_text
    tf32 = to_python(recommend("w", [eager_fp32(2.0), trial("default", "tf32", 1.0)]))
    assert 'torch.set_float32_matmul_precision("high")' in tf32


def test_yaml_export_reads_back_as_the_json_export() -> None:
    import yaml

    records = [eager_fp32(6.2), trial("reduce-overhead", "bf16", 0.96, median_ci_ms=[0.9, 1.0])]
    data = export_dict(recommend("reranker: v2", records, "fp-1"))
    data["note"] = 'quotes " and : colons, yes'
    data["figures"].update(tiny=1e-06, huge=1e20, odd=-2.5e-300)
    assert yaml.safe_load(to_yaml(data)) == json.loads(json.dumps(data))
    assert to_yaml({"a": [], "b": {}, "c": [{"x": 1, "z": [1, 2]}], "d": True, "y": "no"}) == (
        'a: []\nb: {}\nc:\n  - x: 1\n    z:\n      - 1\n      - 2\nd: true\n"y": "no"\n'
    )  # y and no are booleans to YAML 1.1 readers: quoted


def test_export_carries_the_measured_buckets() -> None:
    import ast

    config = CompileConfig(mode="default", shapes="buckets:fitted-2")
    replay = {"boundaries": {"seq": [64, 256]}, "padding_waste": 0.12}
    records = [eager_fp32(6.0), trial("default", median_ms=2.0, config=config.to_dict(),
                                      config_key=config.key, replay=replay)]
    rec = recommend("reranker", records)
    data = export_dict(rec)
    assert data["buckets"] == {"strategy": "buckets:fitted-2", "boundaries": {"seq": [64, 256]},
                               "padding_waste": 0.12}  # fmt: skip
    assert data["torch_compile"] == {"fullgraph": False, "dynamic": False}
    text = to_python(rec)
    ast.parse(text)
    assert "shape strategy buckets:fitted-2: pad each request up to its bucket" in text
    assert export_dict(recommend("w", [eager_fp32(6.0), trial("default", median_ms=2.0)]))[
        "buckets"] is None


# --- the evidence carries the answer, or it says so ---------------------------------------------


def test_a_screened_measurement_never_wins_a_tie_nor_casts_doubt() -> None:
    records = [
        eager_fp32(10.0, median_ci_ms=[9.9, 10.1]),
        trial("max-autotune", median_ms=1.00, median_ci_ms=[0.98, 1.02]),
        trial("default", median_ms=1.70, median_ci_ms=[0.9, 2.6], noisy=True,
              screened_out={"median_ms": 1.70, "above_ms": 1.5, "samples": 15}),
    ]
    rec = recommend("w", records)
    assert rec.best is not None and rec.best.label == "fp32 + max-autotune"
    assert rec.decision == "decided" and rec.note == "" and rec.contenders == []
    assert rec.ranked[1].short


def test_a_full_trial_outweighs_a_screened_one_of_the_same_config() -> None:
    records = [eager_fp32(10.0), trial("default", median_ms=9.0, screened_out={"samples": 15}),
               trial("default", median_ms=2.0)]
    rec = recommend("w", records)
    assert rec.best is not None and rec.best.median_ms == 2.0 and not rec.best.short
    assert rec.best.n_trials == 1


def test_overlap_on_noisy_timings_far_past_eager_is_equivalent_with_a_pick() -> None:
    records = [
        eager_fp32(10.0, median_ci_ms=[9.0, 11.0]),
        trial("default", median_ms=2.0, median_ci_ms=[1.2, 2.9], noisy=True),
        trial("max-autotune", median_ms=1.8, median_ci_ms=[1.1, 2.6], noisy=True),
    ]
    rec = recommend("w", records)
    # both clearly beat eager fp32: the choice does not matter, so a pick, not silence
    # (undecided: noise where it does: tests/recommendation/test_equivalent.py)
    assert rec.best is not None and rec.decision == "equivalent"
    assert rec.best.label == "fp32 + default"  # the same cold compile: the simpler
    assert rec.leader is not None and rec.leader.label == "fp32 + max-autotune"
    assert rec.sentence.startswith("noisy evidence (the pick's 95% interval spans 1.20-2.90 ms, "
                                   "85% of its 2.00 ms (noisy); eager fp32's 95% interval spans "
                                   "9.00-11.0 ms, 20% of its 10.0 ms, from separate trials, not "
                                   "paired), so these "
                                   "figures may not hold: fp32 + default: 2.00 ms vs 10.0 ms eager "
                                   "fp32")
    assert rec.undecided == ["fp32 + default"]
    assert export_dict(rec)["label"] == "fp32 + default"


def test_noisy_timings_far_apart_still_decide() -> None:
    records = [
        eager_fp32(10.0, median_ci_ms=[8.0, 12.0], noisy=True),
        trial("default", median_ms=2.0, median_ci_ms=[1.6, 2.4], noisy=True),
    ]
    rec = recommend("w", records)
    assert rec.best is not None and rec.best.label == "fp32 + default"
    assert rec.decision == "decided" and rec.best.noisy


def test_pooled_interval_spans_the_trials_and_the_figure_is_their_median() -> None:
    records = [eager_fp32(10.0), trial("default", median_ms=2.0, median_ci_ms=[1.9, 2.1]),
               trial("default", median_ms=2.4, median_ci_ms=[2.3, 2.5]),
               trial("default", median_ms=2.2, median_ci_ms=[2.1, 2.3])]
    best = recommend("w", records).best
    assert best is not None and best.median_ms == 2.2 and best.median_ci_ms == [1.9, 2.5]
    assert best.n_trials == 3 and best.speedup == pytest.approx(10.0 / 2.2)


def test_break_even_is_against_the_best_eager_config_with_fp32_beside_it() -> None:
    records = [eager_fp32(10.0), trial("eager", "bf16", 4.0),
               trial("default", "bf16", 3.0, cold_compile_s=5.0)]
    rec = recommend("w", records, policy="break-even", calls_per_process=100_000)
    best = rec.best
    assert best is not None and best.label == "bf16 + default"
    assert best.break_even_calls == 5_000  # 5 s / (4 - 3) ms: what bf16 eager charges
    assert best.break_even_calls_fp32 == 715  # 5 s / (10 - 3) ms
    assert rec.eager_best is not None and rec.eager_best.label == "bf16 + eager"
    assert "pays off after 5,000 calls against bf16 + eager (715 against eager fp32)" in (
        rec.sentence)


def test_staleness_names_the_workload_source_and_the_advisor_version() -> None:
    from advisor.recommendation import provenance

    records = [eager_fp32(10.0, workload={"source_sha256": "a" * 64},
                          fingerprint={"advisor_version": "0.1.0", "fingerprint_hash": "f1"})]
    assert provenance(None, records, "a" * 64, "0.1.0") is None
    changed = provenance(None, records, "b" * 64, "0.2.0")
    assert changed is not None and changed.exact and not changed.fresh
    assert "the workload file changed since its trials" in changed.warning
    assert "measured by advisor 0.1.0, this is 0.2.0" in changed.warning


def test_paired_evidence_is_doubted_on_the_paired_interval_not_on_the_samples_spread() -> None:
    # A short call's samples spread widely (IQR 40% of the median: noisy) yet every round
    # orders the configs the same way: the paired speedup's interval (4.7-4.9x, 4% wide)
    # carries the claim, so the sentence makes it without a doubt before it.
    spread = [[1.2, 1.9, 1.9, 2.5, 1.9, 1.5, 2.3]]
    conf = confirmation(("eager", "fp32", 9.0, [1.0, 1.0]),
                        ("max-autotune", "fp32", 1.95, [4.5, 4.7]),
                        ("default", "fp32", 1.90, [4.7, 4.9]))
    for entry in conf["entries"]:
        entry["samples_ms"] = spread
    rec = recommend("w", SWEPT, confirmation=conf)
    assert rec.best is not None and rec.best.noisy and rec.paired
    assert rec.doubt == "" and rec.sentence.startswith("fp32 + default: 1.90 ms vs 9.00 ms")
    # A paired interval 2.5-7.1x wide (96% of 4.8x) is doubted, before any number
    conf["entries"][2]["speedup_ci"] = [2.5, 7.1]
    rec = recommend("w", SWEPT, confirmation=conf)
    assert rec.doubt == "the paired speedup's 95% interval spans 2.50-7.10x, 96% of its 4.80x"
    assert rec.sentence.startswith("noisy evidence (the paired speedup's 95% interval spans "
                                   "2.50-7.10x, 96% of its 4.80x, even side by side), so these "
                                   "figures may not hold: fp32 + default: 1.90 ms")
