"""Run a trial in a fresh process: spawn, watch, time out, kill, classify.

Each trial runs as ``python -m advisor.child.main`` (forked from a process that imported torch
once where it can be: `advisor.search.forkserver`) in a new session (its own process group, so a
timeout or an interrupt kills Inductor's compile workers too), with its own empty
``TORCHINDUCTOR_CACHE_DIR`` (Triton's cache beneath it) so the cold start is honest. A second,
short process on the same cache dir measures the warm start. Only JSON crosses.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from advisor import settings, tempdirs
from advisor.config import CompileConfig
from advisor.errors import TrialFailed, WorkloadError
from advisor.protocol import (
    CHILD_MODULE,
    LOCK_WAIT_PHASE,
    PHASE_PREFIX,
    PROGRESS_PREFIX,
    AloneSpec,
    ArtifactSpec,
    ChildSpec,
    ConfirmSpec,
    DescribeSpec,
    TrialSpec,
    WarmSpec,
    read_result,
    write_whole,
)
from advisor.records import PHASE_ORDER, Fingerprint, PruneBar, TrialRecord, empty_record
from advisor.search import forkserver
from advisor.workload import (
    DescribedWorkload,
    WorkloadFacts,
    pin_sha256,
    read_workload_file,
)

log = logging.getLogger(__name__)
STDERR_TAIL_CHARS = 4000
DEFAULT_TIMEOUT_S = 900.0
IMPORT_TIMEOUT_S = 300.0  # a workload file's import, to describe it (a probe's bound too)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _exited_unreaped(pid: int, timeout_s: float) -> bool:
    """Wait up to `timeout_s` for this process's child `pid` to exit, leaving it unreaped: its
    zombie holds the pid, and so its process group's id; False while it still runs."""
    deadline = time.monotonic() + timeout_s
    delay = 0.0005
    while True:
        try:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except ChildProcessError:  # reaped meanwhile (a poll): it has exited
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(delay, left))
        delay = min(delay * 2, 0.05)


