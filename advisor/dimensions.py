"""The search dimensions as data: one table drives the space, the Optuna parameters, the help of
the `advisor sweep` and `advisor trial` flags, and the tie rule's simplicity. Pure: no torch, no
Optuna.

`DIMENSIONS` are the fields of a `CompileConfig` a sweep varies (mode, dtype, fullgraph, shape
strategy, dynamic), in the order the space nests them (cheapest first) and Optuna suggests them.
`INDUCTOR_OPTIONS` are the Inductor options a sweep may vary (``advisor sweep --option
NAME=V1,V2``, ``advisor trial --option NAME=V``): each becomes a dimension of its own, an Optuna
parameter ``option.NAME``. Making another Inductor option sweepable is one entry in that table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any

from advisor.config import DTYPES, DYNAMIC, MODES, SHAPE_STRATEGIES, CompileConfig
from advisor.errors import ConfigError

Value = str | int | float | bool
OPTION_PREFIX = "option."  # the Optuna parameter of Inductor option NAME: "option.NAME"


@dataclass(frozen=True)
class Dimension:
    """One field of `CompileConfig` a sweep varies.

    name: the config field and the Optuna parameter. help: what the flags of `advisor sweep`
    (several values, declared in `advisor.search.request.SweepRequest`) and `advisor trial` (one
    value) say of it. choices: the values in cost order (None: checked by `CompileConfig`).
    compiled_only: eager configs keep `default`.
    applies: whether the dimension is chosen at all given the values chosen before it.
    simpler: the tie rule's rank of a value (lower is simpler), for the dimensions that break
    ties; None for the others.
    """

    name: str
    help: str
    default: Value
    choices: tuple[Value, ...] | None = None
    compiled_only: bool = True
    applies: Callable[[Mapping[str, Value]], bool] = lambda chosen: True
    simpler: Callable[[Value], int] | None = None


DIMENSIONS: tuple[Dimension, ...] = (
    Dimension("mode", "torch.compile mode, or eager for none: " + ", ".join(MODES), "default",
              MODES, compiled_only=False, simpler=lambda v: MODES.index(str(v))),
    Dimension("dtype", "the component's dtype: " + ", ".join(DTYPES)
              + " (tf32: fp32 with TF32 matmuls)", "fp32", DTYPES, compiled_only=False),
    Dimension("fullgraph", "a graph break is an error", False, (False, True)),
    Dimension("shapes", "shape strategy: " + ", ".join(SHAPE_STRATEGIES), "static"),
    Dimension("dynamic", "torch.compile's dynamic: " + ", ".join(DYNAMIC)
              + " (a shape strategy other than static sets it itself)", "auto", DYNAMIC,
              applies=lambda chosen: chosen.get("shapes", "static") == "static"),
)
BY_NAME = {d.name: d for d in DIMENSIONS}


@dataclass(frozen=True)
class InductorOption:
    """An Inductor option (`torch._inductor.list_options()`) a sweep may vary; `choices` are
    the values it may take, the first the simplest (Inductor's default)."""

    name: str
    choices: tuple[Value, ...]
    help: str


INDUCTOR_OPTIONS: tuple[InductorOption, ...] = (
    InductorOption("epilogue_fusion", (True, False),
                   "fuse pointwise ops into the epilogue of matmul templates"),
    InductorOption("coordinate_descent_tuning", (False, True),
                   "tune each kernel's launch parameters by coordinate descent (slower compile)"),
    InductorOption("shape_padding", (True, False),
                   "pad matmul dims to aligned sizes for faster kernels"),
    InductorOption("freezing", (False, True),
                   "constant-fold the parameters of an inference graph (weights frozen)"),
    InductorOption("aggressive_fusion", (False, True),
                   "fuse nodes even without common memory reads"),
)
OPTIONS_BY_NAME = {o.name: o for o in INDUCTOR_OPTIONS}


def parse_value(text: str) -> Value:
    """``true``/``false`` -> bool, a whole number -> int, a number -> float, else the text."""
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text.strip()


def parse_options(items: Iterable[str]) -> dict[str, tuple[Value, ...]]:
    """``["epilogue_fusion=true,false"]`` -> ``{"epilogue_fusion": (True, False)}``; each name
    from `INDUCTOR_OPTIONS`, each value one of its choices (ConfigError naming them)."""
    found: dict[str, tuple[Value, ...]] = {}
    known = ", ".join(OPTIONS_BY_NAME)
    for item in items:
        name, sep, values = item.partition("=")
        name = name.strip()
        if not sep or not values.strip():
            raise ConfigError(f"bad --option {item!r}: write NAME=V1,V2, e.g. "
                              "epilogue_fusion=true,false")
        if name not in OPTIONS_BY_NAME:
            raise ConfigError(f"--option {name}: not a sweepable Inductor option; choose from "
                              f"{known} (advisor.dimensions.INDUCTOR_OPTIONS)")
        if name in found:
            raise ConfigError(f"--option {name} is given twice; list its values once: "
                              f"{name}=V1,V2")
        option = OPTIONS_BY_NAME[name]
        parsed = tuple(dict.fromkeys(parse_value(v) for v in values.split(",") if v.strip()))
        for value in parsed:
            if value not in option.choices:
                raise ConfigError(f"--option {name}={value}: choose from "
                                  f"{', '.join(str(c).lower() for c in option.choices)}")
        found[name] = parsed
    return found


def configs(values: Mapping[str, Sequence[Value]],
            options: Mapping[str, Sequence[Value]] | None = None) -> list[CompileConfig]:
    """Every valid config of the product of ``values`` (dimension name -> values, in the
    table's order) and ``options`` (Inductor option -> values): an eager config takes only the
    dimensions that apply to it, a dimension that does not apply keeps its default; duplicates
    dropped, order kept."""
    names = [d.name for d in DIMENSIONS if d.name in values]
    option_names = list(options or {})
    found: list[CompileConfig] = []
    for combo in product(*(values[n] for n in names),
                         *((options or {})[n] for n in option_names)):
        chosen = dict(zip(names, combo[:len(names)], strict=True))
        opts = dict(zip(option_names, combo[len(names):], strict=True))
        config = _config(chosen, opts)
        if config is not None:
            found.append(config)
    return list(dict.fromkeys(found))


def _config(chosen: Mapping[str, Value], opts: Mapping[str, Value]) -> CompileConfig | None:
    eager = chosen.get("mode") == "eager"
    fields: dict[str, Any] = {}
    for d in DIMENSIONS:
        if d.name not in chosen:
            continue
        if (eager and d.compiled_only) or not d.applies(chosen):
            if chosen[d.name] != d.default:
                return None  # the same config as the one with the default: not another
            continue
        fields[d.name] = chosen[d.name]
    return CompileConfig(**fields, options={} if eager else dict(opts))


def varying(space_configs: Sequence[CompileConfig]) -> dict[str, list[Value]]:
    """Optuna's parameters of a space: parameter -> its values, in first-seen order. Mode and
    dtype always; a compiled-only dimension or an Inductor option when its compiled configs
    take more than one value."""
    params: dict[str, list[Value]] = {}
    compiled = [c for c in space_configs if c.compiled]
    for d in DIMENSIONS:
        pool = compiled if d.compiled_only else list(space_configs)
        seen = list(dict.fromkeys(getattr(c, d.name) for c in pool))
        if not d.compiled_only or len(seen) > 1:
            params[d.name] = seen
    for name in dict.fromkeys(n for c in compiled for n in c.options):
        seen = list(dict.fromkeys(c.options.get(name, OPTIONS_BY_NAME[name].choices[0])
                                  for c in compiled))
        if len(seen) > 1:
            params[OPTION_PREFIX + name] = seen
    return params


def params_of(config: CompileConfig, space_configs: Sequence[CompileConfig]) -> dict[str, Any]:
    """The Optuna parameters that stand for ``config`` in a space (what `suggest` reads back)."""
    params: dict[str, Any] = {}
    chosen: dict[str, Value] = {d.name: getattr(config, d.name) for d in DIMENSIONS}
    for name in varying(space_configs):
        if name.startswith(OPTION_PREFIX):
            if config.compiled:
                option = name[len(OPTION_PREFIX):]
                params[name] = config.options.get(option, OPTIONS_BY_NAME[option].choices[0])
            continue
        d = BY_NAME[name]
        if d.compiled_only and not config.compiled:
            continue
        if d.applies(chosen):
            params[name] = chosen[name]
    return params


def suggest(trial: Any, space_configs: Sequence[CompileConfig]) -> CompileConfig:
    """Define-by-run: the config an Optuna trial proposes (or was enqueued with)."""
    params = varying(space_configs)
    compiled = [c for c in space_configs if c.compiled]
    chosen: dict[str, Value] = {}
    for d in DIMENSIONS:
        if d.compiled_only and chosen.get("mode") == "eager":
            break
        if not d.applies(chosen):
            continue
        if d.name in params:
            chosen[d.name] = trial.suggest_categorical(d.name, params[d.name])
        elif compiled:
            chosen[d.name] = getattr(compiled[0], d.name)
    opts: dict[str, Value] = {}
    if chosen.get("mode") != "eager":
        for name, values in params.items():
            if name.startswith(OPTION_PREFIX):
                opts[name[len(OPTION_PREFIX):]] = trial.suggest_categorical(name, values)
        fixed = {n: v for c in compiled[:1] for n, v in c.options.items() if
                 OPTION_PREFIX + n not in params}
        opts = {**fixed, **opts}
    fields: dict[str, Any] = dict(chosen)
    return CompileConfig(**fields, options=opts)


def from_params(params: Mapping[str, Any]) -> CompileConfig | None:
    """The config a stored Optuna trial's parameters stand for (None: they do not make one)."""
    try:
        chosen = {d.name: params[d.name] for d in DIMENSIONS if d.name in params}
        if chosen.get("mode") == "eager":
            return CompileConfig(mode="eager", dtype=chosen["dtype"])
        opts = {k[len(OPTION_PREFIX):]: v for k, v in params.items()
                if k.startswith(OPTION_PREFIX)}
        return CompileConfig(**chosen, options=opts)
    except (ConfigError, KeyError, TypeError):
        return None


def simplicity(config: CompileConfig) -> tuple[int, ...]:
    """The tie rule's ranks of a config, dimension by dimension: lower is simpler."""
    return tuple(d.simpler(getattr(config, d.name)) for d in DIMENSIONS if d.simpler is not None)
