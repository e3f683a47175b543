"""A budgeted sweep's warm start from the fleet, for real: a database holding another
fingerprint's results for the same workload file makes a sweep try that fingerprint's best config
first after the eager fp32 baseline, and say so; --no-priors leaves it alone."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.sweeps import MANY_SMALL_OPS, advisor, json_out, open_store, sqlite_url

from advisor.config import EAGER_FP32, CompileConfig
from advisor.search.plan import BASELINE_REASON

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """One sweep under another software stack on this device model (the fingerprint's env
    fields differ), run once: each test sweeps on a copy of its database."""
    where = tmp_path_factory.mktemp("fleet")
    db = where / "a.db"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ADVISOR_FINGERPRINT_OVERRIDES", json.dumps({"torch_version": "0.0-x"}))
        other = advisor("sweep", MANY_SMALL_OPS, "--db", sqlite_url(db), "--modes",
                        "eager,default", "--no-warm", "--no-confirm-leaders", "--json", cwd=where)
    assert other.returncode == 0, other.stderr
    return db, json_out(other)


def _copy(fleet: tuple[Path, dict[str, Any]], tmp_path: Path) -> str:
    shutil.copy(fleet[0], tmp_path / "a.db")
    return sqlite_url(tmp_path / "a.db")


def test_the_fleets_best_for_the_same_workload_is_tried_first(
        tmp_path: Path, fleet: tuple[Path, dict[str, Any]]) -> None:
    url = _copy(fleet, tmp_path)
    their_best = fleet[1]["recommendation"]["best"]["config"]
    assert their_best["mode"] == "default"  # fusing 40 ops wins by far
    done = advisor("sweep", MANY_SMALL_OPS, "--db", url, "--trials", "2", "--no-warm",
                   "--no-confirm-leaders", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    ours = json_out(done)
    assert ours["fingerprint"]["fingerprint_hash"] != fleet[1]["fingerprint"]["fingerprint_hash"]
    label = CompileConfig.from_dict(their_best).label
    assert f"warm start from the fleet: {label} queued right after the baseline" in done.stderr
    assert "same device, another stack" in done.stderr
    with open_store(url) as store:
        mine = sorted(store.trials(sweep_id=ours["sweep_id"]), key=lambda r: r["started_at"])
    assert mine[0]["config_key"] == EAGER_FP32.key  # the oracle first, then the fleet's best
    assert mine[1]["config"] == their_best
    assert mine[1]["tried_because"].startswith("fleet: best on ")


def test_no_priors_leaves_the_fleet_alone(tmp_path: Path,
                                         fleet: tuple[Path, dict[str, Any]]) -> None:
    url = _copy(fleet, tmp_path)
    done = advisor("sweep", MANY_SMALL_OPS, "--db", url, "--trials", "1", "--no-priors",
                   "--sampler", "random", "--no-warm", "--no-confirm-leaders", "--json",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "warm start from the fleet" not in done.stderr
    (only,) = json_out(done)["trials"]
    assert only["config_key"] == EAGER_FP32.key and only["tried_because"] == BASELINE_REASON
