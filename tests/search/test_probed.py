"""A worker started by its sweep on the device the sweep probed takes that fingerprint instead of
probing again (a process start saved per worker); a fingerprint of another stack is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from advisor import settings
from advisor.config import EAGER_FP32
from advisor.db.store import ResultStore
from advisor.errors import ConfigError, TrialFailed, WorkloadError
from advisor.fingerprint import add_hashes, collect
from advisor.search.fleet import Worker
from advisor.search.request import SweepSettings
from advisor.workload import workload_sha256

FOUR = Path(__file__).resolve().parents[1] / "workloads" / "four_dtypes.py"


def _sweep(store: ResultStore, fingerprint: dict, path: Path = FOUR,
           sha256: str | None = None) -> int:
    workload = {"name": "four-dtypes", "path": str(path), "source_sha256": sha256, "info": {}}
    stored = {**SweepSettings(device="cpu").to_dict(), "space": [EAGER_FP32.to_dict()]}
    return store.create_sweep(workload, fingerprint, stored, "probed-test", 1)


def test_a_worker_takes_its_sweeps_probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A fingerprint of a CUDA device on this CPU-only machine: probing "cuda" here would fail,
    # so the worker can only have taken the one it was given.
    gpu = add_hashes({**collect("cpu"), "device_kind": "cuda", "device_name": "NVIDIA H200"})
    with ResultStore.from_url(f"sqlite:///{tmp_path / 'a.db'}") as store:
        sweep_id = _sweep(store, gpu, sha256=workload_sha256(FOUR))
        monkeypatch.delenv(settings.PROBED_FINGERPRINT.name, raising=False)
        with pytest.raises(TrialFailed):
            Worker(store, sweep_id, "cuda").check()  # no CUDA here: the probe fails
        monkeypatch.setenv(settings.PROBED_FINGERPRINT.name, json.dumps(gpu))
        path, fingerprint = Worker(store, sweep_id, "cuda").check()
        assert path == FOUR.resolve()
        assert fingerprint == gpu

        other = add_hashes({**gpu, "torch_version": "0.0.1"})
        monkeypatch.setenv(settings.PROBED_FINGERPRINT.name, json.dumps(other))
        with pytest.raises(ConfigError, match="torch_version"):
            Worker(store, sweep_id, "cuda").check()


def test_a_worker_its_sweep_started_checks_the_files_bytes_without_importing_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A file that fails whenever it is imported: only a worker that imports it can fail on it.
    file = tmp_path / "wl.py"
    file.write_text("raise RuntimeError('imported')\n")
    cpu = add_hashes(collect("cpu"))
    monkeypatch.setenv(settings.PROBED_FINGERPRINT.name, json.dumps(cpu))
    with ResultStore.from_url(f"sqlite:///{tmp_path / 'a.db'}") as store:
        sweep_id = _sweep(store, cpu, file, workload_sha256(file))
        monkeypatch.delenv(settings.WORKLOAD_CHECKED.name, raising=False)
        with pytest.raises(WorkloadError, match="import failed: RuntimeError: imported"):
            Worker(store, sweep_id, "cpu").check()  # a worker joining from elsewhere imports
        monkeypatch.setenv(settings.WORKLOAD_CHECKED.name, workload_sha256(file))
        path, _ = Worker(store, sweep_id, "cpu").check()
        assert path == file

        file.write_text("raise RuntimeError('changed since the sweep started')\n")
        with pytest.raises(WorkloadError, match="differs from the file sweep"):
            Worker(store, sweep_id, "cpu").check()
        file.unlink()
        with pytest.raises(WorkloadError, match="cannot be read"):
            Worker(store, sweep_id, "cpu").check()
