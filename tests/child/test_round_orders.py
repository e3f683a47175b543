"""The confirmation's round orders: every config takes every place and follows every other one
about equally often, the same orders for the same seed."""

from __future__ import annotations

import itertools
from collections import Counter

from advisor.child.confirm import round_orders


def test_every_round_is_a_permutation_and_the_seed_fixes_them() -> None:
    first = list(itertools.islice(round_orders(4), 50))
    assert all(sorted(order) == [0, 1, 2, 3] for order in first)
    assert first == list(itertools.islice(round_orders(4), 50))
    assert first != list(itertools.islice(round_orders(4, seed=1), 50))
    assert len({tuple(order) for order in first}) > 1  # not one fixed order


def test_places_and_predecessors_balance_over_many_rounds() -> None:
    n, rounds = 3, 3000
    places: Counter[tuple[int, int]] = Counter()
    follows: Counter[tuple[int, int]] = Counter()
    previous = None
    for order in itertools.islice(round_orders(n), rounds):
        for place, config in enumerate(order):
            places[config, place] += 1
            if previous is not None:
                follows[previous, config] += 1
            previous = config
    # Each config in each place a third of the rounds (1000 expected; binomial sd ~26).
    assert all(abs(places[c, p] - rounds / n) < 150 for c in range(n) for p in range(n))
    # Config 1 follows eager (0) as often as it follows config 2, and the other way round:
    # a fixed order (0, 1, 2) would put 1 after 0 every round and never after 2.
    for a, b in itertools.permutations(range(n), 2):
        other = next(c for c in range(n) if c not in (a, b))
        assert abs(follows[a, b] - follows[other, b]) < 200, follows
