"""One answer everywhere, and only when the evidence carries it: stored trials in a real SQLite
file, read through every surface (`advisor recommend`, `list`, `show`, `compare`, the dashboard's
data, `advisor.apply`), each of which must show the pick `advisor.recommendation.answers.answer`
decides."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
import torch
from recommend_support import TINY_MLP, TINY_WORKLOAD, advisor, json_out, record

import advisor as advisor_api
from advisor.config import CompileConfig
from advisor.db.store import ResultStore
from advisor.recommendation.answers import answer
from advisor.runtime import RecommendationWarning
from advisor.workload import load_workload

EAGER_BF16 = CompileConfig(mode="eager", dtype="bf16")
DEFAULT = CompileConfig(mode="default", dtype="fp32")


def _ci(ms: float) -> tuple[float, float]:
    return ms * 0.99, ms * 1.01


def _entry(config: CompileConfig, median_ms: float, speedup_ci: list[float]) -> dict[str, Any]:
    return {"config": config.to_dict(), "config_key": config.key, "label": config.label,
            "median_ms": median_ms, "median_ci_ms": list(_ci(median_ms)),
            "speedup": sum(speedup_ci) / 2, "speedup_ci": speedup_ci}


def test_a_screened_slow_config_never_wins_a_tie_through_advisor_recommend(
    tmp_path: Path, cpu_fp: dict[str, Any]
) -> None:
    """The issue's case: a screened 15-call config at 1.70 ms, its wide interval overlapping a
    1.00 ms leader's, was recommended as "simpler". It is a short measurement: no tie, no doubt."""
    url = f"sqlite:///{tmp_path / 'advisor.db'}"
    screened = record(cpu_fp, "default", median_ms=1.70, ci=(0.95, 2.6), noisy=True,
                      screened_out={"median_ms": 1.70, "above_ms": 1.5, "samples": 15})
    leader = record(cpu_fp, "max-autotune-no-cudagraphs", median_ms=1.00, ci=(0.98, 1.02))
    with ResultStore.from_url(url) as store:
        store.add_trials([record(cpu_fp, "eager", median_ms=10.0, ci=(9.9, 10.1)), leader,
                          screened])
    done = advisor("recommend", "tiny-mlp", "--db", url, "--fingerprint",
                   cpu_fp["fingerprint_hash"], "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rec = json_out(done)
    assert rec["best"]["label"] == "fp32 + max-autotune-no-cudagraphs"
    assert rec["decision"] == "decided" and rec["undecided"] == [] and not rec["note"]
    short = next(r for r in rec["ranked"] if r["label"] == "fp32 + default")
    assert short["short"] and short["median_ms"] == 1.70
    table = advisor("recommend", "tiny-mlp", "--db", url, "--fingerprint",
                    cpu_fp["fingerprint_hash"], cwd=tmp_path)
    assert "short" in table.stdout and "speedup vs eager fp32 10.0 ms" in table.stdout


def _one_database(url: str, fp: dict[str, Any]) -> None:
    """Trials whose sweep figures say fp32 + default (and whose best single trial says it by
    far), and a stored confirmation whose paired figures say bf16 + eager."""
    trials = [
        record(fp, "eager", median_ms=10.0, ci=_ci(10.0)),
        record(fp, "eager", median_ms=10.2, ci=_ci(10.2)),
        record(fp, "default", median_ms=0.5, ci=_ci(0.5)),  # the best of N: an outlier
        record(fp, "default", median_ms=1.0, ci=_ci(1.0)),
        record(fp, "default", median_ms=1.0, ci=_ci(1.0)),
        record(fp, "eager", "bf16", median_ms=2.0, ci=_ci(2.0)),
    ]
    with ResultStore.from_url(url) as store:
        sweep_id = store.create_sweep(TINY_WORKLOAD, fp, {}, None, planned_trials=len(trials))
        store.add_trials(trials, sweep_id)
        store.finish_sweep(sweep_id)
        store.add_confirmation({
            "workload": TINY_WORKLOAD, "fingerprint": fp, "device": "cpu", "rounds": 40,
            "method": "perf_counter", "status": "ok", "shapes": [],
            "entries": [_entry(CompileConfig(mode="eager", dtype="fp32"), 9.0, [1.0, 1.0]),
                        _entry(DEFAULT, 9.4, [0.94, 0.97]),
                        _entry(EAGER_BF16, 1.9, [4.6, 4.9])],
        })


def test_every_surface_shows_the_same_pick(tmp_path: Path, cpu_fp: dict[str, Any]) -> None:
    url = f"sqlite:///{tmp_path / 'advisor.db'}"
    _one_database(url, cpu_fp)
    here = cpu_fp["fingerprint_hash"]
    with ResultStore.from_url(url) as store:
        one = answer(store, "tiny-mlp", here)
    assert one.best is not None and one.best.label == "bf16 + eager" and one.best.confirmed
    by_label = {r.label: r for r in one.ranked}
    assert by_label["fp32 + default"].n_trials == 3 and by_label["fp32 + default"].confirmed

    rec = json_out(advisor("recommend", "tiny-mlp", "--db", url, "--fingerprint", here,
                           "--json", cwd=tmp_path))
    listed = json_out(advisor("list", "--db", url, "--json", cwd=tmp_path))
    shown = json_out(advisor("show", "1", "--db", url, "--json", cwd=tmp_path))
    compared = json_out(advisor("compare", "tiny-mlp", "--db", url, "--json", cwd=tmp_path))
    assert rec["best"]["label"] == "bf16 + eager"
    assert listed[0]["recommendation"]["pick"] == "bf16 + eager"
    assert shown["recommendation"]["best"]["label"] == "bf16 + eager"
    assert compared["devices"][0]["pick"] == "bf16 + eager"
    speedups = {rec["best"]["speedup"], listed[0]["recommendation"]["speedup"],
                shown["recommendation"]["best"]["speedup"], compared["devices"][0]["speedup"]}
    assert len(speedups) == 1  # one figure, against one baseline
    assert compared["devices"][0]["baseline"].startswith("eager fp32 9.00 ms (paired confirmation")

    from dashboard import analysis, data

    groups = data.groups(url)
    rows = analysis.recommendations(groups, [data.recommendation(
        url, "tiny-mlp", groups.at[0, "device_hash"], groups.at[0, "env_hash"])])
    assert list(rows["config"]) == ["bf16 + eager"]
    assert list(data.recommendations(url)["config"]) == ["bf16 + eager"]

    model = load_workload(TINY_MLP).workload.build("cpu", torch.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecommendationWarning)
        applied = advisor_api.apply(model, workload=TINY_MLP, db=url, device="cpu",
                                    warmup=False)
    assert applied.config == EAGER_BF16


def test_show_prints_each_failed_trials_last_error_line(
    tmp_path: Path, cpu_fp: dict[str, Any]
) -> None:
    url = f"sqlite:///{tmp_path / 'advisor.db'}"
    failed = record(cpu_fp, "default", median_ms=1.0)
    failed.update(status="failed", failure_reason="runtime_error", median_ms=None, passed=None,
                  error_tail="Traceback (most recent call last):\n  File \"w.py\", line 9\n"
                             "KeyError: 'logits'\n")
    with ResultStore.from_url(url) as store:
        sweep_id = store.create_sweep(TINY_WORKLOAD, cpu_fp, {}, None)
        store.add_trials([record(cpu_fp, "eager", median_ms=10.0), failed], sweep_id)
    done = advisor("show", str(sweep_id), "--db", url, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "KeyError: 'logits'" in done.stdout and "runtime_error" in done.stdout


@pytest.mark.parametrize("sha, stale", [(None, False), ("0" * 64, True)])
def test_staleness_names_a_changed_workload_file(
    tmp_path: Path, cpu_fp: dict[str, Any], sha: str | None, stale: bool
) -> None:
    url = f"sqlite:///{tmp_path / 'advisor.db'}"
    workload = {**TINY_WORKLOAD, "source_sha256": sha or TINY_WORKLOAD["source_sha256"]}
    with ResultStore.from_url(url) as store:
        store.add_trials([record(cpu_fp, "eager", median_ms=10.0, workload=workload),
                          record(cpu_fp, "default", median_ms=1.0, workload=workload)])
    rec = json_out(advisor("recommend", "tiny-mlp", "--db", url, "--fingerprint",
                           cpu_fp["fingerprint_hash"], "--json", cwd=tmp_path))
    if not stale:
        assert rec["staleness"] is None
        return
    assert rec["staleness"]["exact"] and not rec["staleness"]["fresh"]
    assert "the workload file changed since its trials" in rec["staleness"]["warning"]
