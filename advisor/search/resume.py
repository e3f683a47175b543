"""Resuming a sweep: its stored settings and space are reused, flags that contradict them are
refused. Pure: no torch, no Optuna, no database (the caller hands in the stored sweep).

`advisor sweep FILE --resume` continues the newest interrupted (or dead) sweep of the workload
with the settings it was started with (`SweepSettings` and the configs of its space, stored in
the sweep row). A flag given again with the same value is fine; one that would change the
search (``--modes``, ``--dtypes``, ``--device``, ``--trials``, ...) is refused in one line,
before the sweep is touched: a study cannot change its space halfway. Which flags are checked,
and how each is read back, is declared with the flag (`advisor.search.request.SweepRequest`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from advisor.config import CompileConfig
from advisor.errors import ConfigError
from advisor.rows import SweepRow
from advisor.search.request import Resume, SweepSettings, resume_checks
from advisor.search.space import Space

RESUMABLE = ("interrupted", "stopped", "running", "dead")

# flag -> what it sets, read from (settings, space): the `resume` of each flag's declaration
_FLAG_VALUES: dict[str, Resume] = resume_checks()


def resumable(sweeps: Sequence[SweepRow], fingerprint_hash: str | None = None
              ) -> SweepRow | None:
    """The sweep to resume among ``sweeps`` (of one workload): the newest one not finished
    (on the fingerprint, when given); None when there is none."""
    found = [s for s in sweeps if s["status"] in RESUMABLE and (
        fingerprint_hash is None or s.get("fingerprint_hash") == fingerprint_hash)]
    return max(found, key=lambda s: s["id"]) if found else None


def study_of(sweep: SweepRow) -> str:
    """The name of the Optuna study a sweep keeps its trials' history in; ConfigError when the
    sweep row names none (a sweep imported from another database)."""
    if sweep["study_name"] is None:
        raise ConfigError(f"sweep {sweep['id']} keeps no Optuna study (imported from another "
                          "database?): it cannot be resumed nor joined; start a new sweep")
    return sweep["study_name"]


def stored_plan(sweep: SweepRow) -> tuple[SweepSettings, Space]:
    """The settings and the space a sweep was started with; ConfigError when the sweep row does
    not hold them."""
    stored = sweep.get("settings") or {}
    configs = stored.get("space")
    if not isinstance(configs, list) or not configs:
        raise ConfigError(f"sweep {sweep['id']} has no stored space to resume; start a new "
                          "sweep without --resume")
    return (SweepSettings.from_dict(stored),
            Space(tuple(CompileConfig.from_dict(c) for c in configs)))


def contradiction(sweep_id: int, given: dict[str, tuple[SweepSettings, Space]],
                  stored: SweepSettings, space: Space) -> str | None:
    """The first flag in ``given`` (flag -> the (settings, space) the flags would make) whose
    value differs from the resumed sweep's; None when every given flag agrees."""
    for flag, (settings, new_space) in given.items():
        read = _FLAG_VALUES.get(flag)
        if read is None:
            continue
        new, old = read(settings, new_space), read(stored, space)
        if new != old:
            return (f"{flag} asks for {_show(new)}, but sweep {sweep_id}, being resumed, was "
                    f"started with {_show(old)}: drop {flag} to resume it as it was, or start "
                    "a new sweep without --resume")
    return None


def _show(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(str(v) for v in value) or "none"
    return "the default" if value is None else str(value)
