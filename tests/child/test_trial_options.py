"""An Inductor option from the dimensions table compiles for real: `advisor trial --option`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

TINY_MLP = Path(__file__).parents[1] / "workloads" / "tiny_mlp.py"
ADVISOR = [sys.executable, "-m", "advisor"]


def _trial(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ADVISOR, "trial", str(TINY_MLP), *args], capture_output=True,
                          text=True, timeout=600)


@pytest.mark.slow
def test_a_trial_compiles_with_an_inductor_option() -> None:
    done = _trial("--mode", "default", "--option", "freezing=true", "--no-warm", "--json")
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["status"] == "ok", record["error_tail"]
    assert record["config"]["options"] == {"freezing": True}
    assert record["config_key"].startswith("default/fp32/graphbreaks-ok/dynamic-auto/opts-")


def test_an_unknown_option_is_one_line_and_exit_2() -> None:
    done = _trial("--option", "warp_speed=true")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "not a sweepable Inductor option" in lines[0]


def test_a_trial_takes_one_value_per_option() -> None:
    done = _trial("--option", "freezing=true,false")
    assert done.returncode == 2
    assert "a trial takes one value" in done.stderr


def test_every_sweepable_option_is_an_inductor_option_of_this_torch() -> None:
    import torch._inductor

    from advisor.dimensions import INDUCTOR_OPTIONS

    known = set(torch._inductor.list_options())
    assert [o.name for o in INDUCTOR_OPTIONS if o.name not in known] == []
