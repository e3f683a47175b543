"""A sweep on a CUDA GPU whose leader ties with its twin: the tie is confirmed interleaved in one
process, compiling from the trials' kept caches (Inductor's FX graph cache and Triton's kernels
copied from the trials' cache dirs), while the leader's warm start runs beside it under the GPU's
device lock. Two jobs: the sweep's own workers check the workload file's bytes instead of
importing it. Skipped without CUDA."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.config import EAGER_FP32, CompileConfig
from advisor.db.store import ResultStore
from advisor.recommendation import recommend

pytestmark = pytest.mark.gpu

FIXED_COST = Path(__file__).parents[1] / "workloads" / "fixed_cost.py"


def test_a_tie_on_cuda_is_confirmed_from_the_kept_caches(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'tie.db'}"
    done = subprocess.run(
        [sys.executable, "-m", "advisor", "sweep", str(FIXED_COST), "--db", url, "--device",
         "cuda", "--jobs", "2", "--modes", "default", "--dtypes", "fp32", "--fullgraph", "both",
         "--json"],
        capture_output=True, text=True, timeout=900, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    rec = json.loads(done.stdout)["recommendation"]
    assert rec["confirmation"]["used"] is True, rec["note"]
    store = ResultStore.from_url(url, create=False)
    (confirmation,) = store.confirmations("fixed-cost")
    assert confirmation["status"] == "ok" and confirmation["method"] == "cuda_events"
    entries = {e["config_key"]: e for e in confirmation["entries"]}
    twins = [CompileConfig(mode="default", fullgraph=f).key for f in (False, True)]
    assert set(entries) == {*twins, EAGER_FP32.key}
    # (a lower bound by construction: every call sleeps 20 ms, which load can only lengthen)
    assert all(entries[k]["median_ms"] > 20 and entries[k]["compiled_from_kept_cache"]
               for k in twins)
    caches = sorted((entries[k]["compile_cache"] for k in twins), key=len)
    assert caches[0] == {}  # the second twin reused the first's graph in the same process
    assert caches[1].get("fxgraph_cache_hit", 0) >= 1 and "fxgraph_cache_miss" not in caches[1]
    cold = {t["config_key"]: t["cold_compile_s"] for t in store.trials(workload="fixed-cost")}
    first = next(k for k in twins if entries[k]["compile_cache"])
    assert entries[first]["compile_s"] < cold[first]  # a warm start, not a second cold compile
    # The leader's warm start ran beside the re-measurement; one after it only when the
    # re-measurement picked the other twin.
    records = store.trials(workload="fixed-cost")
    warm = {t["config_key"]: t["warm_compile_s"] for t in records}
    separate = recommend("fixed-cost", records, records[0]["fingerprint"]["fingerprint_hash"])
    beside = separate.best or separate.leader  # what the sweep's own figures picked
    assert beside is not None
    pick = CompileConfig.from_dict(rec["best"]["config"]).key
    assert warm[beside.config_key] is not None and warm[pick] is not None
    after = "advisor: warm start of the recommended config" in done.stderr
    assert after == (pick != beside.config_key), done.stderr
