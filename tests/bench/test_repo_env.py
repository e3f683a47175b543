"""bench.common.repo_env: the environment of a bench's `advisor` process runs this checkout's
code, and adds nothing to it where a fresh interpreter imports this checkout already (a changed
PYTHONPATH, read at import, keeps a sweep from sharing the fork server its caller names)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench import common

REPO = Path(__file__).resolve().parents[2]
WHERE = "import advisor, pathlib; print(pathlib.Path(advisor.__file__).resolve().parent)"


def _imported_from(env: dict[str, str], cwd: Path) -> Path:
    done = subprocess.run([sys.executable, "-c", WHERE], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=60, check=True)
    return Path(done.stdout.strip())


def test_an_editable_install_of_this_checkout_keeps_the_environment(tmp_path: Path) -> None:
    base = {"PATH": "/usr/bin:/bin", "PYTHONPATH": ""}
    if not common.imports_this_checkout():
        pytest.skip("advisor is not installed from this checkout (the README's `pip install -e`)")
    env = common.repo_env(base)
    assert env == base  # nothing added
    assert _imported_from(env, tmp_path) == REPO / "advisor"


def test_otherwise_this_checkout_goes_first_on_the_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common, "imports_this_checkout", lambda: False)
    env = common.repo_env({"PATH": "/usr/bin:/bin", "PYTHONPATH": "/elsewhere"})
    assert env["PYTHONPATH"].split(":") == [str(REPO), "/elsewhere"]
    assert _imported_from(env, tmp_path) == REPO / "advisor"


def test_a_checkout_that_is_not_the_installed_one_is_told_apart(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(common, "REPO", tmp_path)  # another checkout: not what Python imports
    assert common.imports_this_checkout() is False
