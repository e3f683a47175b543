"""Trials -> a recommendation with its evidence. Pure: plain records in, plain data out.

The package: `evidence` (`Ranked`, `Recommendation`, the figures one config is judged by),
`policies` (the registry: latency, tail, throughput, break-even), `constraints`, `decide`
(`recommend`: the pooled figures, the policy's order, the tie rule, a confirmation's paired
figures), `answers` (`answer`: what every surface calls), `staleness` (`nearest_fingerprint`
names every field that differs; `provenance`), `export` (`export_dict`, `to_python`, `to_yaml`).
Each module's docstring holds its part of the contract.
"""

from advisor.recommendation.constraints import Constraints, parse_bytes
from advisor.recommendation.decide import cover, recommend
from advisor.recommendation.evidence import (
    NEAR_RATIO,
    STACK_FIELDS,
    Ranked,
    Recommendation,
    break_even_calls,
    deciding_ms,
    flag_legend,
    overlaps,
    steady_ms,
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
    "cover",
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
    "flag_legend",
    "fingerprint_changes",
    "make_policy",
    "nearest_fingerprint",
    "overlaps",
    "parse_bytes",
    "provenance",
    "recommend",
    "steady_ms",
    "to_python",
    "to_yaml",
    "traffic_throughput",
]
