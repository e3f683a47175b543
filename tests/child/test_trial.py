"""Real trials on the CPU: Inductor's C++ backend, fresh child processes, no mocks.

Each trial is run once per module (module-scoped fixtures) and several tests read its record.
Sampling is kept short (`FAST`) and the warm start is measured in one trial only: a cold
Inductor compile of even a tiny model costs ~15 s on a 2-core machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from advisor.child.measure import SamplingPolicy
from advisor.config import EAGER_FP32, CompileConfig
from advisor.devices import cuda_device_count
from advisor.fingerprint import add_hashes
from advisor.records import BucketFigures, empty_record, undeclared_keys
from advisor.search.launcher import Launcher
from advisor.traffic import Traffic
from advisor.workload import DEFAULT_TOLERANCES

WORKLOADS = Path(__file__).parents[1] / "workloads"
TINY_MLP = WORKLOADS / "tiny_mlp.py"
GRAPH_BREAK = WORKLOADS / "graph_break.py"
TINY_SEQ = WORKLOADS / "tiny_seq.py"
ADVISOR = Path(sys.executable).with_name("advisor")  # the console script of this environment

# Short sampling: enough samples for the statistics to mean something, in well under a second.
FAST: dict[str, Any] = {
    "warmup_iters": 2,
    "warmup_max_s": 1.0,
    "min_samples": 5,
    "min_time_s": 0.0,
    "max_time_s": 2.0,
    "floor_samples": 3,
    "throughput_calls": 3,
}
TRIAL_TIMEOUT_S = 300.0  # a generous bound: a trial that hangs in a test should not hang CI
HANG_TIMEOUT_S = 15.0  # time enough to import torch and reach forward() on a loaded machine


def run_trial(
    path: Path,
    config: CompileConfig,
    *,
    measure_warm: bool = False,
    phases: list[str] | None = None,
    cache_root: Path | None = None,
) -> dict[str, Any]:
    record = Launcher(timeout_s=TRIAL_TIMEOUT_S, cache_root=cache_root).run(
        path,
        config,
        "cpu",
        measure_warm=measure_warm,
        policy=FAST,
        on_phase=None if phases is None else phases.append,
    )
    json.dumps(record)  # only plain data crosses: this must not raise
    return record


def cli(*args: str, timeout: float = TRIAL_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ADVISOR), "trial", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# --- complete records -------------------------------------------------------------------------


def assert_complete(
    record: dict[str, Any], config: CompileConfig, shape: str, policy: dict[str, Any] = FAST
) -> None:
    """Every key of the record is there and every figure a CPU trial can obtain is filled in."""
    assert set(empty_record()) <= set(record)
    assert record["status"] == "ok", record["error_tail"]
    assert record["failure_reason"] is None and record["error_tail"] is None
    # identity
    uuid.UUID(record["trial_uuid"])
    started = datetime.fromisoformat(record["started_at"])
    assert datetime.fromisoformat(record["finished_at"]) >= started
    assert record["config"] == config.to_dict()
    assert record["config_key"] == config.key
    assert record["device"] == "cpu"
    assert record["workload"]["name"] == "tiny-mlp"
    assert record["workload"]["path"] == str(TINY_MLP.resolve())
    assert len(record["workload"]["source_sha256"]) == 64
    assert record["workload"]["info"] == {"weights": "seeded random"}
    # fingerprint: CPU facts and the three hashes, which recompute from the fields
    fp = record["fingerprint"]
    assert fp["device_kind"] == "cpu" and fp["cpu_model"] and fp["cpu_cores"] >= 1
    assert fp["torch_version"] and fp["python_version"] and fp["advisor_version"]
    for name in ("device_hash", "env_hash", "fingerprint_hash"):
        assert len(fp[name]) == 16 and int(fp[name], 16) >= 0
    assert add_hashes(dict(fp)) == fp
    # measurement
    assert record["method"] == "perf_counter"
    assert record["warmup_iters"] == policy["warmup_iters"]
    assert record["telemetry"] == {}
    [measured] = record["shapes"]
    assert measured["shape"] == shape and measured["weight"] == 1.0
    assert measured["n_samples"] >= policy["min_samples"]
    assert 0 < measured["min_ms"] <= measured["median_ms"] <= measured["p90_ms"]
    assert measured["p90_ms"] <= measured["p99_ms"] <= measured["max_ms"]
    assert measured["throughput_per_s"] > 0
    assert record["median_ms"] == pytest.approx(measured["median_ms"])
    assert record["p99_ms"] == pytest.approx(measured["p99_ms"])
    assert record["cold_compile_s"] > 0
    assert record["eager_first_call_s"] > 0
    assert record["peak_mem_bytes"] > 0
    # compiler facts: kernels executed in one call, for the candidate and for eager
    assert record["kernel_names"] and all(isinstance(k, str) for k in record["kernel_names"])
    assert record["kernels_per_call"] >= len(record["kernel_names"])
    assert record["launches_per_call"] is None  # no launches on a CPU
    assert "aten::linear" in record["eager_kernel_names"]
    assert record["eager_kernels_per_call"] >= len(record["eager_kernel_names"])
    assert record["recompiles"] == 0
    # accuracy against the fp32 eager reference, and the workload's quality check
    assert (record["atol"], record["rtol"]) == DEFAULT_TOLERANCES["fp32"]
    assert record["correct"] is True
    assert 0 <= record["max_abs_err"] <= record["atol"]
    assert record["max_rel_err"] >= 0
    assert record["quality_name"] == "top1_agreement"
    assert record["quality_value"] == 1.0
    assert record["quality_threshold"] == 0.9
    assert record["quality_passed"] is True
    assert record["passed"] is True


@pytest.fixture(scope="module")
def eager() -> dict[str, Any]:
    return run_trial(TINY_MLP, EAGER_FP32)


@pytest.fixture(scope="module")
def default(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], list[str], Path]:
    # The one trial that also measures the warm start (a second process on the same cache).
    phases: list[str] = []
    cache_root = tmp_path_factory.mktemp("caches")
    record = run_trial(
        TINY_MLP, CompileConfig(), measure_warm=True, phases=phases, cache_root=cache_root
    )
    return record, phases, cache_root


@pytest.mark.slow
def test_eager_record_is_complete(eager: dict[str, Any]) -> None:
    assert_complete(eager, EAGER_FP32, "batch=16")
    assert (eager["graph_count"], eager["graph_break_count"]) == (0, 0)
    assert eager["generated_kernel_count"] == 0
    assert eager["graph_breaks"] == []
    assert eager["max_abs_err"] == 0.0  # eager fp32 is its own reference
    assert eager["warm_compile_s"] is None  # nothing compiled, nothing to warm


@pytest.mark.slow
def test_default_record_is_complete(default: tuple[dict[str, Any], list[str], Path]) -> None:
    record, _, _ = default
    assert_complete(record, CompileConfig(), "batch=16")
    assert record["graph_count"] == 1
    assert record["graph_break_count"] == 0 and record["graph_breaks"] == []
    assert record["generated_kernel_count"] >= 1
    # Inductor fused mul, add and gelu into one generated C++ kernel, executed in every call.
    assert any("cpp_fused" in name for name in record["kernel_names"])


@pytest.mark.slow
def test_default_records_warm_start_apart_from_cold(
    default: tuple[dict[str, Any], list[str], Path],
) -> None:
    record, _, _ = default
    assert record["warm_compile_s"] is not None and record["warm_compile_s"] > 0
    # The second process reuses the first one's Inductor cache: it must not pay it all again.
    assert record["warm_compile_s"] < record["cold_compile_s"]


@pytest.mark.slow
def test_trial_compiled_into_its_own_cache_dir(
    default: tuple[dict[str, Any], list[str], Path],
) -> None:
    record, _, cache_root = default
    # The launcher made <cache_root>/<trial uuid>/inductor-cache, empty, for this trial alone;
    # the child's Inductor wrote its compiled artifacts there and nowhere shared.
    [trial_dir] = cache_root.iterdir()
    assert trial_dir.name == record["trial_uuid"]
    cache = trial_dir / "inductor-cache"
    assert any(path.suffix in (".so", ".py") for path in cache.rglob("*"))


# A second warm start on the kept cache, reporting Inductor's cache counters as well.
WARM_PROBE = """\
import json, sys
import torch._dynamo.utils
from advisor.child.trial import warm_start
result = warm_start(json.loads(sys.argv[1]))
result["inductor"] = dict(torch._dynamo.utils.counters["inductor"])
print(json.dumps(result))
"""


@pytest.mark.slow
def test_warm_start_hits_the_cold_trials_cache(
    default: tuple[dict[str, Any], list[str], Path],
) -> None:
    record, _, cache_root = default
    cache = cache_root / record["trial_uuid"] / "inductor-cache"
    spec = {"workload_path": str(TINY_MLP), "config": record["config"], "device": "cpu"}
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(cache)}
    env["TRITON_CACHE_DIR"] = str(cache / "triton")
    done = subprocess.run(
        [sys.executable, "-c", WARM_PROBE, json.dumps(spec)],
        capture_output=True,
        text=True,
        env=env,
        timeout=TRIAL_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    # Same graph, same Inductor settings as the cold trial: a hit, nothing compiled again.
    assert result["inductor"].get("fxgraph_cache_hit", 0) >= 1
    assert result["inductor"].get("fxgraph_cache_miss", 0) == 0
    assert 0 < result["warm_compile_s"] < record["cold_compile_s"]


@pytest.mark.slow
def test_child_reports_its_phases(default: tuple[dict[str, Any], list[str], Path]) -> None:
    record, phases, _ = default
    assert phases == [
        "loading",
        "preparing",
        "reference",
        "compiling",
        "measuring",
        "profiling",
        "warm-start",
    ]
    # the parent timed them: where the trial's time went (the warm start is its own figure)
    assert list(record["phases_s"]) == ["start", "import", "build", "compile", "measure"]
    assert all(seconds >= 0 for seconds in record["phases_s"].values())


# --- graph breaks -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def graph_break() -> dict[str, Any]:
    return run_trial(GRAPH_BREAK, CompileConfig())


@pytest.mark.slow
def test_graph_break_without_fullgraph_succeeds_and_is_counted(
    graph_break: dict[str, Any],
) -> None:
    record = graph_break
    assert record["status"] == "ok", record["error_tail"]
    assert record["passed"] is True
    assert record["graph_break_count"] >= 1
    assert record["graph_count"] >= 2  # one graph before the break, one after
    assert record["graph_breaks"]
    assert all(b["count"] >= 1 for b in record["graph_breaks"])
    assert any("graph_break()" in b["reason"] for b in record["graph_breaks"])
    assert record["median_ms"] > 0


@pytest.mark.slow
def test_fullgraph_with_a_graph_break_fails_with_the_reason() -> None:
    done = cli(str(GRAPH_BREAK), "--device", "cpu", "--fullgraph", "--json", "--no-warm")
    assert done.returncode == 1, done.stderr  # a failed trial, not a user mistake
    record = json.loads(done.stdout)
    assert record["status"] == "failed"
    assert record["failure_reason"] == "graph_break"
    assert record["config"]["fullgraph"] is True
    tail = record["error_tail"]
    assert "torch._dynamo.graph_break()" in tail  # the break's reason
    assert "graph_break.py" in tail  # and where in the user's code it is
    assert record["median_ms"] is None and record["shapes"] == []
    # What was known before the failure is kept.
    assert record["workload"]["name"] == "graph-break"
    assert record["fingerprint"]["fingerprint_hash"]


# --- failures: each classified, the parent alive ----------------------------------------------


def test_abort_is_a_crash() -> None:
    record = run_trial(WORKLOADS / "aborts.py", EAGER_FP32)
    assert record["status"] == "failed"
    assert record["failure_reason"] == "crash"
    assert "SIGABRT" in record["error_tail"]
    # The launcher fills in what it knows about the trial that died.
    assert record["config_key"] == EAGER_FP32.key and record["device"] == "cpu"
    uuid.UUID(record["trial_uuid"])
    assert record["started_at"] and record["finished_at"]
    assert set(empty_record()) <= set(record)


def _running(pid: int) -> bool:
    """True while `pid` exists and is not a zombie (an orphan's zombie may linger unreaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


def _gone(pid: int, within_s: float = 10.0) -> bool:
    deadline = time.monotonic() + within_s
    while _running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)  # a SIGKILLed process takes a moment to be torn down
    return True