class Child:
    """One child process running `python -m advisor.child.main SPEC RESULT` (`CHILD_MODULE`)."""

    def __init__(self, spec: ChildSpec, workdir: Path, env: dict[str, str],
                 on_phase: Callable[[str], None] | None,
                 on_progress: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.spec_path = workdir / f"spec-{uuid.uuid4().hex[:8]}.json"
        self.result_path = workdir / f"result-{uuid.uuid4().hex[:8]}.json"
        self.stderr_path = workdir / f"stderr-{uuid.uuid4().hex[:8]}.txt"
        self.spec_path.write_text(json.dumps(spec))
        self.timed_out = False
        self._stderr = open(self.stderr_path, "wb")  # noqa: SIM115 - closed in wait()
        argv = [CHILD_MODULE, str(self.spec_path), str(self.result_path)]
        self.proc: subprocess.Popen[bytes] | forkserver.ForkedProcess
        self.proc = forkserver.spawn(argv, env, self._stderr.fileno()) or subprocess.Popen(
            [sys.executable, "-m", *argv],
            stdout=subprocess.PIPE, stderr=self._stderr, env=env, start_new_session=True,
        )
        self._t0 = time.monotonic()
        self.phases: list[tuple[str, float]] = []  # (phase, seconds since the start) as read
        self.ended_s: float | None = None  # seconds from the start to the exit
        log.debug("child pid %d started: %s", self.proc.pid, _kind(spec))
        self._reader = threading.Thread(target=self._read, args=(on_phase, on_progress),
                                        daemon=True)
        self._reader.start()

    def _read(self, on_phase: Callable[[str], None] | None,
              on_progress: Callable[[dict[str, Any]], None] | None) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            line = raw.decode(errors="replace").rstrip("\n")
            if line.startswith(PHASE_PREFIX):
                name = line[len(PHASE_PREFIX):]
                self.phases.append((name, time.monotonic() - self._t0))
                if on_phase is not None:
                    on_phase(name)
            elif line.startswith(PROGRESS_PREFIX) and on_progress is not None:
                try:  # the child's Ticker: {"phase", "done", "total", "unit", ...}
                    info = json.loads(line[len(PROGRESS_PREFIX):])
                except ValueError:
                    continue
                if isinstance(info, dict):
                    on_progress(info)

    def kill(self) -> None:
        """Kill the child's whole process group (compile workers included). A child already
        reaped is left alone, its group killed before (by `wait`, or by the fork server for a
        forked one, `advisor.child.server`): the pid, free since, may be another process's."""
        if (self.proc.reaped if isinstance(self.proc, forkserver.ForkedProcess)
                else self.proc.returncode is not None):
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:  # a forked child not yet in its own session: it alone
            if self.proc.poll() is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(self.proc.pid, signal.SIGKILL)
        except PermissionError:
            pass

    def wait(self, timeout_s: float) -> int:
        fresh = isinstance(self.proc, subprocess.Popen)
        try:
            if fresh and not _exited_unreaped(self.proc.pid, timeout_s):
                raise subprocess.TimeoutExpired(self.proc.args, timeout_s)
            if fresh:  # its stragglers (compile workers), while its zombie holds the group's id
                self.kill()
            code = self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.timed_out = True
            self.kill()
            code = self.proc.wait()
        self.ended_s = time.monotonic() - self._t0
        self.kill()  # a forked child whose server died first: its stragglers too
        self._reader.join(timeout=5)
        self._stderr.close()
        log.debug("child pid %d exited: rc %d after %.1f s%s", self.proc.pid, code,
                  time.monotonic() - self._t0, " (timed out, killed)" if self.timed_out else "")
        return code

    def result(self) -> dict[str, Any] | None:
        """The child's result (`advisor.protocol.read_result`); None: it wrote none."""
        return read_result(self.result_path)

    def phase_seconds(self) -> dict[str, float]:
        """Where the child's time went (`phase_seconds`), once it has exited."""
        return phase_seconds(self.phases, self.ended_s)

    def stderr_tail(self) -> str:
        text = self.stderr_path.read_text(errors="replace") if self.stderr_path.exists() else ""
        return text[-STDERR_TAIL_CHARS:]


# A trial child's phase lines (advisor.child.*), grouped into the phases a stall is read by.
PHASE_GROUPS = {
    "loading": "import", "preparing": "build", "reference": "build",
    LOCK_WAIT_PHASE: "lock wait", "compiling": "compile",
    "measuring": "measure", "profiling": "measure", "replaying": "measure",
}


def phase_seconds(phases: list[tuple[str, float]], ended_s: float | None) -> dict[str, float]:
    """Seconds per phase from a child's phase lines (name, seconds since its start, as read),
    in `PHASE_ORDER`: ``start`` until its first line (the interpreter and advisor's imports),
    then each line's group (`PHASE_GROUPS`; another name stands for itself) until the next
    line or the exit (``ended_s``; unknown: the last phase is left out)."""
    out: dict[str, float] = {}
    marks = [("start", 0.0), *phases]
    for (name, at), (_, until) in zip(marks, [*marks[1:], ("end", ended_s)], strict=True):
        if until is None:
            continue
        group = PHASE_GROUPS.get(name, name)
        out[group] = out.get(group, 0.0) + max(0.0, until - at)
    ordered = {k: out.pop(k) for k in PHASE_ORDER if k in out}
    return {k: round(v, 3) for k, v in {**ordered, **out}.items()}


KIND_WORDS = {"warm": "warm start", "alone": "serving alone"}  # for the log; else the kind


def _kind(spec: ChildSpec) -> str:
    """What a child is, for the log: trial, warm start, probe, confirmation, artifact ..."""
    if spec["kind"] == "probe":
        return f"probe of {spec['device']}"
    of: Mapping[str, Any] = spec
    kind = KIND_WORDS.get(spec["kind"], spec["kind"])
    config = of.get("config") or {}
    return f"{kind} {of.get('trial_uuid', '')} {config.get('mode', '')} {config.get('dtype', '')}"


BAR_REFRESH_S = 2.0  # how often a running replay's bar is looked up again (`_BarFeed`)


class _BarFeed:
    """Writes a replay's bar to the file its child rereads (`Launcher.run`'s ``prune_refresh``):
    at once, then every `BAR_REFRESH_S` while the child runs, whole (a temporary file renamed).
    A lookup that fails (the database briefly away) keeps the last bar."""

    def __init__(self, path: Path, bar: PruneBar | None,
                 refresh: Callable[[], PruneBar | None]) -> None:
        self.path, self.refresh, self.bar = path, refresh, bar
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="prune-bar", daemon=True)

    def start(self) -> _BarFeed:
        self._write(self._lookup() or self.bar)
        self._thread.start()
        return self

    def _lookup(self) -> PruneBar | None:
        try:
            return self.refresh()
        except Exception as e:  # noqa: BLE001 - the next lookup tries again
            log.info("prune bar lookup failed, kept the last one: %s", e)
            return None

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(BAR_REFRESH_S):
            bar = self._lookup()
            if bar is not None and bar != self.bar:
                self._write(bar)

    def _write(self, bar: PruneBar | None) -> None:
        self.bar = bar
        write_whole(self.path, bar)


