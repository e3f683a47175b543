"""Sweeps that overlap trials (`--jobs`) and cut dominated configs short (`--screen`), for real.

`--jobs 2` on the CPU runs two workers whose trials share the device lock: every stored trial
says how long it waited for its turns and when it measured, and no two measurements overlap.
`--screen` with a tiny factor screens out every config measured after the first passed one,
except the eager fp32 baseline, which is always measured in full. Once the trials are done, the
recommended config's warm start is measured from its kept cache, and no other config's.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from support.sweeps import FOUR_DTYPES, MANY_SMALL_OPS, advisor, json_out, open_store, sqlite_url

from advisor.child.trial import SCREEN_SAMPLES
from advisor.config import EAGER_FP32
from advisor.search.space import build_space

pytestmark = pytest.mark.slow


def test_jobs_overlap_trials_but_never_measurements(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "a.db")
    done = advisor("sweep", FOUR_DTYPES, "--db", url, "--no-warm", "--modes", "eager",
                   "--jobs", "2", "--screen", "0", "--no-confirm-leaders", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    space = build_space(("fp32", "tf32", "bf16", "fp16"), "cpu", {"mode": ["eager"]})
    assert len(space) >= 2
    assert "configs queued for 2 workers (2 per device)" in done.stderr
    assert f"{len(space)}/{len(space)} trials, 0 failed" in done.stderr  # progress lines
    assert json_out(done)["status"] == "finished"
    with open_store(url) as store:
        records = store.trials()
    assert sorted(r["config_key"] for r in records) == sorted(space.keys())
    windows = []
    for r in records:
        assert r["status"] == "ok" and r["device_wait_s"] >= 0
        assert len(r["measured_alone"]) == 1  # one exclusive turn: warm-up, samples, profile
        windows.append(tuple(r["measured_alone"][0]))
    for (a0, a1), (b0, b1) in itertools.combinations(windows, 2):
        assert a1 <= b0 or b1 <= a0, (windows, "two trials measured at once")


def test_screen_cuts_dominated_configs_short_but_never_the_baseline(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "a.db")
    # A factor of 1e-6: any config measured after a passed one is "dominated".
    done = advisor("sweep", FOUR_DTYPES, "--db", url, "--no-warm", "--modes", "eager",
                   "--dtypes", "fp32,bf16", "--screen", "0.000001", "--no-confirm-leaders",
                   "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with open_store(url) as store:
        records = {r["config_key"]: r for r in store.trials()}
    baseline = records.pop(EAGER_FP32.key)
    assert "screened_out" not in baseline
    assert baseline["shapes"][0]["n_samples"] > SCREEN_SAMPLES
    (bf16,) = records.values()
    assert bf16["status"] == "ok"
    assert bf16["screened_out"]["samples"] == SCREEN_SAMPLES
    assert bf16["shapes"][0]["n_samples"] == SCREEN_SAMPLES
    assert bf16["screened_out"]["above_ms"] == pytest.approx(baseline["median_ms"] * 1e-6)


def test_the_recommended_configs_warm_start_comes_from_its_kept_cache(tmp_path: Path) -> None:
    url, caches = sqlite_url(tmp_path / "a.db"), tmp_path / "caches"
    done = advisor("sweep", MANY_SMALL_OPS, "--db", url, "--modes", "eager,default", "--dtypes",
                   "fp32", "--jobs", "2", "--screen", "0", "--keep-caches", caches,
                   "--no-confirm-leaders", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "advisor: warm start of the recommended config" in done.stderr
    with open_store(url) as store:
        records = {r["config_key"]: r for r in store.trials()}
    (compiled,) = [r for r in records.values() if r["config"]["mode"] == "default"]
    assert json_out(done)["recommendation"]["best"]["trial_uuid"] == compiled["trial_uuid"]
    assert 0 < compiled["warm_compile_s"] < compiled["cold_compile_s"]
    assert records[EAGER_FP32.key]["warm_compile_s"] is None
    # Every trial's cache is where --keep-caches put it, the workers' too.
    kept = {p.name for p in caches.iterdir()}
    assert kept == {r["trial_uuid"] for r in records.values()}