@pytest.mark.slow
def test_hang_times_out_and_its_process_group_is_killed(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pidfile = tmp_path / "pids"
    monkeypatch.setenv("ADVISOR_TEST_PIDFILE", str(pidfile))  # the trial child inherits it
    started = time.monotonic()
    args = ["--device", "cpu", "--mode", "eager", "--json", "--timeout", str(HANG_TIMEOUT_S)]
    done = cli(str(WORKLOADS / "hangs.py"), *args)
    elapsed = time.monotonic() - started
    # The parent (the CLI) lives on: it reports the failed trial and exits normally.
    assert done.returncode == 1, done.stderr
    record = json.loads(done.stdout)
    assert record["status"] == "failed"
    assert record["failure_reason"] == "timeout"
    assert "time limit" in record["error_tail"]
    # where it stalled: building, in the fp32 eager reference's first call, which never returns
    assert list(record["phases_s"])[-1] == "build"
    assert HANG_TIMEOUT_S <= elapsed < HANG_TIMEOUT_S + 30
    # It hung where we meant it to, in forward(), having started a helper process ...
    assert pidfile.exists(), "the child never reached forward(); raise HANG_TIMEOUT_S"
    child_pid, helper_pid = map(int, pidfile.read_text().split())
    # ... and the whole process group died: the trial child and the helper it started.
    assert _gone(child_pid)
    assert _gone(helper_pid)


def test_build_error() -> None:
    record = run_trial(WORKLOADS / "build_raises.py", EAGER_FP32)
    assert record["status"] == "failed"
    assert record["failure_reason"] == "build_error"
    assert record["error_tail"].startswith("[build]")
    message = "FileNotFoundError: weights.bin: the checkpoint is not downloaded"
    assert message in record["error_tail"]
    assert record["workload"]["name"] == "build-raises"


def test_out_of_memory_is_oom() -> None:
    record = run_trial(WORKLOADS / "oom.py", EAGER_FP32)
    assert record["status"] == "failed"
    assert record["failure_reason"] == "oom"
    assert "can't allocate memory" in record["error_tail"]


def test_component_raising_is_a_runtime_error() -> None:
    record = run_trial(WORKLOADS / "bad_index.py", EAGER_FP32)
    assert record["status"] == "failed"
    assert record["failure_reason"] == "runtime_error"
    assert record["error_tail"].startswith("[reference]")
    assert "IndexError: index 1004 is out of bounds" in record["error_tail"]


def test_inputs_of_the_wrong_type_is_a_workload_error() -> None:
    record = run_trial(WORKLOADS / "bad_inputs.py", EAGER_FP32)
    assert record["status"] == "failed"
    assert record["failure_reason"] == "workload_error"
    assert "inputs() returned Tensor" in record["error_tail"]


@pytest.mark.slow
def test_cli_reports_a_workload_error_in_one_line_naming_the_file() -> None:
    path = WORKLOADS / "bad_inputs.py"
    done = cli(str(path), "--device", "cpu", "--mode", "eager", "--json")
    assert done.returncode == 2
    assert done.stdout == ""
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"advisor: error: {path}: ")
    assert "inputs() returned Tensor; return a tuple or a dict" in line


