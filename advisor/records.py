"""The trial record and its parts: the plain data a trial returns, the CLI prints, the store keeps.

The types below are the schema (`TrialRecord` and the parts it holds); what they cannot say:

- Only plain data (str, int, float, bool, None, lists and dicts of them) crosses processes.
- Every key of `TrialRecord` that is not ``NotRequired`` is in every record from the start
  (`empty_record`); a figure a trial could not obtain (a failed trial, a CPU run without CUDA
  events) is None. Units are in the names.
- The headline figures (``median_ms``, ``p90_ms``, ``p99_ms``, ``mean_ms``) are the
  weight-averaged figures of ``shapes`` (one shape: its figures), or a replay's per-request
  figures (advisor.child.replay); ``noisy``: any shape noisy.
- ``cold_compile_s``: torch.compile to the first result with empty Inductor/Triton caches;
  ``warm_compile_s``: the same in a second process reusing that cache dir (None if skipped).
- ``peak_mem_bytes``: GPU, torch.cuda.max_memory_allocated; CPU, the child's peak RSS.
- ``kernels_per_call``, ``launches_per_call``, ``kernel_names``: torch.profiler over one call;
  the ``eager_`` ones the same for the fp32 eager reference.
- ``correct``: every output element within atol + rtol * |reference|; ``passed``: correct and
  (quality_passed or no quality check or an advisory one: ``quality_advisory`` says why).
- The store adds ``sweep_id`` and ``sweep_uuid`` to the records it reads back (``sweep`` in an
  export) and keeps keys beyond `empty_record`'s as they were.
"""

import typing
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NotRequired, TypedDict, cast

from advisor.config import ConfigDict

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


# --- the parts ---------------------------------------------------------------------------------


class WorkloadInfo(TypedDict):
    """Which workload a record measured (the store keys workloads by name and source hash)."""

    name: str
    path: str | None
    source_sha256: str | None
    info: dict[str, Any]  # the workload's own info() (model name, layers, ...)


class DeviceColumns(TypedDict):
    """A device's fields (hashed into ``device_hash``): a fingerprint's, and a store row's that
    names a device."""

    device_hash: str
    device_kind: str | None  # "cuda" | "cpu"
    device_name: str | None
    compute_capability: str | None
    device_memory_bytes: int | None
    sm_count: int | None
    cpu_model: str | None
    cpu_cores: int | None
    host_memory_bytes: int | None
    # the ISA torch dispatches to (torch.backends.cpu.get_cpu_capability(): "AVX512", "AVX2",
    # "DEFAULT", ...) and the CPU features that change kernels, sorted, space-separated
    # ("amx_bf16 amx_int8 amx_tile avx2 avx512_bf16 avx512f"): hashed for CPU devices only
    cpu_isa: str | None
    cpu_flags: str | None


class EnvColumns(TypedDict):
    """A software stack's fields (hashed into ``env_hash``): a fingerprint's, and a store row's
    that names a stack."""

    env_hash: str
    driver_version: str | None
    cuda_driver_version: str | None
    torch_version: str | None
    triton_version: str | None
    cuda_runtime_version: str | None
    cudnn_version: str | None
    python_version: str | None


class Fingerprint(DeviceColumns, EnvColumns):
    """What a measurement belongs to: the device and its software stack (advisor.fingerprint).

    Fields a host cannot tell (no GPU, no NVML) are None. ``device_hash`` hashes the device
    fields (two identical GPUs share it), ``env_hash`` the stack, ``fingerprint_hash`` both."""

    # recorded, not hashed
    device_uuid: str | None
    power_limit_w: float | None
    sm_clock_max_mhz: int | None
    os: str | None
    advisor_version: str | None
    hostname: str | None
    fingerprint_hash: str


class TelemetryFigures(TypedDict, total=False):
    """Sampled while the trial measured (GPU with NVML; empty on a CPU)."""

    sm_clock_mhz: int  # the median sample
    sm_clock_min_mhz: int
    power_draw_w: float  # the highest sample
    temperature_c: int  # the highest sample
    throttle_reasons: list[str]
    n_samples: int
    measure_core: int  # the host core kept for measurements (advisor.device_lock)


