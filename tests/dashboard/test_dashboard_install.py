"""`advisor dashboard` where the dashboard extra is not installed: one line naming what to
install, exit 2, nothing started. Run in a real interpreter whose packages lack Streamlit: this
environment's site-packages, every entry linked into a folder except Streamlit's."""

from __future__ import annotations

import os
import site
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _packages_without(tmp_path: Path, *left_out: str) -> Path:
    """A folder holding this environment's installed packages but ``left_out`` (links)."""
    folder = tmp_path / "site-packages"
    folder.mkdir()
    for packages in site.getsitepackages():
        for entry in Path(packages).iterdir():
            name = entry.name.lower()
            if any(name == out or name.startswith(f"{out}-") for out in left_out):
                continue
            if not (folder / entry.name).exists():
                (folder / entry.name).symlink_to(entry)
    return folder


def test_without_streamlit_one_line_names_the_extra(tmp_path: Path) -> None:
    packages = _packages_without(tmp_path, "streamlit")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ADVISOR_DB_URL")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(packages)])
    probe = subprocess.run([sys.executable, "-S", "-c", "import streamlit"], env=env,
                           capture_output=True, text=True)  # fmt: skip
    assert probe.returncode != 0, "the folder must not provide Streamlit"
    result = subprocess.run(
        [sys.executable, "-S", "-m", "advisor", "dashboard", "--port", "1"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert lines == ["advisor: error: the dashboard needs streamlit (not installed): "
                     "pip install 'advisor[dashboard]'"]  # fmt: skip
    assert not (tmp_path / "advisor.db").exists(), "nothing written"
