"""A sweep whose leader has contenders re-measures them side by side before it recommends: a
real CPU sweep of a workload whose twins tie by construction (tests/workloads/fixed_cost.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.sweeps import advisor, json_out, open_store, sqlite_url

from advisor.config import EAGER_FP32, CompileConfig
from advisor.recommendation import TIE_RATIO, recommend

pytestmark = pytest.mark.slow

FIXED_COST = Path(__file__).resolve().parents[1] / "workloads" / "fixed_cost.py"
WAIT_S = 0.02  # fixed_cost.py's wait per call


def test_a_tie_with_the_leader_is_decided_on_paired_figures_from_the_kept_caches(
    tmp_path: Path,
) -> None:
    # fixed_cost.py: default with fullgraph on and off compile one graph, 20 ms a call either
    # way, and beat eager by a chain of ops that only they fuse: the leader has its twin as a
    # contender.
    # Two jobs: the sweep's own workers (which check the workload file's bytes instead of
    # importing it) measure in turns; the parent re-measures and warm-starts.
    url = sqlite_url(tmp_path / "tie.db")
    done = advisor("sweep", FIXED_COST, "--db", url, "--jobs", "2", "--modes", "default",
                   "--dtypes", "fp32", "--fullgraph", "both", "--screen", "0",  # no screening
                   "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rec = json_out(done)["recommendation"]
    with open_store(url) as store:
        records = store.trials(workload="fixed-cost")
        confirmations = store.confirmations("fixed-cost")
    twins = {r["config_key"] for r in records if r["config"]["mode"] == "default"}
    assert len(twins) == 2
    separate = recommend("fixed-cost", records, records[0]["fingerprint"]["fingerprint_hash"])
    assert twins <= set(separate.contenders), separate.sentence  # the sweep's own figures tie

    assert rec["confirmation"]["used"] is True
    assert "paired figures: 3 configs re-measured" in rec["note"]
    (confirmation,) = confirmations
    # The decision follows the rule on the paired figures, whichever way load moved them (the
    # twins are 0% apart by construction; eager is ~10% behind): the
    # pick is the simplest confirmed config within the tie ratio of the fastest, or the fastest,
    # or, when equivalent, one the fastest cannot be told from (the lower cold compile).
    paired = {e["config_key"]: e["median_ms"] for e in confirmation["entries"]}
    fastest = min(paired.values())
    pick = CompileConfig.from_dict(rec["best"]["config"]).key
    assert rec["best"]["confirmed"]
    assert paired[pick] <= fastest * (1 + TIE_RATIO) or (
        rec["decision"] == "equivalent" and rec["best"]["label"] in rec["undecided"])
    if rec["decision"] == "decided":
        assert paired[pick] == fastest
    assert confirmation["status"] == "ok"
    entries = {e["config_key"]: e for e in confirmation["entries"]}
    assert set(entries) == twins | {EAGER_FP32.key}
    compiled = [entries[key] for key in twins]
    # (a lower bound by construction: every call sleeps WAIT_S, which load can only lengthen)
    assert all(e["median_ms"] > WAIT_S * 1000 and e["compiled_from_kept_cache"]
               for e in compiled)
    # The first twin compiled from its trial's cache (a hit, no miss); the second reused that
    # graph in the same process, compiling nothing.
    caches = sorted((e["compile_cache"] for e in compiled), key=len)
    assert caches[0] == {}
    assert caches[1].get("fxgraph_cache_hit", 0) >= 1 and "fxgraph_cache_miss" not in caches[1]
    assert not entries[EAGER_FP32.key]["compiled_from_kept_cache"]

    # The warm start ran beside the re-measurement for the config the sweep's own figures
    # picked (the leader, or under "equivalent" the one with the lower cold compile; stored
    # before the re-measurement ended); a warm start after it only when the re-measurement
    # picked another config. (Separate processes cannot order the twins: whichever the sweep's
    # figures put first is what was warm-started beside.)
    warm = {r["config_key"]: r["warm_compile_s"] for r in records}
    beside = separate.best or separate.leader
    assert beside is not None and beside.config_key in twins, separate.sentence
    assert warm[beside.config_key] is not None
    if pick in twins:  # eager has no warm start to measure
        assert warm[pick] is not None
    after = "advisor: warm start of the recommended config" in done.stderr
    assert after == (pick in twins and pick != beside.config_key), done.stderr
    assert rec["best"]["warm_compile_s"] == warm[pick]
