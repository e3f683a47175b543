"""The line a budgeted traffic sweep prints under its strategy table: what each replay was
measured on (advisor.cli.trial.steady_sample_note), the stream's sample and the steady state's."""

from __future__ import annotations

from typing import Any

from advisor.cli.trial import steady_sample_note
from advisor.config import EAGER_FP32


def record(sampled_stream: bool, sampled_shapes: bool) -> dict[str, Any]:
    stream: dict[str, Any] = {"requests": 19 if sampled_stream else 150}
    if sampled_stream:
        stream["sample"] = {"of_requests": 150, "positions": list(range(0, 150, 8)),
                            "weights": [8] * 18 + [6], "new_positions": [],
                            "bounded_new_positions": []}
    return {"status": "ok", "config": EAGER_FP32.to_dict(), "replay": {
        "mean_ms": 100.0, "stream": stream,
        "steady_sample": {"shapes": 14, "of_shapes": 19, "draws": 16, "passes": 1,
                          "sampled": sampled_shapes, "seed": 0,
                          "mean_ci_ms": [92.0, 108.0] if sampled_shapes else None,
                          "time_share_s": 60.0}}}


def test_a_sampled_stream_and_steady_state_are_both_said() -> None:
    line = steady_sample_note([record(True, True)])  # type: ignore[list-item]
    assert line.startswith("measured on samples to fit the budget")
    assert line.endswith("fp32 + eager: 19 of 150 requests, 14 of 19 shapes, 1 pass, "
                         "mean ±8.0% (95%)")


def test_a_sampled_stream_alone_is_said_too() -> None:
    line = steady_sample_note([record(True, False)])  # type: ignore[list-item]
    assert line.endswith("fp32 + eager: 19 of 150 requests, 14 of 19 shapes, 1 pass")


def test_nothing_is_said_when_everything_was_measured() -> None:
    assert steady_sample_note([record(False, False)]) == ""  # type: ignore[list-item]
