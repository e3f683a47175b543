"""The dashboard's arithmetic on hand-built frames with hand-computed answers."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from dashboard import analysis


def _groups(*rows: tuple[str, str, str, str, str]) -> pd.DataFrame:
    frame = pd.DataFrame(
        [{"workload": "w", "device_hash": d, "device_name": name, "env_hash": e,
          "torch_version": torch, "driver_version": "580", "last_started_at": when}
         for d, name, e, torch, when in rows]
    )  # fmt: skip
    return analysis.add_staleness(analysis.add_labels(frame))


def test_a_group_is_stale_when_its_model_has_a_newer_stack() -> None:
    out = _groups(
        ("d1", "NVIDIA H200", "old", "2.10.0", "2026-01-01"),
        ("d2", "NVIDIA H200", "new", "2.11.0", "2026-02-01"),
        ("d3", "NVIDIA A100", "old", "2.10.0", "2026-01-05"),  # the A100's newest: not stale
    ).set_index("device_hash")
    assert out.loc["d1", "stale"] and not out.loc["d2", "stale"] and not out.loc["d3", "stale"]
    assert out.loc["d1", "stale_reason"] == (
        "NVIDIA H200 measured with a newer stack: torch 2.10.0 → 2.11.0 (2026-02-01)"
    )
    # its short id: no sweep names its host here; the hash is the fingerprint's
    assert out.loc["d2", "device"] == f"H200 · {out.loc['d2', 'fingerprint_hash'][:8]}"
    assert out.loc["d2", "stack"] == "torch 2.11.0 · driver 580"


def test_staleness_follows_versions_not_the_order_of_measurement() -> None:
    """An A100 swept on the older torch *after* two on the newer one: the newer ones are not
    stale (they are on the newest versions), the older one is; versions compare as numbers
    (2.10 is newer than 2.9), the torch version first."""
    out = _groups(
        ("a0", "NVIDIA A100", "new", "2.11.0+cu130", "2026-01-01"),
        ("a1", "NVIDIA A100", "new", "2.11.0+cu130", "2026-01-02"),
        ("a2", "NVIDIA A100", "old", "2.10.0+cu128", "2026-01-03"),  # measured last
        ("h0", "NVIDIA H200", "nine", "2.9.1", "2026-01-05"),
        ("h1", "NVIDIA H200", "ten", "2.10.0", "2026-01-04"),
    ).set_index("device_hash")
    assert not out.loc["a0", "stale"] and not out.loc["a1", "stale"]
    assert out.loc["a2", "stale"]
    assert out.loc["a2", "stale_reason"] == ("NVIDIA A100 measured with a newer stack: torch "
                                             "2.10.0+cu128 → 2.11.0+cu130 (2026-01-02)")
    assert out.loc["h0", "stale"] and not out.loc["h1", "stale"]  # 2.10 > 2.9, not "2.9" > "2.1"
    assert "torch 2.9.1 → 2.10.0" in out.loc["h0", "stale_reason"]


def test_upgrades_go_from_older_to_newer_versions() -> None:
    stacks = pd.DataFrame([
        {"env_hash": "new", "torch_version": "2.11.0+cu130", "last_started_at": "2026-01-01"},
        {"env_hash": "old", "torch_version": "2.10.0+cu128", "last_started_at": "2026-01-03"},
        {"env_hash": "new", "torch_version": "2.11.0+cu130", "last_started_at": "2026-01-02"},
    ])  # fmt: skip
    assert analysis.stacks_oldest_first(stacks) == ["old", "new"]  # not by when measured


def test_a_log_domain_comes_from_the_data() -> None:
    assert analysis.log_domain([0.5, 7.0, 1.0], pad=1.25) == pytest.approx([0.4, 8.75])
    assert analysis.log_domain([None, float("nan"), 2.0, -1.0], pad=2.0) == [1.0, 4.0]
    assert analysis.log_domain([]) == pytest.approx([1 / 1.15, 1.15])


def test_stack_labels_that_collide_get_the_env_hash() -> None:
    out = _groups(
        ("d1", "NVIDIA H200", "envaaaaaaa", "2.11.0", "2026-01-01"),
        ("d2", "NVIDIA H200", "envbbbbbbb", "2.11.0", "2026-01-02"),  # same versions shown
    )
    assert list(out["stack"]) == ["torch 2.11.0 · driver 580 · envaaa",
                                  "torch 2.11.0 · driver 580 · envbbb"]  # fmt: skip
    assert out["stale_reason"].iloc[0].endswith("same versions, other stack details (2026-01-02)")


def _trials(*rows: tuple[str, str, str, float | None]) -> pd.DataFrame:
    return pd.DataFrame([{"mode": m, "dtype": d, "outcome": o, "speedup": s}
                         for m, d, o, s in rows])  # fmt: skip


def test_speedup_matrix_best_pass_per_cell_and_failed_cells() -> None:
    matrix = analysis.speedup_matrix(_trials(
        ("default", "fp32", "ok", 1.2), ("default", "fp32", "ok", 1.4),
        ("default", "bf16", "failed: oom", None),
        ("eager", "fp32", "ok", 1.0), ("max-autotune", "fp32", "rejected", 0.5),
    )).set_index(["mode", "dtype"])  # fmt: skip
    assert matrix.loc[("default", "fp32"), "speedup"] == 1.4
    assert matrix.loc[("default", "fp32"), "trials"] == 2
    assert matrix.loc[("default", "bf16"), "text"] == "failed"
    assert matrix.loc[("max-autotune", "fp32"), "text"] == "no pass"


def test_outcome_names_failures_and_rejections() -> None:
    assert analysis.outcome({"status": "failed", "failure_reason": "oom"}) == "failed: oom"
    assert analysis.outcome({"status": "ok", "passed": True}) == "ok"
    assert analysis.outcome({"status": "ok", "passed": False, "correct": False}) == (
        "rejected: outputs differ from eager fp32"
    )
    assert analysis.outcome(
        {"status": "ok", "passed": False, "correct": True, "quality_passed": False,
         "quality_name": "top10_overlap"}
    ) == "rejected: top10_overlap below threshold"  # fmt: skip


def test_trials_frame_shows_the_worst_request_and_an_advisory_quality_check() -> None:
    from advisor.config import CompileConfig
    from advisor.records import empty_record

    record = empty_record()
    eager = CompileConfig(mode="eager")
    record.update(status="ok", passed=True, trial_uuid="t", config=eager.to_dict(),
                  config_key=eager.key, started_at="2026-10-03T10:00:00+00:00", median_ms=1.0,
                  quality_name="top10_overlap", quality_value=0.95, quality_worst=0.8,
                  quality_passed=False, quality_advisory="seeded random weights: near-ties")
    [row] = analysis.trials_frame([record]).to_dict("records")
    assert row["outcome"] == "ok"  # advisory: the check below its threshold rejected nothing
    assert (row["quality"], row["quality_worst"]) == (0.95, 0.8)
    assert row["quality_advisory"] == "seeded random weights: near-ties"


def _fleet() -> pd.DataFrame:
    rows = []
    for group, model, env, medians in (
        ("A", "H200", "old", {"eager": 6.5, "default": 5.1, "ro": 1.2}),
        ("B", "H200", "new", {"eager": 6.2, "default": 4.9, "ro": 0.96, "max": 5.3}),
        ("C", "A100", "new", {"eager": 9.0, "default": 7.0, "ro": None, "max": 9.5}),
    ):
        eager = medians["eager"]
        for config, median in medians.items():
            rows.append({"group": group, "model": model, "env_hash": env, "config": config,
                         "best_median_ms": median,
                         "speedup": eager / median if median else math.nan})  # fmt: skip
    return pd.DataFrame(rows)


def test_upgrade_moves_compare_one_model_before_and_after() -> None:
    moves = analysis.upgrade_moves(_fleet(), "H200", "old", "new").set_index("config")
    assert list(moves.index) == ["ro", "eager", "default"]  # biggest drop first; max: new only
    assert moves.loc["ro", "change_pct"] == pytest.approx((0.96 / 1.2 - 1) * 100)
    assert analysis.upgrade_moves(_fleet(), "H200", "old", "none").empty


def test_disagreements_between_two_devices() -> None:
    both = analysis.disagreements(_fleet(), "B", "C").set_index("config")
    assert both.loc["max", "disagree"]  # 6.2/5.3 faster on B, 9.0/9.5 slower on C
    assert (both.loc["max", "verdict_a"], both.loc["max", "verdict_b"]) == (
        "faster than eager", "slower than eager")  # fmt: skip
    assert both.loc["ro", "disagree"] and both.loc["ro", "verdict_b"] == "failed or rejected"
    assert not both.loc["default", "disagree"] and not both.loc["eager", "disagree"]
    # faster vs slower first, then failed on one side; each kind said in words
    assert list(both.index[:2]) == ["max", "ro"]
    assert both.loc["max", "kind"] == "faster on one, slower on the other"
    assert both.loc["ro", "kind"] == "failed or rejected on one side"
    assert both.loc["default", "kind"] == "agree"
    assert analysis.disagreement_counts(both.reset_index()) == {
        "faster on one, slower on the other": 1, "failed or rejected on one side": 1,
        "agree": 2}
    assert analysis.most_overlap(_fleet()) == ("C", "B")  # 4 configs each; C shares 4 with B


def test_the_kinds_of_disagreement() -> None:
    kind = analysis.kind
    assert kind("faster than eager", "slower than eager") == analysis.OPPOSITE
    assert kind("slower than eager", "faster than eager") == analysis.OPPOSITE
    assert kind("failed or rejected", "faster than eager") == analysis.FAILED_ONE_SIDE
    assert kind("slower than eager", "failed or rejected") == analysis.FAILED_ONE_SIDE
    assert kind("same as eager", "faster than eager") == analysis.SAME_ONE_SIDE
    assert kind("failed or rejected", "failed or rejected") == analysis.AGREE
    assert kind("same as eager", "same as eager") == analysis.AGREE


def test_the_default_pair_is_the_most_different() -> None:
    # B and C disagree on max (faster on B, slower on C); A and B, two H200 stacks, on nothing
    assert analysis.most_different(_fleet()) == ("B", "C")
    twins = pd.concat([_fleet(), _fleet()[lambda f: f["group"] == "B"].assign(group="B2")])
    assert set(analysis.most_different(twins)) in ({"B", "C"}, {"B2", "C"})


def test_replay_frame_puts_shape_strategies_side_by_side() -> None:
    records = [
        {"status": "ok", "config": {"mode": "default", "dtype": "fp32", "fullgraph": False,
                                    "dynamic": "auto", "options": {}, "shapes": "buckets:pow2"},
         "replay": {"p50_ms": 1.0, "waste": {"share": 0.2}, "buckets": [16, 32]}},
        {"status": "ok", "config": {"mode": "default", "dtype": "fp32", "fullgraph": False,
                                    "dynamic": "auto", "options": {}},
         "replay": {"p50_ms": 1.5}},
        {"status": "failed", "config": None, "replay": {"p50_ms": 9.0}},
        {"status": "ok", "config": None},
    ]  # fmt: skip
    frame = analysis.replay_frame(records)
    assert list(frame["strategy"]) == ["buckets:pow2", "static"]
    assert frame.loc[0, "waste.share"] == 0.2 and frame.loc[0, "buckets"] == "16, 32"
    assert analysis.replay_frame([{"status": "ok", "config": None}]).empty


def test_replay_frame_shows_the_process_life_figure_and_flags() -> None:
    stream = {"per_request_ms": [50.0, 1.0, 50.0, 50.0], "new_shape": [0, 2, 3],
              "startup_s": 2.0, "mean_ms": 37.75}
    records = [{"status": "ok", "config": {"mode": "reduce-overhead", "dtype": "bf16"},
                "replay": {"mean_ms": 1.0, "varying_dims": ["seq"], "stream": stream,
                           "flags": [{"flag": "cudagraph_per_shape", "message": "m"},
                                     {"flag": "new_shapes_persist", "message": "m"}]}}]
    frame = analysis.replay_frame(records)
    assert frame.loc[0, "flags"] == "cudagraph_per_shape, new_shapes_persist"
    # start-up 2000 ms + the stream's 151 ms + 9,996 more requests at 1 ms + 49 ms extra each
    assert frame.loc[0, "process_life_ms"] == pytest.approx((2000 + 151 + 9996 * 50) / 10_000)
