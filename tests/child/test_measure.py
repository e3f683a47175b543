"""Timing loops and the kernel profile, run for real on the CPU (no compilation here)."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
import torch

from advisor.child.measure import (
    SamplingPolicy,
    Timer,
    back_to_back_ms,
    profile_call,
    sample,
    throughput_per_s,
    warm_up,
)


def counting(work: Callable[[], object] = lambda: None) -> tuple[list[int], Callable[[], None]]:
    calls: list[int] = []

    def fn() -> None:
        calls.append(1)
        work()

    return calls, fn


def sleeper(seconds: float) -> Callable[[], None]:
    return lambda: time.sleep(seconds)  # the thing being timed, not a wait for anything


def test_policy_defaults_per_device(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ADVISOR_MEASURE_S", raising=False)  # tests/conftest.py sets it
    gpu = SamplingPolicy.for_device("cuda:1")
    assert (gpu.warmup_iters, gpu.min_samples) == (25, 100)  # the article's benchmark
    assert gpu.min_time_s == 4.0  # spans the host's slow and fast spells
    cpu = SamplingPolicy.for_device("cpu")
    assert (cpu.warmup_iters, cpu.min_samples, cpu.throughput_calls) == (5, 30, 5)
    assert cpu.min_time_s == 1.0
    assert SamplingPolicy(**cpu.to_dict()) == cpu


def test_the_least_measuring_time_is_a_setting_for_trials_and_paired_rounds(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from advisor import settings
    from advisor.errors import ConfigError
    from advisor.stats import Rounds

    monkeypatch.delenv("ADVISOR_MEASURE_S", raising=False)
    assert Rounds.for_device("cuda", settings.measure_s()).min_time_s == 2.0
    assert Rounds.for_device("cpu", settings.measure_s()).min_time_s == 1.0
    monkeypatch.setenv("ADVISOR_MEASURE_S", "0.5")
    for device in ("cpu", "cuda"):
        assert SamplingPolicy.for_device(device).min_time_s == 0.5
        rounds = Rounds.for_device(device, settings.measure_s())
        assert rounds.min_time_s == 0.5 and rounds.min_rounds >= 30  # counts still hold
    assert SamplingPolicy.for_device("cpu").min_samples == 30
    monkeypatch.setenv("ADVISOR_MEASURE_S", "-1")
    with pytest.raises(ConfigError, match="ADVISOR_MEASURE_S must be a finite number above 0"):
        SamplingPolicy.for_device("cpu")
    with pytest.raises(ConfigError, match="ADVISOR_MEASURE_S"):
        settings.check_all()  # in the parent, before any child would die of it


def test_cpu_timer_uses_perf_counter() -> None:
    timer = Timer("cpu", cudagraphs=False)
    assert timer.method == "perf_counter"
    assert timer.mark_step is None
    # time.sleep(0.005) lasts at least 5 ms, so perf_counter must see at least 5 ms.
    assert timer.time_ms(sleeper(0.005)) >= 5.0


def test_warm_up_stops_at_the_count() -> None:
    calls, fn = counting()
    done = warm_up(Timer("cpu", False), fn, SamplingPolicy(warmup_iters=7, warmup_max_s=60))
    assert done == 7 and len(calls) == 7


def test_warm_up_stops_at_the_time_limit_after_one_call() -> None:
    calls, fn = counting(sleeper(0.01))
    done = warm_up(Timer("cpu", False), fn, SamplingPolicy(warmup_iters=1000, warmup_max_s=0))
    assert done == 1 and len(calls) == 1  # a zero budget still warms up once


def test_sample_until_count_and_time_are_both_reached() -> None:
    calls, fn = counting()
    samples = sample(Timer("cpu", False), fn, SamplingPolicy(min_samples=9, min_time_s=0))
    assert len(samples) == len(calls) == 9
    # 2 ms sleeps, at least 20 ms of sampling: at least 10 samples, each at least 2 ms.
    policy = SamplingPolicy(min_samples=1, min_time_s=0.02)
    samples = sample(Timer("cpu", False), sleeper(0.002), policy)
    assert len(samples) >= 2
    assert min(samples) >= 2.0


def test_sample_gives_up_at_max_time_with_a_floor() -> None:
    # min_samples is out of reach; max_time_s = 0 ends sampling as soon as floor_samples are in.
    policy = SamplingPolicy(min_samples=10**6, max_time_s=0.0, floor_samples=4)
    assert len(sample(Timer("cpu", False), lambda: None, policy)) == 4


def test_sample_never_exceeds_max_samples() -> None:
    policy = SamplingPolicy(min_samples=100, min_time_s=0, max_samples=10)
    assert len(sample(Timer("cpu", False), lambda: None, policy)) == 10


def test_throughput_by_hand() -> None:
    calls, fn = counting(sleeper(0.01))
    # 4 calls of at least 10 ms: at least 40 ms, so at most 4 / 0.040 = 100 calls per second.
    per_s = throughput_per_s(Timer("cpu", False), fn, 4)
    assert len(calls) == 4
    assert 0 < per_s <= 100


def test_back_to_back_times_every_call_on_cpu() -> None:
    calls, fn = counting(sleeper(0.01))
    times = back_to_back_ms(Timer("cpu", False), fn, 3)
    assert len(calls) == 3 and len(times) == 3
    assert all(10 <= ms < 1000 for ms in times)


def test_throughput_count_fits_the_time_cap() -> None:
    gpu = SamplingPolicy.for_device("cuda")
    assert (gpu.throughput_calls, gpu.throughput_max_s) == (100, 0.5)
    assert gpu.throughput_count(0.8) == 100  # 100 calls of 0.8 ms fit in 0.5 s
    assert gpu.throughput_count(10.0) == 50  # 0.5 s / 10 ms
    assert gpu.throughput_count(200.0) == 10  # never fewer than 10
    assert gpu.throughput_count(0.0) == 100
    assert SamplingPolicy.for_device("cpu").throughput_count(100.0) == 5
    assert SamplingPolicy(throughput_calls=3).throughput_count(500.0) == 3


@pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated")
def test_cudagraph_modes_mark_a_step_before_every_call() -> None:
    from torch._inductor.cudagraph_trees import MarkStepBox  # torch's own import warns

    # torch.compiler.cudagraph_mark_step_begin() counts down MarkStepBox.mark_step_counter.
    policy = SamplingPolicy(warmup_iters=3, warmup_max_s=60, min_samples=5, min_time_s=0)
    timer = Timer("cpu", cudagraphs=True)
    assert timer.mark_step is torch.compiler.cudagraph_mark_step_begin
    calls, fn = counting()
    before = MarkStepBox.mark_step_counter
    warm_up(timer, fn, policy)
    sample(timer, fn, policy)
    throughput_per_s(timer, fn, 4)
    assert len(calls) == 3 + 5 + 4
    assert MarkStepBox.mark_step_counter == before - len(calls)
    # ... and other modes never do.
    before = MarkStepBox.mark_step_counter
    sample(Timer("cpu", cudagraphs=False), fn, policy)
    assert MarkStepBox.mark_step_counter == before


def test_profile_of_the_articles_pointwise_example_in_eager() -> None:
    # sigmoid(x * w + b) in eager: three ATen kernels, in order, no launches on a CPU.
    x, w, b = torch.randn(64, 64), torch.randn(64, 64), torch.randn(64, 64)
    facts = profile_call(Timer("cpu", False), lambda: torch.sigmoid(x * w + b))
    assert facts == {
        "kernels_per_call": 3,
        "launches_per_call": None,
        "kernel_names": ["aten::mul", "aten::add", "aten::sigmoid"],
    }


def test_profile_counts_top_level_ops_only() -> None:
    # linear calls addmm inside: one kernel, named by the outer op; two calls count twice.
    layer = torch.nn.Linear(8, 8)
    x = torch.randn(4, 8)
    with torch.inference_mode():
        facts = profile_call(Timer("cpu", False), lambda: layer(layer(x)))
    assert facts["kernels_per_call"] == 2
    assert facts["kernel_names"] == ["aten::linear"]
