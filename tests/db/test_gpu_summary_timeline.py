"""bench/gpu_summary.py --timeline: a sweep's trials and re-measurement in seconds after the
sweep's row, read from a real SQLite results database (the spans docs/performance.md quotes)."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

from advisor.db import ResultStore

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "bench" / "gpu_summary.py"


def _when(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    assert moment.tzinfo is not None, text  # the store gives times in UTC
    return moment


def test_the_timeline_counts_from_the_sweeps_row(tmp_path: Path, make: SimpleNamespace) -> None:
    path = tmp_path / "bench.db"
    with ResultStore.from_url(f"sqlite:///{path}") as store:
        fp = make.fingerprint()
        sweep_id = store.create_sweep(make.workload(), fp, {}, "timeline", 3)
        row = _when(store.get_sweep(sweep_id)["started_at"])
        spans = [(3.3, 137.2), (4.0, 123.5), (123.6, 197.9)]  # seconds after the row
        records = [make.record(i, fingerprint=fp,
                               started_at=(row + timedelta(seconds=a)).isoformat(),
                               finished_at=(row + timedelta(seconds=b)).isoformat())
                   for i, (a, b) in enumerate(spans)]  # fmt: skip
        records[2]["screened_out"] = {"median_ms": 4.6, "above_ms": 2.9, "samples": 15}
        store.add_trials(records, sweep_id)
        store.finish_sweep(sweep_id)
        stored = store.trials(sweep_id=sweep_id)
        entry = {"config_key": records[0]["config_key"], "label": "the leader", "median_ms": 0.856,
                 "speedup": 6.559, "compile_s": 4.57, "compiled_from_kept_cache": True}
        store.add_confirmation({"workload": make.workload(), "fingerprint": fp, "rounds": 133,
                                "created_at": (row + timedelta(seconds=236.8)).isoformat(),
                                "device": "cuda", "entries": [entry]})
        store.add_confirmation({"workload": make.workload(), "fingerprint": fp, "rounds": 9,
                                "created_at": (row - timedelta(hours=1)).isoformat()})
        closed = (_when(store.get_sweep(sweep_id)["finished_at"]) - row).total_seconds()

    done = subprocess.run([sys.executable, str(SCRIPT), "--timeline", str(path)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("== reranker sweep 1 ")
    trials = lines[1:4]
    order = sorted(range(3), key=lambda i: spans[i][0])
    for line, i in zip(trials, order, strict=True):
        config = stored[i]["config"]
        assert line.split()[:2] == [config["dtype"], config["mode"]]
        assert f"start {spans[i][0]:6.1f} end {spans[i][1]:6.1f}" in line
        assert f"median {stored[i]['median_ms']:.4f} ms" in line
        assert line.endswith("screened out") == (i == 2)
    assert lines[4] == f"  sweep finished {closed:.1f}"
    # The confirmation stored an hour before the sweep began belongs to another sweep.
    assert lines[5] == "  leaders' re-measurement stored 236.8 (133 rounds, ok):"
    assert lines[6].split() == ["the", "leader", "median", "0.8560", "ms,", "speedup", "6.559,",
                                "compile", "4.57", "s,", "from", "the", "kept", "cache:", "True"]
    assert len(lines) == 7
