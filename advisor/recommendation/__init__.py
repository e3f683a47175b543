"""Trials -> a recommendation with its evidence. Pure: plain records in, plain data out.

Policies (`POLICIES`), each over the trials that ran and passed correctness and quality and meet
the constraints (`Constraints`: ``max_compile_s`` on the cold compile, ``max_memory_bytes`` on
the peak memory; a trial whose figure is unknown does not meet a constraint on it):

- ``latency`` (the default): the lowest traffic-weighted median (``median_ms``).
- ``tail``: the lowest traffic-weighted p99 (``p99_ms``).
- ``throughput``: the most calls per second over the traffic (per-shape back-to-back throughput,
  combined as 1 / sum(weight / throughput): the expected time per call of the traffic mix).
- ``break-even``: for ``calls_per_process`` calls in a process's life, the lowest
  ``cold_compile_s + calls x median_ms``. For every config, ``break_even_calls`` is the call
  count at which compiling has paid for itself against the fastest eager config:
  ``cold_compile_s / (eager_ms - median_ms) x 1000`` (None: never, it is not faster).

One figure per config: the median of the deciding figures (`deciding_ms`) of its full trials
(a screened trial, cut short after SCREEN_SAMPLES calls, counts only when the config has
nothing else, and is then ``short``), its interval the span of their 95% intervals
(``median_ci_ms``), ``noisy`` when any of them was; never the best of N. Every speedup is
against one baseline figure, named by `Recommendation.baseline_name`: eager fp32 pooled the same
way, or a confirmation's eager fp32 rounds. ``break_even_calls`` is against the fastest eager
config of the stack (bf16 eager often beats fp32 eager), ``break_even_calls_fp32`` beside it.

The decision (`Recommendation.decision`): a simpler config (eager < default < reduce-overhead <
max-autotune-no-cudagraphs < max-autotune, then fewer graphs, then the shorter cold compile)
wins only a **tie**: paired figures (a confirmation) within `TIE_RATIO`. Unpaired figures within
`TIE_RATIO`, or overlapping intervals, are **undecided**: the leader stands and the note says
so; on noisy timings, **undecided: noise**, and there is no pick. A short measurement never ties
and never casts doubt.

Confirmation: a stored confirmation (`advisor.search.confirm`) re-measured the leaders and eager
fp32
in one process, interleaved. When it covers the current leader, the `latency` and `break-even`
policies decide among the confirmed configs on the paired figures; otherwise the note says to
confirm again. `advisor.answer.answer` is what every surface calls.

The package: `evidence` (Ranked, Recommendation, the figures), `policies` (the registry),
`constraints`, `decide` (`recommend`), `answers` (`answer`: what every surface calls),
`staleness` (`nearest_fingerprint` names every field that differs; `provenance`), `export`
(`export_dict`, `to_python`, `to_yaml`).
"""

from advisor.recommendation.constraints import Constraints, parse_bytes
from advisor.recommendation.decide import recommend
from advisor.recommendation.evidence import (
    NEAR_RATIO,
    STACK_FIELDS,
    Ranked,
    Recommendation,
    break_even_calls,
    deciding_ms,
    overlaps,
    traffic_throughput,
)
from advisor.recommendation.export import export_dict, to_python, to_yaml
from advisor.recommendation.policies import (
    CONFIRMED_POLICIES,
    POLICIES,
    TIE_RATIO,
    Policy,
    check_policy,
    make_policy,
)
from advisor.recommendation.staleness import (
    FieldChange,
    Staleness,
    fingerprint_changes,
    nearest_fingerprint,
    provenance,
)

__all__ = [
    "CONFIRMED_POLICIES",
    "NEAR_RATIO",
    "POLICIES",
    "STACK_FIELDS",
    "TIE_RATIO",
    "Constraints",
    "FieldChange",
    "Policy",
    "Ranked",
    "Recommendation",
    "Staleness",
    "break_even_calls",
    "check_policy",
    "deciding_ms",
    "export_dict",
    "fingerprint_changes",
    "make_policy",
    "nearest_fingerprint",
    "overlaps",
    "parse_bytes",
    "provenance",
    "recommend",
    "to_python",
    "to_yaml",
    "traffic_throughput",
]
