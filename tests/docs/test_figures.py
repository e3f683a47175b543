"""Every measured figure of the covered pages is read back from the raw file it names, every
link to bench/results leads to a kept file, and README.md stays a front page (80 columns, about
150 lines, the commands `.ci/run` runs). How a figure is found: tests/docs/figure_check.py.

Covered: README.md, docs/testing.md, docs/guide.md, docs/cli.md, docs/settings.md and
docs/trust.md whole; the sections of docs/performance.md and the paragraph of docs/shapes.md
listed in CHECKED. Not yet: the rest of those two pages and docs/workloads.md (their figures name
their files by section, not by paragraph), and docs/architecture.md (its numbers are the rules'
margins, "2x apart", which the checker cannot yet tell from measurements)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import figure_check as fc
import pytest

REPO = Path(__file__).resolve().parents[2]

# page -> None (every unit of it), or the headings and paragraph starts that are covered.
CHECKED: dict[str, dict[str, list[str]] | None] = {
    "README.md": None,
    "docs/testing.md": None,
    "docs/guide.md": None,
    "docs/cli.md": None,
    "docs/settings.md": None,
    "docs/trust.md": None,
    "docs/performance.md": {"headings": [
        "Time to an answer (`bench/time_to_answer.py`, 2026-12-03)",
        "The main job on the H200 (2026-12-03 to 05)",
        "In brief: the reranker on an H200",
        "The host's launch rate",
        "Forked children (CPU, 2026-12-04)",
        "The test lanes (CPU, 2026-12-05)",
        "Warm-start artifact",
        "Published figures audit (2026-12-05)",
        "Decision stability (CPU, 2026-12-05)",
        "The main job on an H100 (2026-12-05)",
    ]},
    "docs/shapes.md": {"paragraphs": ["Run 1 ("], "headings": [
        "A traffic sweep within its budget (`advisor/sizing.py`)",
        "What a traffic sweep costs on a CPU",
    ]},
}
PAGES = ["README.md", *sorted(p.relative_to(REPO).as_posix() for p in (REPO / "docs").glob("*.md"))]
MAIN_JOB = ("python3 -m venv .venv && . .venv/bin/activate && pip install torch==2.13.0 && "
            "pip install -e '.[examples,dashboard]' && advisor sweep workloads/reranker.py")


@pytest.mark.parametrize("page", sorted(CHECKED))
def test_every_figure_is_in_the_raw_file_it_names(page: str) -> None:
    scope = CHECKED[page] or {}
    problems = fc.check_page(REPO, page, scope.get("headings"), scope.get("paragraphs"))
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("page", PAGES + ["bench/README.md"])
def test_every_link_to_bench_results_leads_to_a_kept_file(page: str) -> None:
    assert fc.result_links(REPO, page) == []


def test_the_covered_pages_and_sections_exist() -> None:
    """A renamed heading would drop its section from the check silently."""
    for page, scope in CHECKED.items():
        text = (REPO / page).read_text(encoding="utf-8")
        for heading in (scope or {}).get("headings", []):
            assert re.search(rf"^#+ {re.escape(heading)}$", text, re.MULTILINE), (page, heading)
        for start in (scope or {}).get("paragraphs", []):
            assert any(u.text.startswith(start) for u in fc.split_units(page, text)), (page, start)


def test_the_readme_is_a_front_page_at_80_columns() -> None:
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150
    wide = [f"{n}: {line}" for n, line in enumerate(lines, 1) if len(line) > 80]
    assert wide == []


def _shell_blocks(text: str) -> list[str]:
    """The README's ```sh blocks, each line continued by a trailing backslash joined to the next
    (what a shell runs when the block is pasted), whitespace runs made one space."""
    blocks = re.findall(r"^```sh\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    return [" ".join(b.replace("\\\n", " ").split()) for b in blocks]


def test_the_readme_keeps_the_main_job_and_the_test_commands_ci_runs() -> None:
    blocks = " ; ".join(_shell_blocks((REPO / "README.md").read_text(encoding="utf-8")))
    assert MAIN_JOB in blocks
    ci = [" ".join(line.split()) for line in (REPO / ".ci" / "run").read_text().splitlines()]
    tests = [line for line in ci if line.startswith("python -m pytest")]
    chromium = [line for line in ci if line.startswith("apt-get update")]
    assert tests and chromium
    for line in tests + chromium:
        assert line in blocks, f"README.md must run what .ci/run runs: {line}"
    assert "pip install -e '.[dev]'" in blocks


def test_the_readme_quotes_the_newest_clean_clone_run() -> None:
    newest = max(p.name for p in (REPO / "bench" / "results").glob("ci_clean_clone_*.txt"))
    assert f"bench/results/{newest}" in (REPO / "README.md").read_text(encoding="utf-8")


# The checker itself, on copies: a changed figure or a changed raw file fails.

PAGE = """# A page

