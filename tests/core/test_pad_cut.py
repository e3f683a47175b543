"""pad() and cut(): the request survives padding exactly, and cut outputs match unpadded ones."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from advisor.workload import load_workload

ROOT = Path(__file__).resolve().parents[2]
TINY_SEQ = ROOT / "tests" / "workloads" / "tiny_seq.py"
RERANKER = ROOT / "workloads" / "reranker.py"

PAIRS = [
    ({"batch": 2, "seq": 5}, {"batch": 4, "seq": 8}),
    ({"batch": 3, "seq": 7}, {"batch": 3, "seq": 16}),
    ({"batch": 4, "seq": 8}, {"batch": 4, "seq": 8}),
]


def _check_round_trip(
    wl, model, small: dict[str, int], big: dict[str, int], atol: float, rtol: float
) -> None:
    torch.manual_seed(0)
    args = wl.inputs(dict(small), "cpu")
    padded = wl.pad(args, small, big)
    for name, tensor in args.items():
        out = padded[name]
        assert tuple(out.shape) == (big["batch"], big["seq"])
        # the request sits, exactly, in the leading positions; the rest is neutral
        assert torch.equal(out[: small["batch"], : small["seq"]], tensor)
        rest = out.clone()
        rest[: small["batch"], : small["seq"]] = 0
        assert not rest.any()
    # cut is exact on the padded call's outputs: the leading rows, untouched
    fake = torch.arange(big["batch"], dtype=torch.float32) * 1.5
    assert torch.equal(wl.cut(fake, small), fake[: small["batch"]])
    # and the component's results for the request survive padding (fp32 eager)
    with torch.inference_mode():
        expected = model(**args)
        got = wl.cut(model(**padded), small)
    assert got.shape == expected.shape
    torch.testing.assert_close(got, expected, atol=atol, rtol=rtol)


@pytest.mark.parametrize(("small", "big"), PAIRS)
def test_tiny_seq_pad_and_cut_round_trip(small: dict[str, int], big: dict[str, int]) -> None:
    wl = load_workload(TINY_SEQ).workload
    torch.manual_seed(0)
    model = wl.build("cpu", torch.float32)
    _check_round_trip(wl, model, small, big, *wl.tolerance("fp32"))


@pytest.mark.slow
def test_reranker_pad_and_cut_round_trip() -> None:
    wl = load_workload(RERANKER).workload
    torch.manual_seed(0)
    model = wl.build("cpu", torch.float32)
    for small, big in [
        ({"batch": 10, "seq": 32}, {"batch": 16, "seq": 64}),
        ({"batch": 12, "seq": 40}, {"batch": 12, "seq": 64}),
    ]:
        _check_round_trip(wl, model, small, big, *wl.tolerance("fp32"))


def test_pad_and_cut_come_together() -> None:
    from advisor import Workload, WorkloadError

    with pytest.raises(WorkloadError, match="pad and cut come together"):
        Workload(name="w", build=print, inputs=print, traffic=[({"b": 1}, 1)], pad=print)
    with pytest.raises(WorkloadError, match="cut must be a function"):
        Workload(name="w", build=print, inputs=print, traffic=[({"b": 1}, 1)], pad=print, cut=3)
