"""The priors table and the plan: which configs a budgeted sweep tries first, and why."""

from __future__ import annotations

import math

import pytest

from advisor.config import EAGER_FP32, CompileConfig
from advisor.errors import ConfigError
from advisor.search.neighbours import FleetPick
from advisor.search.plan import BASELINE_REASON, EAGER_REASON, PRIOR_SHARE, Plan
from advisor.search.priors import (
    COMPILE_COST,
    HOST_US_PER_OP,
    PRIORS,
    TRIAL_FIXED_COST,
    TWINS,
    Profile,
    cost,
    expected,
    rank,
    twin_of,
)
from advisor.search.space import build_space
from advisor.search.study import make_sampler

ALL = ("fp32", "tf32", "bf16", "fp16")
GPU_SPACE = build_space(ALL, "cuda")
# DistilBERT 8x64 on an H200 (FIELD-NOTES): 118 launches in 3.7 ms eager fp32.
LAUNCH_BOUND = Profile("cuda", eager_ms=3.7, ops_per_call=118)
# The same launches in 60 ms: the kernels dominate.
KERNEL_BOUND = Profile("cuda", eager_ms=60.0, ops_per_call=118)


def _baseline(median_ms: float, launches: int | None, kernels: int) -> dict:
    return {"status": "ok", "config_key": EAGER_FP32.key, "median_ms": median_ms,
            "eager_launches_per_call": launches, "eager_kernels_per_call": kernels}


def _compiled(ranked: list) -> list[CompileConfig]:
    return [r.config for r in ranked if r.config.compiled]


# --- the table ----------------------------------------------------------------------------------


def test_every_prior_is_a_named_row_with_its_evidence() -> None:
    names = [p.name for p in PRIORS]
    assert len(names) == len(set(names))
    for prior in PRIORS:
        assert len(prior.evidence) > 40, prior.name
        assert prior.speedup(LAUNCH_BOUND) > 0 and prior.speedup(Profile("cpu")) > 0


def test_expected_speedup_is_the_product_of_the_rows_that_apply() -> None:
    config = CompileConfig(mode="reduce-overhead", dtype="fp16")
    speedup, rows = expected(config, LAUNCH_BOUND)
    assert [name for name, _ in rows] == ["fusion", "cuda-graphs", "half-precision"]
    assert speedup == pytest.approx(math.prod(f for _, f in rows))
    assert expected(EAGER_FP32, LAUNCH_BOUND) == (1.0, [])


def test_cost_is_the_fixed_trial_cost_plus_the_modes_compile() -> None:
    for mode, compile_cost in COMPILE_COST.items():
        assert cost(CompileConfig(mode=mode)) == TRIAL_FIXED_COST + compile_cost
    for slow, twin in TWINS.items():
        assert COMPILE_COST[slow] > COMPILE_COST[twin]


# --- the profile --------------------------------------------------------------------------------


def test_profile_reads_launches_then_kernels_from_the_baseline() -> None:
    gpu = Profile.of("cuda:0", _baseline(3.7, 118, 119))
    assert gpu == Profile("cuda", 3.7, 118, None)
    assert gpu.launch_share == pytest.approx(118 * HOST_US_PER_OP["cuda"] / 3700)
    cpu = Profile.of("cpu", _baseline(0.35, None, 201))
    assert cpu.ops_per_call == 201 and cpu.launch_share == 1.0  # capped
    assert "201 ops per call in 0.350 ms" in cpu.describe()


def test_a_recorded_gpu_busy_share_wins_over_the_estimate() -> None:
    busy = Profile.of("cuda", {**_baseline(3.7, 118, 119), "gpu_busy_share": 0.9})
    assert busy.launch_share == pytest.approx(0.1)


def test_a_missing_or_failed_baseline_leaves_the_profile_unknown() -> None:
    for baseline in (None, {"status": "failed", "config_key": EAGER_FP32.key}):
        profile = Profile.of("cuda", baseline)
        assert not profile.known and "unknown" in profile.describe()
        assert 0 < profile.launch_share < 1