def _child_env(cache_dir: Path, device: str) -> dict[str, str]:
    env = settings.child_env()
    env["TORCHINDUCTOR_CACHE_DIR"] = str(cache_dir)
    env["TRITON_CACHE_DIR"] = str(cache_dir / "triton")
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("TORCHINDUCTOR_FORCE_DISABLE_CACHES", None)
    if device.startswith("cuda"):
        env.setdefault("CUDA_MODULE_LOADING", "LAZY")
    return env


def _checked_sha256(path: str) -> str | None:
    """The hash a child checks its workload file against before importing it (the spec's
    ``workload_sha256``): the one this process checked the file with (loaded it, or compared it
    with the stored hash: `advisor.workload.checked_sha256`), else the file's bytes now. A file
    swapped after the check is refused by the child instead of run. None: the file cannot be
    read (the child says so, as its trial's failure)."""
    from advisor.errors import WorkloadError
    from advisor.workload import checked_sha256, workload_sha256

    try:
        return checked_sha256(path) or workload_sha256(path)
    except WorkloadError:
        return None


def _crash_reason(code: int, timed_out: bool, interrupted: bool) -> tuple[str, str]:
    if interrupted:
        return "interrupted", "the trial was stopped because the sweep was interrupted"
    if timed_out:
        return "timeout", "the trial ran past its time limit and its process group was killed"
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else code
        if -code == signal.SIGKILL:
            return "crash", (
                f"the child was killed by {name} (often the kernel's out-of-memory killer)"
            )
        return "crash", f"the child died of signal {name}"
    return "crash", f"the child exited with code {code} without writing a result"


class Probe:
    """A device's fingerprint, collected in a child started at once and read when needed
    (`result`), so that the parent's own work meanwhile (imports, loading workloads) overlaps
    the child's start; `close` kills the child if it still runs and removes its files."""

    def __init__(self, device: str, timeout_s: float = 300.0,
                 env: dict[str, str] | None = None) -> None:
        self.device = device
        self.timeout_s = timeout_s
        self._workdir = tempdirs.make("probe")
        self.child = Child({"kind": "probe", "device": device}, self._workdir,
                           {**_child_env(self._workdir / "inductor-cache", device), **(env or {})},
                           None)
        self._result: Fingerprint | None = None

    def result(self) -> Fingerprint:
        """The fingerprint (waiting for the child once); raises TrialFailed when it died."""
        if self._result is None:
            try:
                code = self.child.wait(self.timeout_s)
                result = self.child.result()
                if result is None:  # its last line names the cause (a setting, a driver)
                    tail = self.child.stderr_tail()
                    last = (tail.strip().splitlines() or [""])[-1]
                    raise TrialFailed("crash", f"probing {self.device} failed (exit code {code})"
                                      + (f": {last}" if last else ""), tail)
                self._result = cast(Fingerprint, result)  # the probe child's JSON
            finally:
                self.close()
        return self._result

    def close(self) -> None:
        if self.child.proc.poll() is None:
            self.child.kill()
            self.child.wait(self.timeout_s)
        shutil.rmtree(self._workdir, ignore_errors=True)


