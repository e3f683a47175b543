"""A budgeted sweep's warm start from the fleet, for real: a database holding another
fingerprint's results for the same workload file makes a sweep try that fingerprint's best config
first, and say so; --no-priors leaves it alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sweep_support import MANY_SMALL_OPS, advisor, json_out, open_store, sqlite_url

from advisor.config import EAGER_FP32, CompileConfig
from advisor.search.plan import BASELINE_REASON

pytestmark = pytest.mark.slow


def test_the_fleets_best_for_the_same_workload_is_tried_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = sqlite_url(tmp_path / "a.db")
    # Another software stack on this device model: the fingerprint's env fields differ.
    monkeypatch.setenv("ADVISOR_FINGERPRINT_OVERRIDES", json.dumps({"torch_version": "0.0-x"}))
    other = advisor("sweep", MANY_SMALL_OPS, "--db", url, "--modes", "eager,default",
                    "--no-warm", "--no-confirm-leaders", "--json", cwd=tmp_path)
    assert other.returncode == 0, other.stderr
    their_best = json_out(other)["recommendation"]["best"]["config"]
    assert their_best["mode"] == "default"  # fusing 100 ops wins by far
    monkeypatch.delenv("ADVISOR_FINGERPRINT_OVERRIDES")
    done = advisor("sweep", MANY_SMALL_OPS, "--db", url, "--trials", "2", "--no-warm",
                   "--no-confirm-leaders", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    ours = json_out(done)
    assert ours["fingerprint"]["fingerprint_hash"] != json_out(other)["fingerprint"][
        "fingerprint_hash"]
    label = CompileConfig.from_dict(their_best).label
    assert f"warm start from the fleet: {label} queued first" in done.stderr
    assert "same device, another stack" in done.stderr
    with open_store(url) as store:
        mine = sorted(store.trials(sweep_id=ours["sweep_id"]), key=lambda r: r["started_at"])
    assert mine[0]["config"] == their_best
    assert mine[0]["tried_because"].startswith("fleet: best on ")
    assert mine[1]["config_key"] == EAGER_FP32.key


def test_no_priors_leaves_the_fleet_alone(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    url = sqlite_url(tmp_path / "a.db")
    monkeypatch.setenv("ADVISOR_FINGERPRINT_OVERRIDES", json.dumps({"torch_version": "0.0-x"}))
    other = advisor("sweep", MANY_SMALL_OPS, "--db", url, "--modes", "eager,default",
                    "--no-warm", "--no-confirm-leaders", cwd=tmp_path)
    assert other.returncode == 0, other.stderr
    monkeypatch.delenv("ADVISOR_FINGERPRINT_OVERRIDES")
    done = advisor("sweep", MANY_SMALL_OPS, "--db", url, "--trials", "1", "--no-priors",
                   "--sampler", "random", "--no-warm", "--no-confirm-leaders", "--json",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "warm start from the fleet" not in done.stderr
    (only,) = json_out(done)["trials"]
    assert only["config_key"] == EAGER_FP32.key and only["tried_because"] == BASELINE_REASON