# --- the ranking --------------------------------------------------------------------------------


def test_launch_bound_puts_cuda_graph_modes_first() -> None:
    ranked = rank(GPU_SPACE.configs[1:], LAUNCH_BOUND)
    first = _compiled(ranked)[:2]
    assert all(c.uses_cudagraphs and c.dtype in ("bf16", "fp16") for c in first), first
    graphs = [r.score for r in ranked if r.config.mode == "reduce-overhead"]
    plain = [r.score for r in ranked if r.config.mode == "default"]
    assert min(graphs) > max(plain) * 0.99 or max(graphs) > max(plain)
    assert "cuda-graphs x" in ranked[0].reason


def test_kernel_bound_puts_half_precision_first_and_graphs_gain_little() -> None:
    ranked = rank(GPU_SPACE.configs[1:], KERNEL_BOUND)
    assert ranked[0].config.dtype in ("bf16", "fp16")
    fp32 = [i for i, r in enumerate(ranked) if r.config.dtype == "fp32"]
    half = [i for i, r in enumerate(ranked) if r.config.dtype in ("bf16", "fp16")]
    assert max(half[:4]) < min(fp32)
    graphs = dict(expected(CompileConfig(mode="reduce-overhead"), KERNEL_BOUND)[1])
    assert graphs["cuda-graphs"] < 1.1


def test_max_autotune_comes_after_its_cheaper_twin() -> None:
    for profile in (LAUNCH_BOUND, KERNEL_BOUND, Profile("cuda"), Profile("cpu")):
        order = [r.config for r in rank(GPU_SPACE.configs, profile)]
        for i, config in enumerate(order):
            twin = twin_of(config)
            if twin is not None:
                assert order.index(twin) < i, (profile, config.label)


def test_a_measured_twin_says_how_much_room_autotuning_has() -> None:
    slow = CompileConfig(mode="max-autotune-no-cudagraphs", dtype="bf16")
    twin = twin_of(slow)
    assert twin == CompileConfig(mode="default", dtype="bf16")
    kernel_bound_twin = {twin.key: {"status": "ok", "median_ms": 5.0, "launches_per_call": 2}}
    launch_bound_twin = {twin.key: {"status": "ok", "median_ms": 0.5, "launches_per_call": 60}}
    roomy = rank([slow], LAUNCH_BOUND, kernel_bound_twin)[0]
    cramped = rank([slow], LAUNCH_BOUND, launch_bound_twin)[0]
    assert roomy.speedup > cramped.speedup


def test_on_a_cpu_half_precision_and_cuda_graphs_get_no_prior() -> None:
    cpu = Profile("cpu", eager_ms=0.35, ops_per_call=201)
    space = build_space(("fp32", "bf16"), "cpu", {"mode": ["eager", "default", "reduce-overhead"]})
    ranked = rank(space.configs[1:], cpu)
    by_config = {r.config: r for r in ranked}
    fp32, bf16 = (by_config[CompileConfig(mode="default", dtype=d)] for d in ("fp32", "bf16"))
    assert fp32.speedup == bf16.speedup
    ro = by_config[CompileConfig(mode="reduce-overhead", dtype="fp32")]
    assert "cuda-graphs" not in ro.reason
    assert ranked[0].config == CompileConfig(mode="default", dtype="fp32")  # ties: space order
    assert ranked[-1].config == CompileConfig(mode="eager", dtype="bf16")  # nothing expected


# --- the plan ------------------------------------------------------------------------------------


def _pick(config: CompileConfig) -> FleetPick:
    return FleetPick(config, "f" * 16, "same device, another stack", "NVIDIA H200", 0.5)


