"""What a serving process pays, from a replay's stream. Pure: plain records in, numbers out.

A replay (advisor.replay) models one serving process: start-up (what the strategy prepares
before traffic), then a stream of requests met once, in order, each timed with everything it
triggers (a compile, a CUDA-graph recording, an eager fallback), then the steady state (every
shape already met). `process_life_ms` turns that into the figure a decision rests on when the
traffic varies: the expected cost per request over a process that serves `calls` requests,

    (start-up + the stream's first `calls` requests + the rest at the steady-state mean, each
     paying the late new-shape rate times a new shape's extra cost) / calls

where the late rate is the share of the stream's later half that met a shape not seen before
(on a log: measured on the holdout, requests the strategy was not fitted to). `flags` names what
such a process meets that its operator should be told.
"""

from __future__ import annotations

import statistics
from typing import Any

DEFAULT_CALLS_PER_PROCESS = 10_000
MEMORY_GROWTH_MIN_BYTES = 16 * 2**20  # reserved memory growth below this is allocator noise
MEMORY_GROWTH_SHARE = 0.10  # ... and below this share of what start-up reserved


def decides(replay: dict[str, Any] | None) -> bool:
    """Whether a record's deciding figure is its process-life cost: a replay with a stream
    over traffic whose dims vary (otherwise the steady state decides)."""
    return bool(replay and replay.get("stream") and replay.get("varying_dims"))


def process_life_ms(replay: dict[str, Any], calls: int) -> float | None:
    """Expected ms per request over a process that serves `calls` requests (module doc);
    None when the replay has no stream."""
    stream = replay.get("stream")
    if not stream or not stream.get("per_request_ms") or calls < 1:
        return None
    costs: list[float] = stream["per_request_ms"]
    steady = float(replay["mean_ms"])
    total = stream["startup_s"] * 1000 + sum(costs[:calls])
    if calls > len(costs):
        total += (calls - len(costs)) * (steady + late_new_shape_extra_ms(stream, steady))
    return total / calls


def late_new_shape_extra_ms(stream: dict[str, Any], steady_ms: float) -> float:
    """The extra cost per request that new shapes add once the stream is under way: the late
    new-shape share times a new shape's cost above the steady state."""
    costs, new = stream["per_request_ms"], set(stream["new_shape"])
    half = len(costs) // 2
    late = [costs[i] for i in range(half, len(costs)) if i in new]
    if not late:
        return 0.0
    share = len(late) / max(1, len(costs) - half)
    return share * max(0.0, statistics.fmean(late) - steady_ms)


def flags(replay: dict[str, Any], *, cudagraphs: bool, compiled: bool) -> list[dict[str, str]]:
    """What a serving process of this config meets and must be told: ``{"flag", "message"}``."""
    out: list[dict[str, str]] = []
    stream = replay.get("stream") or {}
    varying = replay.get("varying_dims") or []
    padded = bool(replay.get("boundaries"))
    if cudagraphs and varying and not padded:
        out.append({"flag": "cudagraph_per_shape", "message": (
            f"CUDA graphs with unbucketed varying dims ({', '.join(varying)}): one graph is "
            f"recorded per distinct shape ({replay.get('trace_shapes', 0)} in this stream); "
            "bucket the traffic or see torch's cudagraph_dynamic_shape_warn_limit and "
            "cudagraph_skip_dynamic_graphs")})
    late = stream.get("late_new_shape_share") or 0.0
    if late > 0 and stream.get("new_shape_mean_ms") is not None:
        out.append({"flag": "new_shapes_persist", "message": (
            f"{late:.0%} of the later requests met a shape not seen before, at "
            f"{stream['new_shape_mean_ms']:.3g} ms each on average "
            f"(steady state {replay.get('mean_ms', 0):.3g} ms)")})
    if compiled and replay.get("recompile_limit_hit"):
        out.append({"flag": "recompile_limit", "message": (
            f"dynamo's recompile limit ({replay.get('recompile_limit')}) was reached: later new "
            "shapes run eagerly, silently (raise torch._dynamo.config.recompile_limit or bucket)")})
    if replay.get("eager_fallbacks"):
        out.append({"flag": "eager_fallback", "message": (
            f"{replay['eager_fallbacks']} shapes ran eagerly "
            f"({replay.get('eager_fallback_requests', 0):.0%} of the requests)")})
    grown, base = stream.get("mem_growth_bytes"), stream.get("mem_startup_bytes") or 0
    if grown and grown > max(MEMORY_GROWTH_MIN_BYTES, MEMORY_GROWTH_SHARE * base):
        out.append({"flag": "memory_growth", "message": (
            f"GPU memory reserved grew by {grown / 2**20:.0f} MiB while serving "
            f"(start-up reserved {base / 2**20:.0f} MiB)")})
    return out
