"""bench/sweep_timeline.py on hand-built trials: seconds from the sweep's start, the table in
start order, and the autotuning line (at once, started before the twin finished); a database
that is not there is one line, exit 2, nothing written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from bench import sweep_timeline
from bench.common import stored_time_s

REPO = Path(__file__).resolve().parents[2]


def trial(key: str, start: str, end: str) -> dict[str, Any]:
    mode, dtype = key.split("/")[:2]
    config = {"mode": mode, "dtype": dtype} if mode != "eager" else {"mode": "eager"}
    return {"config_key": key, "config": config, "status": "ok", "median_ms": 1.0,
            "started_at": f"2026-12-06T05:00:{start}+00:00",
            "finished_at": f"2026-12-06T05:00:{end}+00:00", "tried_because": "a | b"}


def test_autotuning_trials_are_read_against_their_twins() -> None:
    t0 = stored_time_s("2026-12-06T05:00:00+00:00")
    trials = [trial("reduce-overhead/bf16/graphbreaks-ok/dynamic-auto", "02", "10"),
              trial("max-autotune/bf16/graphbreaks-ok/dynamic-auto", "11", "30"),
              trial("max-autotune/fp16/graphbreaks-ok/dynamic-auto", "05", "20"),
              trial("eager/fp32", "01", "03")]
    pts = sweep_timeline.points(trials, t0)
    assert [p["t_s"] for p in pts] == [3.0, 10.0, 20.0, 30.0]
    text = sweep_timeline.markdown("sqlite:///x.db", {
        "id": 4, "workload": {"name": "w"}, "status": "finished",
        "started_at": "2026-12-06T05:00:00+00:00"}, pts)
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    assert [r.split(" | ")[1] for r in rows[1:]] == ["1.0", "2.0", "5.0", "11.0"]
    assert "a / b" in text  # a reason's bar does not break the table
    # bf16 waited for its twin (finished at 10 s); fp16's twin never ran in this sweep
    assert ("autotuning trials: 2, at most 2 running at once; started before their cheaper "
            "twin finished: fp16 + max-autotune") in text


def test_a_missing_database_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(REPO / "bench" / "sweep_timeline.py"),
                           f"sqlite:///{tmp_path}/none.db", "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "none.db" in done.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "none.db").exists()
