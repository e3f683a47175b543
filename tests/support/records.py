"""The tests' one factory of hand-built records. `trial` and `eager_fp32`: `advisor.records.
empty_record` with the fields a stored trial of one config carries, for the tests that decide,
rank or show records whose right answer is known (tests/recommendation, tests/presentation,
...). `make_record`, `make_fingerprint`, `make_workload`, `as_stored`: every field a store
keeps, realistic, for the store's contract tests and the databases other tests fill."""

from __future__ import annotations

import itertools
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from advisor.config import CompileConfig
from advisor.records import SHAPE_KEYS, empty_record

_uuids = itertools.count()


def trial(
    mode: str,
    dtype: str = "fp32",
    median_ms: float | None = 1.0,
    *,
    passed: bool | None = True,
    status: str = "ok",
    ci: tuple[float, float] | None = None,
    cold_compile_s: float | None = 10.0,
    **fields: Any,
) -> dict[str, Any]:
    """A stored-looking trial record of one config: ``status`` ok (its figures: the median,
    p90 = 1.1 x the median, ``ci`` as its interval, a cold compile unless eager) or another
    status (no figures, a compile error); ``fields`` set any other key."""
    config = CompileConfig(mode=mode, dtype=dtype)
    record: dict[str, Any] = dict(empty_record())
    record.update(
        trial_uuid=f"trial-{next(_uuids)}", status=status, config=config.to_dict(),
        config_key=config.key, median_ms=median_ms, p90_ms=median_ms and median_ms * 1.1,
        passed=passed, median_ci_ms=list(ci) if ci else None,
        cold_compile_s=None if mode == "eager" else cold_compile_s,
    )
    if status != "ok":
        record.update(median_ms=None, p90_ms=None, passed=None, failure_reason="compile_error")
    record.update(fields)
    return record


def eager_fp32(median_ms: float = 10.0, **fields: Any) -> dict[str, Any]:
    """The eager fp32 baseline's record (see `trial`)."""
    return trial("eager", "fp32", median_ms, **fields)


# -- records as a store keeps them ---------------------------------------------------------

CONFIGS = (
    CompileConfig(mode="eager", dtype="fp32"),
    CompileConfig(mode="default", dtype="fp32"),
    CompileConfig(mode="reduce-overhead", dtype="bf16", fullgraph=True),
    CompileConfig(mode="max-autotune-no-cudagraphs", dtype="fp16", dynamic="false"),
    CompileConfig(mode="default", dtype="tf32", options={"freezing": True, "shape_padding": False}),
)
T0 = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)


def make_fingerprint(i: int = 0, **overrides: Any) -> dict[str, Any]:
    """A fingerprint as advisor.fingerprint makes it: every key, GPU i of a small fleet."""
    fp = {
        "device_hash": f"{i:016x}",
        "env_hash": f"e{i:015x}",
        "fingerprint_hash": f"f{i:015x}",
        "device_kind": "cuda",
        "device_name": ("NVIDIA H200", "NVIDIA A100-SXM4-80GB", "NVIDIA L4")[i % 3],
        "device_uuid": f"GPU-{uuid.UUID(int=i + 1)}",
        "compute_capability": ("9.0", "8.0", "8.9")[i % 3],
        "device_memory_bytes": 150_754_820_096,
        "sm_count": 132,
        "cpu_model": "Intel(R) Xeon(R) Platinum 8480C",
        "cpu_cores": 224,
        "host_memory_bytes": 2_163_473_076_224,
        "driver_version": "570.86.15",
        "cuda_driver_version": "12.8",
        "power_limit_w": 700.0,
        "sm_clock_max_mhz": 1980,
        "torch_version": "2.11.0+cu128",
        "triton_version": "3.6.0",
        "cuda_runtime_version": "12.8",
        "cudnn_version": "91002",
        "python_version": "3.11.7",
        "os": "Linux-6.8.0-x86_64-with-glibc2.36",
        "advisor_version": "0.1.0",
        "hostname": f"gpu-node-{i}",
    }
    fp.update(overrides)
    return fp


def make_workload(name: str = "reranker", **overrides: Any) -> dict[str, Any]:
    workload = {
        "name": name,
        "path": f"/home/user/workloads/{name}.py",
        "source_sha256": uuid.uuid5(uuid.NAMESPACE_URL, name).hex * 2,
        "info": {"model": "cross-encoder/ms-marco-MiniLM-L-6-v2", "layers": 6},
    }
    workload.update(overrides)
    return workload