# --- the CLI ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_cli_trial_prints_a_complete_record() -> None:
    # Eager only: the CLI passes the config through untouched, and the compiled path is proven
    # through the launcher above (a second cold compile would cost another ~15 s).
    args = ["--device", "cpu", "--mode", "eager", "--shape", "batch=32", "--json", "--no-warm"]
    done = cli(str(TINY_MLP), *args)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    # The CLI samples with the CPU defaults: 5 warm-ups and at least 30 samples.
    assert_complete(record, EAGER_FP32, "batch=32", SamplingPolicy.for_device("cpu").to_dict())
    assert record["warm_compile_s"] is None  # --no-warm


@pytest.mark.slow
def test_cli_human_output() -> None:
    done = cli(str(WORKLOADS / "build_raises.py"), "--device", "cpu", "--mode", "eager")
    assert done.returncode == 1  # a failed trial is not a user mistake (that would be 2)
    assert "failed: build_error" in done.stdout
    assert "the checkpoint is not downloaded" in done.stdout


NO_GPU = cuda_device_count() == 0

# A workload that imports torch only when it runs: the CLI checks flags against it in a parent
# that never imports torch, so these tests cost a process start, not a torch import.
LAZY = """\
from advisor import Workload


def build(device, dtype):
    import torch

    return torch.nn.Identity()


def inputs(shape, device):
    import torch

    return (torch.ones(shape["batch"], device=device),)


workload = Workload(
    name="lazy", build=build, inputs=inputs, traffic=[({"batch": 16}, 1)], dtypes=("fp32", "bf16")
)
"""


