"""Shape buckets: pad each varying dim of a request up to a boundary. Pure: no torch.

A bucketed strategy (``buckets:pow2``, ``buckets:multiple-N``, ``buckets:fitted-K``) pads every
dim that varies in the traffic up to the smallest boundary at or above its size; dims that never
vary are left alone (they never cause a recompile). Each bucket is one static graph, compiled and
warmed once at start-up, so serving never recompiles; the price is the padding.

Boundaries:

- ``pow2``: the next power of two.
- ``multiple-N``: the next multiple of N.
- ``fitted-K``: K boundaries per varying dim, chosen to minimise the expected padded cost of the
  observed traffic (`fit`).

Cost model. A request's cost is the number of elements its padded shape computes: the product of
its padded dims (the fixed dims are a common factor). That is exact for per-token work (linear
layers, norms, activations: the bulk of an encoder at these sizes) and an underestimate for
attention, which grows with seq²; it is the same yardstick for every strategy. The expected cost
of a set of boundaries is ``sum(weight * prod(padded dims))`` over the traffic; the padding waste
is the share of that cost spent on padding, ``1 - sum(w * prod(dims)) / sum(w * prod(padded))``.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from advisor.config import shape_strategy

Shapes = Sequence[tuple[dict[str, int], float]]
MAX_ROUNDS = 50


def next_pow2(value: int) -> int:
    return 1 << max(0, (value - 1).bit_length())


def next_multiple(value: int, n: int) -> int:
    return -(-value // n) * n


def varying_dims(shapes: Shapes) -> list[str]:
    dims = list(shapes[0][0]) if shapes else []
    return [d for d in dims if len({s[d] for s, _ in shapes}) > 1]


def pad_value(value: int, bounds: Sequence[int]) -> int:
    """The smallest boundary >= value; a value above every boundary passes unpadded."""
    i = bisect.bisect_left(bounds, value)
    return bounds[i] if i < len(bounds) else value


def expected_cost(shapes: Shapes, bounds: Mapping[str, Sequence[int]]) -> float:
    """``sum(weight * prod(padded dims))``: the expected elements computed per request."""
    return sum(
        w * math.prod(pad_value(v, bounds[d]) if d in bounds else v for d, v in dims.items())
        for dims, w in shapes
    )


def padding_waste(shapes: Shapes, bounds: Mapping[str, Sequence[int]]) -> float:
    """The share of the computed elements that are padding (0 without padding)."""
    padded = expected_cost(shapes, bounds)
    real = sum(w * math.prod(dims.values()) for dims, w in shapes)
    return 1.0 - real / padded if padded else 0.0


# --- one dim: exact ---------------------------------------------------------------------------


def _prefix(weights: dict[int, float]) -> tuple[list[int], list[float]]:
    values = sorted(weights)
    prefix = [0.0]
    for v in values:
        prefix.append(prefix[-1] + weights[v])
    return values, prefix


def fit_1d(weights: dict[int, float], k: int) -> tuple[int, ...]:
    """At most `k` boundaries minimising ``sum(weight[v] * pad(v))`` over the observed sizes.

    Splitting a group never costs more, so with more than `k` sizes the best cover uses exactly
    `k` groups. Layer g holds, for every last size j, the cheapest cover of sizes 0..j by g
    groups and where its last group starts; the group cost ``values[j] * W(i..j)`` is Monge, so
    the best start never moves left as j grows and each layer is solved by divide and conquer.
    """
    values, prefix = _prefix(weights)
    n = len(values)
    if k >= n:
        return tuple(values)

    def group(i: int, j: int) -> float:  # sizes i..j (0-based, inclusive) padded to values[j]
        return values[j] * (prefix[j + 1] - prefix[i])

    cost = [group(0, j) for j in range(n)]
    starts: list[list[int]] = [[0] * n]
    for _ in range(1, k):
        new, start = [math.inf] * n, [0] * n
        stack = [(0, n - 1, 1, n - 1)]
        while stack:
            lo, hi, opt_lo, opt_hi = stack.pop()
            if lo > hi:
                continue
            mid = (lo + hi) // 2
            best, best_i = math.inf, opt_lo
            for i in range(opt_lo, min(mid, opt_hi) + 1):
                c = cost[i - 1] + group(i, mid)
                if c < best:
                    best, best_i = c, i
            new[mid], start[mid] = best, best_i
            stack.append((lo, mid - 1, opt_lo, best_i))
            stack.append((mid + 1, hi, best_i, opt_hi))
        cost = new
        starts.append(start)
    bounds, j = [], n - 1
    for layer in range(k - 1, -1, -1):
        bounds.append(values[j])
        j = starts[layer][j] - 1
    return tuple(sorted(bounds))


def fit_1d_brute(weights: dict[int, float], k: int) -> tuple[int, ...]:
    """The same as `fit_1d` by plain O(k n^2) dynamic programming (a reference for tests)."""
    values, prefix = _prefix(weights)
    n = len(values)
    if k >= n:
        return tuple(values)
    # best[g][j]: the cheapest cover of sizes 0..j by g groups, and where its last group starts
    best = [[(math.inf, 0)] * n for _ in range(k + 1)]
    for j in range(n):
        best[1][j] = (values[j] * prefix[j + 1], 0)
    for g in range(2, k + 1):
        for j in range(n):
            best[g][j] = min(
                (
                    (best[g - 1][i - 1][0] + values[j] * (prefix[j + 1] - prefix[i]), i)
                    for i in range(1, j + 1)
                ),
                default=(math.inf, 0),
            )
    bounds, j = [], n - 1
    for g in range(k, 0, -1):
        bounds.append(values[j])
        j = best[g][j][1] - 1
    return tuple(sorted(bounds))


# --- several dims: coordinate descent ---------------------------------------------------------


def _dim_weights(shapes: Shapes, dim: str, bounds: Mapping[str, Sequence[int]]) -> dict[int, float]:
    """Each size of `dim` weighted by its requests' weight times their other padded dims."""
    weights: dict[int, float] = {}
    for dims, w in shapes:
        others = math.prod(
            pad_value(v, bounds[d]) if d in bounds else v for d, v in dims.items() if d != dim
        )
        weights[dims[dim]] = weights.get(dims[dim], 0.0) + w * others
    return weights


