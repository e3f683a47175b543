"""The search space: defaults per device, narrowing flags, the baseline first; parse helpers."""

from __future__ import annotations

import math

import pytest

from advisor.config import CUDAGRAPH_MODES, DTYPES, EAGER_FP32, MODE_COST_ORDER, MODES
from advisor.errors import ConfigError
from advisor.search.request import SweepRequest
from advisor.search.space import CPU_DEFAULT_MODES, Space, build_space, parse_budget, parse_list

ALL_DTYPES = ("fp32", "tf32", "bf16", "fp16")


def _order(space: Space) -> list[tuple[int, int]]:
    return [(MODE_COST_ORDER[c.mode], DTYPES.index(c.dtype)) for c in space.configs[1:]]


# --- defaults ---------------------------------------------------------------------------------


def test_cpu_default_leaves_out_tf32_fp16_and_cudagraph_modes() -> None:
    space = build_space(ALL_DTYPES, "cpu")
    assert space.modes == list(CPU_DEFAULT_MODES)
    assert not any(c.mode in CUDAGRAPH_MODES for c in space.configs)
    assert space.dtypes == ["fp32", "bf16"]
    # 2 eager dtypes + 2 dtypes x 2 compiled modes, fullgraph off, dynamic auto
    assert len(space) == 6


def test_cuda_default_is_every_mode_and_every_allowed_dtype() -> None:
    space = build_space(ALL_DTYPES, "cuda:0")
    assert space.modes == list(MODES)
    assert space.dtypes == list(ALL_DTYPES)
    assert len(space) == 4 + 4 * 4


def test_cpu_measures_tf32_fp16_and_cudagraph_modes_when_asked_for() -> None:
    space = build_space(ALL_DTYPES, "cpu", {"mode": ["reduce-overhead"], "dtype": ["tf32", "fp16"]})
    assert space.keys() == [
        "eager/fp32",
        "reduce-overhead/tf32/graphbreaks-ok/dynamic-auto",
        "reduce-overhead/fp16/graphbreaks-ok/dynamic-auto",
    ]


def test_default_dtypes_are_the_workloads() -> None:
    space = build_space(("fp32", "bf16"), "cpu", {"mode": ["eager"]})
    assert space.keys() == ["eager/fp32", "eager/bf16"]


# --- the baseline and the order ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("allowed", "modes", "dtypes"),
    [
        (ALL_DTYPES, None, None),
        (ALL_DTYPES, ["max-autotune", "default"], ["fp16", "bf16"]),
        (("bf16",), ["default"], None),  # the oracle runs even when fp32 is not on the menu
        (ALL_DTYPES, ["eager"], ["fp16"]),
    ],
)
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_eager_fp32_baseline_is_always_first_and_only_once(
    allowed: tuple[str, ...], modes: list[str] | None, dtypes: list[str] | None, device: str
) -> None:
    space = build_space(allowed, device, {"mode": modes, "dtype": dtypes})
    assert space.configs[0] == EAGER_FP32
    assert space.keys().count(EAGER_FP32.key) == 1


def test_configs_are_cheapest_first_and_unique() -> None:
    space = build_space(ALL_DTYPES, "cuda", {"fullgraph": [False, True],
                                             "dynamic": ("auto", "false")})
    assert _order(space) == sorted(_order(space))
    assert len(set(space.keys())) == len(space)


def test_repeated_flag_values_give_no_duplicates() -> None:
    space = build_space(ALL_DTYPES, "cpu",
                        {"mode": ["default", "eager", "default"], "dtype": ["fp32", "fp32"]})
    assert space.keys() == ["eager/fp32", "default/fp32/graphbreaks-ok/dynamic-auto"]


# --- narrowing flags --------------------------------------------------------------------------


def test_modes_and_dtypes_narrow_the_space() -> None:
    space = build_space(ALL_DTYPES, "cuda", {"mode": ["default"], "dtype": ["bf16"]})
    assert space.keys() == ["eager/fp32", "default/bf16/graphbreaks-ok/dynamic-auto"]


