"""The terminal at 80 columns, in a real pseudo-terminal, on the fleet-size seed: `list` keeps
the device and its decision; every table names configs in the one label form (`fp16 +
reduce-overhead`), abbreviated with a legend rather than cut, so that no two configs read
alike; a cell wraps between words only; messages and `next:` commands are never broken inside
a word or a command; `--help` has a wide help column, defaults in full, flags without a type;
the sweep's progress bar fits, and its time left never runs out while a trial runs on."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from terminal_support import Screen, in_terminal

from advisor.cli import render
from advisor.config import CompileConfig

WIDTH = 80
LEGEND = re.compile(r"([a-z-]+) = ([a-z-]+)")


def _json(*args: str) -> object:
    done = subprocess.run([sys.executable, "-m", "advisor", *args, "--json"],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def _fits(screen: Screen) -> None:
    assert screen.code == 0, screen.text
    too_wide = [line for line in screen.lines if len(line) > WIDTH]
    assert too_wide == [], too_wide
    assert "…" not in screen.text  # nothing cut with an ellipsis


def _rows(screen: Screen, key: str | None = None) -> tuple[list[str], list[list[str]]]:
    """The first table's header and rows, each cell whole again: a row wrapped over several
    lines (its cells wrapped between words) is joined back, a new row starting where the
    column ``key`` (one that never wraps; default the first) has text."""
    lines = screen.lines
    start = next(i for i, line in enumerate(lines) if line.startswith("┃"))
    header = [c.strip() for c in lines[start].strip("┃").split("┃")]
    first = header.index(key) if key else 0
    rows: list[list[list[str]]] = []
    for line in lines[start + 2:]:
        if not line.startswith("│"):
            break
        cells = [c.strip() for c in line.strip("│").split("│")]
        if cells[first] or not rows:
            rows.append([[c] if c else [] for c in cells])
        else:
            for parts, cell in zip(rows[-1], cells, strict=True):
                if cell:
                    parts.append(cell)
    return header, [[" ".join(parts) for parts in row] for row in rows]


def _legend(screen: Screen) -> dict[str, str]:
    """The abbreviations a table's legend states (``ro = reduce-overhead, fg = fullgraph``)."""
    found: dict[str, str] = {}
    for line in screen.lines:
        if " = " in line and not line.startswith(("│", "┃")):
            found.update(LEGEND.findall(line))
    return found


def _expand(label: str, legend: dict[str, str]) -> str:
    """A table's label in full again, by its legend: ``fp16 + ro + dyn=false`` ->
    ``fp16 + reduce-overhead + dynamic=false``."""
    parts = []
    for part in label.split(" + "):
        name, eq, value = part.partition("=")
        parts.append(legend.get(name, name) + eq + value)
    return " + ".join(parts)


@pytest.mark.parametrize("workload", [None, "reranker"])
def test_list_keeps_the_device_and_the_decision(fleet_url: str, workload: str | None) -> None:
    flags = ["--workload", workload] if workload else []
    screen = in_terminal("list", "--db", fleet_url, *flags)
    _fits(screen)
    header, rows = _rows(screen)
    assert header[:1] == ["id"] and "device" in header and "decision" in header
    assert "recommended" in header
    sweeps = _json("list", "--db", fleet_url, *flags)
    assert isinstance(sweeps, list) and len(rows) == len(sweeps)
    legend = _legend(screen)
    at = {name: header.index(name) for name in ("id", "device", "decision", "recommended")}
    for row, sweep in zip(rows, sweeps, strict=True):
        assert row[at["id"]] == str(sweep["id"])
        assert row[at["device"]] == sweep["device_id"]  # whole again: wrapped between words
        assert row[at["decision"]] == sweep["recommendation"]["decision"]
        assert _expand(row[at["recommended"]], legend) == sweep["recommendation"]["label"]
    if workload:  # one workload: named in the title, not in a column of twelve equal cells
        assert "workload" not in header and f"sweeps of {workload}" in screen.text


