"""The trial record: the plain dict a trial returns, the CLI prints and the store keeps.

Only plain data (str, int, float, bool, None, lists and dicts of them) crosses processes. Every
record has the keys below; figures that a trial could not obtain (a failed trial, a CPU run
without CUDA events) are None. Units are in the names.

identity and outcome
    record_version        int, `RECORD_VERSION`
    trial_uuid            str, uuid4: stable across hosts, the merge key of export/import
    status                "ok" | "failed"
    failure_reason        None or one of `FAILURE_REASONS`
    error_tail            None or the last lines of the error / the child's stderr
    started_at, finished_at   ISO 8601 UTC timestamps
    workload              {"name", "path", "source_sha256", "info": dict}
    config                `CompileConfig.to_dict()`;   config_key  `CompileConfig.key`
    device                "cpu" | "cuda" | "cuda:N" as asked
    fingerprint           `advisor.fingerprint` dict (device + software stack, with hashes)

measurement
    method                "cuda_events" | "perf_counter"
    warmup_iters          int, warm-up calls made per shape
    shapes                list of per-shape results (`SHAPE_KEYS`):
        shape, dims, weight, median_ms, mean_ms, min_ms, max_ms, p90_ms, p99_ms, stdev_ms,
        iqr_ms, n_samples, noisy, throughput_per_s, warmup_iters
    median_ms, p90_ms, p99_ms, mean_ms    weight-averaged over `shapes` (one shape: its figures)
    noisy                 any shape noisy
    cold_compile_s        torch.compile to first result, empty Inductor/Triton caches
    warm_compile_s        the same in a second process reusing that cache dir (None if skipped)
    eager_first_call_s    the fp32 eager reference's first call, for comparison
    peak_mem_bytes        GPU: torch.cuda.max_memory_allocated; CPU: peak RSS of the child
    telemetry             GPU: {"sm_clock_mhz", "sm_clock_max_mhz", "power_draw_w",
                          "temperature_c", "throttle_reasons"} sampled during measurement; CPU: {}

compiler facts
    graph_count, graph_break_count, recompiles, generated_kernel_count   int or None
    graph_breaks          list of {"reason", "count"}
    kernels_per_call, launches_per_call   int or None (torch.profiler over one call)
    kernel_names          list of str: distinct kernels executed in one call
    eager_kernels_per_call, eager_launches_per_call, eager_kernel_names    the same for fp32 eager

accuracy (against the fp32 eager reference)
    max_abs_err, max_rel_err    float
    atol, rtol            the tolerance applied
    correct               bool: every output element within atol + rtol * |reference|
    quality_name, quality_value, quality_threshold, quality_passed    None without a quality check
    passed                correct and (quality_passed or no quality check)
"""

from __future__ import annotations

from typing import Any

RECORD_VERSION = 1

FAILURE_REASONS: dict[str, str] = {
    "workload_error": "the workload file broke its contract (bad import, wrong return type)",
    "build_error": "building the component raised",
    "compile_error": "torch.compile / Inductor raised while compiling",
    "graph_break": "fullgraph was asked and the code has a graph break",
    "oom": "out of memory (GPU or host)",
    "cuda_error": "a CUDA error (illegal access, launch failure, ...)",
    "runtime_error": "the component raised while running",
    "crash": "the child process died (segfault, abort, killed by a signal)",
    "timeout": "the trial ran past its time limit and was killed",
    "interrupted": "the sweep was interrupted while this trial ran",
}

SHAPE_KEYS = (
    "shape", "dims", "weight", "median_ms", "mean_ms", "min_ms", "max_ms", "p90_ms", "p99_ms",
    "stdev_ms", "iqr_ms", "n_samples", "noisy", "throughput_per_s", "warmup_iters",
)

METRIC_KEYS = (
    "median_ms", "p90_ms", "p99_ms", "mean_ms", "noisy", "cold_compile_s", "warm_compile_s",
    "eager_first_call_s", "peak_mem_bytes", "graph_count", "graph_break_count", "recompiles",
    "generated_kernel_count", "kernels_per_call", "launches_per_call", "eager_kernels_per_call",
    "eager_launches_per_call", "max_abs_err", "max_rel_err", "atol", "rtol", "correct",
    "quality_name", "quality_value", "quality_threshold", "quality_passed", "passed",
    "method", "warmup_iters",
)

LIST_KEYS = ("graph_breaks", "kernel_names", "eager_kernel_names", "shapes")


def empty_record() -> dict[str, Any]:
    """A record with every key present and no figures; trial and launcher fill it in."""
    record: dict[str, Any] = {
        "record_version": RECORD_VERSION,
        "trial_uuid": None,
        "status": "failed",
        "failure_reason": None,
        "error_tail": None,
        "started_at": None,
        "finished_at": None,
        "workload": None,
        "config": None,
        "config_key": None,
        "device": None,
        "fingerprint": None,
        "telemetry": {},
    }
    record.update({key: None for key in METRIC_KEYS})
    record.update({key: [] for key in LIST_KEYS})
    return record


def weighted_headline(shapes: list[dict[str, Any]]) -> dict[str, Any]:
    """Weight-averaged median/p90/p99/mean over per-shape results (weights renormalised)."""
    total = sum(s["weight"] for s in shapes)
    out: dict[str, Any] = {}
    for key in ("median_ms", "p90_ms", "p99_ms", "mean_ms"):
        out[key] = sum(s[key] * s["weight"] for s in shapes) / total
    out["noisy"] = any(s["noisy"] for s in shapes)
    return out
