"""A results database with realistic trials for the dashboard tests, and the numbers to expect.

Three workloads on four devices and five software stacks, written through `ResultStore` as a
sweep writes them (records with every key of `advisor.records`, failed trials with their reason
and error tail, one trial rejected by its quality check, graph breaks, kernel names, two
traffic shapes, shape-strategy replays), plus one sweep still running:

    reranker    NVIDIA H200 (gpu-a)  torch 2.10 stack, then upgraded to torch 2.11 (newest)
                NVIDIA H200 (gpu-b)  torch 2.11
                NVIDIA A100          torch 2.11; max-autotune fp32 is *slower* than eager there
    embedder    NVIDIA H200 (gpu-a)  torch 2.11, with reduce-overhead / buckets replays
    tiny-mlp    a CPU                torch 2.13+cpu: compiling does not pay off; sweep running
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from advisor.config import CompileConfig
from advisor.db import ResultStore
from advisor.records import empty_record

T0 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)

GPU_STACK_OLD = {"driver_version": "570.86.15", "cuda_driver_version": "12.8",
                 "torch_version": "2.10.0+cu128", "triton_version": "3.5.1",
                 "cuda_runtime_version": "12.8", "cudnn_version": "91002",
                 "python_version": "3.12.3"}  # fmt: skip
GPU_STACK = {"driver_version": "580.159.04", "cuda_driver_version": "13.0",
             "torch_version": "2.11.0+cu130", "triton_version": "3.6.0",
             "cuda_runtime_version": "13.0", "cudnn_version": "91900",
             "python_version": "3.12.3"}  # fmt: skip
CPU_STACK = {"driver_version": None, "cuda_driver_version": None,
             "torch_version": "2.13.0+cpu", "triton_version": None, "cuda_runtime_version": None,
             "cudnn_version": None, "python_version": "3.11.7"}  # fmt: skip


def fingerprint(device: str, stack: dict[str, Any], stack_name: str) -> dict[str, Any]:
    """A fingerprint as advisor.fingerprint makes it; hashes derived from the names."""
    gpu = device != "cpu"
    name = {"gpu-a": "NVIDIA H200", "gpu-b": "NVIDIA H200", "a100": "NVIDIA A100-SXM4-80GB",
            "cpu": "Intel(R) Xeon(R) Processor"}.get(device, device)  # fmt: skip
    return {
        "device_kind": "cuda" if gpu else "cpu",
        "device_name": name,
        "compute_capability": ("8.0" if device == "a100" else "9.0") if gpu else None,
        "device_memory_bytes": 150_109_880_320 if gpu else None,
        "sm_count": 132 if gpu else None,
        "cpu_model": "Intel(R) Xeon(R) Processor",
        "cpu_cores": 16 if gpu else 2,
        "host_memory_bytes": 135_148_564_480,
        **stack,
        "device_uuid": f"GPU-{uuid.uuid5(uuid.NAMESPACE_DNS, device)}" if gpu else None,
        "power_limit_w": 700.0 if gpu else None,
        "sm_clock_max_mhz": 1980 if gpu else None,
        "os": "Linux 6.18.44",
        "advisor_version": "0.1.0",
        "hostname": f"host-{device}",
        "device_hash": uuid.uuid5(uuid.NAMESPACE_DNS, f"dev-{device}").hex[:16],
        "env_hash": uuid.uuid5(uuid.NAMESPACE_DNS, f"env-{stack_name}").hex[:16],
        "fingerprint_hash": uuid.uuid5(uuid.NAMESPACE_DNS, f"fp-{device}-{stack_name}").hex[:16],
    }


def workload(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "path": f"/srv/workloads/{name}.py",
        "source_sha256": uuid.uuid5(uuid.NAMESPACE_URL, name).hex * 2,
        "info": {"model": f"org/{name}"},
    }


EAGER = CompileConfig(mode="eager", dtype="fp32")
EAGER_BF16 = CompileConfig(mode="eager", dtype="bf16")
DEFAULT = CompileConfig(mode="default", dtype="fp32")
DEFAULT_BF16 = CompileConfig(mode="default", dtype="bf16")
RO_BF16 = CompileConfig(mode="reduce-overhead", dtype="bf16")
MAX_FP32 = CompileConfig(mode="max-autotune", dtype="fp32")
MAX_NCG_BF16 = CompileConfig(mode="max-autotune-no-cudagraphs", dtype="bf16")
DEFAULT_FP16_FULL = CompileConfig(mode="default", dtype="fp16", fullgraph=True)


@dataclass
class Trial:
    """One trial to write: its config and either figures or a failure."""

    config: CompileConfig
    median_ms: float | None = None
    cold_compile_s: float = 0.0
    failure: str | None = None
    passed: bool = True
    extra: dict[str, Any] = field(default_factory=dict)


def _record(i: int, wl: dict, fp: dict, trial: Trial, when: datetime) -> dict[str, Any]:
    config = trial.config
    record = empty_record()
    record.update(
        trial_uuid=str(uuid.uuid5(uuid.NAMESPACE_OID, f"{wl['name']}{fp['fingerprint_hash']}{i}")),
        status="ok" if trial.failure is None else "failed",
        started_at=when.isoformat(),
        finished_at=(when + timedelta(seconds=40)).isoformat(),
        workload=wl, config=config.to_dict(), config_key=config.key,
        device="cuda" if fp["device_kind"] == "cuda" else "cpu", fingerprint=fp, telemetry={},
    )  # fmt: skip
    if trial.failure is not None:
        tails = {
            "compile_error": "torch._inductor.exc.InductorError: LoweringException: boom",
            "oom": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
            "graph_break": "torch._dynamo.exc.Unsupported: Call to `torch._dynamo.graph_break()`",
        }
        record.update(failure_reason=trial.failure,
                      error_tail=f"Traceback (most recent call last):\n  ...\n"
                                 f"{tails.get(trial.failure, trial.failure)}\n")  # fmt: skip
        return record | trial.extra
    m = trial.median_ms
    assert m is not None
    compiled = config.compiled
    gpu = fp["device_kind"] == "cuda"
    cudagraphs = config.uses_cudagraphs
    record.update(
        method="cuda_events" if gpu else "perf_counter", warmup_iters=25,
        shapes=[_shape("batch=50,seq=128", 0.7, m * 0.9), _shape("batch=100,seq=256", 0.3,
                                                                  m * (1 - 0.7 * 0.9) / 0.3)],
        median_ms=m, p90_ms=m * 1.05, p99_ms=m * 1.25, mean_ms=m * 1.01, noisy=False,
        cold_compile_s=trial.cold_compile_s, warm_compile_s=None, eager_first_call_s=0.25,
        peak_mem_bytes=200_000_000 + i,
        graph_count=1 if compiled else None,
        graph_break_count=1 if compiled and wl["name"] == "reranker" else 0,
        recompiles=0,
        generated_kernel_count=40 if compiled else None,
        graph_breaks=[{"reason": "Tensor.item() call with capture_scalar_outputs=False",
                       "count": 1}] if compiled and wl["name"] == "reranker" else [],
        kernels_per_call=(70 if compiled else 117) if gpu else (3 if compiled else 5),
        launches_per_call=(2 if cudagraphs else 67 if compiled else 116) if gpu else None,
        kernel_names=(["triton_per_fused_add_native_layer_norm_0", "triton_tem_fused_addmm_1"]
                      if compiled else ["void at::native::vectorized_elementwise_kernel"]),
        eager_kernels_per_call=117 if gpu else 5, eager_launches_per_call=116 if gpu else None,
        eager_kernel_names=["void at::native::vectorized_elementwise_kernel",
                            "ampere_sgemm_128x64_tn"],
        max_abs_err=0.0 if config == EAGER else 0.01, max_rel_err=0.001, atol=0.05, rtol=0.05,
        correct=True, quality_name="top10_overlap",
        quality_value=1.0 if trial.passed else 0.6, quality_threshold=0.9,
        quality_passed=trial.passed, passed=trial.passed,
    )  # fmt: skip
    return record | trial.extra


def _shape(name: str, weight: float, median: float) -> dict[str, Any]:
    return {
        "shape": name, "dims": dict((k, int(v)) for k, v in (p.split("=") for p in
                                                              name.split(","))),
        "weight": weight, "median_ms": median, "mean_ms": median * 1.01, "min_ms": median * 0.95,
        "max_ms": median * 1.5, "p90_ms": median * 1.05, "p99_ms": median * 1.25,
        "stdev_ms": median * 0.02, "iqr_ms": median * 0.03, "n_samples": 200, "noisy": False,
        "throughput_per_s": 1000.0 / median, "warmup_iters": 25,
    }  # fmt: skip


# What each device and stack measured (median ms, cold compile s).
RERANKER_H200_OLD = [
    Trial(EAGER, 6.5), Trial(DEFAULT, 5.1, 12.0), Trial(RO_BF16, 1.2, 33.0),
    Trial(MAX_FP32, 5.4, 90.0),
]  # fmt: skip
RERANKER_H200 = [
    Trial(EAGER, 6.2), Trial(DEFAULT, 4.9, 10.5), Trial(RO_BF16, 0.96, 31.0),
    Trial(MAX_FP32, 5.3, 95.0), Trial(DEFAULT_FP16_FULL, failure="graph_break"),
    Trial(MAX_NCG_BF16, failure="oom"), Trial(EAGER_BF16, 3.6, 0.2),
]  # fmt: skip
RERANKER_H200_B = [Trial(EAGER, 6.25), Trial(DEFAULT, 4.95, 10.1), Trial(RO_BF16, 0.98, 30.0)]
RERANKER_A100 = [
    Trial(EAGER, 9.0), Trial(DEFAULT, 7.0, 14.0), Trial(RO_BF16, 1.8, 40.0, passed=False),
    Trial(MAX_FP32, 9.5, 120.0), Trial(MAX_NCG_BF16, failure="compile_error"),
]  # fmt: skip
EMBEDDER_H200 = [
    Trial(EAGER, 2.0),
    Trial(RO_BF16, 0.5, 20.0, extra={"replay": {"strategy": "static", "mean_ms": 0.61,
                                                "p50_ms": 0.5, "p99_ms": 1.9, "graphs": 9,
                                                "recompiles": 8, "padding_waste": 0.0}}),
    Trial(CompileConfig(mode="reduce-overhead", dtype="bf16", shapes="buckets:pow2"), 0.55, 26.0,
          extra={"replay": {"strategy": "buckets:pow2", "mean_ms": 0.58, "p50_ms": 0.55,
                            "p99_ms": 0.7, "graphs": 4, "recompiles": 0,
                            "padding_waste": 0.21}}),
]  # fmt: skip
TINY_CPU = [Trial(EAGER, 0.037), Trial(DEFAULT, 0.069, 11.7), Trial(EAGER_BF16, 0.093, 0.0)]


def seed(url: str) -> ResultStore:
    """Write the data set into the database at ``url`` (created); returns the open store."""
    store = ResultStore.from_url(url)
    plan = [
        ("reranker", fingerprint("gpu-a", GPU_STACK_OLD, "gpu-old"), RERANKER_H200_OLD, 0),
        ("reranker", fingerprint("gpu-a", GPU_STACK, "gpu-new"), RERANKER_H200, 5),
        ("reranker", fingerprint("gpu-b", GPU_STACK, "gpu-new"), RERANKER_H200_B, 6),
        ("reranker", fingerprint("a100", GPU_STACK, "gpu-new"), RERANKER_A100, 4),
        ("embedder", fingerprint("gpu-a", GPU_STACK, "gpu-new"), EMBEDDER_H200, 7),
        ("tiny-mlp", fingerprint("cpu", CPU_STACK, "cpu"), TINY_CPU, 8),
    ]
    for name, fp, trials, day in plan:
        wl = workload(name)
        running = name == "tiny-mlp"
        planned = 10 if running else len(trials)
        sweep_id = store.create_sweep(wl, fp, {"device": "cuda"}, f"{name}-{day}", planned)
        start = T0 + timedelta(days=day)
        records = [_record(i, wl, fp, t, start + timedelta(minutes=i)) for i, t in
                   enumerate(trials)]  # fmt: skip
        store.add_trials(records, sweep_id)
        if not running:
            store.finish_sweep(sweep_id, "finished")
    return store


# Expected figures (as the pages print them).
H200_SPEEDUP = 6.2 / 0.96  # reranker, reduce-overhead bf16 on the newest H200 stack: 6.46x
# calls until it pays off against the fastest eager config there, bf16 eager at 3.6 ms: 11742.4
H200_BREAK_EVEN = 31.0 / (3.6 - 0.96) * 1000
A100_BEST = "fp32 + default"  # reduce-overhead bf16 was rejected by its quality check there


# -- a fleet-size data set (made-up figures, for screenshots and the fleet-size tests) -----------

FLEET_DEVICES = (  # (device, GPU model, software stack): twelve devices of four models
    *((f"h200-{k}", "NVIDIA H200", "gpu-new") for k in range(4)),
    *((f"h100-{k}", "NVIDIA H100 80GB HBM3", "gpu-new") for k in range(3)),
    *((f"a100-{k}", "NVIDIA A100-SXM4-80GB", "gpu-old" if k == 2 else "gpu-new")
      for k in range(3)),
    *((f"l4-{k}", "NVIDIA L4", "gpu-new") for k in range(2)),
)  # fmt: skip
# Per workload: eager fp32 p50 on an H200 (ms) and trials per device (3 x 12 devices: 2,880).
FLEET_WORKLOADS = {"reranker": (6.2, 120), "embedder": (2.0, 80), "guardrail": (0.9, 40)}
FLEET_SPEED = {"NVIDIA H200": 1.0, "NVIDIA H100 80GB HBM3": 1.15, "NVIDIA A100-SXM4-80GB": 1.6,
               "NVIDIA L4": 3.4}  # fmt: skip
FLEET_NOISY_DEVICE = "h100-2"  # a busy host: its timings are flagged noisy
FLEET_TRIALS = sum(n for _, n in FLEET_WORKLOADS.values()) * len(FLEET_DEVICES)


def fleet_configs() -> list[CompileConfig]:
    """The whole space of a GPU sweep: four eager configs, then every compiled one (100)."""
    from advisor.config import DTYPES, MODES
    eager = [CompileConfig(mode="eager", dtype=d) for d in DTYPES]
    compiled = [CompileConfig(mode=m, dtype=d, fullgraph=f, dynamic=y)
                for m in MODES[1:] for d in DTYPES for f in (False, True)
                for y in ("auto", "true", "false")]  # fmt: skip
    random.Random(1).shuffle(compiled)  # the order a search might take: a mix of everything
    return eager + compiled


def _fleet_trial(rng: random.Random, config: CompileConfig, model: str, eager_ms: float,
                 noisy: bool) -> Trial:  # fmt: skip
    """Made-up figures shaped like the H200 measurements: half precision and CUDA graphs pay,
    max-autotune compiles long and does not pay on the L4, some compiles fail."""
    mode, dtype = config.mode, config.dtype
    if config.compiled and rng.random() < 0.05:
        return Trial(config, failure=rng.choice(["compile_error", "oom", "timeout"]))
    if config.fullgraph and rng.random() < 0.15:
        return Trial(config, failure="graph_break")
    factor = {"fp32": 1.0, "tf32": 0.8, "bf16": 0.55, "fp16": 0.52}[dtype]
    factor *= {"eager": 1.0, "default": 0.78, "reduce-overhead": 0.3,
               "max-autotune-no-cudagraphs": 0.74, "max-autotune": 0.28}[mode]  # fmt: skip
    if model == "NVIDIA L4" and mode.startswith("max-autotune"):
        factor *= 1.6  # the autotuned kernels lose on the small GPU
    if config.dynamic == "true":
        factor *= 1.12
    jitter = rng.uniform(-0.03, 0.03) + (0.1 * rng.random() if noisy else 0.0)
    median = eager_ms * factor * (1 + jitter)
    cold = {"eager": 0.0, "default": 11.0, "reduce-overhead": 31.0,
            "max-autotune-no-cudagraphs": 70.0, "max-autotune": 95.0}[mode]  # fmt: skip
    passed = not (dtype == "fp16" and mode == "max-autotune" and rng.random() < 0.5)
    return Trial(config, median, cold * rng.uniform(0.9, 1.2), passed=passed,
                 extra={"noisy": True} if noisy else {})


def seed_fleet(url: str, studies: bool | Collection[str] = False) -> ResultStore:
    """A fleet-size database at ``url`` (created): three workloads on twelve devices of four
    GPU models (one A100 still on the older stack), ``FLEET_TRIALS`` (2,880) trials with every
    config of the space, repeats of the fastest ones, failures and one noisy host. The figures
    are made up (shaped like the H200 measurements), for screenshots and tests, not results.
    ``studies``: each sweep's Optuna study too (or those of the workloads named), as a sweep
    leaves it (its trials, metric name, attributes and advisor's answer:
    `advisor.search.study.write_study`), so that optuna-dashboard opens the fleet; Optuna adds
    a trial in about 40 ms here, so the whole fleet's studies take a minute or two."""
    store = ResultStore.from_url(url)
    space = fleet_configs()
    for day, (name, (eager_ms, n_trials)) in enumerate(FLEET_WORKLOADS.items()):
        wl = workload(name)
        for k, (device, model, stack_name) in enumerate(FLEET_DEVICES):
            rng = random.Random(f"{name}-{device}")
            stack = GPU_STACK_OLD if stack_name == "gpu-old" else GPU_STACK
            fp = fingerprint(device, stack, stack_name) | {
                "device_name": model, "hostname": f"node-{device}",
                "compute_capability": "9.0" if "H" in model else "8.9" if "L4" in model else "8.0",
            }
            configs = space[:n_trials] if n_trials <= len(space) else \
                space + [c for c in space if c.mode == "reduce-overhead"][:n_trials - len(space)]
            trials = [_fleet_trial(rng, c, model, eager_ms * FLEET_SPEED[model],
                                   device == FLEET_NOISY_DEVICE) for c in configs]  # fmt: skip
            sweep_id = store.create_sweep(wl, fp, {"device": "cuda"}, f"{name}-{device}",
                                          len(trials))  # fmt: skip
            start = T0 + timedelta(days=day, hours=k)
            records = [_record(i, wl, fp, t, start + timedelta(seconds=40 * i))
                       for i, t in enumerate(trials)]  # fmt: skip
            store.add_trials(records, sweep_id)
            store.finish_sweep(sweep_id, "finished")
            if studies is True or (studies and name in studies):
                _fleet_study(store, f"{name}-{device}", records, space)
    return store