def _descend(
    shapes: Shapes, dims: list[str], k: int, bounds: dict[str, tuple[int, ...]]
) -> dict[str, tuple[int, ...]]:
    bounds = dict(bounds)
    cost = expected_cost(shapes, bounds)
    for _ in range(MAX_ROUNDS):
        changed = False
        for dim in dims:
            candidate = {**bounds, dim: fit_1d(_dim_weights(shapes, dim, bounds), k)}
            new_cost = expected_cost(shapes, candidate)
            if new_cost < cost * (1 - 1e-12):
                bounds, cost, changed = candidate, new_cost, True
        if not changed:
            break
    return bounds


def _snap(bounds: Sequence[int], values: Sequence[int]) -> tuple[int, ...]:
    """Each boundary lowered onto the largest observed size it covers (empty ones dropped)."""
    snapped = set()
    for b in bounds:
        covered = [v for v in values if v <= b]
        if covered:
            snapped.add(max(covered))
    return tuple(sorted(snapped))


def fit(shapes: Shapes, k: int) -> dict[str, tuple[int, ...]]:
    """At most `k` boundaries per varying dim minimising the expected padded cost.

    With one varying dim the problem is exact: the best boundaries lie on observed sizes (lowering a
    boundary to the largest size it covers only saves), and a dynamic programme over the sorted
    distinct sizes finds the optimal K (`fit_1d`; the group cost ``v_j * W(i..j)`` is Monge, so each
    of the K layers is solved by divide and conquer in O(n log n)). With several varying dims the
    product couples them: each dim is refitted exactly with the other dims' padding held fixed (each
    observation weighted by its other dims' padded sizes), round after round, until no dim changes
    (coordinate descent; the cost never rises, so it stops). It starts twice, from the per-dim fit
    against unpadded other dims (independent dims) and, when it fits in K, from the power-of-two
    boundaries lowered onto observed sizes, and keeps the cheaper: fitted-K is never worse than pow2
    on its own traffic whenever pow2 needs no more than K boundaries per dim.
    """
    dims = varying_dims(shapes)
    if not dims:
        return {}
    starts = []
    independent = {d: fit_1d(_dim_weights(shapes, d, {}), k) for d in dims}
    starts.append(independent)
    pow2 = {d: _snap(pow2_bounds(shapes)[d], sorted({s[d] for s, _ in shapes})) for d in dims}
    if all(len(b) <= k for b in pow2.values()):
        starts.append(pow2)
    results = [_descend(shapes, dims, k, start) for start in starts]
    return min(results, key=lambda b: expected_cost(shapes, b))


