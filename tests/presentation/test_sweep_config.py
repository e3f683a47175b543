"""`advisor sweep --config sweep.toml`: every sweep flag from a file, flags on the command line
win, the resolved flags stored in the sweep's row; a bad file, key or value is one line, exit 2,
and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.sweeps import FOUR_DTYPES, advisor, open_store, sqlite_url


@pytest.mark.parametrize("text, message", [
    ('mdoes = "eager"\n', "unknown key 'mdoes'; the keys are the sweep flags: budget,"),
    ("trials = [\n", "is not valid TOML"),
    ('trials = "many"\n', "bad value for 'trials'"),
    ("trials = 0\n", "--trials must be at least 1"),
    ('sampler = "bogus"\n', "unknown --sampler 'bogus'"),
    ('json = true\n', "unknown key 'json'"),  # how the outcome prints: a flag only
])
def test_a_bad_sweep_file_is_one_line_exit_2_nothing_written(
        tmp_path: Path, text: str, message: str) -> None:
    config = tmp_path / "sweep.toml"
    config.write_text(f'files = ["{FOUR_DTYPES}"]\n{text}')
    done = advisor("sweep", "--config", config, "--db", sqlite_url(tmp_path / "a.db"),
                   cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("advisor: error: ") and message in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sweep.toml"]


def test_a_missing_sweep_file_is_one_line_exit_2(tmp_path: Path) -> None:
    done = advisor("sweep", "--config", tmp_path / "none.toml", cwd=tmp_path)
    assert done.returncode == 2 and "cannot read it" in done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_the_file_sets_the_flags_the_command_line_wins_and_the_row_keeps_them(
        tmp_path: Path) -> None:
    config = tmp_path / "sweep.toml"
    config.write_text(f'[sweep]\nfiles = ["{FOUR_DTYPES}"]\nmodes = ["eager"]\n'
                      'dtypes = ["fp32", "bf16"]\nwarm = false\nconfirm-leaders = false\n'
                      "timeout = 120\nscreen = 0\n")
    url = sqlite_url(tmp_path / "a.db")
    config.write_text(config.read_text() + f'db = "{url}"\n')  # kept out of the row
    done = advisor("sweep", "--config", config, "--dtypes", "fp32", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # where the results went, then what to run next, a command a line
    lines = done.stderr.splitlines()
    at = lines.index(f"advisor: sweep 1 of four-dtypes is in {url}; next:")
    assert lines[at + 1:at + 3] == [
        f"  advisor show 1 --db {url}",
        f"  advisor report four-dtypes --db {url} -o four-dtypes-report.html"]
    with open_store(url) as store:
        (sweep,) = store.sweeps()
        records = store.trials(sweep_id=sweep["id"])
    assert [r["config"]["dtype"] for r in records] == ["fp32"]  # --dtypes fp32 won
    settings = sweep["settings"]
    assert settings["timeout_s"] == 120.0 and settings["measure_warm"] is False
    assert settings["confirm_leaders"] is False and settings["screen"] is None
    flags = settings["flags"]
    assert flags["files"] == [str(FOUR_DTYPES)] and flags["modes"] == "eager"
    assert flags["dtypes"] == "fp32" and flags["warm"] is False and flags["timeout"] == 120.0
    assert flags["confirm-leaders"] is False and "db" not in flags and "json" not in flags
