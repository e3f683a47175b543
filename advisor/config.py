"""Compile configurations: one point of the search space, frozen and validated.

A `CompileConfig` says how a component is run: the `torch.compile` mode (or ``eager`` for no
compilation), the dtype, `fullgraph`, the `dynamic` setting, extra Inductor options and the shape
strategy (how varying input shapes are handled; see `SHAPE_STRATEGIES` and docs/shapes.md). It
has a stable `key` (the same config always gives the same key) and converts to and from plain
dicts, which is what crosses process boundaries and lands in the database. The default shape
strategy, ``static``, appears in neither the key nor the dict, so configs from before shape
strategies keep their keys.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from advisor.errors import ConfigError

MODES: tuple[str, ...] = (
    "eager",
    "default",
    "reduce-overhead",
    "max-autotune-no-cudagraphs",
    "max-autotune",
)
DTYPES: tuple[str, ...] = ("fp32", "tf32", "bf16", "fp16")
# A dtype name -> torch's name for the component's dtype (tf32: fp32 weights, TF32 matmuls).
TORCH_DTYPE_NAMES = {"fp32": "float32", "tf32": "float32", "bf16": "bfloat16", "fp16": "float16"}
DYNAMIC: tuple[str, ...] = ("auto", "true", "false")
# Shape strategies: how a compiled component meets the varying shapes of its traffic.
#   static            inputs pass at their own shape; the `dynamic` setting decides what torch
#                     does with a new one (auto: recompile once, then dynamic; false: a graph per
#                     exact shape, eager past torch._dynamo.config.recompile_limit)
#   dynamic           torch.compile(dynamic=True): one dynamic graph
#   mark_dynamic      the dims that vary in the traffic are marked dynamic, with their ranges
#   buckets:pow2      each varying dim padded up to the next power of two (static graphs)
#   buckets:multiple-N         ... up to the next multiple of N
#   buckets:fitted-K  ... up to one of K boundaries per dim fitted to the traffic (advisor.buckets)
SHAPE_STRATEGIES: tuple[str, ...] = (
    "static", "dynamic", "mark_dynamic", "buckets:pow2", "buckets:multiple-N", "buckets:fitted-K",
)
_BUCKET_SCHEMES = {"multiple": "N", "fitted": "K"}

# Simplest and cheapest first: used to break ties between configs that measure the same.
MODE_COST_ORDER: dict[str, int] = {m: i for i, m in enumerate(MODES)}

# What each mode means as Inductor options (torch._inductor.list_mode_options()); torch.compile
# refuses `mode` and `options` together, so a config with options expands its mode into them.
MODE_OPTIONS: dict[str, dict[str, Any]] = {
    "default": {},
    "reduce-overhead": {"triton.cudagraphs": True},
    "max-autotune-no-cudagraphs": {"max_autotune": True, "coordinate_descent_tuning": True},
    "max-autotune": {
        "max_autotune": True,
        "coordinate_descent_tuning": True,
        "triton.cudagraphs": True,
    },
}
CUDAGRAPH_MODES = frozenset({"reduce-overhead", "max-autotune"})


def _scalar(value: Any) -> bool:
    return isinstance(value, (bool, int, float, str))


def shape_strategy(text: Any) -> tuple[str, str | None, int | None]:
    """``buckets:fitted-4`` -> ``("buckets", "fitted", 4)``; ``static`` -> ``("static", None,
    None)``. Raises ConfigError for anything not in `SHAPE_STRATEGIES`."""
    choices = ", ".join(SHAPE_STRATEGIES)
    if not isinstance(text, str):
        raise ConfigError(f"unknown shape strategy {text!r}: choose one of {choices}")
    if text in ("static", "dynamic", "mark_dynamic"):
        return text, None, None
    if text == "buckets:pow2":
        return "buckets", "pow2", None
    kind, _, rest = text.partition(":")
    scheme, _, number = rest.partition("-")
    if kind == "buckets" and scheme in _BUCKET_SCHEMES:
        letter = _BUCKET_SCHEMES[scheme]
        if not (number.isdigit() and number.isascii()) or number != str(int(number)) or (
            int(number) < 1
        ):
            raise ConfigError(f"bad shape strategy {text!r}: {letter} must be a whole number "
                              f"of at least 1, e.g. buckets:{scheme}-{4 if letter == 'K' else 8}")
        return "buckets", scheme, int(number)
    raise ConfigError(f"unknown shape strategy {text!r}: choose one of {choices}")


class ConfigDict(TypedDict):
    """`CompileConfig.to_dict()`: what crosses processes and lands in the store."""

    mode: str
    dtype: str
    fullgraph: bool
    dynamic: str
    options: dict[str, Any]
    shapes: NotRequired[str]  # absent for the default, ``static``


@dataclass(frozen=True)
class CompileConfig:
    """One compile configuration.

    mode: one of `MODES`; ``eager`` runs the component uncompiled.
    dtype: ``fp32``, ``tf32`` (fp32 with TF32 matmuls), ``bf16`` or ``fp16``.
    fullgraph: a graph break is an error instead of a split graph.
    dynamic: ``auto`` (torch's default, automatic dynamic), ``true`` or ``false``.
    options: extra Inductor options (`torch._inductor.list_options()`), scalar values only.
    shapes: the shape strategy, one of `SHAPE_STRATEGIES` (``buckets:fitted-4``); a strategy
        other than ``static`` sets the compile's dynamic setting itself, so `dynamic` stays auto.
    """

    mode: str = "default"
    dtype: str = "fp32"
    fullgraph: bool = False
    dynamic: str = "auto"
    options: dict[str, Any] = field(default_factory=dict)
    shapes: str = "static"

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ConfigError(f"unknown mode {self.mode!r}: choose one of {', '.join(MODES)}")
        if self.dtype not in DTYPES:
            raise ConfigError(f"unknown dtype {self.dtype!r}: choose one of {', '.join(DTYPES)}")
        if not isinstance(self.fullgraph, bool):
            raise ConfigError(f"fullgraph must be true or false, not {self.fullgraph!r}")
        if self.dynamic not in DYNAMIC:
            raise ConfigError(
                f"unknown dynamic setting {self.dynamic!r}: choose one of {', '.join(DYNAMIC)}"
            )
        if not isinstance(self.options, dict):
            raise ConfigError("Inductor options must be a mapping of option name to value")
        for name, value in self.options.items():
            if not isinstance(name, str) or not _scalar(value):
                raise ConfigError(
                    f"Inductor option {name!r}={value!r} is not a name with a scalar value"
                )
        shape_strategy(self.shapes)  # raises ConfigError for an unknown strategy
        if self.mode == "eager" and (self.options or self.fullgraph or self.dynamic != "auto"):
            raise ConfigError("eager mode takes no fullgraph, dynamic or Inductor options")
        if self.mode == "eager" and self.shapes != "static":
            raise ConfigError(f"eager mode takes no shape strategy (got {self.shapes!r}): "
                              "eager runs every shape as it comes")
        if self.shapes != "static" and self.dynamic != "auto":
            raise ConfigError(f"shape strategy {self.shapes} sets dynamic itself; "
                              f"leave dynamic at auto (got {self.dynamic!r})")
        # A frozen dataclass holding a dict: keep our own sorted copy so nobody mutates it.
        object.__setattr__(self, "options", dict(sorted(self.options.items())))

    def __hash__(self) -> int:
        # The generated hash would hash the options dict and raise; equal configs share a key.
        return hash(self.key)

    @property
    def compiled(self) -> bool:
        return self.mode != "eager"

    @property
    def uses_cudagraphs(self) -> bool:
        if self.options:
            return bool(self.compile_kwargs().get("options", {}).get("triton.cudagraphs"))
        return self.mode in CUDAGRAPH_MODES

    def to_dict(self) -> ConfigDict:
        data: ConfigDict = {
            "mode": self.mode,
            "dtype": self.dtype,
            "fullgraph": self.fullgraph,
            "dynamic": self.dynamic,
            "options": dict(self.options),
        }
        if self.shapes != "static":  # the default stays out: older dicts compare equal
            data["shapes"] = self.shapes
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CompileConfig:
        unknown = set(data) - {"mode", "dtype", "fullgraph", "dynamic", "options", "shapes"}
        if unknown:
            raise ConfigError(f"unknown config fields: {', '.join(sorted(unknown))}")
        return cls(**data)

    @property
    def key(self) -> str:
        """A stable, human-readable key: the same config always gives the same key."""
        parts = [self.mode, self.dtype]
        if self.compiled:
            parts.append("fullgraph" if self.fullgraph else "graphbreaks-ok")
            parts.append(f"dynamic-{self.dynamic}")
        if self.options:
            blob = json.dumps(self.options, sort_keys=True)
            parts.append("opts-" + hashlib.sha256(blob.encode()).hexdigest()[:10])
        if self.shapes != "static":
            parts.append(f"shapes-{self.shapes}")
        return "/".join(parts)

    @property
    def label(self) -> str:
        """A short label for tables: ``bf16 + reduce-overhead``."""
        text = f"{self.dtype} + {self.mode}"
        if self.fullgraph:
            text += " + fullgraph"
        if self.dynamic != "auto":
            text += f" + dynamic={self.dynamic}"
        if self.options:
            text += " + " + ",".join(f"{k}={v}" for k, v in self.options.items())
        if self.shapes != "static":
            text += f" + shapes={self.shapes}"
        return text

    def compile_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for `torch.compile` (only meaningful when `compiled`)."""
        kwargs: dict[str, Any] = {"fullgraph": self.fullgraph}
        if self.dynamic != "auto":
            kwargs["dynamic"] = self.dynamic == "true"
        kind = shape_strategy(self.shapes)[0]
        if kind == "dynamic":
            kwargs["dynamic"] = True
        elif kind == "buckets":  # one static graph per bucket: no automatic dynamic
            kwargs["dynamic"] = False
        if self.options:
            kwargs["options"] = {**MODE_OPTIONS[self.mode], **self.options}
        elif self.mode != "default":
            kwargs["mode"] = self.mode
        return kwargs


EAGER_FP32 = CompileConfig(mode="eager", dtype="fp32")



MAX_DIM = 2**24  # a dim's largest size (a tensor dim past it is a typo, not a request)


def parse_shape(text: str) -> dict[str, int]:
    """Parse ``batch=50,seq=128`` into ``{"batch": 50, "seq": 128}``: positive whole sizes of
    at most `MAX_DIM`, the bound a traffic file's dims have too."""
    dims: dict[str, int] = {}
    for part in text.split(","):
        name, sep, value = part.strip().partition("=")
        name = name.strip()
        if not sep or not name.isidentifier():
            raise ConfigError(
                f"bad shape {text!r}: write it as name=int pairs, e.g. batch=50,seq=128"
            )
        digits = value.strip()
        if digits.isascii() and digits.isdigit() and len(digits.lstrip("0")) > len(str(MAX_DIM)):
            digits = str(MAX_DIM + 1)  # int() of 5,000 digits raises; past the bound anyway
        try:
            size = int(digits)
        except ValueError:
            raise ConfigError(f"bad shape {text[:80]!r}: {name} must be a whole number") from None
        if size <= 0:
            raise ConfigError(f"bad shape {text[:80]!r}: {name} must be positive")
        if size > MAX_DIM:
            raise ConfigError(f"bad shape {text[:80]!r}: {name} {value.strip()[:40]} is above the "
                              f"most advisor takes ({MAX_DIM:,}); give the request's real size")
        if name in dims:
            raise ConfigError(f"bad shape {text!r}: {name} is given twice")
        dims[name] = size
    return dims


def shape_name(dims: dict[str, int]) -> str:
    """The canonical text of a shape: ``batch=50,seq=128``."""
    return ",".join(f"{k}={v}" for k, v in dims.items())
