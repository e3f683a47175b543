"""User mistakes on `advisor sweep`: one line on stderr, exit code 2, nothing written."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from sweep_support import FOUR_DTYPES, TINY_MLP, advisor, marked_processes, sqlite_url

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


@pytest.mark.slow
def test_a_sweep_whose_every_trial_failed_exits_1_even_with_an_earlier_pick(
    tmp_path: Path,
) -> None:
    # The same workload (by name) swept twice on one database: the first sweep's trial passes,
    # the second's fails (its file's build raises). The answer printed for the second rests on
    # the first sweep; the second sweep itself failed, says so and exits 1.
    url = sqlite_url(tmp_path / "a.db")
    args = ("--db", url, "--modes", "eager", "--dtypes", "fp32", "--no-warm",
            "--no-confirm-leaders")
    first = advisor("sweep", FOUR_DTYPES, *args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    broken = tmp_path / "four_dtypes.py"
    broken.write_text(FOUR_DTYPES.read_text().replace(
        "def build(device: str, dtype: torch.dtype) -> torch.nn.Module:\n",
        "def build(device: str, dtype: torch.dtype) -> torch.nn.Module:\n"
        "    raise RuntimeError('this build always fails')\n"))
    second = advisor("sweep", broken, *args, cwd=tmp_path)
    assert second.returncode == 1, second.stderr
    (line,) = [x for x in second.stderr.splitlines() if "ran and passed in sweep 2" in x]
    assert line == ("advisor: no config of four-dtypes ran and passed in sweep 2 (1 failed) "
                    "(the answer above rests on earlier sweeps of it); see `advisor show 2`")


def test_trials_at_once_are_bounded_by_the_hosts_cores_and_its_available_memory() -> None:
    from advisor.api import MEMORY_PER_TRIAL, check_host_room
    from advisor.errors import ConfigError

    check_host_room(4, 1, cores=2, available_bytes=4 * MEMORY_PER_TRIAL)  # 2 a core, 4 fit
    check_host_room(1, 1, cores=1, available_bytes=0)  # one trial is always allowed
    with pytest.raises(ConfigError, match=r"--jobs 5 asks for 5 trials at once, more than this "
                                          r"host's 2 cores can run \(2 a core\); give --jobs at "
                                          r"most 4"):
        check_host_room(5, 1, cores=2, available_bytes=64 * MEMORY_PER_TRIAL)
    # 3.5 GiB available: 3 trials fit, not 4
    with pytest.raises(ConfigError, match=r"--jobs 2 on --workers 2 asks for 4 trials at once, "
                                          r"more than this host's 3.5 GiB of available memory "
                                          r"holds \(1 GiB a trial\); give --jobs at most 1"):
        check_host_room(2, 2, cores=8, available_bytes=int(3.5 * MEMORY_PER_TRIAL))
