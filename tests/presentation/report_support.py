"""Run `advisor ...` in this process (typer's runner) and read the seeded database's answers."""

from __future__ import annotations

from typing import Any

from click.testing import Result
from typer.testing import CliRunner

from advisor.db import ResultStore


def run(*args: Any) -> Result:
    from advisor.cli.main import app, register

    register()
    return CliRunner().invoke(app, [str(a) for a in args])


def fingerprint_of(url: str, workload: str, device_name: str, torch: str) -> str:
    """The hash of the seeded fingerprint of ``workload`` on that device and torch build."""
    with ResultStore.from_url(url, create=False) as store:
        return next(f["fingerprint_hash"] for f in store.fingerprints(workload)
                    if f["device_name"] == device_name and f["torch_version"] == torch)
