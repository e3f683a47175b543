"""The Python API does what the CLI does: `advisor.sweep` measures and recommends, and
`advisor.recommend` gives the answer the CLI prints, from the same store."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.sweeps import FOUR_DTYPES, advisor, json_out, open_store, sqlite_url

import advisor as api
from advisor.errors import ConfigError


@pytest.mark.slow
def test_sweep_and_recommend_from_python_match_the_cli(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "a.db")
    said: list[str] = []
    outcome = api.sweep(FOUR_DTYPES, db=url, device="cpu", modes=["eager"],
                        dtypes=["fp32", "bf16"],
                        warm=False, confirm_leaders=False, notice=said.append)
    assert outcome.status == "finished"
    assert {r["config_key"] for r in outcome.records} == {"eager/fp32", "eager/bf16"}
    with open_store(url) as store:
        assert len(store.trials(sweep_id=outcome.sweep_id)) == 2
    rec = api.recommend(outcome.recommendation.workload, db=url, device="cpu")
    assert rec.fingerprint_hash == outcome.recommendation.fingerprint_hash
    assert rec.decision == outcome.recommendation.decision
    shown = json_out(advisor("recommend", rec.workload, "--db", url, "--device", "cpu",
                             "--json", cwd=tmp_path))
    assert shown["decision"] == rec.decision
    assert (shown["best"] or {}).get("label") == (rec.best.label if rec.best else None)


def test_a_mistake_raises_one_config_error_and_writes_nothing(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "a.db")
    with pytest.raises(ConfigError, match="trials= must be at least 1"):
        api.sweep(FOUR_DTYPES, db=url, trials=0)
    with pytest.raises(ConfigError, match="unknown argument"):
        api.sweep(FOUR_DTYPES, db=url, warp=True)
    assert not (tmp_path / "a.db").exists()
    with pytest.raises(Exception, match="a.db"):
        api.recommend("four-dtypes", db=url)
    assert not (tmp_path / "a.db").exists()
