"""A child process's entry point: ``python -m advisor.child.main SPEC.json RESULT.json``, started
by `advisor.search.launcher`. The spec says which child it is (a trial, a warm start, a probe of
the fingerprint, a confirmation or a cache artifact); the result is one JSON document, written
whole (a temporary file renamed) so that the parent never reads half of one."""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Mapping
from typing import Any

from advisor import fingerprint
from advisor.child.confirm import child_main
from advisor.child.measure import LOCK_WAIT_PHASE, phase
from advisor.child.trial import TrialRun, serving_alone, tail, warm_start
from advisor.device_lock import DeviceLock
from advisor.lifetime import die_with_parent


def main(argv: list[str]) -> int:
    die_with_parent()  # kill -9 of a worker must not leave an orphan trial holding the GPU
    spec_path, result_path = argv[1], argv[2]
    with open(spec_path) as f:
        spec = json.load(f)
    # Trials sharing the device (advisor.device_lock) take turns to measure, alone. On a GPU
    # each kind of child takes the shared hold where it starts to use the GPU (its imports and
    # loading may overlap another's measurement); on the CPU the device is the host's cores,
    # so all of the child is device work. A hold that blocks is a phase of its own (the parent
    # times phases: a stall behind other trials' compiles shows as a lock wait).
    DeviceLock.from_env().on_wait = lambda: phase(LOCK_WAIT_PHASE)
    if not str(spec.get("device", "")).startswith("cuda"):
        DeviceLock.from_env().hold("work")
    result: Mapping[str, Any]
    if spec.get("probe"):
        result = fingerprint.collect(spec["device"])
    elif spec.get("warm_only"):
        try:
            result = warm_start(spec)
        except Exception as exc:  # noqa: BLE001 - reported to the parent as data
            result = {"warm_compile_s": None, "error": tail(traceback.format_exc()),
                      "error_type": type(exc).__name__}
    elif spec.get("alone"):
        try:
            result = serving_alone(spec)
        except Exception as exc:  # noqa: BLE001 - reported to the parent as data
            result = {"error": tail(traceback.format_exc()), "error_type": type(exc).__name__}
    elif spec.get("child"):  # the confirmation and the cache artifact
        result = child_main(spec)
    else:
        result = TrialRun(spec).run()
    with open(result_path + ".tmp", "w") as f:
        json.dump(result, f, default=str)
    os.replace(result_path + ".tmp", result_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
