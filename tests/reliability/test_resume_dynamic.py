"""`--dynamic` at `--resume`: read back from the resumed sweep's stored space (the compiled
configs' dynamic settings), a value that contradicts it is one line, exit 2, the sweep untouched;
a bad value is one line before anything is written."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from reliability_support import advisor, one_line_error, sweep_support

from advisor.db import ResultStore
from advisor.search.request import SweepSettings
from advisor.search.resume import contradiction, stored_plan
from advisor.search.space import build_space

WORKLOAD = sweep_support.FOUR_DTYPES
DTYPES = ("fp32", "tf32", "bf16", "fp16")


def _settings() -> SweepSettings:
    return SweepSettings(device="cpu", measure_warm=False, confirm_leaders=False, priors=False,
                         timeout_s=300.0)


def _interrupted_sweep(url: str, make: SimpleNamespace) -> int:
    """An interrupted sweep of four-dtypes whose space compiles (eager and default, fp32, the
    default dynamic: auto), nothing measured."""
    space = build_space(DTYPES, "cpu", {"mode": ["eager", "default"], "dtype": ["fp32"]})
    settings = {**_settings().to_dict(), "space": [c.to_dict() for c in space.configs]}
    workload = {"name": "four-dtypes", "path": str(WORKLOAD), "info": {}}
    with ResultStore.from_url(url) as store:
        sweep_id = store.create_sweep(workload, make.fingerprint(), settings, "resume-dynamic",
                                      len(space))
        store.finish_sweep(sweep_id, "interrupted")
    return sweep_id


def test_dynamic_is_read_back_from_the_stored_space() -> None:
    space = build_space(DTYPES, "cpu", {"mode": ["eager", "default"], "dtype": ["fp32"]})
    stored = {**_settings().to_dict(), "space": [c.to_dict() for c in space.configs]}
    settings, resumed = stored_plan({"id": 5, "settings": stored})
    assert resumed.dynamic == ["auto"]
    same = build_space(DTYPES, "cpu",
                       {"mode": ["eager", "default"], "dtype": ["fp32"], "dynamic": ["auto"]})
    assert contradiction(5, {"--dynamic": (settings, same)}, settings, resumed) is None
    other = build_space(DTYPES, "cpu",
                        {"mode": ["eager", "default"], "dtype": ["fp32"], "dynamic": ["true"]})
    assert contradiction(5, {"--dynamic": (settings, other)}, settings, resumed) == (
        "--dynamic asks for true, but sweep 5, being resumed, was started with auto: drop "
        "--dynamic to resume it as it was, or start a new sweep without --resume")


def test_a_dynamic_that_contradicts_the_resumed_sweep_is_one_line(
        tmp_path: Path, make: SimpleNamespace) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    sweep_id = _interrupted_sweep(url, make)
    code, _, err = advisor("sweep", WORKLOAD, "--db", url, "--device", "cpu", "--resume",
                           "--modes", "eager,default", "--dtypes", "fp32",
                           "--dynamic", "true,false")
    assert one_line_error(code, err) == (
        f"--dynamic asks for true,false, but sweep {sweep_id}, being resumed, was started with "
        "auto: drop --dynamic to resume it as it was, or start a new sweep without --resume")
    with ResultStore.from_url(url, read_only=True) as store:
        assert store.get_sweep(sweep_id)["status"] == "interrupted"
        assert store.trials() == []


def test_a_bad_dynamic_is_one_line_and_nothing_is_written(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    for args, message in (
        (["--dynamic", "sometimes"], "unknown dynamic setting 'sometimes': choose from auto, "
                                     "true, false"),
        (["--dynamic", "true", "--shapes", "dynamic"], "shape strategies other than static set "
                                                       "dynamic themselves"),
    ):
        code, _, err = advisor("sweep", WORKLOAD, "--db", url, "--device", "cpu", *args)
        assert one_line_error(code, err).startswith(message)
    assert list(tmp_path.iterdir()) == []