def describe(path: str | Path, limit_s: float,
             on_wait: Callable[[float], None] | None = None) -> DescribedWorkload:
    """A workload file's facts (`advisor.workload.WorkloadFacts`), read by a child that imports
    it (forked like a trial's), so that this process imports neither the file nor torch. The
    bytes hashed here are the bytes the child imports (and this process's children after it:
    `advisor.workload.pin_sha256`). A bad file, an import that fails or takes longer than
    ``limit_s`` (a download, a lock, an endless loop at import), or a child that dies: a
    WorkloadError, one line naming the file, and for the time limit how to raise it.
    ``on_wait(seconds)``: called every `SAY_EVERY_S` while the import goes on (the CLI says
    "importing FILE (12 s)")."""
    file = Path(path)
    sha256 = hashlib.sha256(read_workload_file(file)).hexdigest()
    pin_sha256(file, sha256)
    workdir = tempdirs.make("describe")
    child = None
    try:
        spec: DescribeSpec = {"kind": "describe", "workload_path": str(file), "device": "cpu",
                              "workload_sha256": sha256}
        child = Child(spec, workdir, _child_env(workdir / "inductor-cache", "cpu"), None)
        code = _wait_saying(child, limit_s, on_wait)
        result = child.result()
        if child.timed_out:
            raise WorkloadError(f"{file}: importing it took longer than {limit_s:g} s, its "
                                "limit (does it download, wait or loop at import?); nothing ran. "
                                "If it needs longer, raise the limit: "
                                f"{settings.IMPORT_TIMEOUT_S.name}=SECONDS, and --timeout "
                                "where that is lower")
        if result is None:
            last = (child.stderr_tail().strip().splitlines() or [""])[-1]
            raise WorkloadError(f"{file}: import failed: {_crash_reason(code, False, False)[1]}"
                                + (f": {last}" if last else ""))
        if result.get("status") != "ok":
            raise WorkloadError(str(result.get("error")))
        return DescribedWorkload(WorkloadFacts.from_dict(result["workload"]),
                                 Path(result["path"]), str(result["source_sha256"]))
    finally:
        if child is not None and child.proc.poll() is None:  # interrupted meanwhile
            child.kill()
            child.wait(5.0)
        shutil.rmtree(workdir, ignore_errors=True)


SAY_EVERY_S = 5.0  # how often a wait for a workload's import is said (`describe`'s ``on_wait``)


def _wait_saying(child: Child, limit_s: float, on_wait: Callable[[float], None] | None) -> int:
    """`Child.wait` for at most ``limit_s``, calling ``on_wait(seconds so far)`` every
    `SAY_EVERY_S` while the child runs."""
    t0 = time.monotonic()
    while on_wait is not None:
        left = limit_s - (time.monotonic() - t0)
        if left <= SAY_EVERY_S:
            break
        try:
            child.proc.wait(timeout=SAY_EVERY_S)
            break
        except subprocess.TimeoutExpired:
            on_wait(time.monotonic() - t0)
    return child.wait(max(0.0, limit_s - (time.monotonic() - t0)))


