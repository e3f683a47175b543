"""advisor.fleet.worker_env: each worker's GPU and device lock, within what this process sees."""

from __future__ import annotations

import pytest

from advisor import device_lock
from advisor.fleet import worker_env
from advisor.launcher import CACHE_ROOT_ENV


def test_workers_take_the_gpus_this_process_may_see(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    first, second = worker_env(0, "cuda", jobs=2, workers=4), worker_env(1, "cuda", 2, 4)
    assert (first["CUDA_VISIBLE_DEVICES"], second["CUDA_VISIBLE_DEVICES"]) == ("2", "3")
    # The lock is named after the GPU: a sweep started on GPU 3 alone shares GPU 3's lock.
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    alone = worker_env(0, "cuda", jobs=2)
    assert alone[device_lock.ENV] == second[device_lock.ENV] != first[device_lock.ENV]
    assert alone["CUDA_VISIBLE_DEVICES"] == "3"


def test_without_a_restriction_the_index_is_the_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    env = worker_env(1, "cuda", jobs=1)
    assert env["CUDA_VISIBLE_DEVICES"] == "1"
    assert device_lock.ENV not in env  # one trial at a time: nothing to take turns with


def test_gpu_uuids_make_valid_lock_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-8f2c1a/0")
    env = worker_env(0, "cuda", jobs=2)
    assert env["CUDA_VISIBLE_DEVICES"] == "GPU-8f2c1a/0"
    assert env[device_lock.ENV].endswith("advisor-device-cuda-GPU-8f2c1a_0.lock")


def test_cpu_workers_share_one_lock_and_split_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TORCHINDUCTOR_COMPILE_THREADS", raising=False)
    monkeypatch.delenv(CACHE_ROOT_ENV, raising=False)
    a, b = worker_env(0, "cpu", jobs=2, workers=2), worker_env(0, "cpu", jobs=2, workers=2)
    assert a[device_lock.ENV] == b[device_lock.ENV]
    assert int(a["TORCHINDUCTOR_COMPILE_THREADS"]) >= 1
