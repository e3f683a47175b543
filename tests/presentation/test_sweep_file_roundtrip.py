"""`advisor show SWEEP -f toml` writes the sweep's stored flags as a sweep file, which
`advisor sweep --config` reads back to the same flags: a sweep can be rerun exactly."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
import typer
from report_support import run
from support.sweeps import FOUR_DTYPES

from advisor.cli.sweep import _flags
from advisor.db import ResultStore
from advisor.search.request import SweepSettings


def _sweep_command() -> Any:
    from advisor.cli.main import app, register

    register()
    return typer.main.get_command(app).commands["sweep"]  # type: ignore[attr-defined]


def resolved_flags(*args: str) -> dict[str, Any]:
    """The flags `advisor sweep ARGS` would store (parsed as the command parses them, not run)."""
    with _sweep_command().make_context("sweep", list(args)) as ctx:
        return _flags(ctx)


def _new_sweep(seeded_url: str, url: str, settings: dict[str, Any]) -> int:
    """A sweep row in a new database at ``url``, as a sweep opens it (a seeded fingerprint)."""
    with ResultStore.from_url(seeded_url, read_only=True) as seeded:
        fingerprint = seeded.sweeps()[0]["fingerprint"]
    with ResultStore.from_url(url) as store:
        return store.create_sweep({"name": "four-dtypes", "path": str(FOUR_DTYPES)},
                                  fingerprint, settings, None)


def test_a_sweeps_flags_written_as_toml_read_back_the_same(seeded_url: str,
                                                           tmp_path: Path) -> None:
    flags = resolved_flags(str(FOUR_DTYPES), "--modes", "eager,default", "--dtypes", "fp32,bf16",
                           "--no-warm", "--timeout", "120", "--budget", "10m", "--screen", "0",
                           "--sampler", "random", "--shape", "batch=8",
                           "--option", "coordinate_descent_tuning=true,false")
    assert flags["budget"] == "10m" and flags["warm"] is False and flags["timeout"] == 120.0
    url = f"sqlite:///{tmp_path / 'a.db'}"
    sweep_id = _new_sweep(seeded_url, url, SweepSettings(device="cpu", flags=flags).to_dict())
    done = run("show", str(sweep_id), "--db", url, "-f", "toml")
    assert done.exit_code == 0, done.output
    assert tomllib.loads(done.stdout) == {"sweep": flags}
    rerun = tmp_path / "rerun.toml"
    assert run("show", str(sweep_id), "--db", url, "-f", "toml", "-o", rerun).exit_code == 0
    assert rerun.read_text() == done.stdout
    assert resolved_flags("--config", str(rerun)) == flags  # what `sweep --config` reads
    # and a flag on the command line still wins over the file
    assert resolved_flags("--config", str(rerun), "--dtypes", "fp32")["dtypes"] == "fp32"


def test_a_sweep_without_stored_flags_has_no_sweep_file(seeded_url: str,
                                                        tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    sweep_id = _new_sweep(seeded_url, url, {})
    done = run("show", str(sweep_id), "--db", url, "-f", "toml")
    assert done.exit_code == 2
    assert done.stderr.startswith("advisor: error: sweep 1 has no stored flags")
    assert done.stdout == ""


@pytest.mark.parametrize("value, text", [
    ("a \"quoted\" \\ path", '"a \\"quoted\\" \\\\ path"'), (1.5, "1.5"), (True, "true"),
    (["x", "y"], '["x", "y"]'), (3, "3"),
])
def test_toml_values_read_back_as_written(value: Any, text: str) -> None:
    from advisor.cli.output import to_toml

    written = to_toml({"sweep": {"key": value, "dashed-key": value, "none": None}})
    assert written == f"[sweep]\nkey = {text}\ndashed-key = {text}\n"
    assert tomllib.loads(written) == {"sweep": {"key": value, "dashed-key": value}}
