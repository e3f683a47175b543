"""Shape strategies as a config dimension: validation, keys, the space, the sweep's params."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from advisor.child.replay import ReplayPlan, replay_plan
from advisor.config import EAGER_FP32, CompileConfig, shape_strategy
from advisor.errors import ConfigError, WorkloadError
from advisor.search.space import build_space
from advisor.serving import strategy_rows
from advisor.traffic import Traffic, parse_traffic

STRATEGIES = [
    "static",
    "dynamic",
    "mark_dynamic",
    "buckets:pow2",
    "buckets:multiple-16",
    "buckets:fitted-1",
    "buckets:fitted-4",
]


def test_the_default_strategy_keeps_old_keys_and_dicts() -> None:
    config = CompileConfig()
    assert config.shapes == "static"
    assert config.key == "default/fp32/graphbreaks-ok/dynamic-auto"
    assert "shapes" not in config.to_dict()
    assert CompileConfig.from_dict({**config.to_dict(), "shapes": "static"}) == config


@pytest.mark.parametrize("strategy", STRATEGIES[1:])
def test_a_strategy_is_in_the_key_label_and_dict(strategy: str) -> None:
    config = CompileConfig(mode="reduce-overhead", dtype="bf16", shapes=strategy)
    assert config.key == f"reduce-overhead/bf16/graphbreaks-ok/dynamic-auto/shapes-{strategy}"
    assert config.label == f"bf16 + reduce-overhead + shapes={strategy}"
    again = CompileConfig.from_dict(json.loads(json.dumps(config.to_dict())))
    assert again == config and again.key == config.key


def test_keys_differ_between_strategies() -> None:
    keys = {CompileConfig(shapes=s).key for s in STRATEGIES}
    assert len(keys) == len(STRATEGIES)


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"shapes": "buckets"}, ["unknown shape strategy", "buckets:fitted-K"]),
        ({"shapes": "pow2"}, ["unknown shape strategy"]),
        ({"shapes": "buckets:fitted-0"}, ["K", "at least 1"]),
        ({"shapes": "buckets:fitted-x"}, ["K"]),
        ({"shapes": "buckets:fitted-02"}, ["K"]),
        ({"shapes": "buckets:multiple-"}, ["N"]),
        ({"shapes": None}, ["unknown shape strategy"]),
        ({"shapes": "dynamic", "dynamic": "false"}, ["sets dynamic itself"]),
        ({"shapes": "buckets:pow2", "dynamic": "true"}, ["sets dynamic itself"]),
        ({"mode": "eager", "shapes": "buckets:pow2"}, ["eager", "no shape strategy"]),
    ],
)
def test_bad_strategies_are_one_line(fields: dict, words: list[str]) -> None:
    with pytest.raises(ConfigError) as info:
        CompileConfig(**fields)
    assert len(str(info.value).splitlines()) == 1
    for word in words:
        assert word in str(info.value)


def test_compile_kwargs_follow_the_strategy() -> None:
    assert CompileConfig(shapes="dynamic").compile_kwargs() == {"fullgraph": False, "dynamic": True}
    assert CompileConfig(shapes="buckets:pow2").compile_kwargs()["dynamic"] is False
    assert "dynamic" not in CompileConfig(shapes="mark_dynamic").compile_kwargs()
    assert CompileConfig(dynamic="false").compile_kwargs()["dynamic"] is False
    assert shape_strategy("buckets:multiple-8") == ("buckets", "multiple", 8)


def test_space_adds_strategies_to_compiled_configs_only() -> None:
    space = build_space(("fp32", "bf16"), "cpu",
                        {"mode": ["eager", "default"], "dtype": ["fp32"],
                         "shapes": ["static", "dynamic", "buckets:fitted-2"]})
    assert space.keys() == [
        "eager/fp32",
        "default/fp32/graphbreaks-ok/dynamic-auto",
        "default/fp32/graphbreaks-ok/dynamic-auto/shapes-dynamic",
        "default/fp32/graphbreaks-ok/dynamic-auto/shapes-buckets:fitted-2",
    ]
    assert space.shapes == ["static", "dynamic", "buckets:fitted-2"]
    assert build_space(("fp32",), "cpu", {"mode": ["default"]}).shapes == ["static"]
    with pytest.raises(ConfigError, match="unknown shape strategy"):
        build_space(("fp32",), "cpu", {"shapes": ["buckets:pow3"]})
    # a strategy pairs only with dynamic auto: no invalid combinations appear
    mixed = build_space(("fp32",), "cpu",
                        {"mode": ["default"], "dynamic": ["auto", "false"],
                         "shapes": ["static", "buckets:pow2"]})
    assert len(mixed) == 1 + 3


def test_sweep_params_and_suggest_carry_the_strategy() -> None:
    import optuna

    from advisor.search.study import suggest_config, trial_params

    space = build_space(("fp32",), "cpu",
                        {"mode": ["eager", "default"], "dtype": ["fp32"],
                         "dynamic": ["auto", "false"], "shapes": ["static", "buckets:fitted-2"]})
    for config in space.configs:
        params = trial_params(config, space)
        assert suggest_config(optuna.trial.FixedTrial(params), space) == config
    bucketed = space.by_key("default/fp32/graphbreaks-ok/dynamic-auto/shapes-buckets:fitted-2")
    assert trial_params(bucketed, space) == {
        "mode": "default",
        "dtype": "fp32",
        "shapes": "buckets:fitted-2",
    }
    # one strategy: no shapes parameter at all (the study's params are as before)
    plain = build_space(("fp32",), "cpu", {"mode": ["default"], "dtype": ["fp32"]})
    assert "shapes" not in trial_params(plain.configs[1], plain)


# --- the replay plan (pure) --------------------------------------------------------------------

TRAFFIC = [({"batch": 2, "seq": 5}, 4), ({"batch": 2, "seq": 7}, 3), ({"batch": 2, "seq": 30}, 1)]


def _workload(pad: bool = True) -> SimpleNamespace:
    return SimpleNamespace(name="toy", traffic=TRAFFIC, pad=(lambda *a: a) if pad else None)


def test_plan_is_none_for_a_plain_trial_and_built_for_strategies_or_traffic() -> None:
    wl = _workload()
    assert (
        replay_plan(
            {"shapes": [{"dims": {"batch": 2, "seq": 5}, "weight": 1}]}, CompileConfig(), wl
        )
        is None
    )
    plan = replay_plan({}, CompileConfig(shapes="buckets:fitted-2"), wl)
    assert plan is not None and plan.buckets.bounds == {"seq": (7, 30)}
    spec = {"shapes": Traffic.from_pairs(TRAFFIC).to_spec()}
    assert replay_plan(spec, EAGER_FP32, wl) is not None  # traffic given: even eager replays
    with pytest.raises(WorkloadError, match="no pad"):
        replay_plan({}, CompileConfig(shapes="buckets:pow2"), _workload(pad=False))


def test_plan_trace_startup_and_waste() -> None:
    traffic = Traffic.from_pairs(TRAFFIC)
    plan = ReplayPlan.build(traffic, "buckets:fitted-2", n=200)
    static = ReplayPlan.build(traffic, "static", n=200)
    assert plan.trace == static.trace  # the same stream for every strategy
    assert plan.split == 0 and plan.fit_requests == 0  # declared traffic: nothing held out
    assert sorted(map(str, plan.shapes)) == sorted(str(d) for d, _ in traffic.shapes)
    assert sum(plan.weights) == pytest.approx(1.0)
    keys = plan.bucket_keys()
    assert sorted(set(keys)) == ["batch=2,seq=30", "batch=2,seq=7"]
    assert sorted(keys[i] for i in plan.startup()) == sorted(set(keys))  # one call per bucket
    # unpadded strategies warm the declared shapes, the most frequent first
    assert [static.shapes[i] for i in static.startup()] == [
        d for d, _ in sorted(traffic.shapes, key=lambda pair: -pair[1])
    ]
    assert 0 < plan.padding_waste() < 0.2
    assert [s["dims"] for s in plan.reference_shapes()] == plan.shapes


def test_a_log_is_fitted_on_its_earlier_part_and_serves_the_later_in_order() -> None:
    rows = ["2,5"] * 6 + ["2,7"] * 2 + ["2,9", "2,30", "2,7", "2,5"]
    traffic = parse_traffic("batch,seq\n" + "\n".join(rows) + "\n", "log.csv")
    assert traffic.log is not None and len(traffic.log) == len(rows)
    plan = ReplayPlan.build(traffic.with_holdout(0.25), "buckets:fitted-2", n=100)
    assert plan.split == 9 and plan.fit_requests == 9  # the first 75% fit, the rest is served
    served = [plan.shapes[i]["seq"] for i in plan.request_shape]
    assert served == [30, 7, 5]  # the holdout's first requests (up to n), in the log's order
    assert max(plan.buckets.bounds["seq"]) == 9  # fitted on 5, 7 and 9 only
    assert plan.buckets.bucket({"batch": 2, "seq": 30}) == {"batch": 2, "seq": 30}  # unseen
    assert len(plan.startup()) == 2  # the two fitted buckets, prepared before traffic
    assert ReplayPlan.build(traffic, "buckets:fitted-2", n=100).split == 6  # default holdout 50%
    with pytest.raises(ConfigError, match="holdout"):
        traffic.with_holdout(1.0)
    back = Traffic.from_spec(traffic.with_holdout(0.25).to_spec())
    assert back is not None and back.log == traffic.log and back.holdout == 0.25


def test_a_bucketed_plan_knows_its_grid_and_the_buckets_left() -> None:
    # fit: batch 2 and 4, seq 5 and 9 -> pow2 boundaries batch (2, 4), seq (8, 16): 4 buckets,
    # three met by the fitted part; the holdout: seq 30 (above every boundary, unpadded), seq 7
    # (a met bucket), batch 4 seq 3 (the met bucket 4x8)
    rows = ["2,5", "4,5", "2,9", "2,5", "2,30", "2,7", "4,3", "2,7"]
    plan = ReplayPlan.build(parse_traffic("batch,seq\n" + "\n".join(rows) + "\n", "log.csv")
                            .with_holdout(0.5), "buckets:pow2", n=100)
    assert plan.buckets.grid_size() == 4
    inside = {plan.shapes[i]["seq"]: plan.in_grid(i) for i in plan.request_shape}
    assert inside == {30: False, 7: True, 3: True}
    assert plan.grid_left() == 1  # batch 4 x seq 16, never met
    assert ReplayPlan.build(Traffic.from_pairs(TRAFFIC), "static", n=10).grid_left() is None
    # a dim that did not vary in the fitted part is not padded: a new size of it is no bucket
    rows = ["2,5", "2,9", "4,5", "2,5"]
    plan = ReplayPlan.build(parse_traffic("batch,seq\n" + "\n".join(rows) + "\n", "log.csv")
                            .with_holdout(0.5), "buckets:pow2", n=100)
    assert [plan.in_grid(i) for i in plan.request_shape] == [False, True]
    assert plan.grid_left() == 0


def _replay_record(mode: str, dtype: str, strategy: str, expected: float, eager: int = 0) -> dict:
    config = (
        CompileConfig(mode=mode, dtype=dtype, shapes=strategy)
        if mode != "eager"
        else (CompileConfig(mode="eager", dtype=dtype))
    )
    return {
        "status": "ok",
        "passed": eager == 0,
        "config": config.to_dict(),
        "replay": {
            "strategy": strategy,
            "expected_ms": expected,
            "mean_ms": expected,
            "p50_ms": expected,
            "p99_ms": expected * 2,
            "padding_waste": 0.1,
            "graphs": 2,
            "recompiles": 0,
            "compile_s_total": 3.0,
            "eager_fallbacks": eager,
            "boundaries": {"seq": [8, 32]},
        },
    }


def test_strategy_rows_show_the_best_mode_and_dtype_side_by_side() -> None:
    records = [
        _replay_record("eager", "fp32", "static", 9.0),
        _replay_record("default", "fp32", "static", 5.0, eager=2),  # fast only by eager fallback
        _replay_record("default", "fp32", "buckets:pow2", 4.0),
        _replay_record("default", "fp32", "dynamic", 4.5),
        _replay_record("default", "bf16", "buckets:pow2", 6.0),
        {"status": "ok", "passed": True, "config": CompileConfig().to_dict()},  # not a replay
    ]
    rows = strategy_rows(records)
    assert [r["strategy"] for r in rows] == [
        "buckets:pow2",
        "dynamic",
        "eager fp32 (baseline)",
        "static",
    ]
    assert rows[-1]["eager_fallbacks"] == 2 and not rows[-1]["passed"]
    assert strategy_rows([]) == []
    # eager fastest (tiny models on a CPU): the compiled strategies are still the ones compared
    records[0] = _replay_record("eager", "fp32", "static", 1.0)
    rows = strategy_rows(records)
    assert rows[0]["strategy"] == "eager fp32 (baseline)"
    assert {r["strategy"] for r in rows} == {
        "eager fp32 (baseline)",
        "buckets:pow2",
        "dynamic",
        "static",
    }
