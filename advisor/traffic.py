"""Traffic: the shapes a component serves, with their weights. Pure: no torch, no database.

Two sources. A workload declares its traffic (``Workload.traffic``: shapes with weights), and a
user can give a log of real requests, a CSV file (``advisor sweep FILE --traffic requests.csv``)::

    batch,seq           header: the workload's dim names, in any order
    50,128              one observed request per row
    12,64
    50,128

An optional ``count`` column says how many requests a row stands for (``batch,seq,count``).
Blank lines and lines starting with ``#`` are skipped. Identical rows are merged: the traffic is
the distinct shapes, each weighted by its share of the requests. A file that is missing, empty,
has no rows, names a column that is not a dim of the workload, misses one of its dims, holds a
value that is not a positive whole number (a dim above `MAX_DIM`, a count or a log above
`MAX_REQUESTS` requests), or is not valid CSV (an unterminated quote) is a `ConfigError` whose
one line names the file, the line and the fix. Weights (declared or carried in a trial spec) are
finite and positive.

A log keeps its order (`Traffic.log`: the requests, first to last, as indices into the shapes):
a replay fits what it learns (bucket boundaries, the shapes warmed at start-up) on the earlier
part of the log and serves the later part, the holdout, in order (`Traffic.split`), so a
strategy is judged on requests it was not fitted to. `holdout` is the later part's share.

A trial receives its traffic inside the spec's ``shapes`` list: entries ``{"dims", "weight",
"traffic": source}`` (`Traffic.to_spec` / `Traffic.from_spec`); such a trial replays a trace sampled
from it (advisor.child.replay) instead of timing each shape on its own. `Traffic.trace` samples the
trace: a fixed seed and the same traffic give the same trace, for every config.
"""

from __future__ import annotations

import csv
import io
import math
import random
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from advisor.config import MAX_DIM, shape_name
from advisor.errors import ConfigError

COUNT_COLUMN = "count"
TRACE_SEED = 0
HOLDOUT = 0.5  # the share of a log that replays serve; the earlier rest is what they fit on
MAX_REQUESTS = 1_000_000  # a log's requests, counts included (replays serve a few hundred)