@pytest.mark.parametrize(
    ("fullgraph", "values"),
    [
        ("off", {False}),
        ("on", {True}),
        ("both", {False, True}),
    ],
)
def test_fullgraph_flag(fullgraph: str, values: set[bool]) -> None:
    request = SweepRequest(modes=["eager", "default"], fullgraph=fullgraph)
    space = build_space(("fp32",), "cpu", request.dimension_values())
    compiled = [c for c in space.configs if c.compiled]
    assert {c.fullgraph for c in compiled} == values
    assert len(compiled) == len(values)
    assert all(not c.fullgraph for c in space.configs if not c.compiled)


def test_dynamic_settings_multiply_compiled_configs_only() -> None:
    space = build_space(("fp32",), "cpu",
                        {"mode": ["eager", "default"], "dynamic": ("auto", "true", "false")})
    assert sorted(c.dynamic for c in space.configs if c.compiled) == ["auto", "false", "true"]
    assert [c.dynamic for c in space.configs if not c.compiled] == ["auto"]


def test_space_helpers() -> None:
    space = build_space(("fp32", "bf16"), "cpu", {"mode": ["default", "eager"]})
    assert space.modes == ["eager", "default"]
    assert space.dtypes == ["fp32", "bf16"]
    key = "default/bf16/graphbreaks-ok/dynamic-auto"
    assert space.by_key(key).dtype == "bf16"
    with pytest.raises(KeyError):
        space.by_key("default/fp16/graphbreaks-ok/dynamic-auto")


# --- mistakes ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("chosen", "words"),
    [
        ({"mode": ["bogus"]}, "unknown mode 'bogus'"),
        ({"mode": ["default", "Default"]}, "unknown mode 'Default'"),
        ({"dtype": ["fp64"]}, "unknown dtype 'fp64'"),
        ({"dtype": ["fp16"]}, "dtype fp16 is not allowed by this workload (allowed: fp32, bf16)"),
        ({"dtype": ["tf32"]}, "dtype tf32 is not allowed"),
        ({"fullgraph": ["maybe"]}, "unknown fullgraph setting 'maybe'"),
        ({"dynamic": ("sometimes",)}, "unknown dynamic setting 'sometimes'"),
        ({"option.freezing": ["often"]}, "unknown value of option freezing 'often'"),
        ({"modes": ["default"]}, "unknown dimension 'modes': choose from mode, dtype"),
        ({"option.nosuch": [True]}, "unknown dimension 'option.nosuch'"),
    ],
)
def test_bad_values_raise_config_error(chosen: dict, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        build_space(("fp32", "bf16"), "cpu", chosen)
    assert words in str(caught.value)
    assert "\n" not in str(caught.value)


# --- parse_budget / parse_list ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("20m", 1200.0),
        ("90s", 90.0),
        ("1.5h", 5400.0),
        ("45", 45.0),
        ("0.5m", 30.0),
    ],
)
def test_parse_budget(text: str, seconds: float) -> None:
    assert parse_budget(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    "text", ["xyz", "", "m", "20 min", "20M", "h1", "0", "0s", "-5m", "nan", "inf", "infm"]
)
def test_parse_budget_refuses_nonsense(text: str) -> None:
    with pytest.raises(ConfigError, match="bad budget"):
        parse_budget(text)


def test_parse_budget_is_finite() -> None:
    assert math.isfinite(parse_budget("1e3s"))


def test_parse_list() -> None:
    assert parse_list(None) is None
    assert parse_list("default") == ["default"]
    assert parse_list(" eager, default ,,reduce-overhead ") == [
        "eager",
        "default",
        "reduce-overhead",
    ]


@pytest.mark.parametrize("text", ["", ",", " , "])
def test_parse_list_refuses_an_empty_list(text: str) -> None:
    with pytest.raises(ConfigError, match="empty list"):
        parse_list(text)


def test_a_resumed_pool_queues_cheapest_first_the_baseline_at_the_front():
    from advisor.search.fleet import queue_order
    from advisor.search.priors import twin_of

    space = build_space(("fp32", "bf16"), "cuda", {"dtype": ["fp32", "bf16"]})
    order = queue_order(space)
    assert sorted(order, key=lambda c: c.key) == sorted(space.configs, key=lambda c: c.key)
    costs = [MODE_COST_ORDER[c.mode] for c in order]
    assert costs == sorted(costs)
    assert order[0] == EAGER_FP32 and order[-1].mode == "max-autotune"
    for i, config in enumerate(order):
        twin = twin_of(config)
        assert twin is None or order.index(twin) < i  # each autotuning config after its twin