def test_compare_names_every_pick_in_one_label_form_never_alike(fleet_url: str) -> None:
    screen = in_terminal("compare", "reranker", "--db", fleet_url)
    _fits(screen)
    header, rows = _rows(screen, "vs best")
    document = _json("compare", "reranker", "--db", fleet_url)
    assert isinstance(document, dict)
    devices = document["devices"]
    legend = _legend(screen)
    assert {"ro": "reduce-overhead", "ma": "max-autotune"}.items() <= legend.items()
    labels = [_expand(row[header.index("recommended")], legend) for row in rows]
    assert labels == [d["config"] for d in devices]  # `fp16 + max-autotune + fullgraph`, ...
    # configs that differ read differently: as many distinct cells as distinct picks
    cells = {row[header.index("recommended")] for row in rows}
    assert len(cells) == len({d["config"] for d in devices}) > 2
    assert [row[0] for row in rows] == [d["device_id"] for d in devices]


def test_recommend_and_show_name_configs_as_list_does(fleet_url: str) -> None:
    recommend = in_terminal("recommend", "reranker", "--db", fleet_url, "--fingerprint",
                            "node-h200-0")
    _fits(recommend)
    document = _json("recommend", "reranker", "--db", fleet_url, "--fingerprint", "node-h200-0")
    assert isinstance(document, dict)
    header, rows = _rows(recommend)
    legend = _legend(recommend)
    ranked = [r["label"] for r in document["ranked"][:8]]
    shown = [_expand(row[0], legend) for row in rows]
    assert shown[:len(ranked)] == ranked and shown[-1] == "fp32 + eager"
    assert "speedup" in header and "median" in header
    show = in_terminal("show", "3", "--db", fleet_url)
    _fits(show)
    header, rows = _rows(show)
    records = _json("show", "3", "--db", fleet_url)
    assert isinstance(records, dict)
    legend = _legend(show)
    expected = [CompileConfig.from_dict(r["config"]).label for r in records["trials"]]
    assert [_expand(row[0], legend) for row in rows] == expected
    assert any(" + " in row[0] for row in rows)  # the one form: `+` between the parts


def test_a_sweep_help_is_readable_at_80_columns() -> None:
    screen = in_terminal("sweep", "--help")
    _fits(screen)
    text = screen.text
    assert "<bool>" not in text and "<int>" not in text
    assert "--[no-]warm" in text and "--[no-]confirm-leaders" in text
    assert "[default: 900.0]" in text and "--trials N" in text
    assert any("sqlite:///advisor.db" in line for line in screen.lines)  # never cut
    for panel in ("What to measure", "Search and time", "After the trials"):
        assert f"─ {panel} ─" in text
    # the help column starts within 33 columns: at least 45 left for the help itself
    starts = [len(m.group(1)) for line in screen.lines
              if (m := re.match(r"(│ --\S+(?: [A-Z.]+)?\s+)\S", line))]
    assert starts and max(starts) <= 33, starts
    assert len(screen.lines) < 130  # it was 251 lines with a 19-character help column


def test_the_root_help_lists_completion() -> None:
    screen = in_terminal("--help")
    _fits(screen)
    assert "--install-completion" in screen.text and "--show-completion" in screen.text
    assert "Exit codes:" in screen.text


def test_messages_wrap_between_words_and_commands_stay_whole() -> None:
    db = "sqlite:////home/someone/projects/serving/results/advisor-results-2026.db"
    code = ("from advisor.cli import render; "
            f"render.echo('advisor: ' + render.closing_line(12, 'tinymlp', {db!r}, True)); "
            "render.echo('advisor: warning: ' + 'the host is busy; ' * 6 + "
            "'continue with `advisor sweep workloads/tiny_mlp.py --db sqlite:///x.db --resume` "
            "on a quiet host')")
    screen = in_terminal(python=code)
    assert screen.code == 0, screen.text
    lines = screen.lines
    commands = [line for line in lines if line.startswith("  advisor ")]
    assert commands == [f"  advisor show 12 --db {db}",
                        f"  advisor report tinymlp --db {db} -o tinymlp-report.html"]
    prose = [line for line in lines if line not in commands]
    assert all(len(line) <= WIDTH for line in prose), prose
    assert any("`advisor sweep workloads/tiny_mlp.py --db sqlite:///x.db --resume`" in line
               for line in lines)  # a command in backticks is never split


