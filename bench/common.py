"""What the benches share: the dated name every result file gets, and stored timestamps read back.

A result is written under ``OUT/<stem>_<UTC yyyymmddThhmmssZ>.<ext>``, one stamp per run for all
of its files, so a later run never overwrites an earlier one (bench/results/README.md).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def utc_stamp(moment: datetime | None = None) -> str:
    """``yyyymmddThhmmssZ`` of ``moment`` (now when none), in UTC."""
    return (moment or datetime.now(UTC)).astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def dated(out: Path, stem: str, stamp: str, ext: str) -> Path:
    """``out/<stem>_<stamp>.<ext>``: the run's file of that kind."""
    return Path(out) / f"{stem}_{stamp}.{ext.lstrip('.')}"


def write_dated(out: Path, stem: str, text: str, ext: str = "md") -> Path:
    """Print ``text``, write it to a new dated file (`dated`, stamped now) and say where."""
    print(text)
    path = dated(out, stem, utc_stamp(), ext)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    print(f"written {path}")
    return path


def stored_time_s(text: str) -> float:
    """A stored timestamp (ISO 8601; UTC when it names no zone) as seconds since the epoch."""
    moment = datetime.fromisoformat(text)
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