@dataclass(frozen=True, eq=False)
class Traffic:
    """Distinct shapes with weights that sum to 1, in a stable order (sorted by their sizes).

    `requests`: how many requests the shapes were counted from (a log), or None (declared).
    `source`: where it came from (a file name, or ``workload``).
    `log`: a log's requests in order, as indices into `shapes` (None: declared traffic).
    `holdout`: the share of the log, at its end, that a replay serves (`split`).
    """

    shapes: tuple[tuple[dict[str, int], float], ...]
    requests: int | None = None
    source: str = "workload"
    log: tuple[int, ...] | None = None
    holdout: float = HOLDOUT

    @classmethod
    def from_pairs(
        cls,
        pairs: Iterable[tuple[dict[str, int], float]],
        requests: int | None = None,
        source: str = "workload",
    ) -> Traffic:
        """Merge equal shapes, normalise the weights, sort by sizes."""
        merged: dict[tuple[tuple[str, int], ...], float] = {}
        for dims, weight in pairs:
            if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not (
                    math.isfinite(weight) and weight > 0):
                raise ConfigError(f"{source}: traffic weight {weight!r} of {dims!r} must be a "
                                  "finite number above 0, e.g. 0.5")
            key = tuple(dims.items())
            merged[key] = merged.get(key, 0.0) + float(weight)
        total = sum(merged.values())
        if not merged or total <= 0:
            raise ConfigError(f"{source}: the traffic has no shapes with a positive weight")
        order = sorted(merged, key=lambda key: tuple(size for _, size in key))
        shapes = tuple((dict(key), merged[key] / total) for key in order)
        return cls(shapes, requests, source)

    @property
    def dims(self) -> list[str]:
        return list(self.shapes[0][0])

    @property
    def weights(self) -> list[float]:
        return [w for _, w in self.shapes]

    def values(self, dim: str) -> list[int]:
        """The distinct sizes of one dim, ascending."""
        return sorted({dims[dim] for dims, _ in self.shapes})

    def varying_dims(self) -> list[str]:
        """The dims whose size changes from request to request (the others never recompile)."""
        return [d for d in self.dims if len(self.values(d)) > 1]

    def trace(self, n: int, seed: int = TRACE_SEED) -> list[int]:
        """`n` requests sampled (with replacement, by weight) as indices into `shapes`."""
        rng = random.Random(seed)
        return rng.choices(range(len(self.shapes)), weights=self.weights, k=n)

    def split(self, n: int) -> tuple[list[tuple[dict[str, int], float]], list[int], int]:
        """(what a replay fits on, the requests it serves in order, where the holdout starts).

        A log: the earlier part's shapes weighted by their counts (in order of first
        appearance), then the first `n` requests
        of the holdout (the log's last `holdout` share, at least one request). Declared
        traffic: all of it, and `n` requests sampled by weight (`trace`); the split is 0."""
        if not self.log or len(self.log) < 2:
            return list(self.shapes), self.trace(n), 0
        cut = min(len(self.log) - 1, max(1, round(len(self.log) * (1 - self.holdout))))
        counts: dict[int, int] = {}  # in order of first appearance
        for i in self.log[:cut]:
            counts[i] = counts.get(i, 0) + 1
        fit = [(dict(self.shapes[i][0]), float(c)) for i, c in counts.items()]
        return fit, list(self.log[cut : cut + n]), cut

    def to_spec(self) -> list[dict[str, Any]]:
        """The trial spec's ``shapes`` entries that ask the child for a replay (``traffic``
        holds the source's name; a log adds each shape's positions in it, ``at``, and the
        holdout share)."""
        entries: list[dict[str, Any]] = [
            {"dims": dict(d), "weight": w, "traffic": self.source} for d, w in self.shapes]
        if self.log is not None:
            at: list[list[int]] = [[] for _ in entries]
            for position, i in enumerate(self.log):
                at[i].append(position)
            for e, positions in zip(entries, at, strict=True):
                e.update(at=positions, holdout=self.holdout)
        return entries

    @classmethod
    def from_spec(cls, entries: Any) -> Traffic | None:
        """The traffic inside a trial spec's ``shapes``, or None when it holds none."""
        marked = [e for e in entries or () if isinstance(e, dict) and e.get("traffic")]
        if not marked:
            return None
        source = marked[0]["traffic"] if isinstance(marked[0]["traffic"], str) else "spec"
        traffic = cls.from_pairs(((e["dims"], e["weight"]) for e in entries), source=source)
        if not all("at" in e for e in entries):
            return traffic
        index = {tuple(d.items()): i for i, (d, _) in enumerate(traffic.shapes)}
        log: dict[int, int] = {}
        for e in entries:
            for position in e["at"]:
                log[int(position)] = index[tuple(e["dims"].items())]
        return replace(traffic, requests=len(log), log=tuple(log[p] for p in sorted(log)),
                       holdout=float(entries[0].get("holdout", HOLDOUT)))

    def with_holdout(self, share: float) -> Traffic:
        """The same traffic with another holdout share (0 < share < 1)."""
        if not 0 < share < 1:
            raise ConfigError(f"holdout share {share!r} must lie between 0 and 1, e.g. 0.5")
        return replace(self, holdout=share)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "requests": self.requests,
            "ordered": self.log is not None,
            "holdout": self.holdout if self.log is not None else None,
            "shapes": [{"shape": shape_name(d), "dims": d, "weight": w} for d, w in self.shapes],
        }


def _where(source: str, line: int | None) -> str:
    return f"{source} line {line}" if line is not None else source


def _header(row: list[str], source: str, line: int, dims: Sequence[str] | None) -> list[str]:
    names = [name.strip() for name in row]
    example = ",".join(dims) if dims else "batch,seq"
    for name in names:
        if not name.isidentifier():
            raise ConfigError(
                f"{_where(source, line)}: header column {name!r} is not a dim name; "
                f"the first line must name the dims, e.g. {example}"
            )
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(f"{_where(source, line)}: column {twice[0]} is named twice")
    if dims is not None:
        allowed = ", ".join(dims)
        for name in names:
            if name not in dims and name != COUNT_COLUMN:
                raise ConfigError(
                    f"{_where(source, line)}: column {name!r} is not a dim of the "
                    f"workload (its dims: {allowed}; optional: {COUNT_COLUMN})"
                )
        missing = [d for d in dims if d not in names]
        if missing:
            raise ConfigError(
                f"{_where(source, line)}: no column for dim {missing[0]} "
                f"(the workload's dims: {allowed})"
            )
    if all(name == COUNT_COLUMN for name in names):
        raise ConfigError(
            f"{_where(source, line)}: the header names no dims; "
            f"the first line must name the dims, e.g. {example}"
        )
    return names