class SampleFigures(TypedDict):
    """`advisor.stats.Stats.to_dict`: the figures of one set of timed samples."""

    median_ms: float
    mean_ms: float
    min_ms: float
    max_ms: float
    p90_ms: float
    p99_ms: float
    stdev_ms: float
    iqr_ms: float
    n_samples: int
    noisy: bool


class ShapeFigures(SampleFigures):
    """One entry of a record's ``shapes``: a traffic shape measured alone, or a replay's bucket."""

    shape: str  # "batch=50,seq=128"
    dims: dict[str, int]
    weight: float  # its share of the traffic
    throughput_per_s: float  # calls per second back to back
    warmup_iters: int


class BucketFigures(ShapeFigures):
    """A replay's ``shapes`` entry: one bucket (advisor.child.replay); the store keeps only the
    keys of `ShapeFigures`."""

    requests: int  # requests of the stream it served
    shapes_served: int  # distinct shapes padded to it
    eager: bool  # it ran eagerly (past dynamo's recompile limit)


class HostFigures(TypedDict):
    """The host while one figure was measured (stored with it as ``host``; advisor.hostload)."""

    cores: int  # the cores this process may run on (its affinity)
    online_cores: int  # the host's
    threads: int  # torch's intra-op threads for a CPU figure; 1 on a GPU (the launching thread)
    others_cores: float  # CPU other processes used over the measurement, in cores
    load_start: float  # the 1-minute load average at the start and the end
    load_end: float
    psi_some: float | None  # the share of the measurement some task waited for a CPU (PSI)
    wall_s: float
    contended: bool
    waited_s: float  # waiting for quiet before measuring (`wait_for_quiet`)


class GraphBreak(TypedDict):
    reason: str
    count: int


class ScreenedOut(TypedDict):
    """A config cut short: its first short measurement was above the sweep's bar."""

    median_ms: float
    above_ms: float
    samples: int


class PruneBar(TypedDict):
    """The bar a sweep gives a replay trial (advisor.search.sweep.prune_bar): stop serving once
    the process-life cost over `calls_per_process` requests is proven above `above_ms`."""

    above_ms: float  # (1 + margin) x the best finished trial's deciding figure so far
    calls_per_process: int
    margin: float


class Pruned(TypedDict):
    """A replay stopped early (status "pruned"): its process-life cost is proven above the
    sweep's bar (advisor.serving.process_life_lower_bound_ms); it has no measured figure."""

    lower_bound_ms: float  # a figure its process-life cost can only exceed
    above_ms: float  # the bar it crossed
    requests_served: int
    requests_total: int
    calls_per_process: int
    reason: str


class Stopped(TypedDict):
    """A trial the sweep's budget (or the user) stopped before it finished (status "stopped"):
    what it got through and, where its served requests prove one, a lower bound of its
    process-life cost; it has no measured figure."""

    lower_bound_ms: float | None  # None: nothing it served bounds its cost
    requests_served: int
    requests_total: int
    phase: str  # the phase it was in when stopped
    reason: str
    # what a next run's budget is estimated from (advisor.sizing.next_budget): the seconds from
    # the child's start to the stop, those spent serving the stream, the trial's share of the
    # budget, and the process the bound is priced over
    elapsed_s: NotRequired[float]
    stream_s: NotRequired[float | None]
    share_s: NotRequired[float | None]
    calls_per_process: NotRequired[int]


class SteadySample(TypedDict):
    """What a replay's steady state was measured on (advisor.sizing.plan_steady): ``shapes`` of
    the ``of_shapes`` distinct shapes the stream executed (every one, or a sample stratified by
    size and weighted by the traffic, ``sampled``), ``draws`` per pass, ``passes``; the fp32
    eager reference checked the same shapes. ``mean_ci_ms``: the 95% interval of the steady
    mean a sample gives (None: every shape timed); ``time_share_s``: the seconds the steady
    state and reference were sized to (None: no budget)."""

    shapes: int
    of_shapes: int
    draws: int
    passes: int
    sampled: bool
    seed: int
    mean_ci_ms: list[float] | None
    time_share_s: float | None


