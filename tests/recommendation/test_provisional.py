"""`advisor.recommend` while a sweep of the workload still runs on this stack: the answer comes
from the trials finished so far, and says it is provisional; once the sweep ends it does not."""

from __future__ import annotations

from typing import Any

from recommend_support import TINY_WORKLOAD, record

import advisor
from advisor.db.store import ResultStore


def _sweep(url: str, fp: dict[str, Any]) -> int:
    with ResultStore.from_url(url) as store:
        sweep_id = store.create_sweep(TINY_WORKLOAD, fp, {"device": "cpu"}, "provisional", 6)
        store.add_trial(record(fp, "eager", median_ms=4.0), sweep_id)
        store.add_trial(record(fp, "default", median_ms=1.0), sweep_id)
        store.beat(sweep_id)  # its process is alive
    return sweep_id


def test_a_running_sweep_makes_the_answer_provisional(db_url: str,
                                                      cpu_fp: dict[str, Any]) -> None:
    sweep_id = _sweep(db_url, cpu_fp)
    rec = advisor.recommend("tiny-mlp", db=db_url, fingerprint=cpu_fp["fingerprint_hash"])
    assert rec.best is not None and rec.best.config.mode == "default"  # from what finished
    assert rec.provisional.startswith(f"sweep {sweep_id} is still running (2 of 6 planned")
    assert rec.to_dict()["provisional"] == rec.provisional

    with ResultStore.from_url(db_url) as store:
        store.finish_sweep(sweep_id, "finished")
    done = advisor.recommend("tiny-mlp", db=db_url, fingerprint=cpu_fp["fingerprint_hash"])
    assert done.provisional == "" and done.best == rec.best