def pow2_bounds(shapes: Shapes) -> dict[str, tuple[int, ...]]:
    return {d: tuple(sorted({next_pow2(s[d]) for s, _ in shapes})) for d in varying_dims(shapes)}


def multiple_bounds(shapes: Shapes, n: int) -> dict[str, tuple[int, ...]]:
    return {
        d: tuple(sorted({next_multiple(s[d], n) for s, _ in shapes})) for d in varying_dims(shapes)
    }


# --- a strategy's plan ------------------------------------------------------------------------


@dataclass(frozen=True)
class BucketPlan:
    """How a shape strategy maps request shapes to the shapes the compiled graph sees.

    `bounds`: the boundaries of each padded dim (empty for static, dynamic and mark_dynamic,
    which pass every shape as it is).
    """

    strategy: str
    bounds: dict[str, tuple[int, ...]] = field(default_factory=dict)

    @classmethod
    def for_strategy(cls, strategy: str, shapes: Shapes) -> BucketPlan:
        kind, scheme, n = shape_strategy(strategy)
        if kind != "buckets":
            return cls(strategy)
        if scheme == "pow2":
            return cls(strategy, pow2_bounds(shapes))
        if scheme == "multiple":
            assert n is not None
            return cls(strategy, multiple_bounds(shapes, n))
        assert n is not None
        return cls(strategy, fit(shapes, n))

    @property
    def pads(self) -> bool:
        return shape_strategy(self.strategy)[0] == "buckets"

    def bucket(self, dims: dict[str, int]) -> dict[str, int]:
        """The padded shape a request of `dims` runs at."""
        return {d: pad_value(v, self.bounds[d]) if d in self.bounds else v for d, v in dims.items()}

    def grid_size(self) -> int:
        """How many padded shapes the boundaries define: the product of each padded dim's
        number of boundaries (1 for strategies that pad nothing). A server of this plan must
        let dynamo compile that many graphs (its recompile limit), or a bucket that its
        start-up did not prepare runs eagerly, silently."""
        return math.prod(len(b) for b in self.bounds.values()) if self.pads else 1

    def buckets(self, shapes: Shapes) -> list[tuple[dict[str, int], float]]:
        """The distinct padded shapes of `shapes`, each with the total weight it serves."""
        out: dict[tuple[tuple[str, int], ...], float] = {}
        for dims, w in shapes:
            key = tuple(self.bucket(dims).items())
            out[key] = out.get(key, 0.0) + w
        return [(dict(key), w) for key, w in sorted(out.items(), key=lambda kv: kv[0])]

    def expected_cost(self, shapes: Shapes) -> float:
        return expected_cost(shapes, self.bounds)

    def padding_waste(self, shapes: Shapes) -> float:
        return padding_waste(shapes, self.bounds)

    def to_dict(self) -> dict[str, Any]:
        return {"strategy": self.strategy, "bounds": {d: list(b) for d, b in self.bounds.items()}}