class Flag(TypedDict):
    """What a serving process of a config meets and must be told (advisor.serving.flags)."""

    flag: str
    message: str


class ServedAlone(TypedDict):
    """A replay's serving process measured again alone (advisor.child.replay.serve_alone)."""

    startup_s: float
    per_request_ms: list[float]
    new_shape: list[int]


class StreamSample(TypedDict):
    """A stream served in part (advisor.sizing.stream_stride): the positions of the holdout
    served (ascending, from 0), the requests each stands for (`advisor.sizing.coverage`),
    the holdout's length, and which of its positions meet a shape (bucket) new to the process
    when the whole holdout is served in order (and which of those inside a bucketed plan's
    grid): the classes advisor.serving prices the whole stream by."""

    of_requests: int
    positions: list[int]
    weights: list[int]
    new_positions: list[int]
    bounded_new_positions: list[int]


class StreamFigures(TypedDict):
    """A replay's stream: the holdout served once, in order, as a fresh server meets it."""

    requests: int
    split: int
    fit_requests: int
    startup_shapes: int
    startup_s: float  # start-up wall time
    # the start-up and stream measured again alone, cold (a sweep that ran trials at once
    # re-measures its leaders'): startup_s, per_request_ms, new_shape; the process-life cost
    # uses them when present (advisor.serving.served)
    alone: NotRequired[ServedAlone]
    per_request_ms: list[float]  # each request's cost, in order
    new_shape: list[int]  # positions of the requests that met a shape not executed before
    # present when the stream was sampled (a budgeted replay): per_request_ms and new_shape are
    # then the served requests', and the sample says what they stand for
    sample: NotRequired[StreamSample]
    # those of them inside a bucketed plan's grid, and the grid's buckets left unmet (None:
    # unbucketed); a longer process meets no more new shapes inside the grid than that
    bounded_new_shape: NotRequired[list[int]]
    grid_left: NotRequired[int | None]
    mean_ms: float
    new_shape_events: int
    new_shape_mean_ms: float | None
    new_shape_share: float
    late_new_shape_share: float  # in the later half of the stream
    last_new_shape_s: float | None  # from the stream's start
    mem_startup_bytes: int | None  # GPU memory reserved by start-up (None off a GPU)
    mem_growth_bytes: int | None  # its growth over the stream


class ReplayFigures(TypedDict):
    """A replay trial's own figures (advisor.child.replay.run_replay says how each is made)."""

    strategy: str
    traffic_source: str
    traffic_shapes: int
    varying_dims: list[str]
    requests: int
    trace_shapes: int
    holdout: float | None  # a log's holdout share (None for declared traffic)
    split: int  # where the holdout starts in the log (0 for declared traffic)
    seed: int
    passes: int
    boundaries: dict[str, list[int]]  # per padded dim
    buckets: int
    expected_ms: float  # per shape: median request latency x traffic weight, summed
    mean_ms: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    padding_waste: float
    graphs: int
    startup_compile_s: float
    compile_s_total: float  # start-up + compiles met while serving
    recompiles: int  # after start-up
    stance: str | None
    recompile_limit: int
    recompile_limit_hit: bool
    eager_fallbacks: int
    eager_fallback_buckets: list[str]
    eager_fallback_requests: float  # share of the trace
    cudagraph_mem_bytes: int | None  # reserved by the compiled graphs, CUDA-graph modes only
    stream: NotRequired[StreamFigures]
    flags: NotRequired[list[Flag]]
    steady_sample: NotRequired[SteadySample]  # what the steady state was measured on


# --- the record --------------------------------------------------------------------------------

