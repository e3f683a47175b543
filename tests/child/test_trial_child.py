"""The trial child's pure parts, in-process: accuracy check, output copies, failure classes."""

from __future__ import annotations

import math
from collections import namedtuple

import pytest
import torch

from advisor.child.tensors import cast_floating, to_cpu_fp32
from advisor.child.trial import classify, compare
from advisor.errors import TrialFailed, WorkloadError

INF, NAN = math.inf, math.nan


def t(*values: float) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float32)


# --- compare: against hand-computed errors ----------------------------------------------------


def test_compare_by_hand() -> None:
    # reference [1, 2, -4], candidate [1, 2.125, -4.5] (all exact in binary):
    # abs errors 0, 0.125, 0.5 -> max 0.5; rel errors 0, 0.125 / 2 = 0.0625, 0.5 / 4 = 0.125.
    ref, cand = t(1, 2, -4), t(1, 2.125, -4.5)
    # allowed = atol + rtol * |ref| = 0.1 + 0.1 * [1, 2, 4] = [0.2, 0.3, 0.5]: 0.5 <= 0.5 passes.
    assert compare(ref, cand, atol=0.1, rtol=0.1) == {
        "max_abs_err": 0.5,
        "max_rel_err": 0.125,
        "correct": True,
    }
    # allowed = 0.1 + 0.05 * [1, 2, 4] = [0.15, 0.2, 0.3]: 0.5 > 0.3 fails.
    assert compare(ref, cand, atol=0.1, rtol=0.05)["correct"] is False


def test_compare_takes_the_worst_over_every_output() -> None:
    ref = {"logits": t(1, 2), "extra": (t(8), t(0.5))}
    cand = {"logits": t(1, 2.25), "extra": (t(7), t(0.5))}
    # errors: 0.25 (rel 0.125), 1 (rel 0.125), 0 -> max abs 1, max rel 0.125
    out = compare(ref, cand, atol=0.0, rtol=0.2)
    assert out == {"max_abs_err": 1.0, "max_rel_err": 0.125, "correct": True}


def test_identical_non_finite_outputs_agree() -> None:
    # Masked logits: eager fp32 compared with itself must be correct, with zero error.
    ref = t(1, -INF, INF, NAN)
    assert compare(ref, ref.clone(), 1e-4, 1e-4) == {
        "max_abs_err": 0.0,
        "max_rel_err": 0.0,
        "correct": True,
    }


@pytest.mark.parametrize(
    ("ref", "cand"),
    [
        (t(1, 2), t(1, NAN)),  # NaN where the reference is finite
        (t(1, NAN), t(1, 2)),  # a number where the reference is NaN
        (t(1, 3e38), t(1, INF)),  # overflow
        (t(1, INF), t(1, 3e38)),  # no tolerance around an infinite reference
        (t(1, INF), t(1, -INF)),
    ],
)
def test_mismatched_non_finite_outputs_are_wrong(ref: torch.Tensor, cand: torch.Tensor) -> None:
    out = compare(ref, cand, atol=1.0, rtol=1.0)
    assert out == {"max_abs_err": INF, "max_rel_err": INF, "correct": False}


def test_compare_refuses_outputs_that_do_not_match_the_reference() -> None:
    with pytest.raises(WorkloadError, match="returned 1 tensors where the reference had 2"):
        compare((t(1), t(2)), (t(1),), 0.0, 0.0)
    with pytest.raises(WorkloadError, match="output shape"):
        compare(t(1, 2), t(1, 2, 3), 0.0, 0.0)
    with pytest.raises(WorkloadError):
        compare("no tensors", "at all", 0.0, 0.0)


def test_empty_tensors_compare_clean() -> None:
    assert compare(t(), t(), 0.0, 0.0) == {"max_abs_err": 0.0, "max_rel_err": 0.0, "correct": True}


# --- copies of outputs, casts of inputs -------------------------------------------------------

Pair = namedtuple("Pair", "scores ids")


def test_outputs_are_copied_to_fp32_keeping_their_structure() -> None:
    scores = torch.ones(2, dtype=torch.bfloat16)
    ids = torch.arange(2)
    out = to_cpu_fp32({"pair": Pair(scores, ids), "list": [scores], "n": 3})
    assert isinstance(out["pair"], Pair)
    assert out["pair"].scores.dtype == torch.float32  # namedtuples too
    assert out["pair"].ids.dtype == torch.int64  # integers stay integers
    assert out["list"][0].dtype == torch.float32 and out["n"] == 3
    scores.fill_(5)  # a copy: later writes (a CUDA graph replay) cannot change it
    assert out["pair"].scores.tolist() == [1.0, 1.0]


def test_inputs_are_cast_to_the_configs_dtype_except_integers() -> None:
    args = {"x": torch.ones(2), "ids": torch.arange(2), "pair": (torch.zeros(1), 7)}
    cast = cast_floating(args, torch.float16)
    assert cast["x"].dtype == torch.float16
    assert cast["ids"].dtype == torch.int64
    assert cast["pair"][0].dtype == torch.float16 and cast["pair"][1] == 7


# --- classify: real exceptions ----------------------------------------------------------------


def _raised(fn) -> BaseException:  # type: ignore[no-untyped-def]
    try:
        fn()
    except BaseException as exc:  # noqa: BLE001 - the exception is the test's subject
        return exc
    raise AssertionError("nothing was raised")


def test_graph_break_under_fullgraph_is_classified_graph_break() -> None:
    def f(x: torch.Tensor) -> torch.Tensor:
        torch._dynamo.graph_break()
        return x + 1

    torch._dynamo.reset()
    exc = _raised(lambda: torch.compile(f, fullgraph=True, backend="eager")(torch.ones(2)))
    assert classify(exc, "compile") == "graph_break"


def test_backend_failure_is_a_compile_error() -> None:
    def broken_backend(gm, example_inputs):  # type: ignore[no-untyped-def]
        raise RuntimeError("the backend cannot compile this")

    torch._dynamo.reset()
    exc = _raised(lambda: torch.compile(lambda x: x * 2, backend=broken_backend)(torch.ones(2)))
    assert classify(exc, "compile") == "compile_error"


def test_classify_by_kind_and_stage() -> None:
    assert classify(TrialFailed("timeout", "too slow"), "measure") == "timeout"
    assert classify(WorkloadError("bad inputs"), "reference") == "workload_error"
    cpu_oom = _raised(lambda: torch.empty(2**60, dtype=torch.uint8))
    assert classify(cpu_oom, "build") == "oom"
    assert classify(MemoryError(), "measure") == "oom"
    assert classify(RuntimeError("CUDA error: an illegal memory access"), "measure") == (
        "cuda_error"
    )
    assert classify(RuntimeError("missing weights"), "build") == "build_error"
    assert classify(ValueError("bad shape"), "compile") == "compile_error"
    assert classify(IndexError("out of range"), "measure") == "runtime_error"
