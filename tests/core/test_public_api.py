"""The public surface: exactly these names, each importable; importing advisor stays light."""

from __future__ import annotations

import subprocess
import sys

import advisor

EXPECTED = {
    "AdvisorError",
    "CompileConfig",
    "ConfigError",
    "Quality",
    "SchemaOutdated",
    "StoreError",
    "TrialFailed",
    "Workload",
    "WorkloadError",
    "__version__",
    "apply",
    "load_workload",
    "recommend",
    "recommendations",
    "sweep",
    "trials",
}


def test_all_is_exactly_the_public_api() -> None:
    assert set(advisor.__all__) == EXPECTED
    assert len(advisor.__all__) == len(EXPECTED)  # no duplicates


def test_every_public_name_is_importable() -> None:
    namespace: dict[str, object] = {}
    exec("from advisor import *", namespace)  # what a user's star import sees
    for name in EXPECTED:
        assert getattr(advisor, name) is not None
        if name != "__version__":
            assert name in namespace


def test_errors_form_one_hierarchy() -> None:
    for name in ("ConfigError", "StoreError", "TrialFailed", "WorkloadError", "SchemaOutdated"):
        assert issubclass(getattr(advisor, name), advisor.AdvisorError)
    assert issubclass(advisor.SchemaOutdated, advisor.StoreError)


def test_version_is_a_string() -> None:
    assert isinstance(advisor.__version__, str) and advisor.__version__


def test_importing_advisor_and_its_cli_does_not_import_torch() -> None:
    code = (
        "import sys, advisor, advisor.cli.app, advisor.config, advisor.stats, advisor.records, "
        "advisor.cli.trial, advisor.search.launcher, advisor.devices, advisor.workload; "
        "assert 'torch' not in sys.modules, 'torch was imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