def test_wrap_keeps_words_and_backticked_commands_whole() -> None:
    text = "see `advisor recommend reranker --confirm` now; " + "x" * 90 + " end"
    wrapped = render.wrap(text, 30).splitlines()
    assert "`advisor recommend reranker --confirm`" in " ".join(wrapped)
    assert any(line == "x" * 90 for line in wrapped)  # longer than the line: whole, alone
    assert all(len(line) <= 30 for line in wrapped if "x" * 90 not in line
               and "`advisor" not in line)
    assert render.wrap("  advisor show 3 --db " + "y" * 100, 40) == (
        "  advisor show 3 --db " + "y" * 100)  # a command line: as it is


def test_labels_abbreviate_every_part_and_say_so() -> None:
    assert render.abbreviate("fp16 + reduce-overhead + fullgraph + dynamic=false") == (
        "fp16 + ro + fg + dyn=false", ["reduce-overhead", "fullgraph", "dynamic"])
    assert render.abbreviate("bf16 + max-autotune-no-cudagraphs (provisional)") == (
        "bf16 + ma-nocg (provisional)", ["max-autotune-no-cudagraphs"])
    assert render.abbreviate("undecided: noise") == ("undecided: noise", [])
    assert render.legend(["fullgraph", "reduce-overhead", "fullgraph"]) == (
        "ro = reduce-overhead, fg = fullgraph")


def test_diff_fits_and_names_configs_as_the_other_tables(fleet_url: str) -> None:
    screen = in_terminal("diff", "1", "2", "--db", fleet_url)
    _fits(screen)
    header, rows = _rows(screen, "change")
    assert header[:5] == ["config", "A median", "B median", "change", "verdict"]
    document = _json("diff", "1", "2", "--db", fleet_url)
    assert isinstance(document, dict)
    legend = _legend(screen)
    assert [_expand(row[0], legend) for row in rows] == [c["config"]
                                                         for c in document["configs"]]
    assert "B against A: " in screen.text


SWEEP_PROGRESS = """
from advisor.cli.progress import ProgressObserver
from advisor.config import CompileConfig
now = [0.0]
eager = CompileConfig(mode="eager", dtype="fp32")
slow = CompileConfig(mode="max-autotune-no-cudagraphs", dtype="bf16", fullgraph=True)
with ProgressObserver(clock=lambda: now[0]) as observer:
    observer.started(1, 3, 0, None)
    observer.trial_started(eager)
    observer.phase("compiling")
    now[0] = 150.0  # the first trial: no estimate yet
    observer.progress.refresh()
    observer.trial_finished({"status": "ok", "median_ms": 1.0, "passed": True,
                             "config": eager.to_dict()}, 1.0)
    observer.trial_started(slow)
    observer.phase("compiling")
    now[0] = 450.0  # twice the mean and running on: its estimate ran out
    observer.progress.refresh()
"""


def test_sweep_progress_fits_and_never_says_nothing_is_left() -> None:
    screen = in_terminal(python=SWEEP_PROGRESS)
    assert screen.code == 0, screen.text
    assert "compiling, 2.50 min so far" in screen.text  # no estimate yet: what runs, how long
    final = screen.lines[-1]  # the bar's last frame
    assert final.endswith("compiling, 5.00 min so far, ~2.50 min after"), final
    assert len(final) <= WIDTH
    assert " left" not in screen.text  # no estimate held at any frame: none said, no "~0 s"
    assert "…" not in screen.text  # the time left whole, not cut