class Launcher:
    """Runs trials one at a time; `kill()` (from a signal handler) stops the running one."""

    def __init__(self, timeout_s: float = DEFAULT_TIMEOUT_S,
                 cache_root: str | Path | None = None,
                 env: dict[str, str] | None = None) -> None:
        """`cache_root`: keep each trial's Inductor cache under cache_root/<trial uuid>.
        `env`: variables every child gets on top of this process's (a device lock, say)."""
        self.timeout_s = timeout_s
        self.cache_root = Path(cache_root) if cache_root is not None else None
        self.env = dict(env or {})
        self._child: Child | None = None
        self._interrupted = False

    def kill(self) -> None:
        self._interrupted = True
        if self._child is not None:
            self._child.kill()

    def run(self, workload_path: str | Path, config: CompileConfig, device: str,
            shapes: list[dict[str, Any]] | None = None, *, measure_warm: bool = True,
            policy: dict[str, Any] | None = None,
            on_phase: Callable[[str], None] | None = None,
            screen_above_ms: float | None = None,
            prune: PruneBar | None = None,
            prune_refresh: Callable[[], PruneBar | None] | None = None,
            on_progress: Callable[[dict[str, Any]], None] | None = None,
            time_budget_s: float | None = None, time_limit_s: float | None = None,
            calls_per_process: int | None = None) -> TrialRecord:
        """Run one trial and return its record (see advisor.records); never raises for the trial.
        `screen_above_ms`: cut the measurement short when a first short one is above it (the
        config is clearly dominated; see TrialRun._screen); such a trial skips the warm start.
        `prune`: a replay stops serving once its process-life cost is proven above this bar
        (advisor.search.sweep.prune_bar; status "pruned", no warm start). `prune_refresh`:
        the bar as it stands now (other trials finish meanwhile in a pooled sweep), written to a
        file the child rereads, every `BAR_REFRESH_S` while it runs. `on_progress`: the child's
        progress every few seconds (advisor.child.measure.Ticker's JSON). `time_budget_s`,
        `time_limit_s`: a budgeted sweep's trial, its share (what its replay is sized to) and
        the seconds it must end within (the child's limit; no longer than this launcher's
        ``timeout_s``): a trial killed at that limit is returned "stopped" with what its
        progress file kept (advisor.records.Stopped), not failed. `calls_per_process`: the
        process a stopped replay's bound is priced over."""
        spec: TrialSpec = {
            "kind": "trial",
            "workload_path": str(Path(workload_path).resolve()),
            "config": config.to_dict(),
            "device": device,
            "shapes": shapes,
            "policy": policy,
            "trial_uuid": str(uuid.uuid4()),
            "started_at": now_iso(),
            "screen_above_ms": screen_above_ms,
            "prune": prune,
        }
        if time_limit_s is not None and time_limit_s <= self.timeout_s:  # else its own timeout
            spec["time_limit_s"] = time_limit_s
        if time_budget_s is not None:
            spec["time_budget_s"] = min(time_budget_s, spec.get("time_limit_s", self.timeout_s))
        if calls_per_process is not None:
            spec["calls_per_process"] = calls_per_process
        if self.cache_root is not None:
            workdir = self.cache_root / str(spec["trial_uuid"])
            workdir.mkdir(parents=True)
        else:
            workdir = tempdirs.make("trial")
        spec["progress_file"] = str(workdir / "progress.json")
        feed = None
        if prune_refresh is not None:
            spec["prune_file"] = str(workdir / "prune-bar.json")
            feed = _BarFeed(workdir / "prune-bar.json", prune, prune_refresh).start()
        try:
            try:
                record = self._run_child(spec, workdir, on_phase, on_progress)
            finally:
                if feed is not None:
                    feed.stop()
            if (record["status"] == "ok" and measure_warm and config.compiled
                    and not self._interrupted and not record.get("screened_out")):
                warm: WarmSpec = {
                    "kind": "warm", "workload_path": spec["workload_path"],
                    "workload_sha256": spec.get("workload_sha256"), "device": device,
                    "config": spec["config"], "shapes": shapes, "trial_uuid": spec["trial_uuid"],
                }
                record["warm_compile_s"] = self._warm(warm, workdir, on_phase)
        finally:
            self._child = None
            if self.cache_root is None:
                shutil.rmtree(workdir, ignore_errors=True)
        record["finished_at"] = now_iso()
        return record

    def warm_start(self, workload_path: str | Path, config: CompileConfig, device: str,
                   shapes: list[dict[str, Any]] | None, trial_uuid: str) -> float | None:
        """The warm start of a finished trial whose cache this launcher kept (under
        cache_root/<trial uuid>): a fresh process compiling from that cache, time to the first
        result. None when the cache is not here (no cache root, or the trial ran on another
        host) or the start failed."""
        if self.cache_root is None or not config.compiled:
            log.debug("warm start of %s: %s", trial_uuid, "eager compiles nothing"
                      if self.cache_root is not None else "no caches kept")
            return None
        workdir = self.cache_root / trial_uuid
        if not (workdir / "inductor-cache").is_dir():
            log.debug("warm start of %s: no kept cache under %s (another host's trial?)",
                      trial_uuid, self.cache_root)
            return None
        spec: WarmSpec = {
            "kind": "warm", "workload_path": str(Path(workload_path).resolve()),
            "config": config.to_dict(), "device": device, "shapes": shapes,
            "trial_uuid": trial_uuid,
        }
        try:
            return self._warm(spec, workdir, None)
        finally:
            self._child = None

    def serve_alone(self, workload_path: str | Path, config: CompileConfig, device: str,
                    shapes: list[dict[str, Any]] | None,
                    positions: list[int] | None = None) -> dict[str, Any] | None:
        """A replay trial's serving process again, alone (advisor.child.replay.serve_alone): a
        fresh process on an empty cache dir with this launcher's environment (the host's
        compile threads, where a pooled sweep's workers share them out); its start-up and
        stream (``positions``: a sampled stream's, the same requests). None when its child
        failed (logged)."""
        spec: AloneSpec = {
            "kind": "alone", "workload_path": str(Path(workload_path).resolve()),
            "config": config.to_dict(), "device": device, "shapes": shapes,
            "trial_uuid": str(uuid.uuid4()),
        }
        if positions:
            spec["positions"] = list(positions)
        workdir = tempdirs.make("alone")
        try:
            child = self._start(spec, workdir, None)
            child.wait(self.timeout_s)
            result = child.result() or {"error": child.stderr_tail()[-300:]}
        finally:
            self._child = None
            shutil.rmtree(workdir, ignore_errors=True)
        if "error" in result:
            log.info("serving %s alone failed: %s", config.label, str(result["error"])[-300:])
            return None
        return result

    def probe(self, device: str) -> Fingerprint:
        """The fingerprint of `device`, collected in a child (the parent never touches a GPU)."""
        probe = Probe(device, min(self.timeout_s, 300), self.env)
        self._child = probe.child
        try:
            if self._interrupted:
                probe.close()
            return probe.result()
        finally:
            self._child = None

    def kept_caches(self, trials: dict[str, str | None]) -> dict[str, Path]:
        """Of ``trials`` (config key -> trial uuid), those whose Inductor cache this launcher
        kept (under cache_root/<trial uuid>): config key -> the cache dir."""
        if self.cache_root is None:
            return {}
        dirs = {key: self.cache_root / uuid_ / "inductor-cache"
                for key, uuid_ in trials.items() if uuid_}
        return {key: d for key, d in dirs.items() if d.is_dir()}

    def run_child(self, spec: ConfirmSpec | ArtifactSpec,
                  on_phase: Callable[[str], None] | None = None,
                  seed: list[Path] | None = None) -> dict[str, Any]:
        """Run another kind of child (``spec["kind"]``: advisor.search.confirm's confirmation and
        cache-artifact children) in a fresh process with its own cache dir, empty or merged
        from the kept caches in ``seed`` (their entries are named by content hashes, so they
        merge); returns its result. Raises TrialFailed when the child dies or times out
        without one."""
        workdir = tempdirs.make(spec["kind"])
        try:
            for cache in seed or []:
                shutil.copytree(cache, workdir / "inductor-cache", dirs_exist_ok=True)
            child = self._start(spec, workdir, on_phase)
            code = child.wait(self.timeout_s)
            result = child.result()
            if result is None or self._interrupted:
                reason, message = _crash_reason(code, child.timed_out, self._interrupted)
                raise TrialFailed(reason, message, child.stderr_tail())
            return result
        finally:
            self._child = None
            shutil.rmtree(workdir, ignore_errors=True)

    def _start(self, spec: ChildSpec, workdir: Path,
               on_phase: Callable[[str], None] | None,
               on_progress: Callable[[dict[str, Any]], None] | None = None) -> Child:
        if spec["kind"] != "probe" and not spec.get("workload_sha256"):
            spec["workload_sha256"] = _checked_sha256(spec["workload_path"])
        env = {**_child_env(workdir / "inductor-cache", spec["device"]), **self.env}
        self._child = Child(spec, workdir, env, on_phase, on_progress)
        if self._interrupted:
            self._child.kill()
        return self._child

    def _run_child(self, spec: TrialSpec, workdir: Path,
                   on_phase: Callable[[str], None] | None,
                   on_progress: Callable[[dict[str, Any]], None] | None = None) -> TrialRecord:
        child = self._start(spec, workdir, on_phase, on_progress)
        code = child.wait(spec.get("time_limit_s", self.timeout_s))
        record = cast("TrialRecord | None", child.result())  # what advisor.child.trial wrote
        if record is not None and not self._interrupted:
            record["phases_s"] = child.phase_seconds()
            if record.get("device_wait_s"):
                log.debug("trial %s waited %.1f s for the device lock", spec["trial_uuid"],
                          record["device_wait_s"])
            return record
        log.info("trial %s left no record (rc %d%s): %s", spec["trial_uuid"], code,
                 ", interrupted" if self._interrupted else "", child.stderr_tail()[-300:])
        if child.timed_out and "time_limit_s" in spec and not self._interrupted:
            return stopped_record(spec, child)  # the budget's limit: kept as stopped
        fallback = empty_record()
        reason, message = _crash_reason(code, child.timed_out, self._interrupted)
        fallback.update({
            "trial_uuid": spec["trial_uuid"], "config": spec["config"],
            "config_key": CompileConfig.from_dict(spec["config"]).key, "device": spec["device"],
            "started_at": spec["started_at"], "status": "failed", "failure_reason": reason,
            "error_tail": (message + "\n" + child.stderr_tail()).strip(),
        })
        fallback["phases_s"] = child.phase_seconds()  # where a stalled trial's time went
        return fallback

    def _warm(self, spec: WarmSpec, workdir: Path,
              on_phase: Callable[[str], None] | None) -> float | None:
        child = self._start(spec, workdir, on_phase)
        child.wait(self.timeout_s)
        result = child.result() or {}
        if result.get("status") == "failed":  # advisor.protocol.ChildFailure
            log.info("warm start of %s failed: %s", spec["config"], result.get("error"))
        value = result.get("warm_compile_s")
        return float(value) if value is not None else None