@pytest.fixture(scope="module")
def lazy_workload(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("lazy") / "lazy.py"
    path.write_text(LAZY)
    return path


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--mode", "fast"], "unknown mode 'fast'"),
        (["--dtype", "fp64"], "unknown dtype 'fp64'"),
        (["--dtype", "fp16"], "not allowed"),  # the workload allows fp32 and bf16 only
        (["--dynamic", "sometimes"], "dynamic"),
        (["--shape", "batch=x"], "bad shape"),
        (["--shape", "batch=0"], "bad shape"),
        (["--shape", "seq=16"], "--shape batch=16"),  # dims that the workload does not have
        (["--device", "tpu"], "bad device 'tpu'"),
        pytest.param(
            ["--device", "cuda"],
            "no CUDA GPU",
            marks=pytest.mark.skipif(not NO_GPU, reason="a GPU is visible here"),
        ),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(
    lazy_workload: Path, args: list[str], words: str
) -> None:
    done = cli(str(lazy_workload), *args, "--json", timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("advisor: error: ")
    assert words in line


@pytest.mark.parametrize(
    ("name", "text", "words"),
    [
        ("missing.py", None, "no such workload file"),
        ("lazy.txt", LAZY, ".py"),
        ("broken.py", "workload = (\n", "SyntaxError"),
        ("empty.py", "", "defines no `workload`"),
    ],
)
def test_cli_bad_workload_file(tmp_path: Path, name: str, text: str | None, words: str) -> None:
    path = tmp_path / name
    if text is not None:
        path.write_text(text)
    done = cli(str(path), "--json", timeout=60)
    assert done.returncode == 2
    assert done.stdout == ""
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"advisor: error: {path}: ")
    assert words in line


# --- the record's types cover what a trial writes -----------------------------------------------


@pytest.fixture(scope="module")
def replay() -> dict[str, Any]:
    # eager fp32 over declared traffic: the replay path's record, with nothing to compile
    traffic = Traffic.from_pairs([({"batch": 2, "seq": 5}, 0.7), ({"batch": 2, "seq": 9}, 0.3)])
    record = Launcher(timeout_s=TRIAL_TIMEOUT_S).run(
        TINY_SEQ, EAGER_FP32, "cpu", traffic.to_spec(), measure_warm=False, policy=FAST
    )
    assert record["status"] == "ok", record["error_tail"]
    return record


@pytest.mark.slow
def test_every_key_of_a_trial_record_is_declared_by_its_types(
    eager: dict[str, Any],
    default: tuple[dict[str, Any], list[str], Path],
    graph_break: dict[str, Any],
) -> None:
    for record in (eager, default[0], graph_break):
        assert undeclared_keys(record) == [], record["config_key"]


@pytest.mark.slow
def test_every_key_of_replay_and_screened_records_is_declared_by_their_types(
    replay: dict[str, Any],
) -> None:
    assert "stream" in replay["replay"] and replay["replay"]["flags"] is not None
    assert undeclared_keys(replay, parts={"shapes": BucketFigures}) == []
    assert undeclared_keys(run_trial_screened()) == []


def run_trial_screened() -> dict[str, Any]:
    """An eager trial cut short by the sweep's screen (``screened_out``)."""
    record = Launcher(timeout_s=TRIAL_TIMEOUT_S).run(
        TINY_MLP, EAGER_FP32, "cpu", measure_warm=False, policy=FAST, screen_above_ms=0.0
    )
    assert record["status"] == "ok" and record["screened_out"], record["error_tail"]
    return record
