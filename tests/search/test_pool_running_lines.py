"""A pooled sweep's parent says what its workers run (advisor.search.pool.pool_progress): while
no trial is stored, each running trial's progress as its worker kept it on the Optuna trial
(advisor.search.fleet.PROGRESS_ATTR), or its time so far. A real SQLite store and study."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.db.store import ResultStore
from advisor.dimensions import from_params
from advisor.search import pool
from advisor.search.fleet import PROGRESS_ATTR
from advisor.search.study import open_study


def test_running_trials_are_said_while_nothing_is_stored(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool, "RUNNING_EVERY_S", 0.0)
    with ResultStore.from_url(f"sqlite:///{tmp_path / 'a.db'}") as store:
        study = open_study(store.url, "pooled", seed=0)
        replaying, starting = study.ask(), study.ask()
        replaying.set_user_attr(PROGRESS_ATTR, {"phase": "replaying", "done": 86, "total": 150,
                                                "unit": "request", "phase_s": 41.0})
        lines: list[str] = []
        tick = pool.pool_progress(store, 1, 3, lines.append, study)
        tick()
        label = from_params({})  # an asked trial without distributions: the default config
        assert label is not None
        assert lines[0] == f"  replaying {label.label}: request 87 of 150, 41.0 s"
        assert lines[1].startswith(f"  running {label.label}, ") and len(lines) == 2
        del starting
        # without the study (a caller that has none) nothing is said while nothing is stored
        quiet: list[str] = []
        pool.pool_progress(store, 1, 3, quiet.append)()
        assert quiet == []
