"""advisor.device_lock across real processes: shared work overlaps, a measurement is alone."""

from __future__ import annotations

import multiprocessing as mp
import time
from pathlib import Path

import pytest

from advisor.device_lock import DeviceLock


def _hold(path: str, mode: str, seconds: float, log: str, name: str) -> None:
    lock = DeviceLock(path)
    lock.hold(mode)
    with open(log, "a") as f:
        f.write(f"{time.monotonic():.6f} start {name}\n")
    time.sleep(seconds)
    with open(log, "a") as f:
        f.write(f"{time.monotonic():.6f} end {name}\n")
    lock.release()


def _intervals(log: Path) -> dict[str, tuple[float, float]]:
    spans: dict[str, list[float]] = {}
    for line in log.read_text().splitlines():
        t, _, name = line.split()
        spans.setdefault(name, []).append(float(t))
    return {name: (ts[0], ts[1]) for name, ts in spans.items()}


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _start(path: Path, mode: str, seconds: float, log: Path, name: str) -> mp.Process:
    p = mp.get_context("fork").Process(target=_hold, args=(str(path), mode, seconds, str(log),
                                                           name))
    p.start()
    return p


def test_without_a_path_every_hold_is_a_no_op():
    lock = DeviceLock(None)
    lock.hold("measure")
    assert not lock.enabled and lock.mode is None
    lock.release()


def test_unknown_mode_is_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown lock mode"):
        DeviceLock(str(tmp_path / "l")).hold("fast")


def test_work_overlaps_and_measure_is_alone(tmp_path):
    path, log = tmp_path / "device.lock", tmp_path / "log"
    procs = [_start(path, "work", 1.0, log, "w1"), _start(path, "work", 1.0, log, "w2")]
    time.sleep(0.3)  # both shared holds are in; the measurement waits for them
    procs.append(_start(path, "measure", 0.5, log, "m"))
    time.sleep(0.3)  # a later shared hold queues behind the waiting measurement
    procs.append(_start(path, "work", 0.3, log, "w3"))
    for p in procs:
        p.join(10)
        assert p.exitcode == 0
    spans = _intervals(log)
    assert _overlap(spans["w1"], spans["w2"])  # shared work runs side by side
    for work in ("w1", "w2", "w3"):
        assert not _overlap(spans["m"], spans[work])  # the measurement is alone
    assert spans["m"][0] < spans["w3"][0]  # and not starved by later work


def test_switching_modes_in_one_process_counts_the_wait(tmp_path):
    path, log = tmp_path / "device.lock", tmp_path / "log"
    other = _start(path, "work", 0.8, log, "w")
    time.sleep(0.2)
    lock = DeviceLock(str(path))
    lock.hold("work")  # shared with the other process: no wait
    assert lock.waited_s < 0.5
    lock.hold("measure")  # waits until the other's work ends
    assert lock.mode == "measure" and lock.waited_s >= 0.3
    lock.release()
    other.join(10)
    assert other.exitcode == 0


def test_measurement_windows_are_recorded(tmp_path):
    lock = DeviceLock(str(tmp_path / "device.lock"))
    lock.hold("work")
    lock.hold("measure")
    time.sleep(0.05)
    lock.hold("work")  # leaving "measure" closes its window
    lock.release()
    assert len(lock.windows) == 1
    start, end = lock.windows[0]
    assert end - start >= 0.04