The run took 1 min 36 s + 6 min 21 s = 7 min 57 s, 9 min 22 s with the install, and
633.2 CPU-seconds at 2.51x
([run.txt](bench/results/run.txt)).

A figure no file holds: 40 s (no raw file). A setting is code: `--budget 2m`; a 3% target.

Its output ([run.txt](bench/results/run.txt)):

```text
1219 passed, 15 skipped in 96.04s (0:01:36)
```
"""
RAW = """host vm, 2 cores
1219 passed, 15 skipped in 96.04s (0:01:36)
138 passed in 381.19s (0:06:21)
wall 561.61 s, cpu 633.2, speedup 2.5094
"""


def _copy(tmp_path: Path) -> Path:
    (tmp_path / "bench" / "results").mkdir(parents=True)
    (tmp_path / "page.md").write_text(PAGE)
    (tmp_path / "bench" / "results" / "run.txt").write_text(RAW)
    return tmp_path


def test_the_copy_passes_as_written(tmp_path: Path) -> None:
    assert fc.check_page(_copy(tmp_path), "page.md") == []


@pytest.mark.parametrize(("old", "new"), [
    ("633.2 CPU-seconds", "634.2 CPU-seconds"),  # a figure the file does not hold
    ("2.51x", "2.52x"),  # rounding: 2.5094 is 2.51, not 2.52
    ("9 min 22 s", "9 min 25 s"),  # a time in minutes and seconds
    ("= 7 min 57 s", "= 8 min 7 s"),  # a sum that is not what its parts add up to
    ("40 s (no raw file)", "40 s"),  # a figure with neither a file nor the marker
    ("bench/results/run.txt)).", "bench/results/gone.txt))."),  # a file that is not kept
    ("in 96.04s (0:01:36)\n```", "in 96.05s (0:01:36)\n```"),  # an excerpt not copied verbatim
])
def test_a_changed_figure_fails(tmp_path: Path, old: str, new: str) -> None:
    root = _copy(tmp_path)
    page = root / "page.md"
    assert old in page.read_text()
    page.write_text(page.read_text().replace(old, new, 1))
    assert fc.check_page(root, "page.md") != []


@pytest.mark.parametrize(("old", "new"), [
    ("633.2", "633.9"),  # not 633.2 any more: "633.2 CPU-seconds" is not found
    ("96.04s (0:01:36)", "96.04s"),  # the excerpt's line and "1 min 36 s" lose their source
    ("2.5094", "2.5194"),
])
def test_a_changed_raw_file_fails(tmp_path: Path, old: str, new: str) -> None:
    root = _copy(tmp_path)
    raw = root / "bench" / "results" / "run.txt"
    raw.write_text(raw.read_text().replace(old, new, 1))
    assert fc.check_page(root, "page.md") != []


def test_a_real_page_fails_on_a_copy_whose_figure_or_file_changed(tmp_path: Path) -> None:
    """docs/testing.md's row of one clean-clone run and its raw file, copied: as they are they
    pass; with the figure edited, or the file's line edited, they do not."""
    name = "ci_clean_clone_20261205T065359Z.txt"
    (tmp_path / "bench" / "results").mkdir(parents=True)
    (tmp_path / "docs").mkdir()
    shutil.copy(REPO / "bench" / "results" / name, tmp_path / "bench" / "results" / name)
    page = (REPO / "docs" / "testing.md").read_text(encoding="utf-8")
    row = next(u.text for u in fc.split_units("docs/testing.md", page)
               if name in u.text and "9 min 22 s" in u.text)
    copy = tmp_path / "docs" / "testing.md"
    copy.write_text(row)
    assert fc.check_page(tmp_path, "docs/testing.md") == []

    copy.write_text(row.replace("9 min 22 s", "9 min 2 s"))
    assert fc.check_page(tmp_path, "docs/testing.md") != []

    copy.write_text(row)
    raw = tmp_path / "bench" / "results" / name
    raw.write_text(raw.read_text().replace("wall 561.61 s", "wall 571.61 s"))
    assert fc.check_page(tmp_path, "docs/testing.md") != []


def test_rounding_matches_the_figure_s_own_precision() -> None:
    from decimal import Decimal as D

    assert fc.rounds_to(D("5.7956"), D("5.80")) and fc.rounds_to(D("5.8"), D("5.80"))
    assert fc.rounds_to(D("632.77"), D("633")) and not fc.rounds_to(D("632.4"), D("633"))
    assert not fc.rounds_to(D("5.81"), D("5.80"))
