"""The protocol between the parent and its children (advisor.protocol), run for real: the child
entry point dispatches on the spec's ``kind`` (each kind reaches its own child), refuses a spec
of no known kind with an error result and exit code 2, and its result file is never half
written; the phase prefix and the fingerprint's field lists are the protocol's own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Literal, get_args

import pytest

from advisor import protocol
from advisor.config import EAGER_FP32
from advisor.protocol import CHILD_KINDS, read_result, write_result

CHILD_TIMEOUT_S = 300


def _child(tmp_path: Path, spec: Any, name: str = "c") -> subprocess.Popen[str]:
    """`python -m advisor.child.main SPEC RESULT` on ``spec``, started (not waited for)."""
    spec_path = tmp_path / f"{name}-spec.json"
    spec_path.write_text(json.dumps(spec))
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / f"{name}-inductor")}
    return subprocess.Popen(
        [sys.executable, "-m", protocol.CHILD_MODULE, str(spec_path),
         str(tmp_path / f"{name}-result.json")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _finished(tmp_path: Path, proc: subprocess.Popen[str], name: str = "c"
              ) -> tuple[int, str, dict[str, Any] | None]:
    """(exit code, stderr, result or None) of a child started by `_child`."""
    _, err = proc.communicate(timeout=CHILD_TIMEOUT_S)
    return proc.returncode, err, read_result(tmp_path / f"{name}-result.json")


def test_the_probe_kind_runs_for_real_on_the_cpu(tmp_path: Path) -> None:
    code, err, result = _finished(tmp_path, _child(tmp_path, {"kind": "probe", "device": "cpu"}))
    assert code == 0, err
    assert result is not None and set(protocol.FINGERPRINT_FIELDS) <= set(result)
    assert result["device_kind"] == "cpu" and result["fingerprint_hash"]
    assert not (tmp_path / "c-result.json.tmp").exists()


@pytest.mark.parametrize("spec", [
    {"kind": "nope", "device": "cpu"},
    {"probe": True, "device": "cpu"},  # the old flags: no kind
    {"kind": ["probe"], "device": "cpu"},
    ["probe"],
], ids=["unknown", "no kind", "not a name", "not an object"])
def test_a_spec_of_no_known_kind_is_refused_with_an_error_result(
        tmp_path: Path, spec: Any) -> None:
    code, err, result = _finished(tmp_path, _child(tmp_path, spec))
    assert code == 2
    known = ", ".join(CHILD_KINDS)
    assert f"a spec's kind is one of {known}" in err
    assert result is not None and result["status"] == "failed"
    assert result["error"] == result["error_tail"] == err.strip()
    assert ("names no kind" in err) == (not isinstance(spec, dict) or "kind" not in spec)


@pytest.mark.slow
def test_every_kind_reaches_its_own_child(tmp_path: Path) -> None:
    """Each kind's child, on a workload file that is not there: each fails in its own way, as
    data, and says where (its record's fields, the function in its traceback)."""
    missing = str(tmp_path / "no-such-workload.py")
    workload = {"workload_path": missing, "device": "cpu"}
    second = {**workload, "config": EAGER_FP32.to_dict(), "shapes": None, "trial_uuid": "t-1"}
    specs: dict[str, dict[str, Any]] = {
        "trial": {**second, "kind": "trial", "policy": None, "started_at": "2026-01-01T00:00:00",
                  "screen_above_ms": None, "prune": None},
        "warm": {**second, "kind": "warm"},
        "alone": {**second, "kind": "alone"},
        "confirm": {**workload, "kind": "confirm", "configs": [EAGER_FP32.to_dict()],
                    "shapes": [{"shape": "batch=8", "dims": {"batch": 8}, "weight": 1.0}]},
        "artifact": {**workload, "kind": "artifact", "action": "save",
                     "config": EAGER_FP32.to_dict()},
        "describe": {**workload, "kind": "describe"},
    }
    assert set(specs) | {"probe"} == set(CHILD_KINDS)  # the probe: its own test above
    procs = {kind: _child(tmp_path, spec, kind) for kind, spec in specs.items()}
    results = {}
    for kind, proc in procs.items():
        code, err, result = _finished(tmp_path, proc, kind)
        assert code == 0 and result is not None, (kind, err)
        results[kind] = result
    trial = results["trial"]
    assert trial["status"] == "failed" and trial["failure_reason"] == "workload_error"
    assert trial["trial_uuid"] == "t-1" and trial["config_key"] == EAGER_FP32.key
    assert "no such workload file" in trial["error_tail"]
    # every other kind fails with the one ChildFailure: its last line, type and traceback
    wheres = {"warm": "in warm_start", "alone": "in serving_alone",
              "confirm": "in _confirm_child", "artifact": "in _artifact_child"}
    for kind, where in wheres.items():
        failed = results[kind]
        assert set(failed) == {"status", "error", "error_type", "error_tail"}, kind
        assert failed["status"] == "failed" and failed["error_type"] == "WorkloadError", kind
        assert where in failed["error_tail"] and "no such workload file" in failed["error"], kind
    described = results["describe"]  # the user's one line, for the parent to say
    assert described["status"] == "failed" and described["error_type"] == "WorkloadError"
    assert described["error"] == f"{missing}: no such workload file; pass the path of a .py file"


def test_every_kind_has_a_handler_and_a_spec_type() -> None:
    import inspect

    from advisor.child.main import run

    # one branch per kind (mypy's assert_never makes the dispatch exhaustive and checks each
    # branch's spec and result types)
    source = inspect.getsource(run)
    assert all(f'spec["kind"] == "{kind}"' in source for kind in CHILD_KINDS)
    # each spec type's kind: its annotation (a forward reference: the module's annotations are
    # postponed), read as the Literal it names
    kinds = [get_args(eval(spec.__annotations__["kind"].__forward_arg__, {"Literal": Literal}))
             for spec in get_args(protocol.ChildSpec)]
    assert sorted(kind for (kind,) in kinds) == sorted(CHILD_KINDS)


def test_the_launchers_probe_builds_a_probe_spec(tmp_path: Path) -> None:
    from advisor.search.launcher import Launcher

    fp = Launcher(timeout_s=CHILD_TIMEOUT_S).probe("cpu")
    assert fp["device_kind"] == "cpu" and fp["fingerprint_hash"]


# -- the result file -----------------------------------------------------------------------------


def test_a_result_that_fails_midway_leaves_the_old_file_and_no_tmp(tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    write_result(path, {"status": "ok", "n": 1})
    circular: dict[str, Any] = {"status": "ok", "padding": "x" * 100_000}
    circular["self"] = circular  # json.dump writes the padding, then fails
    with pytest.raises(ValueError, match="Circular reference"):
        write_result(path, circular)
    assert read_result(path) == {"status": "ok", "n": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.json"]


def test_no_result_reads_as_none(tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    assert read_result(path) is None
    Path(f"{path}.tmp").write_text('{"status": "o')  # a child killed while writing
    assert read_result(path) is None


def test_a_reader_never_sees_half_a_result(tmp_path: Path) -> None:
    """A reader racing a writer that rewrites a large result over and over reads the whole of
    one each time, or none yet: never a torn document (json would fail to parse it)."""
    path = tmp_path / "result.json"
    done = threading.Event()
    versions = 20

    def writer() -> None:
        try:
            for n in range(versions):
                write_result(path, {"n": n, "samples_ms": [float(i) for i in range(20_000)]})
        finally:
            done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    seen: list[int] = []
    while not done.is_set():
        result = read_result(path)  # raises on a torn document
        if result is not None:
            assert len(result["samples_ms"]) == 20_000
            seen.append(result["n"])
    thread.join()
    assert seen == sorted(seen) and read_result(path) is not None
    assert read_result(path)["n"] == versions - 1  # type: ignore[index]


def test_values_json_lacks_are_written_as_text(tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    write_result(path, {"at": Path("/x"), "n": 1})
    assert read_result(path) == {"at": "/x", "n": 1}


# -- the phase lines and the fingerprint's fields ------------------------------------------------


def test_the_child_prints_phase_lines_the_launcher_reads(capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    from advisor.child.measure import phase
    from advisor.search import launcher

    phase("compiling")
    line = capsys.readouterr().out.rstrip("\n")
    assert line == protocol.PHASE_PREFIX + "compiling"
    assert launcher.PHASE_PREFIX is protocol.PHASE_PREFIX
    assert launcher.PHASE_GROUPS[protocol.LOCK_WAIT_PHASE] == "lock wait"


def test_the_fingerprint_fields_are_named_once() -> None:
    from advisor.db import rows
    from advisor.recommendation import staleness

    assert rows.DEVICE_FIELDS is protocol.DEVICE_FIELDS
    assert rows.ENV_FIELDS is protocol.ENV_FIELDS
    assert set(staleness.VERSION_FIELDS) == set(protocol.ENV_FIELDS)


def test_the_protocol_imports_nothing_heavy() -> None:
    code = ("import sys; import advisor.protocol; "
            "print(sorted(m for m in sys.modules if m.startswith('advisor')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert json.loads(out.replace("'", '"')) == ["advisor", "advisor.errors", "advisor.protocol",
                                                 "advisor.version"]