# ok: measured; failed: see failure_reason; pruned: a replay stopped once proven worse than
# the sweep's best (``pruned``; no measured figure, never a failure, never a pick); stopped: cut
# by the budget's end before it finished (``stopped``; no measured figure, not a failure)
Status = Literal["ok", "failed", "pruned", "stopped"]
# A trial's phases, in order: waiting in a pooled sweep's queue for a worker, the child's start
# (the interpreter, advisor's and torch's imports), the workload file's import, building the
# model and the eager reference, waiting for the device lock (other trials' compiles or
# measurements), compiling (with the first call and the accuracy check), measuring (warm-up,
# samples, profiling)
PHASE_ORDER = ("queue", "start", "import", "build", "lock wait", "compile", "measure")


class TrialRecord(TypedDict):
    """One trial: one config of one workload measured on one device (see the module doc)."""

    # identity and outcome
    record_version: int
    trial_uuid: str | None  # uuid4: stable across hosts, the merge key of export/import
    status: Status
    failure_reason: str | None  # one of FAILURE_REASONS
    error_tail: str | None  # the last lines of the error or of the child's stderr
    started_at: str | None  # ISO 8601 UTC
    finished_at: str | None
    workload: WorkloadInfo | None
    config: ConfigDict  # CompileConfig.to_dict() (None only in `empty_record`'s template)
    config_key: str | None  # CompileConfig.key
    device: str | None  # "cpu" | "cuda" | "cuda:N" as asked
    fingerprint: Fingerprint | None
    telemetry: TelemetryFigures
    # measurement
    median_ms: float | None
    p90_ms: float | None
    p99_ms: float | None
    mean_ms: float | None
    noisy: bool | None
    cold_compile_s: float | None
    warm_compile_s: float | None
    eager_first_call_s: float | None  # the fp32 eager reference's first call
    peak_mem_bytes: int | None
    # compiler facts
    graph_count: int | None
    graph_break_count: int | None
    recompiles: int | None
    generated_kernel_count: int | None
    kernels_per_call: int | None
    launches_per_call: int | None
    eager_kernels_per_call: int | None
    eager_launches_per_call: int | None
    # accuracy against the fp32 eager reference
    max_abs_err: float | None
    max_rel_err: float | None
    atol: float | None
    rtol: float | None
    correct: bool | None
    quality_name: str | None
    quality_value: float | None
    quality_threshold: float | None
    quality_passed: bool | None  # the combined value against the threshold
    passed: bool | None
    method: str | None  # "cuda_events" | "perf_counter"
    warmup_iters: int | None  # warm-up calls per shape
    graph_breaks: list[GraphBreak]
    kernel_names: list[str]  # distinct kernels executed in one call
    eager_kernel_names: list[str]
    shapes: list[ShapeFigures]  # BucketFigures in a replay
    # present when they apply
    median_ci_ms: NotRequired[list[float]]  # the traffic-weighted median's 95% interval
    # a quality check's parts (advisor.workload.Quality): how the requests' values combined into
    # quality_value ("mean", "worst", "p10"), the worst request's value, and why the check only
    # advises (stand-in weights), when it does: then quality_passed rejects nothing
    quality_combine: NotRequired[str]
    quality_worst: NotRequired[float]
    quality_advisory: NotRequired[str]
    screened_out: NotRequired[ScreenedOut]
    pruned: NotRequired[Pruned]  # status "pruned": the bound it proved
    stopped: NotRequired[Stopped]  # status "stopped": how far it got, its bound where proven
    replay: NotRequired[ReplayFigures]
    device_wait_s: NotRequired[float]  # waiting for turns on a shared device
    # where the trial's time went, by phase (`PHASE_ORDER`; advisor.search.launcher times them)
    phases_s: NotRequired[dict[str, float]]
    measured_alone: NotRequired[list[list[float]]]  # wall-clock spans measured alone
    tried_because: NotRequired[str]  # why a sweep tried it when it did (advisor.search.plan)
    # kernels' time over wall time; no trial records it yet, the priors read it when one does
    # (advisor.search.priors.Profile)
    gpu_busy_share: NotRequired[float]
    # the host while it measured: other processes' CPU, load, pressure, the threads it ran
    # with, and whether it was contended (advisor.hostload; such a figure never decides)
    host: NotRequired[HostFigures]
    # where a record sits in a database (added by the store when it reads records back)
    sweep_id: NotRequired[int | None]
    sweep_uuid: NotRequired[str | None]
    sweep: NotRequired[dict[str, Any] | None]  # an export's sweep


