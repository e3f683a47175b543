"""A quality check's combine rule (advisor.workload.Quality, combine_quality) against numbers
computed by hand, its validation, and how its parts read where a user sees them."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import pytest

from advisor import Quality, WorkloadError, load_workload
from advisor.cli.render import quality_text
from advisor.config import CompileConfig
from advisor.recommendation import flag_legend
from advisor.recommendation.evidence import rank_record
from advisor.records import empty_record
from advisor.workload import combine_quality


def same(got: tuple[float, float], want: tuple[float, float]) -> None:
    assert got == pytest.approx(want, abs=1e-12)


def one(r: object, c: object) -> float:
    return 1.0


# --- combine_quality by hand ------------------------------------------------------------------


def test_mean_is_the_mean_and_the_worst_is_reported_beside_it() -> None:
    # (1 + 1 + 0.875 + 1) / 4 = 3.875 / 4
    same(combine_quality([1.0, 1.0, 0.875, 1.0]), (0.96875, 0.875))
    # lower is better: the worst is the highest; (0.01 + 0.03 + 0.02) / 3 = 0.02
    same(combine_quality([0.01, 0.03, 0.02], higher_is_better=False), (0.02, 0.03))


def test_mean_weighs_requests_by_their_share_of_the_traffic() -> None:
    # (1.0 * 3 + 0.5 * 1) / 4 = 0.875
    same(combine_quality([1.0, 0.5], weights=[3, 1]), (0.875, 0.5))
    # a zero weight (a start-up shape the stream never met) counts for the worst only
    same(combine_quality([1.0, 0.25], weights=[1.0, 0.0]), (1.0, 0.25))
    # weights that sum to nothing: every request counts the same
    same(combine_quality([1.0, 0.5], weights=[0.0, 0.0]), (0.75, 0.5))


def test_worst_is_a_floor() -> None:
    same(combine_quality([1.0, 0.875, 1.0], combine="worst"), (0.875, 0.875))
    same(combine_quality([0.01, 0.03], combine="worst", higher_is_better=False), (0.03, 0.03))


def test_quantile_is_the_request_at_that_share_counted_from_the_worst() -> None:
    values = [1.0, 0.9, 1.0, 0.5, 1.0, 1.0, 0.8, 1.0, 1.0, 1.0]  # sorted: 0.5, 0.8, 0.9, 1 ...
    # ten equal requests: each holds 0.1 of the weight
    same(combine_quality(values, combine="quantile", quantile=0.1), (0.5, 0.5))
    same(combine_quality(values, combine="quantile", quantile=0.2), (0.8, 0.5))
    same(combine_quality(values, combine="quantile", quantile=0.25), (0.9, 0.5))
    same(combine_quality(values, combine="quantile", quantile=0.5), (1.0, 0.5))
    # weighted: a bad request with 5% of the traffic is below a 10% quantile, with 20% it is it
    same(
        combine_quality([0.5, 1.0], weights=[0.05, 0.95], combine="quantile", quantile=0.1),
        (1.0, 0.5),
    )
    same(
        combine_quality([0.5, 1.0], weights=[0.2, 0.8], combine="quantile", quantile=0.1),
        (0.5, 0.5),
    )
    # lower is better: worst first is highest first (0.3, 0.2, 0.1, 0.0)
    errors = [0.1, 0.3, 0.2, 0.0]
    same(
        combine_quality(errors, combine="quantile", quantile=0.25, higher_is_better=False),
        (0.3, 0.3),
    )
    same(
        combine_quality(errors, combine="quantile", quantile=0.5, higher_is_better=False),
        (0.2, 0.3),
    )


def test_a_nan_request_is_the_worst_there_is() -> None:
    for combine, q in (("mean", None), ("worst", None), ("quantile", 0.5)):
        value, worst = combine_quality([1.0, math.nan, 1.0], combine=combine, quantile=q)
        assert math.isnan(value) and math.isnan(worst)
    assert not Quality("q", one, 0.9).passes(math.nan)


def test_combine_quality_refuses_what_it_cannot_combine() -> None:
    with pytest.raises(ValueError):
        combine_quality([])
    with pytest.raises(ValueError):
        combine_quality([1.0, 1.0], weights=[1.0])
    with pytest.raises(ValueError):
        combine_quality([1.0], weights=[-1.0])
    with pytest.raises(ValueError):
        combine_quality([1.0], combine="quantile")  # no quantile


def test_more_requests_of_one_traffic_leave_the_mean_verdict_alone() -> None:
    """One distribution: 1 request in 20 is a near-tie (0.875). The worst request fails a 0.9
    floor as soon as one is among the requests; the mean does not move."""

    def requests(n: int) -> list[float]:
        return [0.875 if i % 20 == 7 else 1.0 for i in range(n)]

    mean, floor = Quality("q", one, 0.9), Quality("q", one, 0.9, combine="worst")
    for n in (10, 150):
        assert mean.passes(mean.combined(requests(n))[0])
    assert not floor.passes(floor.combined(requests(150))[0])


def test_a_quantile_passes_while_fewer_than_that_share_of_requests_fall_short() -> None:
    p10 = Quality("q", one, 0.9, combine="quantile", quantile=0.1)
    for bad in range(0, 21):  # of 100 requests
        values = [0.5] * bad + [1.0] * (100 - bad)
        assert p10.passes(p10.combined(values)[0]) is (bad < 10), bad


# --- the contract: validated at construction ------------------------------------------------


def test_quality_defaults_to_the_mean_and_names_its_rule() -> None:
    q = Quality("overlap", one, threshold=0.9)
    assert (q.combine, q.quantile, q.advisory, q.rule) == ("mean", None, None, "mean")
    assert Quality("o", one, 0.9, combine="worst").rule == "worst"
    assert Quality("o", one, 0.9, combine="quantile", quantile=0.1).rule == "p10"
    assert Quality("o", one, 0.9, combine="quantile", quantile=0.025).rule == "p2.5"


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"combine": "min"}, "combine='min' is not one of mean, worst, quantile"),
        ({"combine": "quantile"}, "combine='quantile' needs quantile=q with 0 < q < 1"),
        ({"combine": "quantile", "quantile": 1.0}, "needs quantile=q with 0 < q < 1"),
        ({"combine": "quantile", "quantile": 0}, "needs quantile=q with 0 < q < 1"),
        ({"combine": "quantile", "quantile": True}, "needs quantile=q with 0 < q < 1"),
        ({"quantile": 0.1}, "quantile=0.1 applies only with combine='quantile'"),
        ({"advisory": ""}, "advisory must be a non-empty string"),
    ],
)
def test_a_bad_rule_is_a_workload_error(kwargs: dict[str, object], words: str) -> None:
    with pytest.raises(WorkloadError) as info:
        Quality("overlap", one, 0.9, **kwargs)  # type: ignore[arg-type]
    assert words in str(info.value) and "'overlap'" in str(info.value)


def test_a_bad_rule_in_a_workload_file_is_one_line_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "wl.py"
    path.write_text(
        textwrap.dedent("""\
        from advisor import Quality, Workload

        workload = Workload(
            name="toy", build=lambda device, dtype: (lambda x: x),
            inputs=lambda shape, device: ([0.0] * shape["batch"],),
            traffic=[({"batch": 4}, 1)],
            quality=Quality("q", lambda r, c: 1.0, 0.9, combine="quantile", quantile=10),
        )
    """)
    )
    with pytest.raises(WorkloadError) as info:
        load_workload(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and len(message.splitlines()) == 1
    assert "quantile=q with 0 < q < 1" in message


# --- where a user reads it --------------------------------------------------------------------


def test_a_trial_record_shows_the_rule_the_worst_request_and_an_advisory() -> None:
    record = {
        "quality_name": "top10_overlap",
        "quality_value": 0.98,
        "quality_worst": 0.875,
        "quality_combine": "mean",
        "quality_threshold": 0.9,
        "quality_passed": True,
    }
    assert quality_text(record) == "0.9800 mean, worst 0.8750 (threshold 0.9, pass)"
    reason = "seeded random weights (the package is not installed): near-ties, not the task"
    advised = {
        **record,
        "quality_combine": "worst",
        "quality_value": 0.875,
        "quality_passed": False,
        "quality_advisory": reason,
    }
    assert quality_text(advised) == (
        f"0.8750 worst (threshold 0.9, below; advisory, not used to reject: {reason})"
    )
    # a record from before combine rules: its value was the worst request's
    old = {"quality_value": 0.875, "quality_threshold": 0.9, "quality_passed": False}
    assert quality_text(old) == "0.8750 (threshold 0.9, FAIL)"


def test_an_evidence_table_says_its_quality_check_only_advised() -> None:
    """Every table of configs (recommend, show, sweep, the report) prints `flag_legend` beside
    it: an advisory check is said there once, with its reason."""
    reason = "seeded random weights (the package is not installed): near-ties, not the task"
    rows = []
    for mode, advisory in (("eager", reason), ("default", reason), ("max-autotune", None)):
        record = empty_record()
        record.update(
            status="ok",
            trial_uuid=mode,
            config=CompileConfig(mode=mode).to_dict(),
            median_ms=1.0,
            quality_name="top10_overlap",
            quality_value=0.95,
            quality_worst=0.8,
            quality_combine="mean",
        )
        if advisory:
            record["quality_advisory"] = advisory
        rows.append(rank_record(record, 1.0))
    assert (rows[0].quality_worst, rows[0].quality_combine) == (0.8, "mean")
    assert rows[0].to_dict()["quality_advisory"] == reason  # in the JSON answer too
    assert flag_legend(rows) == (
        f"quality* = its quality check is advisory, not used to reject: {reason}"
    )
    assert flag_legend(rows[2:]) == ""
