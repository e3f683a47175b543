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
from advisor.dimensions import Value
from advisor.dimensions import configs as dimension_configs
from advisor.errors import ConfigError

FULLGRAPH_CHOICES = {"off": (False,), "on": (True,), "both": (False, True)}
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


def _check(values: Sequence[str], allowed: Sequence[str], what: str) -> None:
    for value in values:
        if value not in allowed:
            raise ConfigError(f"unknown {what} {value!r}: choose from {', '.join(allowed)}")


def build_space(
    allowed_dtypes: Sequence[str],
    device: str,
    modes: Sequence[str] | None = None,
    dtypes: Sequence[str] | None = None,
    fullgraph: str = "off",
    dynamic: Sequence[str] | None = None,
    shapes: Sequence[str] = ("static",),
    options: Mapping[str, Sequence[Value]] | None = None,
) -> Space:
    """Every config to try, cheapest first, the eager fp32 baseline at the front: the product
    of the dimensions' values (`advisor.dimensions`), Inductor ``options`` (name -> values)
    included. ``dynamic`` (torch.compile's setting; None: auto) varies the static shape
    strategy's configs only: another strategy sets it itself."""
    cpu = not device.startswith("cuda")
    if modes is None:
        modes = CPU_DEFAULT_MODES if cpu else MODES
    _check(modes, MODES, "mode")
    if dtypes is None:
        dtypes = [d for d in allowed_dtypes if not (cpu and d in ("tf32", "fp16"))]
    _check(dtypes, DTYPES, "dtype")
    not_allowed = [d for d in dtypes if d not in allowed_dtypes]
    if not_allowed:
        raise ConfigError(
            f"dtype {not_allowed[0]} is not allowed by this workload "
            f"(allowed: {', '.join(allowed_dtypes)})"
        )
    if fullgraph not in FULLGRAPH_CHOICES:
        raise ConfigError(f"bad --fullgraph {fullgraph!r}: choose both, on or off")
    if dynamic is None:
        dynamic = ("auto",)
    _check(dynamic, DYNAMIC, "dynamic setting")
    for strategy in shapes:
        shape_strategy(strategy)  # a ConfigError names the choices
    if any(s != "static" for s in shapes) and "auto" not in dynamic:
        raise ConfigError("shape strategies other than static set dynamic themselves: "
                          "include auto in --dynamic, e.g. --dynamic auto,true")
    by_cost: list[str] = sorted(modes, key=MODE_COST_ORDER.__getitem__)
    by_dtype: list[str] = sorted(dtypes, key=DTYPES.index)
    values: dict[str, Sequence[Value]] = {
        "mode": by_cost,
        "dtype": by_dtype,
        "fullgraph": FULLGRAPH_CHOICES[fullgraph],
        "shapes": list(shapes),
        "dynamic": list(dynamic),
    }
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
