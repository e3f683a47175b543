"""bench/cli_startup.py on known inputs: the commands it discovers (the root, every command,
the nested `db` group and its commands), the report it writes for known timings (hit, missed,
a loaded host said so), a real run of two commands, and bad arguments (one line, exit 2,
nothing written). No timing is asserted: the figures are the bench's to report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from bench_support import load

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench" / "cli_startup.py"
cli_startup = load("cli_startup")


def test_every_command_is_discovered_nested_groups_included() -> None:
    from advisor.cli.app import app

    found = cli_startup.help_commands()
    assert found[0] == ["--help"]
    assert all(args[-1] == "--help" for args in found)
    names = {args[0] for args in found[1:]}
    registered = {c.name or (c.callback.__name__ if c.callback else "")
                  for c in app.registered_commands}
    assert registered <= names
    assert {"sweep", "trial", "list", "show", "recommend", "report", "db"} <= names
    assert ["db", "upgrade", "--help"] in found and ["db", "current", "--help"] in found
    assert len(found) == len({tuple(args) for args in found})


def _row(command: str, median: float) -> dict[str, Any]:
    return {"command": ["advisor", *command.split(), "--help"], "median_s": median,
            "min_s": median - 0.01, "max_s": median + 0.02, "cpu_median_s": median / 2,
            "hit": median < cli_startup.TARGET_S, "heavy_modules_imported": [],
            "pydantic_imported": False, "advisor_modules": ["advisor", "advisor.cli"],
            "modules_imported": 350}


def test_the_report_names_hits_misses_and_the_load() -> None:
    machine = {"load_avg_before": (2.5, 3.0, 3.5), "load_avg_after": (2.0, 2.0, 2.0),
               "usable_cores": 2, "cpu_count": 2, "node": "host", "python": "3.11.7",
               "torch": "2.13.0+cpu", "typer": "0.29.2", "rich": "15.0.0"}
    result = {"runs": 15, "target_s": 0.3, "taken_at": "2026-12-03T19:00:00+00:00",
              "commands": [_row("", 0.21), _row("sweep", 0.34)], "machine": machine}
    text = cli_startup.markdown(result)
    root = "| `advisor --help` | 0.210 | 0.200 | 0.230 | 0.105 | hit | none | no | 2 | 350 |"
    assert root in text
    assert "| `advisor sweep --help` | 0.340 |" in text and "| missed |" in text
    assert "Load average 2.50 / 3.00 / 3.50 before, 2.00 / 2.00 / 2.00 after" in text
    assert "Slowest median 0.340 s, fastest 0.210 s; 1 of 2 under the target" in text
    assert "a loaded host: load 2.50 before" in text
    machine["load_avg_before"] = (0.3, 0.3, 0.3)
    assert "(a loaded host: load" not in cli_startup.markdown(result)


def test_a_run_writes_one_dated_json_and_md(tmp_path: Path) -> None:
    cli_startup.main(["--runs", "1", "--command=--version", "--command=db --help",
                      "--out", str(tmp_path)])
    files = sorted(p.suffix for p in tmp_path.iterdir())
    assert files == [".json", ".md"]
    result = json.loads(next(tmp_path.glob("cli_startup_*.json")).read_text())
    assert [row["command"] for row in result["commands"]] == [
        ["advisor", "--version"], ["advisor", "db", "--help"]]
    for row in result["commands"]:
        assert len(row["walls_s"]) == 1 and len(row["cpus_s"]) == 1
        assert row["heavy_modules_imported"] == [] and not row["pydantic_imported"]
        assert "advisor.cli.app" in row["advisor_modules"]
    machine = result["machine"]
    assert len(machine["load_avg_before"]) == 3 and machine["usable_cores"] >= 1
    assert machine["python"] == ".".join(map(str, sys.version_info[:3]))


@pytest.mark.parametrize("args", [["--runs", "0"], ["--runs", "x"], ["--bogus"]])
def test_bad_arguments_are_one_line_and_write_nothing(tmp_path: Path, args: list[str]) -> None:
    done = subprocess.run([sys.executable, str(BENCH), *args, "--out", str(tmp_path / "out")],
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and done.stderr.startswith("cli_startup:")
    assert not (tmp_path / "out").exists()
