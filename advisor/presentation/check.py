"""A regression gate: did the recommended config get slower on this stack than on a baseline?

`Baseline` holds the figures a baseline recommendation rests on, per config key. It comes from
the one answer (`advisor.recommendation.answers`) on a fingerprint of the store
(`from_recommendation`), or from a file that advisor.cli.baseline reads: an `advisor export`
(trial records, answered again the same way from a scratch database) or an `advisor recommend
--format json` document (the pick only) or `--json` document (every ranked config), turned into
a baseline by `from_document`. No I/O here.

`verdict(here, baseline, threshold)` compares the config recommended here with the same config
on the baseline (or, when the baseline never measured it, with the baseline's pick): the figure
is each side's deciding median (`Ranked.median_ms`) under the same policy, and the gate decides
on its 95% interval (``median_ci_ms``) and noise flag, never on the two medians alone. The
slowdown's range is the ratio of the intervals' far ends: from here's low end over the
baseline's high end to here's high end over the baseline's low end. Outcomes (`OUTCOMES`):

- ``slower``: the intervals are clear of each other by more than ``threshold`` (0.05: 5%): even
  the least slowdown they allow is more than it. It fails (exit 3).
- ``faster``: here's interval lies wholly under the baseline's. It passes.
- ``within``: not clearly faster, but even the largest slowdown the intervals allow is no more
  than ``threshold`` (an unchanged stack measured twice). It passes.
- ``cannot tell``: either side is flagged noisy (its interval understates how far its figure
  moves between processes), either side has no interval, or the intervals allow a slowdown of
  more than ``threshold`` as well as less. Never a pass (exit 4).
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from advisor.config import CompileConfig
from advisor.errors import AdvisorError, ConfigError

OUTCOMES = ("slower", "faster", "within", "cannot tell")


@dataclass(frozen=True)
class Figure:
    """One config's deciding figure on one side, with its 95% interval and noise flag."""

    config_key: str
    label: str
    median_ms: float
    median_ci_ms: list[float] | None = None
    noisy: bool | None = None  # None: the source does not say


@dataclass(frozen=True)
class Baseline:
    """What a baseline recommendation measured: its pick and every config it ranked."""

    source: str  # "fingerprint 1a2b..." or the file name
    fingerprint_hash: str | None
    pick: Figure | None
    figures: dict[str, Figure] = field(default_factory=dict)
    policy: str | None = None


@dataclass(frozen=True)
class Verdict:
    """The gate's outcome (module doc): ``slower`` fails, ``cannot tell`` is never a pass."""

    workload: str
    here: Figure
    there: Figure
    same_config: bool  # False: the baseline never measured the pick here; its own pick compared
    slowdown: float  # here / there - 1 on the medians (0.08: 8% slower, -0.1: 10% faster)
    threshold: float
    here_fingerprint: str | None
    baseline_source: str
    outcome: str = "cannot tell"  # one of OUTCOMES
    slowdown_range: list[float] | None = None  # [least, most] the 95% intervals allow
    reason: str = ""  # why ``cannot tell``

    @property
    def slower(self) -> bool:
        return self.outcome == "slower"

    @property
    def cannot_tell(self) -> bool:
        return self.outcome == "cannot tell"

    @property
    def sentence(self) -> str:
        head = {
            "slower": f"FAIL: slower by more than {self.threshold:.1%}",
            "faster": "ok: faster",
            "within": f"ok: within {self.threshold:.1%}",
            "cannot tell": f"cannot tell, not a pass ({self.reason})",
        }[self.outcome]
        what = (f"{self.here.label}" if self.same_config else
                f"{self.here.label} here vs the baseline's pick {self.there.label}")
        return (f"{self.workload}: {head}: {what}: {_ms(self.here)} on this stack vs "
                f"{_ms(self.there)} on {self.baseline_source}, {self._change()}")

    def _change(self) -> str:
        if self.slowdown_range is None:
            return f"{_change(self.slowdown)} on the medians alone"
        low, high = self.slowdown_range
        if high < 0:
            return f"{-high:.1%} to {-low:.1%} faster (95% intervals)"
        if low >= 0:
            return f"{low:.1%} to {_pct(high)} slower (95% intervals)"
        return f"from {-low:.1%} faster to {_pct(high)} slower (95% intervals)"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(slower=self.slower, sentence=self.sentence)
        data["slowdown"] = _finite(self.slowdown)
        if self.slowdown_range is not None:
            data["slowdown_range"] = [_finite(v) for v in self.slowdown_range]
        return data


def _finite(value: float) -> float | None:
    """JSON has no infinity (a baseline interval reaching 0 ms): null."""
    return None if math.isinf(value) else value


def _ms(f: Figure) -> str:
    from advisor.units import duration_ms, interval_ms

    text = duration_ms(f.median_ms)
    if f.median_ci_ms:
        text += f" [{interval_ms(f.median_ci_ms[0], f.median_ci_ms[1])}]"
    if f.noisy:
        text += " (noisy)"
    return text


