"""The tests' one factory of hand-built trial records: `advisor.records.empty_record` with the
fields a stored trial of one config carries, for the tests that decide, rank or show records
whose right answer is known (tests/recommend, tests/report, ...)."""

from __future__ import annotations

import itertools
from typing import Any

from advisor.config import CompileConfig
from advisor.records import empty_record

_uuids = itertools.count()


def trial(
    mode: str,
    dtype: str = "fp32",
    median_ms: float | None = 1.0,
    *,
    passed: bool | None = True,
    status: str = "ok",
    ci: tuple[float, float] | None = None,
    cold_compile_s: float | None = 10.0,
    **fields: Any,
) -> dict[str, Any]:
    """A stored-looking trial record of one config: ``status`` ok (its figures: the median,
    p90 = 1.1 x the median, ``ci`` as its interval, a cold compile unless eager) or another
    status (no figures, a compile error); ``fields`` set any other key."""
    config = CompileConfig(mode=mode, dtype=dtype)
    record: dict[str, Any] = dict(empty_record())
    record.update(
        trial_uuid=f"trial-{next(_uuids)}", status=status, config=config.to_dict(),
        config_key=config.key, median_ms=median_ms, p90_ms=median_ms and median_ms * 1.1,
        passed=passed, median_ci_ms=list(ci) if ci else None,
        cold_compile_s=None if mode == "eager" else cold_compile_s,
    )
    if status != "ok":
        record.update(median_ms=None, p90_ms=None, passed=None, failure_reason="compile_error")
    record.update(fields)
    return record


def eager_fp32(median_ms: float = 10.0, **fields: Any) -> dict[str, Any]:
    """The eager fp32 baseline's record (see `trial`)."""
    return trial("eager", "fp32", median_ms, **fields)
