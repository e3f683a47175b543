"""The store's row types (`advisor.rows`), a sweep's settings (`SweepSettings`) and the charts'
rows (`advisor.presentation.charts`) are checked from the builder to the screen: renaming one
field in a scratch copy of the package fails ``mypy --strict`` at its builder and at every
reader in advisor/ and dashboard/ that reads it.

What each rename gives (errors, files), as measured when the types landed:

==================  ================  ======  ==================================================
type                field             errors  files
==================  ================  ======  ==================================================
SweepRow            fingerprint_hash  17      db/queries.py, recommendation/answers.py, api.py,
                                              devices.py, search/study.py, search/fleet.py,
                                              cli/diff.py, cli/results.py
FingerprintRow      fingerprint_hash  10      db/queries.py, api.py, search/neighbours.py,
                                              recommendation/staleness.py, cli/report.py
ArtifactRow         fingerprint_hash  4       db/queries.py, api.py, runtime.py
MeasuredShapeRow    shape             4       db/queries.py, dashboard/data.py
GroupSummaryRow     first_started_at  2       db/queries.py (the dashboard reads it as a frame)
DeviceRow           n_trials          2       db/queries.py (no reader outside the tests)
DeviceComparison..  best_median_ms    2       db/queries.py (the dashboard reads it as a frame)
BestRow             eager_median_ms   2       db/queries.py (no reader outside the tests)
NearBestRow         failure_reason    2       db/queries.py (no reader outside the tests)
SweepSettings       n_trials          5       search/request.py (its flag's resume check),
                                              search/sweep.py, api.py
SweepSettings       measure_warm      5       search/request.py, search/sweep.py, api.py,
                                              search/fleet.py
LatencyPoint        median_ms         9       presentation/charts.py, presentation/report.py
==================  ================  ======  ==================================================

The test asserts the files (a new reader elsewhere is welcome: the set only has to be covered).
A reader that takes a row through ``.get("key")`` and makes no typed use of the value stays
silent (mypy types it ``object``); the pure helpers that tests feed with partial dicts
(`advisor.devices.DeviceNames`, `advisor.recommendation.staleness.nearest_fingerprint`,
`dashboard.analysis.sweeps_frame`) read that way, and fail only where a value meets a typed use.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import typing
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

ROWS, SETTINGS, CHARTS = ("advisor/rows.py", "advisor/search/request.py",
                          "advisor/presentation/charts.py")
# (file, type, field) -> the files (under the scratch copy's root) mypy must fail in
RENAMES: dict[tuple[str, str, str], set[str]] = {
    (ROWS, "SweepRow", "fingerprint_hash"): {
        "advisor/db/queries.py", "advisor/recommendation/answers.py", "advisor/api.py",
        "advisor/devices.py", "advisor/search/study.py", "advisor/search/fleet.py",
        "advisor/cli/diff.py", "advisor/cli/results.py"},
    (ROWS, "FingerprintRow", "fingerprint_hash"): {
        "advisor/db/queries.py", "advisor/api.py", "advisor/search/neighbours.py",
        "advisor/recommendation/staleness.py", "advisor/cli/report.py"},
    (ROWS, "ArtifactRow", "fingerprint_hash"): {
        "advisor/db/queries.py", "advisor/api.py", "advisor/runtime.py"},
    (ROWS, "MeasuredShapeRow", "shape"): {"advisor/db/queries.py", "dashboard/data.py"},
    (ROWS, "GroupSummaryRow", "first_started_at"): {"advisor/db/queries.py"},
    (ROWS, "DeviceRow", "n_trials"): {"advisor/db/queries.py"},
    (ROWS, "DeviceComparisonRow", "best_median_ms"): {"advisor/db/queries.py"},
    (ROWS, "BestRow", "eager_median_ms"): {"advisor/db/queries.py"},
    (ROWS, "NearBestRow", "failure_reason"): {"advisor/db/queries.py"},
    (SETTINGS, "SweepSettings", "n_trials"): {
        "advisor/search/request.py", "advisor/search/sweep.py", "advisor/api.py"},
    (SETTINGS, "SweepSettings", "measure_warm"): {
        "advisor/search/request.py", "advisor/search/sweep.py", "advisor/api.py",
        "advisor/search/fleet.py"},
    (CHARTS, "LatencyPoint", "median_ms"): {
        "advisor/presentation/charts.py", "advisor/presentation/report.py"},
}  # fmt: skip
ERROR = re.compile(r"^(?P<path>[^:\s]+\.py):(?P<line>\d+): error: (?P<message>.*)$", re.MULTILINE)


def _scratch(tmp: Path) -> Path:
    """advisor/, dashboard/ and the mypy settings in ``tmp``, with the checkout's mypy cache
    when there is one (mypy checks each cached module's hash: a stale entry is rechecked)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for package in ("advisor", "dashboard"):
        shutil.copytree(ROOT / package, tmp / package, ignore=ignore)
    shutil.copy2(ROOT / "pyproject.toml", tmp / "pyproject.toml")
    if (ROOT / ".mypy_cache").is_dir():
        try:
            shutil.copytree(ROOT / ".mypy_cache", tmp / ".mypy_cache")
        except (shutil.Error, OSError):  # another mypy rewrote it meanwhile: start cold
            shutil.rmtree(tmp / ".mypy_cache", ignore_errors=True)
    return tmp


def _mypy(root: Path) -> list[tuple[str, str, str]]:
    """(file, line, message) of every error ``mypy --strict advisor dashboard`` reports in
    ``root``."""
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "advisor", "dashboard"],
                          cwd=root, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return [(m["path"], m["line"], m["message"]) for m in ERROR.finditer(done.stdout)]


