"""advisor.search.fleet.worker_env: each worker's GPU, device lock and measure core, within what
this
process sees; advisor.device_lock moves the measuring thread onto that core."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from advisor import settings
from advisor.search.fleet import measure_cores, worker_env

LOCK = settings.DEVICE_LOCK.name
MEASURE_CORE = settings.MEASURE_CORE.name
RESERVED_CORES = settings.RESERVED_CORES.name


def test_workers_take_the_gpus_this_process_may_see(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    first, second = worker_env(0, "cuda", jobs=2, workers=4), worker_env(1, "cuda", 2, 4)
    assert (first["CUDA_VISIBLE_DEVICES"], second["CUDA_VISIBLE_DEVICES"]) == ("2", "3")
    # The lock is named after the GPU: a sweep started on GPU 3 alone shares GPU 3's lock.
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    alone = worker_env(0, "cuda", jobs=2)
    assert alone[LOCK] == second[LOCK] != first[LOCK]
    assert alone["CUDA_VISIBLE_DEVICES"] == "3"


def test_without_a_restriction_the_index_is_the_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    env = worker_env(1, "cuda", jobs=1)
    assert env["CUDA_VISIBLE_DEVICES"] == "1"
    assert LOCK not in env  # one trial at a time: nothing to take turns with


def test_gpu_uuids_make_valid_lock_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-8f2c1a/0")
    env = worker_env(0, "cuda", jobs=2)
    assert env["CUDA_VISIBLE_DEVICES"] == "GPU-8f2c1a/0"
    assert env[LOCK].endswith("advisor-device-cuda-GPU-8f2c1a_0.lock")


def test_cpu_workers_share_one_lock_and_split_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TORCHINDUCTOR_COMPILE_THREADS", raising=False)
    monkeypatch.delenv(settings.KEEP_CACHES.name, raising=False)
    a, b = worker_env(0, "cpu", jobs=2, workers=2), worker_env(0, "cpu", jobs=2, workers=2)
    assert a[LOCK] == b[LOCK]
    assert int(a["TORCHINDUCTOR_COMPILE_THREADS"]) >= 1


def test_one_core_per_gpu_is_kept_for_measurements_when_the_host_has_cores() -> None:
    assert measure_cores(list(range(16)), gpus=1) == [15]
    assert measure_cores(list(range(32)), gpus=2) == [30, 31]
    assert measure_cores([3, 1, 2, 0], gpus=1) == [3]
    assert measure_cores([0, 1], gpus=1) == []  # fewer than four cores per GPU: compile needs them
    assert measure_cores(list(range(7)), gpus=2) == []


def test_measure_cores_reach_gpu_workers_only(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (MEASURE_CORE, RESERVED_CORES,
                 "TORCHINDUCTOR_COMPILE_THREADS"):
        monkeypatch.delenv(name, raising=False)
    cores = sorted(os.sched_getaffinity(0))
    kept = measure_cores(cores, 1)
    env = worker_env(0, "cuda", jobs=2, workers=2)
    if kept:
        assert env[MEASURE_CORE] == str(kept[0])
        assert env[RESERVED_CORES] == str(kept[0])
    else:  # this host has too few cores to keep one
        assert MEASURE_CORE not in env
    assert env["TORCHINDUCTOR_COMPILE_THREADS"] == str(max(1, (len(cores) - len(kept)) // 2))
    assert MEASURE_CORE not in worker_env(0, "cpu", jobs=2, workers=2)
    assert MEASURE_CORE not in worker_env(0, "cuda", jobs=1)  # nobody to share
    # A user's choice stands, "none" included: nothing kept.
    monkeypatch.setenv(MEASURE_CORE, "none")
    chosen = worker_env(0, "cuda", jobs=2, workers=2)
    assert chosen[MEASURE_CORE] == "none"
    assert RESERVED_CORES not in chosen


PINNING = """
import json, os, sys
from advisor import device_lock
seen = {}
device_lock.leave_reserved_cores()
seen["started"] = sorted(os.sched_getaffinity(0))
lock = device_lock.DeviceLock(sys.argv[1])
lock.hold("work")
seen["work"] = sorted(os.sched_getaffinity(0))
lock.hold("measure")
seen["measure"] = sorted(os.sched_getaffinity(0))
lock.hold("work")
seen["work again"] = sorted(os.sched_getaffinity(0))
lock.release()
seen["core"] = lock.measure_core
print(json.dumps(seen))
"""


def test_the_measuring_thread_moves_to_its_core_and_others_keep_off_it(tmp_path: Path) -> None:
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        pytest.skip("needs two cores this process may use")
    core, rest = cores[-1], cores[:-1]
    env = dict(os.environ, **{MEASURE_CORE: str(core),
                              RESERVED_CORES: str(core)})
    done = subprocess.run([sys.executable, "-c", PINNING, str(tmp_path / "lock")], env=env,
                          capture_output=True, text=True, timeout=60, check=True)
    seen = json.loads(done.stdout)
    assert seen == {"started": rest, "work": rest, "measure": [core], "work again": rest,
                    "core": core}


def test_gpu_jobs_share_the_hosts_cores_for_torchs_cpu_threads(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (MEASURE_CORE, RESERVED_CORES, "OMP_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    cores = sorted(os.sched_getaffinity(0))
    kept = measure_cores(cores, 1)
    env = worker_env(0, "cuda", jobs=4, workers=4)
    assert env["OMP_NUM_THREADS"] == str(max(1, (len(cores) - len(kept)) // 4))
    assert "OMP_NUM_THREADS" not in worker_env(0, "cpu", jobs=2, workers=2)  # it measures on them
    assert "OMP_NUM_THREADS" not in worker_env(0, "cuda", jobs=1)  # alone: every core
    monkeypatch.setenv("OMP_NUM_THREADS", "3")  # a user's choice stands
    assert worker_env(0, "cuda", jobs=4, workers=4)["OMP_NUM_THREADS"] == "3"
