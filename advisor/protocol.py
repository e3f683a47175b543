"""What crosses between the advisor's processes and its store, named once.

A child process is ``python -m advisor.child.main SPEC.json RESULT.json`` (`CHILD_MODULE`),
started by `advisor.search.launcher`. The spec is one JSON document of one of the spec types
below, each with its ``kind`` (`ChildKind`); `advisor.child.main` dispatches on it. The result is
one JSON document, written whole (`write_result`: a temporary file renamed into place) and read
by the parent (`read_result`): no result file means the child died before it finished. While it
runs, the child prints its phases on stdout as ``ADVISOR_PHASE <name>`` lines (`PHASE_PREFIX`).
The fingerprint's fields (`DEVICE_FIELDS`, `ENV_FIELDS`, `EXTRA_FIELDS`) are what the probe
child writes, the parent hashes and checks overrides against, and the store keeps.

Light on purpose: the standard library only (the types it names are imported for the type
checker alone), so that both sides and the CLI's help import it for free.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypeAlias, TypedDict, get_args

if TYPE_CHECKING:
    from advisor.config import ConfigDict
    from advisor.records import Fingerprint, PruneBar, TrialRecord

# -- fingerprint ---------------------------------------------------------------------------------

DEVICE_FIELDS = (
    "device_kind", "device_name", "compute_capability", "device_memory_bytes", "sm_count",
    "cpu_model", "cpu_cores", "host_memory_bytes", "cpu_isa", "cpu_flags",
)
# What the CPU can run, beyond its model string (which a hypervisor may mask): the ISA torch
# dispatches to and the vector/matrix features that change kernels. Hashed into device_hash for
# CPU devices only (a GPU's answer is the GPU's), and only when known.
CPU_ISA_FIELDS = ("cpu_isa", "cpu_flags")
ENV_FIELDS = (
    "driver_version", "cuda_driver_version", "torch_version", "triton_version",
    "cuda_runtime_version", "cudnn_version", "python_version",
)
EXTRA_FIELDS = (
    "device_uuid", "power_limit_w", "sm_clock_max_mhz", "os", "advisor_version", "hostname",
)
FINGERPRINT_FIELDS = DEVICE_FIELDS + ENV_FIELDS + EXTRA_FIELDS

# -- the child process ---------------------------------------------------------------------------

CHILD_MODULE = "advisor.child.main"  # run as ``python -m CHILD_MODULE SPEC.json RESULT.json``
SERVER_MODULE = "advisor.child.server"  # forks children (``python -m SERVER_MODULE SOCKET_FD``)
# ...or, shared, ``python -m SERVER_MODULE --listen PATH``: one server forked per connection
LISTEN_FLAG = "--listen"

PHASE_PREFIX = "ADVISOR_PHASE "  # a child's stdout line ``ADVISOR_PHASE <name>``: a new phase
LOCK_WAIT_PHASE = "waiting for the device"  # the phase of a hold of the device lock that blocks
# a child's stdout line ``ADVISOR_PROGRESS {json}``: how far its phase got (advisor.child.measure
# .Ticker: phase, done, total, unit, phase_s, elapsed_s), every few seconds while it runs
PROGRESS_PREFIX = "ADVISOR_PROGRESS "


def fork_identity() -> dict[str, Any]:
    """What a child forked from a server inherits from that server and no request sets: the
    user, the namespaces and control group, the limits, umask and niceness, the interpreter and
    this package. A shared fork server (``--listen``) sends its own; a process uses it only where
    they equal this process's, so that a child forked there is the child it would start itself.
    (Its module path is a fresh ``python -m`` child's: the interpreter's, with the environment's
    PYTHONPATH, and the child's working directory first.)"""
    namespaces = {}
    for name in ("mnt", "pid", "net", "ipc", "uts", "user", "cgroup"):
        with contextlib.suppress(OSError):
            namespaces[name] = os.readlink(f"/proc/self/ns/{name}")
    try:
        cgroup = Path("/proc/self/cgroup").read_text()
    except OSError:
        cgroup = ""
    return {
        "uid": os.getuid(), "gid": os.getgid(), "groups": sorted(os.getgroups()),
        "namespaces": namespaces, "cgroup": cgroup, "umask": _umask(), "nice": os.nice(0),
        "limits": {name: list(resource.getrlimit(getattr(resource, name)))
                   for name in ("RLIMIT_AS", "RLIMIT_NOFILE", "RLIMIT_CORE", "RLIMIT_FSIZE",
                                "RLIMIT_DATA", "RLIMIT_STACK", "RLIMIT_NPROC", "RLIMIT_CPU")},
        "executable": os.path.realpath(sys.executable), "prefix": sys.prefix,
        "package": str(Path(__file__).resolve().parent),
    }


def _umask() -> int | None:
    """This process's umask, read without setting it (os.umask would, for every thread)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    return None


ChildKind = Literal["trial", "warm", "alone", "probe", "confirm", "artifact", "describe"]
"""trial: one config measured (`advisor.child.trial.TrialRun`); warm: a finished trial's warm
start, a second process on its cache dir (`advisor.child.trial.warm_start`); alone: a replay
trial's serving process again, alone (`advisor.child.trial.serving_alone`); probe: the device's
fingerprint (`advisor.fingerprint.collect`); confirm: leaders and eager fp32 re-measured in one
process; artifact: the warm-start cache artifact saved or loaded (`advisor.child.confirm`);
describe: a workload file imported and its facts returned (`advisor.workload.WorkloadFacts`),
so that the parent never imports it (nor torch)."""
CHILD_KINDS: tuple[ChildKind, ...] = get_args(ChildKind)


def process_name(kind: str) -> str:
    """The name a child of `kind` gives its process (``ps``'s and psutil's name; 15 characters
    at most): ``advisor-trial``, ``advisor-probe``... (a child forked from the fork server keeps
    the server's command line, so this name is what tells the children apart)."""
    return f"advisor-{kind}"[:15]


class _OfWorkload(TypedDict):
    """What every child that runs a workload reads."""

    workload_path: str
    device: str
    # The hash the child checks the file against before importing it; the launcher sets it
    # (`advisor.search.launcher`), None: the file could not be read (the child says so).
    workload_sha256: NotRequired[str | None]


class TrialSpec(_OfWorkload):
    kind: Literal["trial"]
    config: ConfigDict
    shapes: list[dict[str, Any]] | None  # {"dims", "weight", ...} or a traffic; None: the default
    policy: dict[str, Any] | None  # `advisor.child.measure.SamplingPolicy`'s fields
    trial_uuid: str
    started_at: str
    screen_above_ms: float | None
    prune: PruneBar | None
    prune_file: NotRequired[str]  # the bar, rewritten by the parent while the child runs
    # a budgeted sweep's trial: the seconds from ``started_at`` that its replay is sized to (its
    # share of the budget) and that it must end within (the launcher kills it then); the child
    # stops itself before the limit and returns a "stopped" record (advisor.child.replay)
    time_budget_s: NotRequired[float]
    time_limit_s: NotRequired[float]
    # where the child keeps its progress (the last ``ADVISOR_PROGRESS`` state, and what it would
    # store if stopped now), read by the launcher when it kills the child at its time limit
    progress_file: NotRequired[str]
    calls_per_process: NotRequired[int]  # the process a stopped replay's bound is priced over


class _SecondProcess(_OfWorkload):
    """A trial's config started again in a fresh process."""

    config: ConfigDict
    shapes: list[dict[str, Any]] | None
    trial_uuid: str  # the trial it repeats (or a fresh one), for the log


class WarmSpec(_SecondProcess):
    kind: Literal["warm"]


class AloneSpec(_SecondProcess):
    kind: Literal["alone"]
    positions: NotRequired[list[int]]  # a sampled stream: the positions the trial served


class ProbeSpec(TypedDict):
    kind: Literal["probe"]
    device: str


class ConfirmSpec(_OfWorkload):
    kind: Literal["confirm"]
    configs: list[ConfigDict]  # eager fp32 first
    shapes: list[dict[str, Any]]  # {"shape", "dims", "weight"}
    rounds: NotRequired[dict[str, Any] | None]  # `advisor.stats.Rounds`; absent: the device's


class ArtifactSpec(_OfWorkload):
    kind: Literal["artifact"]
    action: Literal["save", "load"]
    config: ConfigDict
    buckets: NotRequired[dict[str, Any] | None]
    artifact_b64: NotRequired[str]  # what "load" loads


class DescribeSpec(_OfWorkload):
    kind: Literal["describe"]  # device: "cpu" (nothing runs on a device)


ChildSpec = (TrialSpec | WarmSpec | AloneSpec | ProbeSpec | ConfirmSpec | ArtifactSpec
             | DescribeSpec)


# -- the results --------------------------------------------------------------------------------
# One result type per kind; every kind but the trial (whose record carries its failure: status,
# failure_reason, error_tail) and the probe (which writes no result when it fails: the parent
# says its last line) fails with the one `ChildFailure`.

ERROR_TAIL_CHARS = 4000  # of a traceback, kept in a failure (and a trial's record)


class ChildFailure(TypedDict):
    """A child that failed: its last line (``error``), the exception's type and the traceback's
    tail, for the parent to log or say."""

    status: Literal["failed"]
    error: str
    error_type: str
    error_tail: str


class WarmResult(TypedDict):
    status: Literal["ok"]
    warm_compile_s: float  # from torch.compile to the first result, on a warm cache dir


class AloneResult(TypedDict):
    """A replay's start-up and stream served again alone (the stream's figures' names)."""

    status: Literal["ok"]
    startup_s: float
    per_request_ms: list[float]
    new_shape: list[int]


class ConfirmResult(TypedDict):
    """The paired re-measurement (advisor.child.confirm): every config's samples per round."""

    status: Literal["ok"]
    host: Any
    fingerprint: Fingerprint
    method: str
    rounds: int
    samples_ms: dict[str, Any]  # config key -> per shape, per round
    compile_s: dict[str, float | None]
    failures: dict[str, Any]
    compile_cache: dict[str, Any]


class ArtifactResult(TypedDict):
    """A cache artifact saved or loaded (advisor.child.confirm): its start-up and what it holds."""

    status: Literal["ok"]
    fingerprint: Fingerprint
    load_s: NotRequired[float]
    start_s: float
    cache: dict[str, int]
    shapes: list[dict[str, Any]]
    reason: NotRequired[str]  # "save" that produced nothing: why
    artifact_b64: NotRequired[str]
    artifacts: NotRequired[dict[str, int]]


class DescribeResult(TypedDict):
    status: Literal["ok"]
    workload: dict[str, Any]  # advisor.workload.WorkloadFacts.to_dict()
    path: str
    source_sha256: str


ChildResult: TypeAlias = ("TrialRecord | Fingerprint | WarmResult | AloneResult | ConfirmResult"
                          " | ArtifactResult | DescribeResult | ChildFailure")


def child_failure(exc: BaseException, tail: str, error: str | None = None) -> ChildFailure:
    """The one failure shape: ``error`` (default: the traceback's last line), the exception's
    type, and ``tail`` (the traceback), cut to its last `ERROR_TAIL_CHARS`."""
    last = error if error is not None else next(
        (line for line in reversed(tail.strip().splitlines()) if line.strip()), str(exc))
    return {"status": "failed", "error": last, "error_type": type(exc).__name__,
            "error_tail": tail[-ERROR_TAIL_CHARS:]}


# -- the result file -----------------------------------------------------------------------------


def write_whole(path: str | Path, data: Any) -> None:
    """Write ``data`` as JSON to ``path`` whole: into ``path.tmp`` first, renamed into place, so
    that a reader finds the old file or the new one, never half of one (a failure midway leaves
    ``path`` as it was and no ``.tmp`` behind). Values JSON lacks are written as their str()."""
    tmp = f"{path}.tmp"
    try:
        with open(tmp, "w") as f:
            json.dump(data, f, default=str)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def write_result(path: str | Path, result: Mapping[str, Any]) -> None:
    """A child's result, written whole (`write_whole`)."""
    write_whole(path, result)


def read_result(path: str | Path) -> dict[str, Any] | None:
    """A child's result; None when it wrote none (it died first)."""
    try:
        with open(path) as f:
            data: dict[str, Any] = json.load(f)
    except FileNotFoundError:
        return None
    return data
