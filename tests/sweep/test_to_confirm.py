"""Which configs the closing re-measurement pairs with eager fp32 (`Sweeper._to_confirm`): the
pick, the leaders when they are close, and, when eager fp32 itself leads, its closest rival."""

from __future__ import annotations

import itertools
from typing import Any

from advisor.config import EAGER_FP32, CompileConfig
from advisor.recommendation import recommend
from advisor.records import empty_record
from advisor.search.sweep import Sweeper

_uuids = itertools.count()


def trial(mode: str, dtype: str, median_ms: float, noisy: bool = False) -> dict[str, Any]:
    """A stored-looking trial record of one config that ran and passed."""
    config = CompileConfig(mode=mode, dtype=dtype)
    record: dict[str, Any] = dict(empty_record())
    record.update(
        trial_uuid=f"tc-{next(_uuids)}", status="ok", config=config.to_dict(),
        config_key=config.key, median_ms=median_ms, p90_ms=median_ms * 1.1, passed=True,
        median_ci_ms=[median_ms * 0.98, median_ms * 1.02], noisy=noisy,
        cold_compile_s=None if mode == "eager" else 10.0,
    )
    return record



BF16 = CompileConfig(mode="eager", dtype="bf16")
DEFAULT = CompileConfig(mode="default")


def test_a_clear_pick_is_paired_alone() -> None:
    rec = recommend("w", [trial("eager", "fp32", 6.0), trial("default", "fp32", 1.0)])
    assert Sweeper._to_confirm(rec) == [DEFAULT.key]


def test_when_eager_fp32_leads_its_closest_rival_is_paired_with_it() -> None:
    """A loaded host slowed bf16's lone trial (10.5 ms, noisy) below eager fp32 (6.1 ms): the
    paired re-measurement is what can tell that "compiling does not pay off" is wrong."""
    records = [trial("eager", "fp32", 6.1), trial("eager", "bf16", 10.5, noisy=True),
               trial("default", "fp32", 14.0)]
    rec = recommend("w", records)
    assert rec.best is not None and rec.best.config_key == EAGER_FP32.key
    assert Sweeper._to_confirm(rec) == [BF16.key]


def test_eager_fp32_alone_has_nothing_to_pair() -> None:
    assert Sweeper._to_confirm(recommend("w", [trial("eager", "fp32", 6.1)])) == []
