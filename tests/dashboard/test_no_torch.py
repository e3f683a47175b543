"""The dashboard never imports torch (it starts fast and touches no GPU): every page, run in a
fresh interpreter, leaves no torch module behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
from streamlit.testing.v1 import AppTest
for page in ("recommendations", "workload", "fleet", "sweeps"):
    at = AppTest.from_file({str(ROOT / "dashboard" / "app.py")!r}, default_timeout=60).run()
    at.switch_page(f"views/{{page}}.py").run()
    assert not at.exception and not at.error, page
import advisor.cli.dashboard
print(sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "triton")))
"""


def test_no_page_imports_torch(seeded_url: str) -> None:
    env = os.environ | {"ADVISOR_DB_URL": seeded_url}
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"
