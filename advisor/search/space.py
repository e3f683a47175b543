"""The search space of a sweep: which configs to try. Pure: no torch, no Optuna.

The space is the workload's allowed dtypes x modes x fullgraph x dynamic x shape strategies,
narrowed by flags (shape strategies: ``--shapes static,dynamic,buckets:fitted-4``; only
``static`` by default; torch.compile's dynamic: ``--dynamic auto,true,false``, only ``auto`` by
default; eager always runs static, and a strategy other than static pairs only with dynamic
``auto``, since it sets dynamic itself).
On a CPU, CUDA-graph modes are the same as their graph-less twins, TF32 is plain fp32 and fp16 is
not a serving dtype, so the default CPU space leaves them out (asking for them still measures
them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from advisor.config import (
    DTYPES,
    DYNAMIC,
    EAGER_FP32,
    MODE_COST_ORDER,
    MODES,
    CompileConfig,
    shape_strategy,
)
from advisor.dimensions import BY_NAME, DIMENSIONS, OPTION_PREFIX, OPTIONS_BY_NAME, Value
from advisor.dimensions import configs as dimension_configs
from advisor.errors import ConfigError

CPU_DEFAULT_MODES = ("eager", "default", "max-autotune-no-cudagraphs")


@dataclass(frozen=True)
class Space:
    """An ordered, duplicate-free list of configs; the eager fp32 baseline always first."""

    configs: tuple[CompileConfig, ...]

    def __len__(self) -> int:
        return len(self.configs)

    def keys(self) -> list[str]:
        return [c.key for c in self.configs]

    @property
    def modes(self) -> list[str]:
        return sorted({c.mode for c in self.configs}, key=MODE_COST_ORDER.__getitem__)

    @property
    def dtypes(self) -> list[str]:
        return sorted({c.dtype for c in self.configs}, key=DTYPES.index)

    @property
    def shapes(self) -> list[str]:
        """The shape strategies of the compiled configs, in the order given."""
        return list(dict.fromkeys(c.shapes for c in self.configs if c.compiled))

    @property
    def dynamic(self) -> list[str]:
        """The dynamic settings of the compiled configs (`advisor.config.DYNAMIC` order)."""
        found = {c.dynamic for c in self.configs if c.compiled}
        return [d for d in DYNAMIC if d in found]

    def by_key(self, key: str) -> CompileConfig:
        for config in self.configs:
            if config.key == key:
                return config
        raise KeyError(key)


def _check(values: Sequence[Value], allowed: Sequence[Value], what: str) -> None:
    for value in values:
        if value not in allowed:
            raise ConfigError(f"unknown {what} {value!r}: choose from "
                              f"{', '.join(map(str, allowed))}")


def build_space(
    allowed_dtypes: Sequence[str],
    device: str,
    chosen: Mapping[str, Sequence[Value] | None] | None = None,
) -> Space:
    """Every config to try, cheapest first, the eager fp32 baseline at the front: the product
    of the dimensions' values (`advisor.dimensions`). ``chosen``: a dimension's name (mode,
    dtype, fullgraph, shapes, dynamic; an Inductor option as ``option.NAME``) -> the values to
    try; a dimension left out (or None) takes its default: on a CPU the CPU modes
    (`CPU_DEFAULT_MODES`) and the workload's dtypes but tf32 and fp16, else every mode and
    allowed dtype; fullgraph off, the static shape strategy, dynamic auto, Inductor's own
    options. ``dynamic`` varies the static shape strategy's configs only: another strategy
    sets it itself."""
    given = {name: list(values) for name, values in (chosen or {}).items() if values is not None}
    unknown = [n for n in given if n not in BY_NAME and n.removeprefix(OPTION_PREFIX)
               not in OPTIONS_BY_NAME]
    if unknown:
        raise ConfigError(f"unknown dimension {unknown[0]!r}: choose from "
                          f"{', '.join(BY_NAME)} or option.NAME (NAME one of "
                          f"{', '.join(OPTIONS_BY_NAME)})")
    cpu = not device.startswith("cuda")
    modes = given.get("mode", list(CPU_DEFAULT_MODES if cpu else MODES))
    _check(modes, MODES, "mode")
    dtypes = given.get("dtype", [d for d in allowed_dtypes
                                 if not (cpu and d in ("tf32", "fp16"))])
    _check(dtypes, DTYPES, "dtype")
    not_allowed = [d for d in dtypes if d not in allowed_dtypes]
    if not_allowed:
        raise ConfigError(
            f"dtype {not_allowed[0]} is not allowed by this workload "
            f"(allowed: {', '.join(map(str, allowed_dtypes))})"
        )
    fullgraph = given.get("fullgraph", [False])
    _check(fullgraph, (False, True), "fullgraph setting")
    dynamic = given.get("dynamic", ["auto"])
    _check(dynamic, DYNAMIC, "dynamic setting")
    shapes = given.get("shapes", ["static"])
    for strategy in shapes:
        shape_strategy(str(strategy))  # a ConfigError names the choices
    if any(s != "static" for s in shapes) and "auto" not in dynamic:
        raise ConfigError("shape strategies other than static set dynamic themselves: "
                          "include auto in --dynamic, e.g. --dynamic auto,true")
    options = {n.removeprefix(OPTION_PREFIX): v for n, v in given.items()
               if n.startswith(OPTION_PREFIX)}
    for name, tried in options.items():
        _check(tried, OPTIONS_BY_NAME[name].choices, f"value of option {name}")
    by_cost: list[str] = sorted(map(str, modes), key=MODE_COST_ORDER.__getitem__)
    by_dtype: list[str] = sorted(map(str, dtypes), key=DTYPES.index)
    values: dict[str, Sequence[Value]] = {
        "mode": by_cost,
        "dtype": by_dtype,
        "fullgraph": fullgraph,
        "shapes": shapes,
        "dynamic": dynamic,
    }
    for d in DIMENSIONS:  # a dimension added to the table: its values, or its default
        if d.name not in values:
            values[d.name] = given.get(d.name, [d.default])
            if d.choices is not None:
                _check(values[d.name], d.choices, f"{d.name} setting")
    unique = list(dict.fromkeys([EAGER_FP32, *dimension_configs(values, options)]))
    return Space(tuple(unique))


def parse_list(text: str | None) -> list[str] | None:
    """``"default,reduce-overhead"`` -> list; None stays None."""
    if text is None:
        return None
    items = [part.strip() for part in text.split(",") if part.strip()]
    if not items:
        raise ConfigError("an empty list was given; name at least one value")
    return items


def parse_budget(text: str) -> float:
    """``20m`` / ``90s`` / ``1.5h`` -> seconds."""
    units = {"s": 1, "m": 60, "h": 3600}
    value, unit = text[:-1], text[-1:]
    if unit not in units:
        value, unit = text, "s"
    try:
        seconds = float(value) * units[unit]
    except ValueError:
        raise ConfigError(f"bad budget {text!r}: write e.g. 20m, 90s or 1.5h") from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise ConfigError(f"bad budget {text!r}: it must be a positive, finite time")
    return seconds
