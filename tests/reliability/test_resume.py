"""`--resume` reuses the sweep's stored settings and space: flags that contradict them are one
line (exit 2, the sweep untouched); the printed hint names the database; a resumed sweep
fails the Optuna trials its dead run left RUNNING and ends finished."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from reliability_support import advisor, one_line_error, sweep_support

from advisor.cli.sweep import resume_hint
from advisor.config import EAGER_FP32
from advisor.db import ResultStore
from advisor.search.request import SweepSettings
from advisor.search.resume import contradiction, resumable, stored_plan
from advisor.search.space import build_space
from advisor.search.study import open_study

WORKLOAD = sweep_support.FOUR_DTYPES  # eager-only, cheap


def _settings() -> SweepSettings:
    return SweepSettings(device="cpu", measure_warm=False, confirm_leaders=False, priors=False,
                         timeout_s=300.0)


def _space() -> Any:
    return build_space(("fp32", "tf32", "bf16", "fp16"), "cpu",
                       {"mode": ["eager"], "dtype": ["fp32", "bf16"]})


def _interrupted_sweep(url: str, make: SimpleNamespace, fingerprint: dict[str, Any],
                       status: str = "interrupted") -> tuple[int, str]:
    """A sweep of four-dtypes on this host as a killed run leaves it: eager fp32 stored, its
    Optuna trial told, and eager bf16's Optuna trial RUNNING (the child was killed)."""
    from advisor.workload import load_workload

    loaded = load_workload(WORKLOAD)
    workload = {"name": "four-dtypes", "path": str(loaded.path),
                "source_sha256": loaded.source_sha256, "info": {}}
    settings = {**_settings().to_dict(), "space": [c.to_dict() for c in _space().configs]}
    with ResultStore.from_url(url) as store:
        sweep_id = store.create_sweep(workload, fingerprint, settings, f"resume-{status}", 2)
        store.add_trial(make.record(0, config=EAGER_FP32, workload=workload,
                                    fingerprint=fingerprint, device="cpu"), sweep_id)
        store.finish_sweep(sweep_id, status)
    study = open_study(url, f"resume-{status}")
    study.enqueue_trial({"mode": "eager", "dtype": "fp32"})
    study.tell(study.ask(), 1.0)
    study.enqueue_trial({"mode": "eager", "dtype": "bf16"})
    study.ask()  # left RUNNING
    return sweep_id, f"resume-{status}"


def test_the_stored_plan_and_contradicting_flags() -> None:
    stored = {**_settings().to_dict(), "space": [c.to_dict() for c in _space().configs]}
    settings, space = stored_plan({"id": 3, "settings": stored})
    assert settings == _settings() and space == _space()
    other = build_space(("fp32", "bf16"), "cpu",
                        {"mode": ["eager", "default"], "dtype": ["fp32", "bf16"]})
    message = contradiction(3, {"--modes": (settings, other)}, settings, space)
    assert message is not None and message.startswith("--modes asks for eager,default, but "
                                                      "sweep 3, being resumed, was started "
                                                      "with eager")
    same = contradiction(3, {"--modes": (settings, space), "--dtypes": (settings, space)},
                         settings, space)
    assert same is None
    assert resumable([{"id": 1, "status": "finished"}, {"id": 2, "status": "interrupted"},
                      {"id": 4, "status": "running"}])["id"] == 4  # type: ignore[index]


def test_the_resume_hint_names_the_database(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ADVISOR_DB_URL", raising=False)
    assert resume_hint("w.py", "postgresql://bob:pw@h/d") == (
        "advisor sweep w.py --db 'postgresql+psycopg://bob:***@h/d' --resume")
    assert resume_hint("w.py", None) == "advisor sweep w.py --db sqlite:///advisor.db --resume"


@pytest.mark.parametrize(("flag", "value"), [("--modes", "default"), ("--dtypes", "fp32"),
                                             ("--trials", "1"), ("--timeout", "60")])
def test_a_flag_that_contradicts_the_resumed_sweep_is_one_line(
    flag: str, value: str, tmp_path: Path, make: SimpleNamespace
) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    sweep_id, _ = _interrupted_sweep(url, make, make.fingerprint())
    code, _, err = advisor("sweep", WORKLOAD, "--db", url, "--device", "cpu", "--resume", flag,
                           value)
    message = one_line_error(code, err)
    assert message.startswith(f"{flag} asks for") and f"sweep {sweep_id}" in message
    with ResultStore.from_url(url, read_only=True) as store:
        assert store.get_sweep(sweep_id)["status"] == "interrupted"
        assert len(store.trials()) == 1


@pytest.mark.slow
def test_resume_reuses_the_stored_space_and_fails_the_orphaned_trials(
    tmp_path: Path, make: SimpleNamespace
) -> None:
    from advisor import fingerprint

    url = f"sqlite:///{tmp_path / 'r.db'}"
    sweep_id, study_name = _interrupted_sweep(url, make, fingerprint.collect("cpu"))
    # no --modes/--dtypes: the CPU default space would hold compiled modes, which the study's
    # distributions do not know; the stored space is reused instead
    done = sweep_support.advisor("sweep", WORKLOAD, "--db", url, "--resume", "--device", "cpu",
                                 cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr  # 1: the made-up baseline may win
    assert "Traceback" not in done.stderr
    with ResultStore.from_url(url, read_only=True) as store:
        sweep = store.get_sweep(sweep_id)
        assert sweep["status"] == "finished"
        keys = sorted(r["config_key"] for r in store.trials(sweep_id=sweep_id))
    assert keys == sorted(c.key for c in _space().configs)
    states = [t.state.name for t in open_study(url, study_name).trials]
    assert "RUNNING" not in states and states.count("FAIL") == 1
