"""Which configs a sweep's closing re-measurement pairs with eager fp32 (`to_confirm`):
the pick, the leaders when they are close, and, when eager fp32 itself leads, its closest
rival."""

from __future__ import annotations

from recommend_support import record

from advisor.config import EAGER_FP32, CompileConfig
from advisor.recommendation import recommend
from advisor.search.closing import to_confirm

BF16 = CompileConfig(mode="eager", dtype="bf16")
DEFAULT = CompileConfig(mode="default")


def test_a_clear_pick_is_paired_alone() -> None:
    rec = recommend("w", [record({}, "eager", median_ms=6.0), record({}, "default", median_ms=1.0)])
    assert to_confirm(rec) == [DEFAULT.key]


def test_when_eager_fp32_leads_its_closest_rival_is_paired_with_it() -> None:
    """A loaded host slowed bf16's lone trial (10.5 ms, noisy) below eager fp32 (6.1 ms): the
    paired re-measurement is what can tell that "compiling does not pay off" is wrong."""
    records = [record({}, "eager", median_ms=6.1),
               record({}, "eager", "bf16", median_ms=10.5, noisy=True),
               record({}, "default", median_ms=14.0)]
    rec = recommend("w", records)
    assert rec.best is not None and rec.best.config_key == EAGER_FP32.key
    assert to_confirm(rec) == [BF16.key]


def test_eager_fp32_alone_has_nothing_to_pair() -> None:
    assert to_confirm(recommend("w", [record({}, "eager", median_ms=6.1)])) == []
