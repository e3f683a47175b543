"""Trials on a CUDA GPU: CUDA events, Triton kernels, CUDA graphs, NVML. Skipped without CUDA.

Run on the GPU machine with ``pytest -m gpu tests/gpu``. Trials run in child processes as in
production; the in-process tests below touch the GPU from the test process on purpose.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from advisor import settings
from advisor.config import EAGER_FP32, CompileConfig
from advisor.fingerprint import add_hashes
from advisor.search import forkserver
from advisor.search.launcher import Child, Launcher

pytestmark = pytest.mark.gpu

WORKLOADS = Path(__file__).parents[1] / "workloads"
TINY_MLP = WORKLOADS / "tiny_mlp.py"
ADVISOR = [sys.executable, "-m", "advisor"]  # works where the console script is not installed
POLICY: dict[str, Any] = {
    "warmup_iters": 10,
    "warmup_max_s": 5.0,
    "min_samples": 50,
    "min_time_s": 0.1,
    "max_time_s": 10.0,
    "floor_samples": 10,
    "throughput_calls": 10,
}


def run_trial(path: Path, config: CompileConfig, device: str = "cuda") -> dict[str, Any]:
    record = Launcher(timeout_s=600).run(path, config, device, measure_warm=False, policy=POLICY)
    json.dumps(record)
    return record


@pytest.fixture(scope="module")
def eager() -> dict[str, Any]:
    return run_trial(TINY_MLP, EAGER_FP32)


@pytest.fixture(scope="module")
def default() -> dict[str, Any]:
    return run_trial(TINY_MLP, CompileConfig())


@pytest.fixture(scope="module")
def reduce_overhead() -> dict[str, Any]:
    return run_trial(TINY_MLP, CompileConfig(mode="reduce-overhead"))


def assert_gpu_record(record: dict[str, Any]) -> None:
    assert record["status"] == "ok", record["error_tail"]
    assert record["passed"] is True
    assert record["method"] == "cuda_events"
    assert record["warmup_iters"] == POLICY["warmup_iters"]
    [measured] = record["shapes"]
    assert measured["n_samples"] >= POLICY["min_samples"]
    assert 0 < measured["min_ms"] <= measured["median_ms"] <= measured["max_ms"]
    assert record["peak_mem_bytes"] > 0  # torch.cuda.max_memory_allocated
    assert record["kernels_per_call"] >= 1
    assert record["launches_per_call"] is not None and record["launches_per_call"] >= 1
    assert record["eager_launches_per_call"] >= 1
    telemetry = record["telemetry"]
    assert telemetry["sm_clock_mhz"] > 0
    assert telemetry["power_draw_w"] > 0
    assert isinstance(telemetry["throttle_reasons"], list)
    assert record["fingerprint"]["device_kind"] == "cuda"


def test_eager_on_cuda_is_timed_with_cuda_events(eager: dict[str, Any]) -> None:
    assert_gpu_record(eager)
    # Eager launches one kernel per op: at least the two GEMMs, mul, add and gelu.
    assert eager["launches_per_call"] >= 5
    assert eager["launches_per_call"] == eager["eager_launches_per_call"]


def test_default_on_cuda_runs_generated_triton_kernels(default: dict[str, Any]) -> None:
    assert_gpu_record(default)
    assert any(name.startswith("triton_") for name in default["kernel_names"])
    assert default["generated_kernel_count"] >= 1
    # mul, add and gelu fused into one kernel: fewer launches than eager.
    assert default["launches_per_call"] < default["eager_launches_per_call"]


def test_reduce_overhead_replays_one_cuda_graph(reduce_overhead: dict[str, Any]) -> None:
    assert_gpu_record(reduce_overhead)
    # One cudaGraphLaunch (and at most a copy of the input into the graph's static buffer).
    assert reduce_overhead["launches_per_call"] <= 3
    assert reduce_overhead["launches_per_call"] < reduce_overhead["eager_launches_per_call"]


def test_cudagraph_mark_step_precedes_every_timed_call_on_cuda() -> None:
    import torch
    from torch._inductor.cudagraph_trees import MarkStepBox

    from advisor.child.measure import SamplingPolicy, Timer, sample, warm_up

    @torch.compile(mode="reduce-overhead")
    def fused(x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x * 2.0 + 1.0)

    x = torch.randn(1024, 1024, device="cuda")
    timer = Timer("cuda", cudagraphs=True)
    assert timer.method == "cuda_events"
    policy = SamplingPolicy(warmup_iters=5, min_samples=20, min_time_s=0)
    with torch.inference_mode():
        warm_up(timer, lambda: fused(x), policy)
        before = MarkStepBox.mark_step_counter
        samples = sample(timer, lambda: fused(x), policy)
        out = timer.call(lambda: fused(x)).clone()  # outputs of a replay: clone to keep
        expected = torch.sigmoid(x * 2.0 + 1.0)
    assert MarkStepBox.mark_step_counter == before - len(samples) - 1
    assert len(samples) == 20 and all(s > 0 for s in samples)
    torch.testing.assert_close(out, expected)


def test_back_to_back_times_each_queued_call_on_cuda() -> None:
    import torch

    from advisor.child.measure import Timer, back_to_back_ms, throughput_per_s

    timer = Timer("cuda", cudagraphs=False)
    spin = 2_000_000  # GPU clock cycles: about a millisecond, far above a launch
    timer.time_ms(lambda: torch.cuda._sleep(spin))
    alone = timer.time_ms(lambda: torch.cuda._sleep(spin))
    queued = back_to_back_ms(timer, lambda: torch.cuda._sleep(spin), 20)
    assert len(queued) == 20
    # Where the GPU is the slower side, each queued call's time is its GPU time.
    assert sorted(queued)[10] == pytest.approx(alone, rel=0.1)
    assert throughput_per_s(timer, lambda: torch.cuda._sleep(spin), 20) == pytest.approx(
        1000 / alone, rel=0.1)
    # Where the host is slower than the GPU, the time between calls is the host's.
    host_bound = back_to_back_ms(timer, lambda: (time.sleep(0.003), torch.cuda._sleep(1000)), 10)
    assert min(host_bound[1:]) >= 2.9


def test_nvml_fingerprint_through_a_probe() -> None:
    fp = Launcher(timeout_s=300).probe("cuda")
    assert fp["device_kind"] == "cuda"
    assert fp["device_uuid"].startswith("GPU-")
    assert re.fullmatch(r"\d+\.\d+(\.\d+)*", fp["driver_version"])
    assert re.fullmatch(r"\d+\.\d+", fp["cuda_driver_version"])
    assert re.fullmatch(r"\d+\.\d+", fp["compute_capability"])
    assert fp["device_memory_bytes"] > 0 and fp["sm_count"] > 0
    assert fp["power_limit_w"] > 0 and fp["sm_clock_max_mhz"] > 0
    assert fp["cuda_runtime_version"] and fp["torch_version"]
    assert add_hashes(dict(fp)) == fp


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def test_cuda_children_fork_from_a_server_that_never_opened_the_gpu(tmp_path: Path) -> None:
    # Each forked child makes its own CUDA context and NVML handle; the server, which forks
    # every child of a sweep, holds no descriptor of the driver's (/dev/nvidia*), before or after
    env = {**settings.child_env(), "PYTHONUNBUFFERED": "1"}
    fingerprints = []
    for n in range(2):
        workdir = tmp_path / str(n)
        workdir.mkdir()
        child = Child({"kind": "probe", "device": "cuda"}, workdir, env, None)
        assert isinstance(child.proc, forkserver.ForkedProcess)
        server = forkserver._server
        assert server is not None
        assert child.wait(300) == 0, child.stderr_tail()
        fingerprints.append(child.result() or {})
        # the server this process forks from: its own, or the one a shared server
        # ($ADVISOR_FORK_SERVER_SOCKET) forked for it, and then that listening server too
        pids = [server.pid] if server.proc else [server.pid, _parent(server.pid)]
        for pid in pids:
            fds = Path(f"/proc/{pid}/fd")
            opened = [os.readlink(fd) for fd in fds.iterdir() if fd.is_symlink()]
            assert not [path for path in opened if path.startswith("/dev/nvidia")], opened
    first, second = fingerprints
    assert first["device_kind"] == "cuda" and first["device_uuid"].startswith("GPU-")
    assert second["device_uuid"] == first["device_uuid"]
    # and a compiled trial forked after them runs Triton kernels on the GPU
    assert_gpu_record(run_trial(TINY_MLP, CompileConfig()))


def test_nvml_handle_is_matched_by_uuid() -> None:
    import pynvml
    import torch

    from advisor.fingerprint import collect, nvml_handle

    for index in range(torch.cuda.device_count()):
        fp = collect(f"cuda:{index}")
        handle = nvml_handle(index)
        assert handle is not None
        uuid = pynvml.nvmlDeviceGetUUID(handle)
        uuid = uuid.decode() if isinstance(uuid, bytes) else uuid
        assert uuid == fp["device_uuid"]
        name = pynvml.nvmlDeviceGetName(handle)
        assert (name.decode() if isinstance(name, bytes) else name) in fp["device_name"]


def test_telemetry_samples_while_the_gpu_works() -> None:
    import torch

    from advisor.fingerprint import Telemetry

    a = torch.randn(4096, 4096, device="cuda")
    with Telemetry("cuda", interval_s=0.02) as telemetry:
        deadline = time.perf_counter() + 0.5
        while time.perf_counter() < deadline:
            a = (a @ a).clamp_(-1, 1)
        torch.cuda.synchronize()
    summary = telemetry.summary()
    assert summary["n_samples"] >= 3
    assert 0 < summary["sm_clock_min_mhz"] <= summary["sm_clock_mhz"]
    assert summary["power_draw_w"] > 0 and summary["temperature_c"] > 0


def test_cli_defaults_to_cuda_when_a_gpu_is_present() -> None:
    done = subprocess.run(
        [*ADVISOR, "trial", str(TINY_MLP), "--mode", "eager", "--json", "--no-warm"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["device"] == "cuda"
    assert record["method"] == "cuda_events"


def test_out_of_memory_on_the_gpu_is_oom() -> None:
    record = run_trial(WORKLOADS / "oom.py", EAGER_FP32)
    assert record["failure_reason"] == "oom", record["error_tail"]


def test_device_side_assert_is_a_cuda_error_and_the_parent_lives() -> None:
    record = run_trial(WORKLOADS / "bad_index.py", EAGER_FP32)
    assert record["status"] == "failed"
    assert record["failure_reason"] == "cuda_error", record["error_tail"]
    # The next trial on the same GPU runs normally: the failure stayed in its process.
    assert run_trial(TINY_MLP, EAGER_FP32)["status"] == "ok"
