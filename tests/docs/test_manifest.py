"""The kept raw results do not change: bench/results/MANIFEST.sha256 holds every kept file's
sha256 (bench/manifest.py adds lines, never rewrites one); an archived file is one nothing
names; bench/results/README.md indexes every kept file (bench/results_index.py writes it)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from bench import manifest

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "bench" / "results"


def test_every_kept_file_is_as_the_manifest_says() -> None:
    found = manifest.drift(RESULTS)
    assert not found, "\n".join(manifest.describe(found))


def _results(tmp_path: Path) -> Path:
    results = tmp_path / "results"
    (results / "archive").mkdir(parents=True)
    (results / "a_20261205T000000Z.txt").write_text("wall 1.00 s\n")
    (results / "b.md").write_text("# b\n")
    (results / "README.md").write_text("an index, not a result\n")
    assert manifest.main(["--results", str(results)]) == 0
    return results


def test_a_copy_with_its_manifest_has_no_drift(tmp_path: Path) -> None:
    results = _results(tmp_path)
    assert not manifest.drift(results)
    assert sorted(manifest.read(results)) == ["a_20261205T000000Z.txt", "b.md"]


def test_a_changed_kept_file_fails_and_is_not_rehashed(tmp_path: Path) -> None:
    results = _results(tmp_path)
    before = manifest.read(results)
    (results / "a_20261205T000000Z.txt").write_text("wall 1.01 s\n")
    assert manifest.drift(results).changed == ["a_20261205T000000Z.txt"]
    assert manifest.main(["--results", str(results), "--check"]) == 1
    assert manifest.main(["--results", str(results)]) == 1  # reported, never rewritten
    assert manifest.read(results) == before
    assert manifest.drift(results).changed == ["a_20261205T000000Z.txt"]


def test_a_kept_file_that_disappears_fails(tmp_path: Path) -> None:
    results = _results(tmp_path)
    (results / "b.md").unlink()
    assert manifest.drift(results).missing == ["b.md"]
    assert manifest.main(["--results", str(results), "--check"]) == 1


def test_a_new_file_needs_its_line_and_gets_it(tmp_path: Path) -> None:
    results = _results(tmp_path)
    (results / "c_20261206T000000Z.json").write_text("{}\n")
    found = manifest.drift(results)
    assert found.new == ["c_20261206T000000Z.json"]
    assert "python bench/manifest.py" in "\n".join(manifest.describe(found))
    assert manifest.main(["--results", str(results)]) == 0
    assert not manifest.drift(results)


def test_a_file_moved_into_the_archive_keeps_its_hash(tmp_path: Path) -> None:
    results = _results(tmp_path)
    digest = manifest.read(results)["b.md"]
    (results / "b.md").rename(results / "archive" / "b.md")
    assert manifest.drift(results).moved == {"b.md": "archive/b.md"}
    assert manifest.main(["--results", str(results)]) == 0
    assert manifest.read(results) == {"a_20261205T000000Z.txt": manifest.read(results)[
        "a_20261205T000000Z.txt"], "archive/b.md": digest}
    assert not manifest.drift(results)


def test_a_manifest_line_that_is_not_a_hash_is_one_line_exit_2(tmp_path: Path) -> None:
    results = _results(tmp_path)
    (results / manifest.MANIFEST_NAME).write_text("not a hash\n")
    assert manifest.main(["--results", str(results), "--check"]) == 2


def _tracked_texts() -> dict[str, str]:
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    texts = {}
    for rel in listed:
        path = REPO / rel
        if rel.startswith("bench/results/") and path.parent == RESULTS and path.name in (
                "README.md", manifest.MANIFEST_NAME):
            continue  # the index and the checksums list every file, archived or not
        if path.is_file() and path.suffix in (".md", ".py", ".txt", ".sh", ".toml", ".json"):
            texts[rel] = path.read_text(encoding="utf-8", errors="replace")
    return texts


def test_no_archived_file_is_named_anywhere() -> None:
    """A file moves into archive/ only when nothing names it: a page, a script, a test, the
    code, or another kept file."""
    archived = sorted(p.name for p in (RESULTS / "archive").iterdir() if p.is_file())
    assert archived, "bench/results/archive holds no file: nothing for this test to check"
    texts = _tracked_texts()
    # one pass over each text for every archived name (a name bounded by neither a word
    # character nor a hyphen), longest names first so that none hides a longer one
    pattern = re.compile(r"(?<![\w-])(" + "|".join(
        re.escape(n) for n in sorted(archived, key=len, reverse=True)) + r")(?![\w-])")
    named: dict[str, list[str]] = {}
    for rel, text in sorted(texts.items()):
        for name in sorted(set(pattern.findall(text))):
            if not rel.endswith("/" + name):
                named.setdefault(name, []).append(rel)
    assert named == {}


def test_the_results_index_lists_every_kept_file() -> None:
    index = (RESULTS / "README.md").read_text(encoding="utf-8")
    missing = [rel for rel in manifest.kept_files(RESULTS) if f"| `{rel}` |" not in index]
    assert missing == [], "run `python bench/results_index.py`"


def test_the_index_takes_no_command_from_what_ran_beside_a_run() -> None:
    from bench import results_index

    head = ("# the slow lane (python -m pytest -q -m slow), host vm; beside it: four short "
            "`advisor list` runs\n")
    assert results_index._command(head, Path("x.txt")) == results_index.UNKNOWN
    assert results_index._command("# `python bench/x.py --n 2`; beside it: `advisor list`\n",
                                  Path("x.txt")) == "python bench/x.py --n 2"