# --- a confirmation (advisor.search.confirm; the store keeps it in advisor_confirmations) ----


class ConfirmationEntry(TypedDict):
    """One config of a confirmation; the figures are absent when it was not measured."""

    config: ConfigDict
    config_key: str
    label: str
    trial_uuid: str | None
    compile_s: float | None
    compiled_from_kept_cache: bool
    compile_cache: dict[str, Any] | None
    failure: NotRequired[str]
    median_ms: NotRequired[float]
    p90_ms: NotRequired[float]
    p99_ms: NotRequired[float]
    median_ci_ms: NotRequired[list[float]]
    shape_medians_ms: NotRequired[list[float]]
    speedup: NotRequired[float]  # paired over eager fp32: median over rounds of eager / config
    speedup_ci: NotRequired[list[float]]
    samples_ms: NotRequired[list[list[float]]]
    # the host while the confirmation child measured (the same for every entry of it; kept in
    # each entry, which the store keeps whole): advisor.hostload
    host: NotRequired[HostFigures]


class Confirmation(TypedDict):
    """Leading configs and eager fp32 re-measured interleaved in one process."""

    uuid: str
    created_at: str
    method: str | None
    rounds: int | None  # rounds measured (advisor.child.confirm)
    status: str
    shapes: list[dict[str, Any]]
    entries: list[ConfirmationEntry]
    error_tail: str | None
    workload: NotRequired[WorkloadInfo | str]  # its name, as the store reads it back
    device: NotRequired[str]
    fingerprint: NotRequired[Fingerprint]

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


def empty_record() -> TrialRecord:
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
    return cast(TrialRecord, record)


class Headline(TypedDict):
    median_ms: float
    p90_ms: float
    p99_ms: float
    mean_ms: float
    noisy: bool


def weighted_headline(shapes: Sequence[Mapping[str, Any]]) -> Headline:
    """Weight-averaged median/p90/p99/mean over per-shape results (weights renormalised)."""
    total = sum(s["weight"] for s in shapes)

    def mean(key: str) -> float:
        return float(sum(s[key] * s["weight"] for s in shapes) / total)

    return {
        "median_ms": mean("median_ms"), "p90_ms": mean("p90_ms"), "p99_ms": mean("p99_ms"),
        "mean_ms": mean("mean_ms"), "noisy": any(s["noisy"] for s in shapes),
    }


def undeclared_keys(
    data: Mapping[str, Any], kind: Any = TrialRecord, parts: Mapping[str, Any] | None = None
) -> list[str]:
    """The keys of ``data`` that the TypedDict ``kind`` does not declare, through its typed parts
    (dicts and lists of dicts), as paths (``shapes[0].requests``); empty when the types cover it.
    ``parts``: the type to check a key's value (or its list's items) against instead of the
    declared one (a replay's ``shapes`` are `BucketFigures`)."""
    hints = typing.get_type_hints(kind)
    out: list[str] = []
    for key, value in data.items():
        if key not in hints:
            out.append(key)
            continue
        part = (parts or {}).get(key) or _typed_dict_in(hints[key])
        if part is None:
            continue
        if isinstance(value, dict):
            out += [f"{key}.{k}" for k in undeclared_keys(value, part)]
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, dict):
                    out += [f"{key}[{i}].{k}" for k in undeclared_keys(item, part)]
    return out


def _typed_dict_in(hint: Any) -> Any:
    """The TypedDict a hint holds (``X``, ``X | None``, ``list[X]``), or None."""
    if typing.is_typeddict(hint):
        return hint
    for arg in typing.get_args(hint):
        found = _typed_dict_in(arg)
        if found is not None:
            return found
    return None