def test_plan_opens_with_the_baseline_then_the_fleet() -> None:
    # the baseline first: the correctness oracle, cheap, and what every speedup is against
    fleet = _pick(CompileConfig(mode="reduce-overhead", dtype="fp16"))
    plan = Plan(GPU_SPACE, "cuda", [fleet], priors=True, n_trials=8)
    steps = plan.opening()
    # cheap first: every other eager dtype (seconds each, nothing to compile) before the fleet's
    eager = [c for c in GPU_SPACE.configs if not c.compiled and c != EAGER_FP32]
    assert eager and [s.config for s in steps] == [EAGER_FP32, *eager, fleet.config]
    assert steps[0].reason == BASELINE_REASON
    assert all(s.reason == EAGER_REASON for s in steps[1:-1])
    assert steps[-1].reason.startswith("fleet: best on NVIDIA H200 (same device, another stack")
    assert plan.quota == math.ceil(PRIOR_SHARE * len(GPU_SPACE)) and plan.cap == 8
    # a sweep that replays traffic: an eager replay is not cheap, the compiled ones come first
    replays = Plan(GPU_SPACE, "cuda", [fleet], priors=True, n_trials=8, replays=True)
    assert [s.config for s in replays.opening()] == [EAGER_FP32, fleet.config]


def test_plan_ranks_from_the_stored_baseline_and_leaves_out_what_is_done() -> None:
    plan = Plan(GPU_SPACE, "cuda")
    baseline = _baseline(3.7, 118, 119)
    steps = plan.ranked([baseline], {EAGER_FP32.key})
    assert EAGER_FP32 not in [s.config for s in steps]
    assert len(steps) == len(GPU_SPACE) - 1
    assert steps[0].reason.startswith("prior rank 1: ~64% of eager time launching")
    assert steps[0].config.uses_cudagraphs


def test_without_priors_only_the_baseline_is_planned() -> None:
    fleet = _pick(CompileConfig(mode="default", dtype="fp16"))
    plan = Plan(GPU_SPACE, "cuda", [fleet], priors=False)
    eager = [c for c in GPU_SPACE.configs if not c.compiled and c != EAGER_FP32]
    assert [s.config for s in plan.opening()] == [EAGER_FP32, *eager]  # no fleet, no priors
    assert plan.ranked([_baseline(3.7, 118, 119)], set()) == [] and plan.quota == 0


def test_samplers_by_name() -> None:
    import optuna

    assert isinstance(make_sampler("tpe", 0), optuna.samplers.TPESampler)
    assert isinstance(make_sampler("random", 0), optuna.samplers.RandomSampler)
    assert isinstance(make_sampler("grid", 0), optuna.samplers.BruteForceSampler)
    with pytest.raises(ConfigError, match="unknown sampler 'cmaes'"):
        make_sampler("cmaes", 0)


def test_before_the_baseline_is_known_eager_variants_wait_for_their_compiled_twins() -> None:
    """A budget's first wave starts before the baseline's profile is known: cheap eager
    variants must not crowd out the compiled configs (the H200 reranker miss)."""
    space = build_space(("fp32", "bf16", "fp16"), "cuda",
                        {"mode": ["eager", "default", "reduce-overhead"]})
    todo = [c for c in space.configs if c != EAGER_FP32]
    ranked = [r.config for r in rank(todo, Profile("cuda"))]
    for dtype in ("bf16", "fp16"):
        eager = ranked.index(CompileConfig(mode="eager", dtype=dtype))
        assert eager > ranked.index(CompileConfig(mode="default", dtype=dtype))
    assert all(c.compiled for c in ranked[:4])
    # once its compiled twin is measured (not in todo any more), an eager variant is ranked on
    # its own prior: on a kernel-bound component half precision is most of the gain
    rest = [c for c in todo if c != CompileConfig(mode="default", dtype="bf16")]
    by_own = [r.config for r in rank(rest, KERNEL_BOUND)]
    assert by_own.index(CompileConfig(mode="eager", dtype="bf16")) < by_own.index(
        CompileConfig(mode="default", dtype="fp32"))
