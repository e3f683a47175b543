"""The sweep's progress piped (not a terminal): plain lines, in human units, with done/planned,
the best so far, the time elapsed and the time left."""

from __future__ import annotations

import re

import pytest

from advisor.cli.progress import ProgressObserver
from advisor.config import CompileConfig


def test_piped_progress_prints_plain_lines(capsys: pytest.CaptureFixture[str]) -> None:
    eager = CompileConfig(mode="eager", dtype="fp32")
    observer = ProgressObserver()
    assert observer.plain  # stderr is captured: not a terminal
    with observer:
        observer.started(7, 3, 0, None)
        for median in (1220.0, 0.96):
            observer.trial_started(eager)
            observer.trial_finished({"status": "ok", "median_ms": median, "passed": True,
                                     "config": eager.to_dict()}, min(1220.0, median))
    lines = capsys.readouterr().err.splitlines()
    assert lines[:2] == ["sweep 7: 3 trials planned, 0 already done", "  fp32 + eager: 1.22 s"]
    assert re.fullmatch(r"  1/3 done, best 1\.22 s, \S+ (ms|s) elapsed, ~\S+ (ms|s|µs) left",
                        lines[2]), lines[2]
    assert lines[3] == "  fp32 + eager: 0.960 ms"
    assert lines[4].startswith("  2/3 done, best 0.960 ms, ")
    assert not any("\x1b" in line or "\r" in line for line in lines)  # no redrawn bar
