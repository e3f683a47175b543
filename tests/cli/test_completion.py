"""Shell completion: typer's own scripts (`advisor --show-completion SHELL`) generated for bash,
zsh and fish, and the bash one exercised in bash as bash runs it (COMP_WORDS and COMP_CWORD,
typer's `_ADVISOR_COMPLETE` protocol): commands, workload names and sweep ids from the default
database ($ADVISOR_DB_URL) or the one the command line names with --db; nothing (no error, no
database created) where there is none."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.db import ResultStore

BASH = shutil.which("bash")
ADVISOR = Path(sys.executable).with_name("advisor")  # the console script a user installs
pytestmark = pytest.mark.skipif(BASH is None or not ADVISOR.exists(),
                                reason="needs bash and the installed `advisor` script")


def _script(shell: str, tmp_path: Path) -> str:
    # the shell named, not detected from the process tree (typer's own switch for it)
    env = {**os.environ, "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    done = subprocess.run([str(ADVISOR), "--show-completion", shell],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def bash_script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bash completion script, as `advisor --show-completion bash` prints it."""
    path = tmp_path_factory.mktemp("completion") / "advisor.bash"
    path.write_text(_script("bash", path.parent))
    return path


def complete(script: Path, words: list[str], cwd: Path, env: dict[str, str] | None = None,
             ) -> list[str]:
    """What bash completes for ``words`` (the last one being typed), through the script."""
    quoted = " ".join(f"'{w}'" for w in words)
    program = (f"source {script}; COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; "
               f"_advisor_completion advisor; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
    environ = {**os.environ, "PATH": f"{ADVISOR.parent}:{os.environ['PATH']}"}
    environ.pop("ADVISOR_DB_URL", None)
    environ.update(env or {})
    done = subprocess.run([str(BASH), "--norc", "--noprofile", "-c", program],
                          capture_output=True, text=True, env=environ, cwd=cwd, timeout=60)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if line]


def test_scripts_for_bash_zsh_and_fish(tmp_path: Path) -> None:
    bash, zsh, fish = (_script(s, tmp_path) for s in ("bash", "zsh", "fish"))
    assert "_ADVISOR_COMPLETE=complete_bash" in bash and "complete -o default -F" in bash
    assert "#compdef advisor" in zsh and "_ADVISOR_COMPLETE=complete_zsh" in zsh
    assert "complete --command advisor" in fish and "complete_fish" in fish


def test_bash_completes_commands_workloads_and_sweeps(
        bash_script: Path, fleet_url: str, tmp_path: Path) -> None:
    env = {"ADVISOR_DB_URL": fleet_url}
    assert complete(bash_script, ["advisor", "sh"], tmp_path, env) == ["show"]
    assert set(complete(bash_script, ["advisor", "re"], tmp_path, env)) == {"report",
                                                                             "recommend"}
    assert complete(bash_script, ["advisor", "recommend", "re"], tmp_path, env) == ["reranker"]
    assert set(complete(bash_script, ["advisor", "compare", ""], tmp_path, env)) == {
        "reranker", "embedder", "guardrail"}
    assert complete(bash_script, ["advisor", "list", "--workload", "g"], tmp_path,
                    env) == ["guardrail"]
    with ResultStore.from_url(fleet_url, read_only=True) as store:
        ids = sorted(str(s["id"]) for s in store.sweeps())
    assert sorted(complete(bash_script, ["advisor", "show", ""], tmp_path, env)) == ids
    assert sorted(complete(bash_script, ["advisor", "worker", "3"], tmp_path, env)) == sorted(
        i for i in ids if i.startswith("3"))


def test_bash_completes_from_the_database_the_line_names(
        bash_script: Path, fleet_url: str, tmp_path: Path) -> None:
    words = ["advisor", "recommend", "--db", fleet_url, "emb"]
    assert complete(bash_script, words, tmp_path) == ["embedder"]


def test_no_database_completes_nothing_and_creates_none(
        bash_script: Path, tmp_path: Path) -> None:
    assert complete(bash_script, ["advisor", "show", ""], tmp_path) == []
    assert complete(bash_script, ["advisor", "recommend", ""], tmp_path) == []
    assert not (tmp_path / "advisor.db").exists()  # a reader: never creates one
