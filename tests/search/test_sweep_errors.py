"""User mistakes on `advisor sweep`: one line on stderr, exit code 2, nothing written."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from support.sweeps import TINY_MLP, advisor, marked_processes, sqlite_url

from advisor.devices import cuda_device_count

BAD_FILES = {
    "no_workload.py": "x = 1\n",
    "not_a_workload.py": "workload = 3\n",
    "import_fails.py": "import advisor_no_such_module\n",
    "workload.txt": "not python\n",
}


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(inputs, work): bad files live in inputs; the CLI runs in work, which must stay empty,
    and keeps its temporary files in work's sibling "tmp", which must stay empty too."""
    inputs, work = tmp_path / "inputs", tmp_path / "work"
    inputs.mkdir()
    work.mkdir()
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    for name, text in BAD_FILES.items():
        (inputs / name).write_text(text)
    return inputs, work


def _assert_one_line_exit_2_nothing_written(args: list[str], work: Path, words: str) -> None:
    marker = uuid.uuid4().hex
    done = advisor("sweep", *args, cwd=work, marker=marker)
    assert done.returncode == 2, done.stderr
    # The device's probe starts before the workloads load (advisor.search.launcher.Probe): a mistake
    # found meanwhile stops it and removes its files; no process of this run is left.
    assert marked_processes(marker) == []
    assert sorted(p.name for p in (work.parent / "tmp").iterdir()) == []
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("advisor: error: ")
    assert words in lines[0]
    assert sorted(p.name for p in work.iterdir()) == []  # no database, no -wal, no advisor.db


@pytest.mark.parametrize(
    ("file", "words"),
    [
        ("missing.py", "no such workload file"),
        ("no_workload.py", "defines no `workload`"),
        ("not_a_workload.py", "not an advisor.Workload"),
        ("import_fails.py", "import failed"),
        ("workload.txt", "must be a Python file"),
    ],
)
def test_bad_files(dirs: tuple[Path, Path], file: str, words: str) -> None:
    inputs, work = dirs
    db = sqlite_url(work / "a.db")
    _assert_one_line_exit_2_nothing_written([str(inputs / file), "--db", db], work, words)


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (["--modes", "bogus"], "unknown mode 'bogus'"),
        (["--dtypes", "fp16"], "dtype fp16 is not allowed by this workload"),
        (["--fullgraph", "maybe"], "bad --fullgraph 'maybe'"),
        (["--trials", "0"], "--trials must be at least 1"),
        (["--budget", "xyz"], "bad budget 'xyz'"),
        (["--budget", "0s"], "bad budget '0s'"),
        (["--resume"], "no interrupted sweep"),
        (["--jobs", "0"], "--jobs must be at least 1"),
        (["--jobs", "100000"], "--jobs 100000 asks for 100000 trials at once, more than this "
                               "host's"),
        (["--jobs", "2", "--trials", "2", "--resume"], "--resume continues a --trials/--budget"),
        (["--sampler", "bogus"], "unknown --sampler 'bogus': choose one of tpe, random, grid"),
        (["--screen", "-1"], "--screen must be 0 (off) or a factor"),
    ],
)
def test_bad_flags(dirs: tuple[Path, Path], flags: list[str], words: str) -> None:
    _, work = dirs
    args = [str(TINY_MLP), "--db", sqlite_url(work / "a.db"), "--no-warm", *flags]
    _assert_one_line_exit_2_nothing_written(args, work, words)


def test_resume_with_the_default_database_creates_nothing(dirs: tuple[Path, Path]) -> None:
    _, work = dirs  # no --db: sqlite:///advisor.db in the working directory, not created
    _assert_one_line_exit_2_nothing_written(
        [str(TINY_MLP), "--resume"], work, "no interrupted sweep of tiny-mlp"
    )


@pytest.mark.skipif(cuda_device_count() > 0, reason="a GPU is visible: --device cuda is valid")
def test_cuda_without_a_gpu(dirs: tuple[Path, Path]) -> None:
    _, work = dirs
    args = [str(TINY_MLP), "--db", sqlite_url(work / "a.db"), "--device", "cuda"]
    _assert_one_line_exit_2_nothing_written(args, work, "no CUDA GPU is visible")


def test_unsupported_database_url(dirs: tuple[Path, Path]) -> None:
    _, work = dirs
    _assert_one_line_exit_2_nothing_written(
        [str(TINY_MLP), "--db", "nosuch://x"], work, "unsupported database URL 'nosuch://x'"
    )

