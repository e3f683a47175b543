"""What a serving process pays, from a replay's stream. Pure: plain records in, numbers out.

A replay (advisor.child.replay) models one serving process: start-up (what the strategy prepares
before traffic), then a stream of requests met once, in order, each timed with everything it
triggers (a compile, a CUDA-graph recording, an eager fallback), then the steady state (every
shape already met). `process_life_ms` turns that into the figure a decision rests on when the
traffic varies: the expected cost per request over a process that serves `calls` requests,

    (start-up + the stream's first `calls` requests + the rest at the steady-state mean
     + the new shapes the rest will meet, each at a new shape's extra cost) / calls

where the rest meets new shapes at the late rate: the share of the stream's later half that met a
shape not seen before (on a log: measured on the holdout, requests the strategy was not fitted
to). A bucketed strategy's new shapes inside its grid (every padded dim at or under its top
boundary) are bounded: there are only so many buckets left to meet (the stream's ``grid_left``),
and once they are met no request of the grid compiles again; its new shapes outside the grid
(a dim above every boundary passes unpadded) are not. `flags` names what such a process meets
that its operator should be told.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from advisor import units
from advisor.config import CompileConfig
from advisor.records import Flag, ReplayFigures, ServedAlone, StreamFigures, StreamSample

DEFAULT_CALLS_PER_PROCESS = 10_000
MEMORY_GROWTH_MIN_BYTES = 16 * 2**20  # reserved memory growth below this is allocator noise
MEMORY_GROWTH_SHARE = 0.10  # ... and below this share of what start-up reserved


def decides(replay: ReplayFigures | None) -> bool:
    """Whether a record's deciding figure is its process-life cost: a replay with a stream
    over traffic whose dims vary (otherwise the steady state decides)."""
    return bool(replay and replay.get("stream") and replay.get("varying_dims"))


def process_life_ms(replay: ReplayFigures, calls: int) -> float | None:
    """Expected ms per request over a process that serves `calls` requests (module doc);
    None when the replay has no stream. A sampled stream (``stream["sample"]``) stands for the
    whole holdout, priced by `stream_total_ms`."""
    stream = replay.get("stream")
    if not stream or not stream.get("per_request_ms") or calls < 1:
        return None
    paid = served(stream)
    costs: list[float] = paid["per_request_ms"]
    steady = float(replay["mean_ms"])
    sample = stream.get("sample")
    if sample:
        length = int(sample["of_requests"])
        whole = stream_total_ms(costs, paid["new_shape"], sample, steady)
        total = paid["startup_s"] * 1000 + whole * min(calls, length) / length
    else:
        length = len(costs)
        total = paid["startup_s"] * 1000 + sum(costs[:calls])
    rest = calls - length
    if rest > 0:
        total += rest * steady + late_new_shapes_ms(stream, rest, steady)
    return float(total / calls)


def _weighted_mean(pairs: Sequence[tuple[float, float]]) -> float | None:
    weight = sum(w for w, _ in pairs)
    return sum(w * c for w, c in pairs) / weight if weight > 0 else None


def sample_classes(costs: Sequence[float], new_in_run: Sequence[int], sample: StreamSample
                   ) -> tuple[list[tuple[float, float]], list[tuple[float, float]],
                              list[tuple[float, float]]]:
    """A sampled stream's served requests as (weight, cost) pairs in three classes: those that
    meet a new shape in the whole holdout too (``new``), those that meet a shape met before
    in both (``repeat``), and those new only because the sample skipped the request that met
    their shape first (``skipped_first``: they paid a new shape the whole stream would not)."""
    first_in_whole, first_in_run = set(sample["new_positions"]), set(new_in_run)
    new, repeat, skipped_first = [], [], []
    for j, (p, w, c) in enumerate(zip(sample["positions"], sample["weights"], costs,
                                      strict=True)):
        if p in first_in_whole:
            new.append((float(w), float(c)))
        elif j in first_in_run:
            skipped_first.append((float(w), float(c)))
        else:
            repeat.append((float(w), float(c)))
    return new, repeat, skipped_first


def stream_total_ms(costs: Sequence[float], new_in_run: Sequence[int], sample: StreamSample,
                    steady_ms: float) -> float:
    """The whole holdout's cost (ms) from a sample of it served in order (`sample_classes`):
    its requests that meet a new shape (known from the plan, whether served or not) at the
    weighted mean cost of the served ones that did (else of those new only in the sample, else
    the steady state), the others at the weighted mean of the served repeats (else the steady
    state: a shape met again costs what the steady state measured)."""
    new, repeat, skipped_first = sample_classes(costs, new_in_run, sample)
    n_new = len(sample["new_positions"])
    n_repeat = int(sample["of_requests"]) - n_new
    new_ms = _weighted_mean(new) or _weighted_mean(skipped_first) or steady_ms
    repeat_ms = _weighted_mean(repeat) or steady_ms
    return n_new * new_ms + n_repeat * repeat_ms


def bound_costs(costs: Sequence[float], new_in_run: Sequence[int],
                sample: StreamSample | None) -> list[float]:
    """The served costs a lower bound may use (`process_life_lower_bound_ms`): every one of a
    whole stream; of a sampled one, all but those that paid a new shape only because the sample
    skipped its first request (the whole stream pays less there)."""
    if sample is None:
        return list(costs)
    first_in_whole, first_in_run = set(sample["new_positions"]), set(new_in_run)
    return [c for j, (p, c) in enumerate(zip(sample["positions"], costs, strict=False))
            if p in first_in_whole or j not in first_in_run]


def process_life_lower_bound_ms(startup_s: float, paid_ms: Sequence[float], calls: int) -> float:
    """A figure `process_life_ms` can only exceed, from a stream served in part: the start-up
    (`startup_s`) and the first requests' costs (`paid_ms`, in order), the rest unknown:

        (start-up + the first min(k, calls) of the k requests paid) / calls

    Proof. `process_life_ms` is ``(S + sum(c[:calls]) + R * steady + late) / calls`` over the
    whole stream c of n >= k requests, R = max(0, calls - n). Every c_j is a duration (>= 0),
    so sum(c[:calls]) >= sum(c[:min(k, calls)]); the steady-state mean is a mean of durations,
    so R * steady >= 0; `late_new_shapes_ms` is an expected count (>= 0) times max(0, ...),
    so late >= 0. Hence process_life_ms >= this bound, whatever the requests not yet served
    cost. The unserved requests count 0, not the cheapest request seen so far: a request met
    again after warm-up, or a smaller shape met later, can cost less than any request paid so
    far, so that figure bounds nothing. (The start-up priced is the trial's own: a trial that
    is stopped is never served again alone, `served`.)"""
    if calls < 1:
        raise ValueError(f"calls must be at least 1, not {calls}")
    return float((startup_s * 1000 + sum(paid_ms[:calls])) / calls)


def pruned_text(pruned: Mapping[str, Any]) -> str:
    """How every surface shows a pruned trial: its proven lower bound, never a measured figure."""
    return f"pruned: at least {units.duration_ms(pruned.get('lower_bound_ms'))} a request"


def stopped_text(stopped: Mapping[str, Any]) -> str:
    """How every surface shows a trial its time stopped (advisor.records.Stopped): where it
    was, how far its stream got, and its bound where what it served proves one; never a
    measured figure."""
    phase = str(stopped.get("phase") or "?")
    served, total = stopped.get("requests_served") or 0, stopped.get("requests_total") or 0
    if phase == "replaying" or (phase in ("measuring", "profiling", "reference") and total):
        where = f"after {served} of {total} requests" + (
            "" if phase == "replaying" else f", while {phase}")
    elif phase == "start-up":
        where = "in its start-up"
    elif phase == "reference":
        where = "while running its fp32 eager reference"
    else:
        where = f"while {phase}"
    bound = stopped.get("lower_bound_ms")
    return f"stopped by the budget {where}" + (
        f": at least {units.duration_ms(bound)} a request" if bound is not None else "")


def progress_text(info: Mapping[str, Any], label: str = "", short: bool = False) -> str:
    """A child's progress (advisor.child.measure.Ticker) in words: ``replaying fp32 + eager:
    request 87 of 150, 41 s``; ``short``: ``request 87/150, 41 s`` (the bar's phase column,
    whose config column names the config)."""
    phase, unit = str(info.get("phase") or ""), str(info.get("unit") or "")
    done, total = int(info.get("done") or 0), int(info.get("total") or 0)
    seconds = units.duration_s(float(info.get("phase_s") or 0.0))
    if short:
        head = f"{unit} {done + 1}/{total}" if total and unit else phase
        return f"{head}, {seconds}"
    head = phase if not label else f"{label}: {phase}" if ":" in phase else f"{phase} {label}"
    where = f": {unit} {done + 1} of {total}" if total and unit else ""
    return f"{head}{where}, {seconds}"


def served(stream: StreamFigures) -> StreamFigures | ServedAlone:
    """The start-up and stream that price a serving process: those measured again alone when
    the sweep did (``alone``: its trials ran at once, paying start-ups and new shapes beside
    each other's compiles), else the trial's own."""
    alone = stream.get("alone")
    return alone if alone else stream


def startup_s(stream: StreamFigures) -> float:
    """The start-up a serving process pays (`served`)."""
    return float(served(stream)["startup_s"])


def late_new_shapes_ms(stream: StreamFigures, rest: int, steady_ms: float) -> float:
    """What the new shapes that `rest` more requests will meet add above the steady state (ms
    in all): the stream's later half's new-shape rate times `rest` (those inside a bucketed
    strategy's grid no more than the buckets it has left, ``grid_left``) times a late new
    shape's cost above the steady state. From the served stream (`served`); which new shapes
    fell inside the grid is the stream's own (the same requests, the same order). A sampled
    stream: the rate from the whole holdout's new shapes (known from the plan), the cost from
    the served ones (weighted)."""
    paid = served(stream)
    costs = paid["per_request_ms"]
    sample = stream.get("sample")
    if sample:
        length = int(sample["of_requests"])
        half = length // 2
        late = [p for p in sample["new_positions"] if p >= half]
        bounded = set(sample["bounded_new_positions"])
        new, _, skipped_first = sample_classes(costs, paid["new_shape"], sample)
        late_paid = [(float(w), float(c)) for p, w, c in zip(
            sample["positions"], sample["weights"], costs, strict=True)
            if p >= half and p in set(late)]
        late_ms = (_weighted_mean(late_paid) or _weighted_mean(new)
                   or _weighted_mean(skipped_first))
    else:
        length, half = len(costs), len(costs) // 2
        late = [i for i in range(half, length) if i in set(paid["new_shape"])]
        bounded = set(stream.get("bounded_new_shape") or [])
        late_ms = statistics.fmean(costs[i] for i in late) if late else None
    if not late or late_ms is None:
        return 0.0
    later = max(1, length - half)
    extra = max(0.0, late_ms - steady_ms)
    grid_left = stream.get("grid_left")
    inside = sum(1 for i in late if i in bounded) if grid_left is not None else 0
    expected = (len(late) - inside) / later * rest  # outside the grid: no bound
    if grid_left is not None:
        expected += min(inside / later * rest, float(grid_left))
    return expected * extra


def flags(replay: ReplayFigures, *, cudagraphs: bool, compiled: bool) -> list[Flag]:
    """What a serving process of this config meets and must be told: ``{"flag", "message"}``."""
    out: list[Flag] = []

    def flag(name: str, message: str) -> None:
        out.append({"flag": name, "message": message})

    stream: StreamFigures | dict[str, Any] = replay.get("stream") or {}
    varying = replay.get("varying_dims") or []
    if cudagraphs and varying and not replay.get("boundaries"):
        flag("cudagraph_per_shape",
             f"CUDA graphs with unbucketed varying dims ({', '.join(varying)}): one graph is "
             f"recorded per distinct shape ({replay.get('trace_shapes', 0)} in this stream); "
             "bucket the traffic, or see torch's cudagraph_dynamic_shape_warn_limit and "
             "cudagraph_skip_dynamic_graphs")
    late = stream.get("late_new_shape_share") or 0.0
    if late > 0 and stream.get("new_shape_mean_ms") is not None:
        left = stream.get("grid_left")
        bound = (f"; inside the buckets' grid at most {left} more" if left is not None
                 and stream.get("bounded_new_shape") else "")
        flag("new_shapes_persist",
             f"{late:.0%} of the later requests met a shape not seen before, at "
             f"{units.duration_ms(stream['new_shape_mean_ms'])} each on average "
             f"(steady state {units.duration_ms(replay.get('mean_ms', 0))}){bound}")
    if compiled and replay.get("recompile_limit_hit"):
        flag("recompile_limit",
             f"dynamo's recompile limit ({replay.get('recompile_limit')}) was reached: later "
             "new shapes run eagerly, silently (raise torch._dynamo.config.recompile_limit, "
             "or bucket)")
    if replay.get("eager_fallbacks"):
        flag("eager_fallback",
             f"{replay['eager_fallbacks']} shapes ran eagerly "
             f"({replay.get('eager_fallback_requests', 0):.0%} of the requests)")
    grown, base = stream.get("mem_growth_bytes"), stream.get("mem_startup_bytes") or 0
    if grown and grown > max(MEMORY_GROWTH_MIN_BYTES, MEMORY_GROWTH_SHARE * base):
        flag("memory_growth",
             f"GPU memory reserved grew by {grown / 2**20:.0f} MiB while serving "
             f"(start-up reserved {base / 2**20:.0f} MiB)")
    return out


# --- the strategies side by side (parent side: plain records in, rows out) --------------------


def strategy_rows(
    records: Sequence[Mapping[str, Any]], calls: int | None = None
) -> list[dict[str, Any]]:
    """Replay records of one sweep as rows for a side-by-side table, best first.

    Only the strategies of the best compiled mode and dtype (the passed compiled replay with the
    lowest deciding figure) are kept, plus the eager fp32 baseline. ``per_request_ms`` is the
    deciding figure: the process-life cost when the traffic varies (``decided`` = "process"),
    else the steady-state expected latency ("steady")."""
    calls = calls or DEFAULT_CALLS_PER_PROCESS
    replays = [r for r in records if r.get("status") == "ok" and isinstance(r.get("replay"), dict)]
    if not replays:
        return []

    def figure(r: Mapping[str, Any]) -> float:
        life = process_life_ms(r["replay"], calls) if decides(r["replay"]) else None
        return r["replay"]["expected_ms"] if life is None else life

    compiled = [r for r in replays if r["config"]["mode"] != "eager"]
    candidates = [r for r in compiled if r.get("passed")] or compiled or replays
    best = min(candidates, key=figure)
    mode, dtype = best["config"]["mode"], best["config"]["dtype"]
    rows = []
    for r in replays:
        cfg = r["config"]
        baseline = cfg["mode"] == "eager" and cfg["dtype"] == "fp32"
        if not baseline and (cfg["mode"], cfg["dtype"]) != (mode, dtype):
            continue
        rp: ReplayFigures = r["replay"]
        stream = rp.get("stream")
        seen: StreamFigures | dict[str, Any] = stream or {}
        rows.append(
            {
                "config": CompileConfig.from_dict(cfg).label,
                "strategy": rp["strategy"] if not baseline else "eager fp32 (baseline)",
                "per_request_ms": figure(r),
                "decided": "process" if decides(rp) and stream else "steady",
                "expected_ms": rp["expected_ms"],
                "steady_mean_ms": rp["mean_ms"],
                "stream_mean_ms": (statistics.fmean(served(stream)["per_request_ms"])
                                   if stream else None),
                "startup_s": startup_s(stream) if stream else None,
                "alone": bool(seen.get("alone")),
                "new_shape_events": seen.get("new_shape_events"),
                "new_shape_share": seen.get("new_shape_share"),
                "new_shape_mean_ms": seen.get("new_shape_mean_ms"),
                "last_new_shape_s": seen.get("last_new_shape_s"),
                "p50_ms": rp["p50_ms"],
                "p99_ms": rp["p99_ms"],
                "padding_waste": rp["padding_waste"],
                "graphs": rp["graphs"],
                "recompiles": rp["recompiles"],
                "compile_s": rp["compile_s_total"],
                "eager_fallbacks": rp["eager_fallbacks"],
                "boundaries": rp["boundaries"],
                "flags": [f["flag"] for f in rp.get("flags") or []],
                "passed": bool(r.get("passed")),
            }
        )
    rows.sort(key=lambda row: (not row["passed"], row["per_request_ms"]))
    return rows


def split_note(records: Sequence[Mapping[str, Any]]) -> str | None:
    """How a log was split for the replays, and the holdout's new-shape rate (None: no log)."""
    for r in records:
        rp = (r.get("replay") if r.get("status") == "ok" else None) or {}
        stream = rp.get("stream") or {}
        if stream.get("split"):
            sample = stream.get("sample")
            if sample:
                length = int(sample["of_requests"])
                what = (f"served {stream['requests']:,} of the next {length:,} in order (a "
                        f"sample: each stands for the requests skipped after it; holdout "
                        f"{rp['holdout']:.0%} of the log); "
                        f"{len(sample['new_positions']) / length:.0%} of those {length:,}")
            else:
                what = (f"served the next {stream['requests']:,} (holdout "
                        f"{rp['holdout']:.0%} of the log); {stream['new_shape_share']:.0%} "
                        "of them")
            return (
                f"fitted on the log's first {stream['fit_requests']:,} requests, {what} met a "
                f"shape not seen before ({CompileConfig.from_dict(r['config']).label})"
            )
    return None


def format_boundaries(boundaries: dict[str, list[int]]) -> str:
    return "; ".join(f"{d}: {','.join(map(str, b))}" for d, b in boundaries.items()) or "-"
