"""Nested tensors (tuples, lists, dicts, a Hugging Face ``ModelOutput``) walked, cast, copied:
the one set of walkers every child path and `advisor.apply` use."""

from __future__ import annotations

from typing import Any


def tensors(data: Any) -> list[Any]:
    """The tensors of nested args, in a stable order."""
    import torch

    if isinstance(data, torch.Tensor):
        return [data]
    if isinstance(data, dict):
        return [t for key in data for t in tensors(data[key])]
    if isinstance(data, (list, tuple)):
        return [t for item in data for t in tensors(item)]
    return []


def cast_floating(args: Any, dtype: Any) -> Any:
    """``args`` with every floating-point tensor cast to ``dtype`` (nesting kept; None: as is)."""
    import torch

    if dtype is None:
        return args
    if isinstance(args, torch.Tensor):
        return args.to(dtype) if args.is_floating_point() else args
    if isinstance(args, dict):
        return {k: cast_floating(v, dtype) for k, v in args.items()}
    if isinstance(args, (list, tuple)):
        return type(args)(cast_floating(v, dtype) for v in args)
    return args


def to_cpu_fp32(out: Any) -> Any:
    """A detached CPU copy with floating tensors in fp32 (safe from CUDA-graph overwrites)."""
    import torch

    if isinstance(out, torch.Tensor):
        t = out.detach().to("cpu", copy=True)
        return t.float() if t.is_floating_point() else t
    if isinstance(out, dict):
        return _same_mapping(out, {key: to_cpu_fp32(value) for key, value in out.items()})
    if isinstance(out, (list, tuple)):
        items = [to_cpu_fp32(v) for v in out]
        return type(out)(*items) if hasattr(out, "_fields") else type(out)(items)
    return out


def _same_mapping(out: dict[Any, Any], items: dict[Any, Any]) -> dict[Any, Any]:
    """``items`` in the type ``out`` had: a Hugging Face ``ModelOutput`` stays one (its fields
    as keyword arguments), another dict subclass is built from the items; a plain dict when
    the type cannot be rebuilt that way."""
    kind = type(out)
    if kind is dict:
        return items
    for make in (lambda: kind(**items), lambda: kind(items)):
        try:
            rebuilt = make()
        except Exception:  # noqa: BLE001, S112 - a type that cannot be rebuilt stays a dict
            continue
        if isinstance(rebuilt, dict) and list(rebuilt.keys()) == list(items):
            return rebuilt
    return items


def clone(out: Any) -> Any:
    import torch

    if isinstance(out, torch.Tensor):
        return out.clone()
    if isinstance(out, dict):
        return {k: clone(v) for k, v in out.items()}
    if isinstance(out, (list, tuple)) and not hasattr(out, "_fields"):
        return type(out)(clone(v) for v in out)
    return out
