"""What a serving process records and watches: its traffic, and what its new shapes cost.

`TrafficRecorder` appends each request's dims to a CSV that ``advisor sweep --traffic`` reads
(header: the workload's dims; one row per request, in order). Off by default
(``advisor.apply(..., record_traffic=PATH)``); bounded (``max_rows``, then one warning and no
more rows); cheap (a dict lookup and a buffered write per request, flushed every `FLUSH_EVERY`
rows and at exit). A request's dims come from its tensors: the axes that carry each dim are
found once, by building the workload's inputs for two shapes that differ only in that dim.

`ServingMonitor` watches the shapes a served process meets and warns (`ServingWarning`, kept in
``events`` too) when it meets what a replay flags (advisor.serving.flags): dynamo's recompile
limit reached (new shapes then run eagerly), CUDA graphs recorded for more than
`CUDAGRAPH_SHAPES_WARN` distinct unbucketed shapes, GPU memory reserved growing while serving.
Each warning is given once per process.
"""

from __future__ import annotations

import atexit
import csv
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from advisor.child.tensors import tensors
from advisor.errors import ConfigError

FLUSH_EVERY = 100
MAX_ROWS = 100_000
CUDAGRAPH_SHAPES_WARN = 16
MEMORY_GROWTH_BYTES = 256 * 2**20
LIMIT_HIT = "Dynamo recompile limit exceeded"


class ServingWarning(UserWarning):
    """A served process met what its recommendation's replay flags (advisor.serving)."""


def dim_axes(make: Callable[[dict[str, int]], Any], base: dict[str, int]
             ) -> dict[str, tuple[int, int]]:
    """For every dim: one (tensor position, axis) whose size is that dim, found by building the
    inputs of `base` and of `base` with that dim changed."""
    first = tensors(make(dict(base)))
    found: dict[str, tuple[int, int]] = {}
    for dim, size in base.items():
        probe = tensors(make({**base, dim: size + 1}))
        for t, (x, y) in enumerate(zip(first, probe, strict=True)):
            axes = [a for a in range(x.dim()) if x.shape[a] == size and y.shape[a] == size + 1]
            if axes:
                found[dim] = (t, axes[0])
                break
    return found


class TrafficRecorder:
    """Appends each request's dims to `path` (see the module docstring)."""

    def __init__(self, path: str | Path, workload: Any, device: str,
                 max_rows: int = MAX_ROWS) -> None:
        self.path, self.dims = Path(path), list(workload.shape)
        self.max_rows, self.rows = max_rows, 0
        self.axes = dim_axes(lambda d: workload.inputs(d, device), dict(workload.shape))
        missing = [d for d in self.dims if d not in self.axes]
        if missing:
            raise ConfigError(f"record_traffic: no input axis carries dim {missing[0]} of "
                              f"{workload.name}; pass dims to Applied.request instead")
        self._check_header()
        self._file = self.path.open("a", newline="", encoding="utf-8")
        self._writer = csv.writer(self._file)
        if self.path.stat().st_size == 0:
            self._writer.writerow(self.dims)
        atexit.register(self.close)

    def _check_header(self) -> None:
        if not self.path.is_file() or self.path.stat().st_size == 0:
            return
        with self.path.open(encoding="utf-8") as f:
            header = f.readline().strip()
        if header != ",".join(self.dims):
            raise ConfigError(f"record_traffic: {self.path} holds another header ({header!r}, "
                              f"not {','.join(self.dims)!r}); choose another file")

    def dims_of(self, args: Any) -> dict[str, int]:
        found = tensors(args)
        return {d: int(found[t].shape[a]) for d, (t, a) in self.axes.items()}

    def record(self, dims: dict[str, int]) -> None:
        if self.rows >= self.max_rows:
            return
        self._writer.writerow([dims[d] for d in self.dims])
        self.rows += 1
        if self.rows == self.max_rows:
            warnings.warn(f"advisor.apply: recorded {self.max_rows:,} requests to {self.path}; "
                          "recording stops here", ServingWarning, stacklevel=3)
        if self.rows % FLUSH_EVERY == 0 or self.rows == self.max_rows:
            self._file.flush()

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()


class ServingMonitor:
    """Watches a served process's shapes and warns once per kind (see the module docstring)."""

    def __init__(self, *, compiled: bool, cudagraphs: bool, bucketed: bool, cuda: bool) -> None:
        self.compiled, self.cudagraphs, self.bucketed, self.cuda = (
            compiled, cudagraphs, bucketed, cuda)
        self.seen: set[tuple[tuple[int, ...], ...]] = set()
        self.events: list[dict[str, str]] = []
        self._given: set[str] = set()
        self._hits = _limit_hits()
        self._mem0: int | None = None

    def started(self) -> None:
        """Serving starts (warm-up done): the baseline for memory growth and limit hits."""
        import torch

        self._hits = _limit_hits()
        self._mem0 = int(torch.cuda.memory_reserved()) if self.cuda else None

    def is_new(self, args: Any) -> bool:
        key = tuple(tuple(t.shape) for t in tensors(args))
        if key in self.seen:
            return False
        self.seen.add(key)
        return True

    def after_new_shape(self) -> None:
        """After a call that met a new shape: check what it may have triggered."""
        if self.compiled and _limit_hits() > self._hits:
            self._warn("recompile_limit", "dynamo's recompile limit was reached: new shapes now "
                       "run eagerly (bucket the traffic, or raise "
                       "torch._dynamo.config.recompile_limit)")
        if self.cudagraphs and not self.bucketed and len(self.seen) > CUDAGRAPH_SHAPES_WARN:
            self._warn("cudagraph_per_shape", f"{len(self.seen)} distinct shapes met: CUDA "
                       "graphs record one graph per shape (memory and a recording per new "
                       "shape); a bucketed strategy bounds them")
        if self.cuda and self._mem0 is not None:
            import torch

            grown = int(torch.cuda.memory_reserved()) - self._mem0
            if grown > MEMORY_GROWTH_BYTES:
                self._warn("memory_growth", f"GPU memory reserved grew by {grown / 2**20:.0f} "
                           "MiB since warm-up")

    def _warn(self, flag: str, message: str) -> None:
        if flag in self._given:
            return
        self._given.add(flag)
        self.events.append({"flag": flag, "message": message})
        warnings.warn(f"advisor.apply: {message}", ServingWarning, stacklevel=4)


def _limit_hits() -> int:
    import torch._dynamo.utils as dynamo_utils

    return sum(v for k, v in dynamo_utils.counters["unimplemented"].items()
               if str(k).startswith(LIMIT_HIT))
