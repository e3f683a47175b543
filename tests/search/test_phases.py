"""Where a trial's time went: the child's phase lines timed by the parent
(advisor.search.launcher.phase_seconds), a blocked device-lock hold reported as a phase of its
own (advisor.device_lock), and the rows `advisor show` and the report print
(advisor.presentation.charts)."""

from __future__ import annotations

import threading
from pathlib import Path

from advisor.config import EAGER_FP32, CompileConfig
from advisor.device_lock import DeviceLock
from advisor.presentation import charts
from advisor.records import PHASE_ORDER
from advisor.search.launcher import phase_seconds


def test_phase_lines_become_seconds_per_phase_in_order() -> None:
    lines = [("loading", 1.0), ("waiting for the device", 3.0), ("preparing", 10.0),
             ("reference", 10.5), ("compiling", 12.0), ("waiting for the device", 40.0),
             ("measuring", 41.0), ("profiling", 45.0)]
    got = phase_seconds(lines, 46.0)
    assert got == {"start": 1.0, "import": 2.0, "build": 2.0, "lock wait": 8.0,
                   "compile": 28.0, "measure": 5.0}
    assert list(got) == [p for p in PHASE_ORDER if p in got]
    assert sum(got.values()) == 46.0  # every second from the start to the exit, once


def test_without_an_exit_the_last_phase_is_left_out_and_unknown_names_stand_for_themselves(
        ) -> None:
    got = phase_seconds([("loading", 0.5), ("warm-start", 2.0), ("measuring", 3.0)], None)
    assert got == {"start": 0.5, "import": 1.5, "warm-start": 1.0}


def test_a_hold_that_blocks_says_so_once_before_it_waits(tmp_path: Path) -> None:
    path = str(tmp_path / "device.lock")
    measuring, compiling = DeviceLock(path), DeviceLock(path)
    told: list[str] = []
    waiting = threading.Event()

    def on_wait() -> None:
        told.append("waiting")
        waiting.set()

    compiling.on_wait = on_wait
    measuring.hold("measure")  # another trial measures: a shared hold must wait
    thread = threading.Thread(target=compiling.hold, args=("work",))
    thread.start()
    assert waiting.wait(30)  # it said so before blocking...
    assert compiling.mode is None  # ...and is still waiting
    measuring.release()
    thread.join(30)
    assert compiling.mode == "work" and told == ["waiting"]
    # it blocked until the release above, which came after it said it waits: a wait > 0
    assert set(compiling.waits_s) == {"work"} and compiling.waited_s > 0
    compiling.release()

    free = DeviceLock(path)
    free.on_wait = on_wait
    free.hold("measure")  # nothing in the way: no wait reported
    free.release()
    assert told == ["waiting"]


def test_rows_per_trial_in_finishing_order_with_a_total() -> None:
    default = CompileConfig(mode="default", dtype="bf16")
    records = [
        {"config": default.to_dict(), "config_key": default.key, "finished_at": "b",
         "phases_s": {"queue": 2.0, "start": 1.0, "lock wait": 30.0, "compile": 12.0}},
        {"config": EAGER_FP32.to_dict(), "config_key": EAGER_FP32.key, "finished_at": "a",
         "phases_s": {"start": 1.0, "measure": 3.5}},
        {"config": EAGER_FP32.to_dict(), "config_key": EAGER_FP32.key, "finished_at": "c"},
    ]
    rows = charts.phases(records)
    assert [r["config"] for r in rows] == ["fp32 + eager", "bf16 + default"]
    assert list(rows[0]) == ["config", "queue", "start", "lock wait", "compile", "measure",
                             "total"]
    assert rows[0]["queue"] == "-" and rows[0]["total"] == "4.50 s"
    assert rows[1]["lock wait"] == "30.0 s" and rows[1]["total"] == "45.0 s"
    assert charts.phases([records[2]]) == []
