"""The record: every key present from the start; weighted headline figures by hand."""

from __future__ import annotations

import json
from typing import Any

import pytest

from advisor.records import (
    FAILURE_REASONS,
    LIST_KEYS,
    METRIC_KEYS,
    RECORD_VERSION,
    SHAPE_KEYS,
    BucketFigures,
    ShapeFigures,
    TrialRecord,
    empty_record,
    undeclared_keys,
    weighted_headline,
)


def test_empty_record_has_every_key_and_no_figures() -> None:
    record = empty_record()
    assert record["record_version"] == RECORD_VERSION
    assert record["status"] == "failed"
    assert all(record[key] is None for key in METRIC_KEYS)
    assert all(record[key] == [] for key in LIST_KEYS)
    assert record["telemetry"] == {}
    assert json.loads(json.dumps(record)) == record  # plain data only


def test_empty_records_share_nothing() -> None:
    a, b = empty_record(), empty_record()
    a["shapes"].append({"x": 1})
    assert b["shapes"] == []


def test_failure_reasons_are_documented() -> None:
    assert {
        "build_error",
        "compile_error",
        "graph_break",
        "crash",
        "timeout",
        "workload_error",
    } <= set(FAILURE_REASONS)
    assert all(text for text in FAILURE_REASONS.values())


def test_weighted_headline_by_hand() -> None:
    shapes = [
        {
            "weight": 3.0,
            "median_ms": 1.0,
            "p90_ms": 2.0,
            "p99_ms": 4.0,
            "mean_ms": 1.5,
            "noisy": False,
        },
        {
            "weight": 1.0,
            "median_ms": 5.0,
            "p90_ms": 6.0,
            "p99_ms": 8.0,
            "mean_ms": 5.5,
            "noisy": True,
        },
    ]
    out = weighted_headline(shapes)
    # weights renormalised: 3/4 and 1/4
    assert out["median_ms"] == pytest.approx(0.75 * 1.0 + 0.25 * 5.0)  # 2.0
    assert out["p90_ms"] == pytest.approx(0.75 * 2.0 + 0.25 * 6.0)  # 3.0
    assert out["p99_ms"] == pytest.approx(0.75 * 4.0 + 0.25 * 8.0)  # 5.0
    assert out["mean_ms"] == pytest.approx(0.75 * 1.5 + 0.25 * 5.5)  # 2.5
    assert out["noisy"] is True


def test_one_shape_headline_is_its_figures() -> None:
    shape = {
        "weight": 0.2,
        "median_ms": 1.25,
        "p90_ms": 2.0,
        "p99_ms": 3.0,
        "mean_ms": 1.5,
        "noisy": False,
    }
    out = weighted_headline([shape])
    for key in ("median_ms", "p90_ms", "p99_ms", "mean_ms"):
        assert out[key] == pytest.approx(shape[key])
    assert out["noisy"] is False


def test_every_key_of_an_empty_record_is_a_required_key_of_the_type() -> None:
    assert set(empty_record()) == TrialRecord.__required_keys__
    assert set(SHAPE_KEYS) == ShapeFigures.__required_keys__  # what the store keeps of a shape
    assert undeclared_keys(empty_record()) == []


def test_a_key_the_types_do_not_declare_is_named_with_its_path() -> None:
    record = empty_record()
    record["shapes"].append({"shape": "batch=1", "weight": 1.0, "requests": 3})
    record["telemetry"]["measure_core"] = 1
    untyped: dict[str, Any] = dict(record)
    untyped["new_figure_ms"] = 1.0
    untyped["telemetry"]["fan_rpm"] = 900
    untyped["replay"] = {"strategy": "static", "stream": {"requests": 5, "stall_ms": 2.0}}
    assert sorted(undeclared_keys(untyped)) == [
        "new_figure_ms", "replay.stream.stall_ms", "shapes[0].requests", "telemetry.fan_rpm",
    ]
    # a replay's shapes are buckets
    assert "shapes[0].requests" not in undeclared_keys(untyped, parts={"shapes": BucketFigures})