def _renamed(source: str, kind: str, field: str) -> str:
    """``source`` with ``field`` of the class ``kind`` (a TypedDict, a dataclass) renamed."""
    found = re.search(rf"\nclass {kind}[(:]", source)
    assert found, f"no class {kind}"
    start = found.start()
    end = source.find("\nclass ", start + 1)
    end = len(source) if end < 0 else end
    body, count = re.subn(rf"^    {field}:", f"    {field}_renamed:", source[start:end],
                          flags=re.MULTILINE)
    assert count == 1, f"{kind} declares no field {field}"
    return source[:start] + body + source[end:]


@pytest.mark.slow
def test_renaming_a_row_field_fails_mypy_at_its_builder_and_readers(tmp_path: Path) -> None:
    """Every rename in one copy and one mypy run (a run each took about 70 s of a 2-core CPU):
    an error is the rename's whose type and field it names (mypy names both in 'has no key',
    'Missing key', 'Extra key', 'has no attribute', 'Unexpected keyword argument'). A reader
    that meets a rename only through ``.get`` or a protocol names neither ('object' where a
    str is expected): a rename that needs such a file to cover its readers is run again alone,
    so that each file is still shown failing for its own rename."""
    root = _scratch(tmp_path)
    originals = {path: (root / path).read_text() for path, _, _ in RENAMES}
    baseline = set(_mypy(root))  # errors the tree has anyway (work in progress elsewhere)
    combined = dict(originals)
    for path, kind, field in RENAMES:
        combined[path] = _renamed(combined[path], kind, field)
    for path, text in combined.items():
        (root / path).write_text(text)
    errors = [e for e in _mypy(root) if e not in baseline]
    found: dict[tuple[str, str], dict[str, int]] = {}
    for (path, kind, field), readers in RENAMES.items():
        files = [f for f, _, message in errors
                 if f'"{kind}"' in message and f'"{field}' in message]
        if not readers <= set(files):  # alone: every new error is this rename's
            for other, text in originals.items():
                (root / other).write_text(text)
            (root / path).write_text(_renamed(originals[path], kind, field))
            files = [e[0] for e in _mypy(root) if e not in baseline]
        found[(kind, field)] = {f: files.count(f) for f in sorted(set(files))}
        assert readers <= set(files), f"{kind}.{field}: no error in {readers - set(files)}"
    print("\n".join(f"{k}.{f}: {sum(c.values())} errors {c}" for (k, f), c in found.items()))

def test_the_device_and_stack_columns_are_the_fingerprints_fields() -> None:
    from advisor import protocol
    from advisor.db.models import SWEEP_STATUSES
    from advisor.rows import DeviceColumns, EnvColumns, StoredSweepStatus, SweepStatus

    assert tuple(DeviceColumns.__annotations__) == ("device_hash", *protocol.DEVICE_FIELDS)
    assert tuple(EnvColumns.__annotations__) == ("env_hash", *protocol.ENV_FIELDS)
    assert typing.get_args(StoredSweepStatus) == SWEEP_STATUSES
    assert typing.get_args(SweepStatus) == (*SWEEP_STATUSES, "dead")