def _fleet_study(store: ResultStore, study_name: str, records: list[dict[str, Any]],
                 space: list[CompileConfig]) -> None:
    """The sweep's Optuna study, its trials and advisor's answer, as a sweep leaves them."""
    from advisor.recommendation.answers import answer
    from advisor.search.study import record_answer, write_study

    study = write_study(store.url, study_name, records, space)
    fp_hash = records[0]["fingerprint"]["fingerprint_hash"]
    record_answer(study, answer(store, records[0]["workload"]["name"], fp_hash))


if __name__ == "__main__":  # python tests/support/seed.py [--fleet] sqlite:///x.db
    import sys

    fleet = "--fleet" in sys.argv  # with its Optuna studies, for optuna-dashboard
    target = next(a for a in sys.argv[1:] if not a.startswith("--"))
    (seed_fleet(target, studies=True) if fleet else seed(target)).close()
    print(f"wrote {'the fleet-size' if fleet else 'the test'} data set into {target}")


def seeded_file(directory: Path, fleet: bool = False) -> str:
    """The URL of a new SQLite file in ``directory`` holding the small seed (`seed`), or the
    fleet-size one (`seed_fleet`) with ``fleet``."""
    url = f"sqlite:///{directory / ('fleet.db' if fleet else 'results.db')}"
    (seed_fleet if fleet else seed)(url).close()
    return url