def _change(slowdown: float) -> str:
    return f"{_pct(slowdown)} slower" if slowdown > 0 else f"{-slowdown:.1%} faster"


def _pct(value: float) -> str:
    return "unboundedly" if math.isinf(value) else f"{value:.1%}"


def decide(here: Figure, there: Figure, threshold: float) -> tuple[str, list[float] | None, str]:
    """The outcome (module doc), the slowdown's range the intervals allow, and why ``cannot
    tell`` (empty otherwise)."""
    sides = (("this stack", here), ("the baseline", there))
    noisy = [side for side, f in sides if f.noisy]
    bare = [side for side, f in sides if not f.median_ci_ms]
    span = None
    if here.median_ci_ms and there.median_ci_ms:
        (h_low, h_high), (t_low, t_high) = here.median_ci_ms, there.median_ci_ms
        span = [h_low / t_high - 1 if t_high > 0 else math.inf,
                h_high / t_low - 1 if t_low > 0 else math.inf]
    if noisy:
        return ("cannot tell", span, f"the timings on {' and '.join(noisy)} are noisy; "
                "measure again on a quiet host")
    if span is None:
        return "cannot tell", None, f"no 95% interval on {' or '.join(bare)}"
    least, most = span
    if least > threshold:
        return "slower", span, ""
    if most < 0:
        return "faster", span, ""
    if most <= threshold:
        return "within", span, ""
    if least > 0:
        return ("cannot tell", span, f"slower, but whether by more than {threshold:.1%} is "
                "inside the 95% intervals")
    return ("cannot tell", span, f"the 95% intervals overlap and allow a slowdown of more "
            f"than {threshold:.1%}")


def parse_threshold(text: str) -> float:
    """``5%`` or ``5`` -> 0.05 (a slowdown of more than 5% fails)."""
    found = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*%?\s*", str(text))
    if not found:
        raise ConfigError(f"bad --fail-if-slower {text!r}: write a percentage, e.g. 5%")
    return float(found.group(1)) / 100


def figure_of(ranked: Any) -> Figure:
    """A `advisor.recommendation.Ranked` (or its dict) as a Figure."""
    data: dict[str, Any] = ranked if isinstance(ranked, dict) else ranked.to_dict()
    config = CompileConfig.from_dict(data["config"])
    ci = data.get("median_ci_ms")
    # a figure measured on a busy host (advisor.hostload) is as unsafe to gate on as a noisy one
    noisy = True if data.get("contended") else data.get("noisy")
    return Figure(config.key, config.label, float(data["median_ms"]),
                  [float(ci[0]), float(ci[1])] if ci else None,
                  None if noisy is None else bool(noisy))


def from_recommendation(rec: Any, source: str) -> Baseline:
    """The baseline a `Recommendation` (the one answer on another fingerprint) gives."""
    return Baseline(source, rec.fingerprint_hash, figure_of(rec.best) if rec.best else None,
                    {(f := figure_of(r)).config_key: f for r in rec.ranked}, rec.policy)


def from_document(data: dict[str, Any], path: str, workload: str) -> Baseline:
    if data.get("workload") != workload:
        raise ConfigError(f"{path} is a recommendation of {data.get('workload')!r}, not of "
                          f"{workload!r}")
    fp, policy = data.get("fingerprint_hash"), data.get("policy")
    try:
        if "ranked" in data:  # advisor recommend --json
            figures = {(f := figure_of(r)).config_key: f for r in data["ranked"]}
            best = figure_of(data["best"]) if data.get("best") else None
            return Baseline(path, fp, best, figures, policy)
        if "figures" in data:  # advisor recommend --format json
            if data.get("config") is None:
                return Baseline(path, fp, None, {}, policy)
            pick = figure_of({**data["figures"], "config": data["config"]})
            return Baseline(path, fp, pick, {pick.config_key: pick}, policy)
    except (AdvisorError, KeyError, TypeError, ValueError) as e:
        raise ConfigError(f"{path}: a recommendation document without its figures ({e})") from e
    raise ConfigError(f"{path} is neither an `advisor export` nor an `advisor recommend "
                      "--format json` / `--json` document")


def verdict(rec_here: Any, baseline: Baseline, threshold: float) -> Verdict | None:
    """Compare the pick here with the same config on the baseline, on their intervals (module
    doc; None: nothing to compare: no pick here, or nothing the baseline measured)."""
    if rec_here.best is None:
        return None
    here = figure_of(rec_here.best)
    there = baseline.figures.get(here.config_key) or baseline.pick
    if there is None:
        return None
    outcome, span, reason = decide(here, there, threshold)
    return Verdict(rec_here.workload, here, there, there.config_key == here.config_key,
                   here.median_ms / there.median_ms - 1 if there.median_ms > 0 else math.inf,
                   threshold, rec_here.fingerprint_hash, baseline.source, outcome, span, reason)