def _positive(text: str, name: str, source: str, line: int) -> int:
    value = text.strip()
    most = MAX_REQUESTS if name == COUNT_COLUMN else MAX_DIM
    digits = value.lstrip("0")
    if not (value.isascii() and value.isdigit()) or not digits:
        raise ConfigError(
            f"{_where(source, line)}: {name} must be a positive whole number, not {value[:40]!r}"
        )
    if len(digits) > len(str(most)) or int(digits) > most:  # length first: int() has a limit
        raise ConfigError(
            f"{_where(source, line)}: {name} {digits[:40]} is above the most advisor takes "
            f"({most:,}); " + ("sample the log (every Nth request) instead"
                              if name == COUNT_COLUMN else "give the request's real size")
        )
    return int(digits)


def _rows(reader: Any, source: str) -> Iterator[list[str]]:
    """The reader's rows; a CSV error (an unterminated quote) as a ConfigError naming the line."""
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            raise ConfigError(
                f"{_where(source, reader.line_num)}: not valid CSV ({e}: is a quote left "
                "open?); write one request per line, e.g. 50,128"
            ) from None
        yield row


def parse_traffic(text: str, source: str = "traffic", dims: Sequence[str] | None = None) -> Traffic:
    """A traffic CSV's text -> `Traffic`; `dims`: the workload's dim names (checked, and the
    order of every shape's dims), or None to take the header's."""
    header: list[str] | None = None
    pairs: list[tuple[dict[str, int], float]] = []
    requests = 0
    reader = csv.reader(io.StringIO(text), strict=True)  # an unterminated quote is an error
    for row in _rows(reader, source):
        line = reader.line_num
        if not row or not "".join(row).strip() or row[0].lstrip().startswith("#"):
            continue
        if header is None:
            header = _header(row, source, line, dims)
            continue
        if len(row) != len(header):
            raise ConfigError(
                f"{_where(source, line)}: {len(row)} values for {len(header)} "
                f"columns ({','.join(header)})"
            )
        values = {
            name: _positive(v, name, source, line) for name, v in zip(header, row, strict=True)
        }
        count = values.pop(COUNT_COLUMN, 1)
        requests += count
        if requests > MAX_REQUESTS:
            raise ConfigError(
                f"{_where(source, line)}: the log holds more than {MAX_REQUESTS:,} requests, the "
                "most advisor replays from; sample it (every Nth request) instead"
            )
        order = list(dims) if dims is not None else list(values)
        pairs.append(({d: values[d] for d in order}, float(count)))
    if header is None:
        example = ",".join(dims) if dims else "batch,seq"
        raise ConfigError(
            f"{source}: the traffic file is empty; write a header naming the dims "
            f"({example}), then one row per observed request"
        )
    if not pairs:
        raise ConfigError(
            f"{source}: no requests after the header; add one row per observed request"
        )
    traffic = Traffic.from_pairs(pairs, requests=int(sum(w for _, w in pairs)), source=source)
    index = {tuple(d.items()): i for i, (d, _) in enumerate(traffic.shapes)}
    log = tuple(index[tuple(d.items())] for d, count in pairs for _ in range(int(count)))
    return replace(traffic, log=log)


def load_traffic(path: str | Path, dims: Sequence[str] | None = None) -> Traffic:
    """Read and parse a traffic CSV file (see the module docstring)."""
    from advisor import paths

    file = Path(path)
    found = paths.lookup(file, "--traffic")  # a folder this user cannot enter: one line
    if found is None or stat.S_ISDIR(found.st_mode):  # a pipe or a device: read, bounded
        raise ConfigError(
            f"{file}: no such traffic file; pass a CSV with a header naming the "
            "dims and one row per request"
        )
    data = paths.read_bounded(file, "--traffic", paths.TRAFFIC_MAX_BYTES,
                              fix="sample the log (every Nth request) instead")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigError(f"{file}: not a UTF-8 text file; save the traffic as CSV") from None
    return parse_traffic(text, str(file), dims)