def _shape(i: int, dims: dict[str, int], weight: float, median: float) -> dict[str, Any]:
    shape = {
        "shape": ",".join(f"{k}={v}" for k, v in dims.items()),
        "dims": dims,
        "weight": weight,
        "median_ms": median,
        "mean_ms": median * 1.0123,
        "min_ms": median * 0.97,
        "max_ms": median * 1.6,
        "p90_ms": median * 1.05,
        "p99_ms": median * 1.21,
        "stdev_ms": 0.0123456789,
        "iqr_ms": 0.0234567891,
        "n_samples": 200 + i,
        "noisy": i % 2 == 1,
        "throughput_per_s": 1000.0 / median,
        "warmup_iters": 25,
    }
    assert set(shape) == set(SHAPE_KEYS)
    return shape


def make_record(
    i: int = 0,
    *,
    workload: dict[str, Any] | None = None,
    fingerprint: dict[str, Any] | None = None,
    config: CompileConfig | None = None,
    status: str = "ok",
    median_ms: float | None = None,
    passed: bool = True,
    **overrides: Any,
) -> dict[str, Any]:
    """A trial record with every key of records.empty_record() filled as a real trial fills it.

    A failed record has its failure reason, error tail and no figures, as the launcher makes it.
    """
    config = config or CONFIGS[i % len(CONFIGS)]
    started = T0 + timedelta(minutes=i, microseconds=i)
    record = empty_record()
    record.update(
        trial_uuid=str(uuid.UUID(int=(i + 1) * 7919 + 12345, version=4)),
        status=status,
        started_at=started.isoformat(),
        finished_at=(started + timedelta(seconds=41.5)).isoformat(),
        workload=workload or make_workload(),
        config=config.to_dict(),
        config_key=config.key,
        device="cuda:0",
        fingerprint=fingerprint or make_fingerprint(),
        telemetry={},
    )
    if status == "failed":
        record.update(
            failure_reason="compile_error",
            error_tail="Traceback (most recent call last):\n  ...\ninductor.exc.Error: boom\n",
        )
    else:
        record.update(_measurement(i, median_ms or 1.0 + (i % 7) * 0.37, passed))
    record.update(overrides)
    assert set(empty_record()) <= set(record)
    return record


def _measurement(i: int, median: float, passed: bool) -> dict[str, Any]:
    shapes = [
        _shape(i, {"batch": 50, "seq": 128}, 0.7, median * 0.9),
        _shape(i + 1, {"batch": 100, "seq": 256}, 0.3, median * 1.2333333333333333),
    ]
    return {
        "method": "cuda_events",
        "warmup_iters": 25,
        "shapes": shapes,
        "median_ms": median,
        "p90_ms": median * 1.05,
        "p99_ms": median * 1.2,
        "mean_ms": median * 1.01,
        "noisy": False,
        "cold_compile_s": 17.25 + i,
        "warm_compile_s": 0.41,
        "eager_first_call_s": 0.25,
        "peak_mem_bytes": 34_359_738_368 + i,
        "telemetry": {
            "sm_clock_mhz": 1980,
            "sm_clock_max_mhz": 1980,
            "power_draw_w": 411.25,
            "temperature_c": 53,
            "throttle_reasons": ["sw_power_cap"] if i % 2 else [],
        },
        "graph_count": 1,
        "graph_break_count": 1,
        "recompiles": 0,
        "generated_kernel_count": 41,
        "graph_breaks": [{"reason": "builtin print", "count": 1}],
        "kernels_per_call": 68,
        "launches_per_call": 2,
        "kernel_names": ["triton_poi_fused_add_0", "triton_red_fused_layer_norm_1"],
        "eager_kernels_per_call": 119,
        "eager_launches_per_call": 119,
        "eager_kernel_names": ["ampere_sgemm_128x64_tn", "vectorized_elementwise_kernel"],
        "max_abs_err": 0.0009765625,
        "max_rel_err": 0.0123,
        "atol": 0.05,
        "rtol": 0.05,
        "correct": passed,
        "quality_name": "top10_overlap",
        "quality_value": 0.97,
        "quality_threshold": 0.9,
        "quality_passed": True,
        "passed": passed,
    }


def as_stored(record: dict[str, Any], sweep_id: int | None, sweep_uuid: str | None) -> dict:
    """What `ResultStore.trials` returns for ``record``."""
    return {**record, "sweep_id": sweep_id, "sweep_uuid": sweep_uuid}
