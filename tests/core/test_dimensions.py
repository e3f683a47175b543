"""advisor.dimensions: one table drives the space, Optuna's parameters and the tie rule."""

from __future__ import annotations

import optuna
import pytest

from advisor.config import EAGER_FP32, CompileConfig
from advisor.dimensions import (
    DIMENSIONS,
    INDUCTOR_OPTIONS,
    OPTION_PREFIX,
    from_params,
    params_of,
    parse_options,
    parse_value,
    simplicity,
    suggest,
    varying,
)
from advisor.errors import ConfigError
from advisor.search.space import build_space


def _round_trips(space_configs: tuple[CompileConfig, ...]) -> None:
    for config in space_configs:
        params = params_of(config, space_configs)
        assert suggest(optuna.trial.FixedTrial(params), space_configs) == config


def test_the_default_space_is_the_product_of_the_table_cheapest_first() -> None:
    space = build_space(("fp32", "bf16"), "cuda", {"mode": ["eager", "default", "reduce-overhead"],
                                                   "fullgraph": [False, True]})
    assert space.configs[0] == EAGER_FP32
    assert [c.key for c in space.configs] == [
        "eager/fp32", "eager/bf16",
        "default/fp32/graphbreaks-ok/dynamic-auto", "default/fp32/fullgraph/dynamic-auto",
        "default/bf16/graphbreaks-ok/dynamic-auto", "default/bf16/fullgraph/dynamic-auto",
        "reduce-overhead/fp32/graphbreaks-ok/dynamic-auto",
        "reduce-overhead/fp32/fullgraph/dynamic-auto",
        "reduce-overhead/bf16/graphbreaks-ok/dynamic-auto",
        "reduce-overhead/bf16/fullgraph/dynamic-auto",
    ]
    assert varying(space.configs) == {"mode": ["eager", "default", "reduce-overhead"],
                                      "dtype": ["fp32", "bf16"], "fullgraph": [False, True]}
    _round_trips(space.configs)


def test_a_shape_strategy_pairs_only_with_dynamic_auto() -> None:
    space = build_space(("fp32",), "cpu",
                        {"mode": ["default"], "dynamic": ["auto", "false"],
                         "shapes": ["static", "buckets:pow2"]})
    assert [c.key for c in space.configs[1:]] == [
        "default/fp32/graphbreaks-ok/dynamic-auto",
        "default/fp32/graphbreaks-ok/dynamic-false",
        "default/fp32/graphbreaks-ok/dynamic-auto/shapes-buckets:pow2",
    ]
    _round_trips(space.configs)


@pytest.mark.parametrize("option", INDUCTOR_OPTIONS, ids=lambda o: o.name)
def test_every_inductor_option_of_the_table_is_sweepable(option) -> None:
    """Adding a sweepable Inductor option is one entry of INDUCTOR_OPTIONS: it parses from
    --option, multiplies the compiled configs, becomes an Optuna parameter and round-trips."""
    text = ",".join(str(v).lower() for v in option.choices)
    options = parse_options([f"{option.name}={text}"])
    assert options == {option.name: option.choices}
    space = build_space(("fp32",), "cpu", {"mode": ["eager", "default"],
                                           **{OPTION_PREFIX + n: v for n, v in options.items()}})
    compiled = [c for c in space.configs if c.compiled]
    assert [c.options for c in compiled] == [{option.name: v} for v in option.choices]
    assert all(not c.options for c in space.configs if not c.compiled)
    assert varying(space.configs)[OPTION_PREFIX + option.name] == list(option.choices)
    for config in space.configs:
        params = params_of(config, space.configs)
        assert suggest(optuna.trial.FixedTrial(params), space.configs) == config
        assert from_params(params) == config


def test_two_options_make_their_product() -> None:
    options = parse_options(["epilogue_fusion=true,false", "freezing=false,true"])
    space = build_space(("fp32",), "cpu", {"mode": ["default"],
                                           **{OPTION_PREFIX + n: v for n, v in options.items()}})
    assert len(space) == 1 + 4
    assert {tuple(sorted(c.options.items())) for c in space.configs[1:]} == {
        (("epilogue_fusion", e), ("freezing", f)) for e in (True, False) for f in (False, True)}
    _round_trips(space.configs)


@pytest.mark.parametrize(("items", "message"), [
    (["warp_speed=true"], "not a sweepable Inductor option"),
    (["epilogue_fusion"], "write NAME=V1,V2"),
    (["epilogue_fusion="], "write NAME=V1,V2"),
    (["freezing=maybe"], "freezing=maybe: choose from false, true"),
    (["freezing=true", "freezing=false"], "is given twice"),
])
def test_bad_options_are_one_clear_error(items: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_options(items)


def test_values_parse_to_their_types() -> None:
    assert [parse_value(v) for v in ("true", "False", "3", "0.5", "TRITON")] == [
        True, False, 3, 0.5, "TRITON"]


def test_only_the_mode_breaks_ties_and_eager_is_simplest() -> None:
    assert [d.name for d in DIMENSIONS if d.simpler is not None] == ["mode"]
    ranks = [simplicity(CompileConfig(mode=m)) for m in
             ("eager", "default", "reduce-overhead", "max-autotune-no-cudagraphs",
              "max-autotune")]
    assert ranks == sorted(ranks) and len(set(ranks)) == 5


def test_parameters_that_make_no_config_give_none() -> None:
    assert from_params({"mode": "warp", "dtype": "fp32"}) is None
    assert from_params({"mode": "default"}) == CompileConfig(mode="default")
    assert from_params({"dtype": "bf16", "mode": "eager", "fullgraph": True}) == CompileConfig(
        mode="eager", dtype="bf16")