def stopped_record(spec: TrialSpec, child: Child) -> TrialRecord:
    """The record of a trial killed at its budget's time limit (``time_limit_s``): status
    "stopped" with what its progress file kept (the child's `Ticker`: the phase it was in, the
    requests it served and the bound they prove, advisor.records.Stopped), its phases, and no
    figure."""
    progress = read_result(spec["progress_file"]) if spec.get("progress_file") else None
    kept = (progress or {}).get("stopped") or {}
    phase = str(kept.get("phase") or (progress or {}).get("phase")
                or (child.phases[-1][0] if child.phases else "start"))
    limit = spec["time_limit_s"]
    record = empty_record()
    record.update({
        "trial_uuid": spec["trial_uuid"], "config": spec["config"],
        "config_key": CompileConfig.from_dict(spec["config"]).key, "device": spec["device"],
        "started_at": spec["started_at"], "status": "stopped",
    })
    record["stopped"] = {
        "lower_bound_ms": kept.get("lower_bound_ms"),
        "requests_served": int(kept.get("requests_served") or 0),
        "requests_total": int(kept.get("requests_total") or 0),
        "phase": phase,
        "reason": f"its time limit ({limit:.0f} s of the budget) ended while it was {phase}, "
                  "in a call it could not stop; its process was killed",
        "elapsed_s": round(child.ended_s or limit, 3),
        "stream_s": kept.get("stream_s"),
        "share_s": spec.get("time_budget_s"),
        "calls_per_process": int(kept.get("calls_per_process") or 0)
        or spec.get("calls_per_process") or 0,
    }
    record["phases_s"] = child.phase_seconds()
    return record
