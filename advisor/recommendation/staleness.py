"""Staleness: how the fingerprint a recommendation was measured on differs from this one, and
whether the workload's source or the advisor changed since.

Versions have a direction: a stack whose torch (then triton, CUDA, driver, ...) is newer than
the one measured is an upgrade since the measurement, an older one a downgrade (`stack_order`,
`stack_direction`); every surface that says "stale" orders stacks by their versions this way,
never by when they were measured."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from advisor.protocol import DEVICE_FIELDS, ENV_FIELDS
from advisor.recommendation.evidence import STACK_FIELDS
from advisor.records import TrialRecord
from advisor.rows import FingerprintRow

COMPARED_FIELDS = DEVICE_FIELDS + ENV_FIELDS
# The software versions that order two stacks, the one that decides first.
VERSION_FIELDS = ("torch_version", "triton_version", "cuda_runtime_version", "driver_version",
                  "cuda_driver_version", "cudnn_version", "python_version")  # fmt: skip


def version_key(value: Any) -> tuple[int, ...]:
    """The release numbers of a version: ``2.11.0+cu130`` -> (2, 11, 0), ``580.159.04`` ->
    (580, 159, 4), ``91900`` -> (91900,); () when there are none (unknown: orders first)."""
    release = str(value).split("+", 1)[0] if value is not None else ""
    match = re.match(r"\d+(?:\.\d+)*", release.strip().lstrip("vV"))
    return tuple(int(part) for part in match.group().split(".")) if match else ()


def stack_order(stack: Mapping[str, Any]) -> tuple[tuple[int, ...], ...]:
    """A sort key of a software stack (fields of `VERSION_FIELDS`), oldest first: torch
    decides, then triton, CUDA, the driver, ... Stacks of the same versions compare equal."""
    return tuple(version_key(stack.get(name)) for name in VERSION_FIELDS)


def stack_direction(measured: Mapping[str, Any], current: Mapping[str, Any]) -> str:
    """``upgrade`` when ``current``'s stack is newer than ``measured``'s (`stack_order`),
    ``downgrade`` when older, ``""`` when their versions are the same."""
    old, new = stack_order(measured), stack_order(current)
    return "upgrade" if new > old else "downgrade" if new < old else ""


@dataclass(frozen=True)
class FieldChange:
    """One fingerprint field that differs between the measured device and this one."""

    field: str
    measured: Any
    current: Any

    @property
    def direction(self) -> str:
        """``newer here`` or ``older here`` for a version field whose release numbers
        differ, else ``""``."""
        if self.field not in VERSION_FIELDS:
            return ""
        old, new = version_key(self.measured), version_key(self.current)
        if not old or not new or old == new:
            return ""
        return "newer here" if new > old else "older here"


@dataclass(frozen=True)
class Staleness:
    """How this device's fingerprint relates to the one a recommendation was measured on."""

    current_hash: str
    measured_hash: str | None  # None: nothing comparable was measured (another device kind)
    changed: list[FieldChange] = field(default_factory=list)
    measured_device: str | None = None
    # "upgrade": this stack is newer than the one measured; "downgrade": older (`stack_direction`)
    direction: str = ""
    # Beside the fingerprint: the workload file and the advisor that measured the trials
    # (measured: the values the trials carry, newest first; current: here, None if unknown).
    source_sha256: dict[str, Any] | None = None
    advisor_version: dict[str, Any] | None = None

    @property
    def exact(self) -> bool:
        return self.measured_hash is not None and self.measured_hash == self.current_hash

    @property
    def fresh(self) -> bool:
        """Same fingerprint, same workload source, same advisor version."""
        return self.exact and not self.source_sha256 and not self.advisor_version

    @property
    def warning(self) -> str:
        parts = [self._fingerprint_warning()] if not self.exact else []
        if self.source_sha256:
            s = self.source_sha256
            parts.append(f"the workload file changed since its trials (sha256 "
                         f"{str(s['current'])[:12]} here, {str(s['measured'][0])[:12]} measured)"
                         "; sweep it again")
        if self.advisor_version:
            a = self.advisor_version
            parts.append(f"the trials were measured by advisor {', '.join(a['measured'])}, "
                         f"this is {a['current']}")
        return "; ".join(parts)

    def _fingerprint_warning(self) -> str:
        if self.measured_hash is None:
            return (f"nothing was measured on this kind of device (fingerprint "
                    f"{self.current_hash}); sweep it here")
        diffs = "; ".join(
            f"{c.field}: {c.measured} measured, {c.current} here"
            + (f" ({c.direction})" if c.direction else "") for c in self.changed
        )
        why = {"upgrade": "this stack is newer than the one measured (an upgrade since): its "
                          "recommendation may be stale",
               "downgrade": "this stack is older than the one measured (a downgrade): its "
                            "recommendation may be stale or not hold here",
               }.get(self.direction, "its recommendation may be stale")  # fmt: skip
        return (f"no sweep on this device and stack (fingerprint {self.current_hash}); using the "
                f"nearest measured fingerprint {self.measured_hash} ({self.measured_device}), "
                f"which differs in {diffs}; {why}: sweep here to be sure")

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(exact=self.exact, fresh=self.fresh, warning=self.warning)
        return data


