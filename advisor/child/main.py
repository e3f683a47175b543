"""A child process's entry point: ``python -m advisor.child.main SPEC.json RESULT.json``, started
by `advisor.search.launcher`. The spec's ``kind`` says which child it is (`advisor.protocol`: a
trial, a warm start, a serving process alone, a probe of the fingerprint, a confirmation, a
cache artifact, or a workload file's description); `run` runs it, each kind's result of its own
type (`advisor.protocol`; every kind but the trial and the probe fails with the one
`advisor.protocol.ChildFailure`). The result is one JSON document, written whole
(`advisor.protocol.write_result`) so that the parent never reads half of one. A spec of no known
kind is refused: a `ChildFailure` and exit code 2."""

from __future__ import annotations

import json
import sys
import traceback
from typing import TYPE_CHECKING, assert_never, cast

from advisor import fingerprint
from advisor.child.confirm import artifact_child, confirm_child
from advisor.child.measure import phase
from advisor.child.trial import TrialRun, serving_alone, warm_start
from advisor.device_lock import DeviceLock
from advisor.errors import WorkloadError
from advisor.lifetime import die_with_parent, end_process, name_this_process
from advisor.protocol import (
    CHILD_KINDS,
    LOCK_WAIT_PHASE,
    AloneResult,
    AloneSpec,
    ChildFailure,
    ChildResult,
    ChildSpec,
    DescribeResult,
    DescribeSpec,
    ProbeSpec,
    TrialSpec,
    WarmResult,
    WarmSpec,
    child_failure,
    process_name,
    write_result,
)

if TYPE_CHECKING:
    from advisor.records import Fingerprint, TrialRecord

UNKNOWN_KIND_EXIT = 2


def _trial(spec: TrialSpec) -> TrialRecord:
    return TrialRun(spec).run()  # failures come back as the record's status


def _warm(spec: WarmSpec) -> WarmResult | ChildFailure:
    try:
        return {"status": "ok", "warm_compile_s": warm_start(spec)["warm_compile_s"]}
    except Exception as exc:  # noqa: BLE001 - reported to the parent as data
        return child_failure(exc, traceback.format_exc())


def _alone(spec: AloneSpec) -> AloneResult | ChildFailure:
    try:
        served = serving_alone(spec)
    except Exception as exc:  # noqa: BLE001 - reported to the parent as data
        return child_failure(exc, traceback.format_exc())
    return {"status": "ok", "startup_s": served["startup_s"],
            "per_request_ms": served["per_request_ms"], "new_shape": served["new_shape"]}


def _probe(spec: ProbeSpec) -> Fingerprint:
    return fingerprint.collect(spec["device"])  # a failure: no result (the parent says so)


def _describe(spec: DescribeSpec) -> DescribeResult | ChildFailure:
    from advisor.workload import WorkloadFacts, load_workload

    try:
        loaded = load_workload(spec["workload_path"], spec.get("workload_sha256"))
    except WorkloadError as e:  # the user's one line, said by the parent
        return child_failure(e, traceback.format_exc(), error=str(e))
    return {"status": "ok", "workload": WorkloadFacts.of(loaded.workload).to_dict(),
            "path": str(loaded.path), "source_sha256": loaded.source_sha256}


def run(spec: ChildSpec) -> ChildResult:
    """The child of ``spec``'s kind, run (each kind's spec and result type: advisor.protocol;
    mypy checks each branch against its own)."""
    if spec["kind"] == "trial":
        return _trial(spec)
    if spec["kind"] == "warm":
        return _warm(spec)
    if spec["kind"] == "alone":
        return _alone(spec)
    if spec["kind"] == "probe":
        return _probe(spec)
    if spec["kind"] == "confirm":
        return confirm_child(spec)
    if spec["kind"] == "artifact":
        return artifact_child(spec)
    if spec["kind"] == "describe":
        return _describe(spec)
    assert_never(spec)


def unknown_kind(kind: object) -> str:
    """What a spec of no known kind is told."""
    named = "names no kind" if kind is None else f"has kind {kind!r}"
    return (f"advisor child: the spec {named}; a spec's kind is one of "
            f"{', '.join(CHILD_KINDS)} (advisor.protocol)")


def main(argv: list[str]) -> int:
    die_with_parent()  # kill -9 of a worker must not leave an orphan trial holding the GPU
    spec_path, result_path = argv[1], argv[2]
    with open(spec_path) as f:
        spec = json.load(f)
    kind = spec.get("kind") if isinstance(spec, dict) else None
    if kind not in CHILD_KINDS:
        message = unknown_kind(kind)
        print(message, file=sys.stderr)
        failure: ChildFailure = {"status": "failed", "error": message,
                                 "error_type": "ValueError", "error_tail": message}
        write_result(result_path, failure)
        return UNKNOWN_KIND_EXIT
    # Trials sharing the device (advisor.device_lock) take turns to measure, alone. On a GPU
    # each kind of child takes the shared hold where it starts to use the GPU (its imports and
    # loading may overlap another's measurement); on the CPU the device is the host's cores,
    # so all of the child is device work (but a description's: it imports a file, no more). A
    # hold that blocks is a phase of its own (the parent times phases: a stall behind other
    # trials' compiles shows as a lock wait).
    name_this_process(process_name(str(kind)))
    DeviceLock.from_env().on_wait = lambda: phase(LOCK_WAIT_PHASE)
    if kind != "describe" and not str(spec.get("device", "")).startswith("cuda"):
        DeviceLock.from_env().hold("work")
    write_result(result_path, run(cast(ChildSpec, spec)))
    return 0


if __name__ == "__main__":
    end_process(main(sys.argv))  # the teardown skipped: `advisor.lifetime.end_process`
