"""Every page of the dashboard, run by AppTest on the seeded database: no exception, and the
numbers the seeded trials imply (support.seed's docstring says what they are)."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from support.seed import H200_BREAK_EVEN, H200_SPEEDUP

Run = Callable[..., AppTest]
PAGES = ("recommendations", "workload", "fleet", "sweeps")


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _table(at: AppTest, *columns: str) -> pd.DataFrame:
    """The first table of the page with these columns."""
    return next(d.value for d in at.dataframe if set(columns) <= set(d.value.columns))


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_with_its_charts(run_page: Run, seeded_url: str, page: str) -> None:
    at = run_page(seeded_url, page)
    _ok(at)
    assert [t.value for t in at.title] == [page.capitalize()]
    assert at.get("vega_lite_chart"), "every page draws at least one Altair chart"
    sidebar = " ".join(c.value for c in at.sidebar.caption)
    assert "results.db" in sidebar


def test_recommendations_one_row_per_workload_device_stack(run_page: Run, seeded_url: str) -> None:
    at = run_page(seeded_url)  # the default page
    _ok(at)
    assert _metrics(at) == {
        "Workloads": "3", "Devices": "4", "Software stacks": "3", "Trials": "25",
        "Failed trials": "3",
    }  # fmt: skip
    table = _table(at, "workload", "device", "config", "stale_reason")
    assert len(table) == 6
    rows = table[table["workload"] == "reranker"]
    row = rows[rows["stack"].str.contains("torch 2.11") & (rows["n_trials"] == 7)].iloc[0]
    assert row["device"].startswith("H200 @")  # its short id, as the CLI names it
    assert row["config"] == "bf16 + reduce-overhead"
    assert row["speedup"] == pytest.approx(H200_SPEEDUP)
    assert row["p50_ms"] == pytest.approx(0.96)
    assert row["p99_ms"] == pytest.approx(0.96 * 1.25)
    assert row["cold_compile_s"] == pytest.approx(31.0)
    assert row["break_even_calls"] == pytest.approx(H200_BREAK_EVEN, abs=1)
    assert row["n_failed"] == 2 and not row["stale"]

    old = table[table["stack"].str.contains("torch 2.10")].iloc[0]
    assert old["stale"] and old["config"] == "bf16 + reduce-overhead"
    assert "torch 2.10.0+cu128 → 2.11.0+cu130" in old["stale_reason"]
    assert old["speedup"] == pytest.approx(6.5 / 1.2)

    a100 = table[table["device"].str.startswith("A100 @")].iloc[0]
    assert a100["config"] == "fp32 + default"  # reduce-overhead bf16 failed its quality check
    assert (a100["n_rejected"], a100["n_failed"]) == (1, 1)
    assert a100["speedup"] == pytest.approx(9.0 / 7.0)

    cpu = table[table["workload"] == "tiny-mlp"].iloc[0]
    assert cpu["config"] == "fp32 + eager" and cpu["speedup"] == pytest.approx(1.0)
    assert pd.isna(cpu["break_even_calls"])


def test_recommendations_filters(run_page: Run, seeded_url: str) -> None:
    at = run_page(seeded_url)
    at.multiselect[0].set_value(["reranker"]).run()
    _ok(at)
    assert set(_table(at, "workload", "device", "config", "stale_reason")["workload"]) == {
        "reranker"
    }
    at.toggle[0].set_value(True).run()
    shown = _table(at, "workload", "device", "config", "stale_reason")
    assert len(shown) == 3 and not shown["stale"].any()
    assert _metrics(at)["Trials"] == "15"


def _choose_group(at: AppTest, workload: str, contains: str, n_trials: int) -> None:
    """The device and stack whose label has ``contains`` and that holds ``n_trials`` trials
    (the labels name the device and stack only: they stay the same as trials are added)."""
    at.selectbox(key="workload").set_value(workload).run()
    for label in [o for o in at.selectbox(key="group").options if contains in o]:
        at.selectbox(key="group").set_value(label).run()
        if _metrics(at)["Trials"] == str(n_trials):
            return
    raise AssertionError(f"no device of {workload} with {contains!r} and {n_trials} trials")


def test_workload_page_trials_failures_and_compiler_facts(run_page: Run, seeded_url: str) -> None:
    at = run_page(seeded_url, "workload")
    _choose_group(at, "reranker", "torch 2.11", 7)
    _ok(at)
    assert _metrics(at)["Trials"] == "7" and _metrics(at)["Failed"] == "2"
    assert "6.46x" in at.success[0].value and "bf16 + reduce-overhead" in at.success[0].value
    trials = _table(at, "config", "outcome", "error")
    assert len(trials) == 7
    outcomes = set(trials["outcome"])
    assert {"ok", "failed: graph_break", "failed: oom"} <= outcomes
    failed = trials[trials["outcome"] == "failed: oom"].iloc[0]
    assert "CUDA out of memory" in failed["error"]
    best = trials[trials["config"] == "bf16 + reduce-overhead"].iloc[0]
    assert best["speedup"] == pytest.approx(H200_SPEEDUP)

    breaks = _table(at, "reason", "count", "configs")
    assert "Tensor.item() call with capture_scalar_outputs=False" in set(breaks["reason"])
    assert any("graph_break" in r for r in breaks["reason"])  # the fullgraph failure's reason
    assert "triton_per_fused_add_native_layer_norm_0" in set(
        _table(at, "recommended config kernel").iloc[:, 0]
    )
    assert "ampere_sgemm_128x64_tn" in set(_table(at, "eager fp32 kernel").iloc[:, 0])
    headers = [s.value for s in at.subheader]
    assert "Shape strategies side by side" not in headers  # no replay in these records

    at.multiselect[0].set_value(["failed: oom"]).run()
    assert list(_table(at, "config", "outcome", "error")["outcome"]) == ["failed: oom"]


def test_workload_page_rejected_trials_and_stale_warning(run_page: Run, seeded_url: str) -> None:
    at = run_page(seeded_url, "workload")
    _choose_group(at, "reranker", "A100", 5)
    _ok(at)
    assert "rejected: top10_overlap below threshold" in set(
        _table(at, "config", "outcome", "error")["outcome"]
    )
    assert "fp32 + default" in at.success[0].value
    _choose_group(at, "reranker", "torch 2.10", 4)
    assert "torch 2.10.0+cu128 → 2.11.0+cu130" in at.warning[0].value


def test_workload_page_shape_strategies_side_by_side(run_page: Run, seeded_url: str) -> None:
    at = run_page(seeded_url, "workload")
    at.selectbox(key="workload").set_value("embedder").run()
    _ok(at)
    assert "Shape strategies side by side" in [s.value for s in at.subheader]
    replay = _table(at, "strategy", "config").set_index("strategy")
    assert replay.loc["buckets:pow2", "recompiles"] == 0
    assert replay.loc["static", "p99_ms"] == pytest.approx(1.9)


def _open_tab(at: AppTest, key: str, label: str) -> AppTest:
    """The page again with another of its tabs open (as a click on it does)."""
    at.session_state[key] = label
    return at.run()


def test_fleet_page_draws_only_the_open_view(run_page: Run, seeded_url: str) -> None:
    at = run_page(seeded_url, "fleet")
    _ok(at)
    labels = ["Speedup: device x config", "Latency per device", "Software upgrade", "Two devices"]
    assert [t.label for t in at.tabs] == labels
    assert len(at.get("vega_lite_chart")) == 1  # the first view's heatmap, nothing more
    for label in labels[1:]:
        at = _open_tab(at, "fleet_view", label)
        _ok(at)
        assert len(at.get("vega_lite_chart")) == 1, label


def test_fleet_page_upgrade_and_disagreement(run_page: Run, seeded_url: str) -> None:
    at = run_page(seeded_url, "fleet")
    _ok(at)
    assert at.selectbox(key="fleet_workload").value == "reranker"  # measured on most devices
    at = _open_tab(at, "fleet_view", "Software upgrade")
    _ok(at)
    text = " ".join(m.value for m in at.markdown)
    assert "torch 2.10.0+cu128 → 2.11.0+cu130" in text and "driver 570.86.15 → 580.159.04" in text
    assert "at 1.20 ms" in text and "at 0.960 ms" in text and "(-20.0%)" in text
    moves = _table(at, "config", "before_ms", "after_ms").set_index("config")
    assert moves.loc["bf16 + reduce-overhead", "change_pct"] == pytest.approx(-20.0)
    assert moves.loc["fp32 + eager", "after_ms"] == pytest.approx(6.2)

    at = _open_tab(at, "fleet_view", "Two devices")
    _ok(at)
    a, b = at.selectbox(key="device_a").value, at.selectbox(key="device_b").value
    # by default the two that disagree most: an H200 and the A100, never two alike H200s
    assert {a.split()[0], b.split()[0]} == {"H200", "A100"}
    both = _table(at, "config", "verdict_a", "verdict_b").set_index("config")
    a100 = "verdict_a" if a.startswith("A100") else "verdict_b"
    assert both.loc["fp32 + max-autotune", "kind"] == "faster on one, slower on the other"
    assert both.loc["fp32 + max-autotune", a100] == "slower than eager"  # faster on the H200
    assert both.loc["fp32 + default", "kind"] == "agree"
    said = " ".join(m.value for m in at.markdown)
    assert "faster than eager fp32 on one device and slower on the other" in said


def test_sweeps_page_progress(run_page: Run, seeded_url: str) -> None:
    at = run_page(seeded_url, "sweeps")
    _ok(at)
    assert _metrics(at)["Running"] == "1" and _metrics(at)["Finished"] == "5"
    progress = at.get("progress")
    assert len(progress) == 1
    assert "3/10 trials" in progress[0].proto.text and "best 37.0 µs" in progress[0].proto.text
    sweeps = _table(at, "id", "workload", "status", "progress")
    assert len(sweeps) == 6
    running = sweeps[sweeps["status"] == "running"].iloc[0]
    assert running["progress"] == pytest.approx(0.3)
    assert "refreshes every" in " ".join(c.value for c in at.caption)
    trials = _table(at, "trial", "config", "best_so_far_ms")  # the newest sweep: the running one
    assert list(trials["best_so_far_ms"]) == pytest.approx([0.037] * 3)


@pytest.mark.postgres
@pytest.mark.parametrize("page", PAGES)
def test_pages_on_postgres(run_page: Run, pg_seeded_url: str, page: str) -> None:
    at = run_page(pg_seeded_url, page)
    _ok(at)
    assert at.get("vega_lite_chart")