def provenance(staleness: Staleness | None, records: Sequence[TrialRecord],
               source_sha256: str | None, advisor_version: str | None) -> Staleness | None:
    """``staleness`` (None: the fingerprint matched) with the workload source and advisor
    version checked against the trials' (newest first); None when all of it is current."""
    newest = sorted(records, key=lambda r: str(r.get("started_at") or ""), reverse=True)

    def seen(values: list[Any]) -> list[Any]:
        return list(dict.fromkeys(v for v in values if v))

    sources = seen([w.get("source_sha256") if (w := r.get("workload")) else None for r in newest])
    versions = seen([f.get("advisor_version") if (f := r.get("fingerprint")) else None
                     for r in newest])
    source = ({"measured": sources, "current": source_sha256}
              if source_sha256 and sources and sources[0] != source_sha256 else None)
    version = ({"measured": versions, "current": advisor_version}
               if advisor_version and versions and advisor_version not in versions else None)
    if source is None and version is None:
        return staleness
    if staleness is None:
        here = next((_fingerprint_hash(r) for r in newest), None) or "?"
        staleness = Staleness(here, here, [], None)
    return replace(staleness, source_sha256=source, advisor_version=version)


def _fingerprint_hash(r: TrialRecord) -> str | None:
    """A record's fingerprint hash: a row's own key where it carries one, else its fingerprint's."""
    row: Mapping[str, Any] = r
    fp = r.get("fingerprint")
    return row.get("fingerprint_hash") or (fp.get("fingerprint_hash") if fp else None)


def fingerprint_changes(
    measured: Mapping[str, Any], current: Mapping[str, Any]
) -> list[FieldChange]:
    """The device and stack fields (those hashed) whose values differ, in field order."""
    return [
        FieldChange(name, measured.get(name), current.get(name))
        for name in COMPARED_FIELDS
        if measured.get(name) != current.get(name)
    ]


def nearest_fingerprint(current: Mapping[str, Any], measured: Sequence[FingerprintRow]
                        ) -> Staleness:
    """The measured fingerprint closest to ``current``: the same kind of device, then the
    fewest differing device fields, driver/CUDA/torch/triton fields, other stack fields, then
    the most trials. An exact match (same fingerprint hash) is itself."""
    here = current["fingerprint_hash"]
    for fp in measured:
        if fp.get("fingerprint_hash") == here:
            return Staleness(here, here, [], fp.get("device_name"))
    same_kind = [fp for fp in measured if fp.get("device_kind") == current.get("device_kind")]
    if not same_kind:
        return Staleness(here, None)

    def distance(fp: FingerprintRow) -> tuple[int, int, int, int]:
        changed = {c.field for c in fingerprint_changes(fp, current)}
        return (
            len(changed & set(DEVICE_FIELDS)),
            len(changed & set(STACK_FIELDS)),
            len(changed - set(DEVICE_FIELDS) - set(STACK_FIELDS)),
            -int(fp.get("n_trials") or 0),
        )

    near = min(same_kind, key=distance)
    return Staleness(here, near["fingerprint_hash"], fingerprint_changes(near, current),
                     near.get("device_name"), stack_direction(near, current))
