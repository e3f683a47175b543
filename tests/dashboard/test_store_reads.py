"""The store's reads the dashboard added (aggregates and narrow rows), on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.backends import BACKENDS
from support.seed import CPU_STACK, GPU_STACK, GPU_STACK_OLD, RO_BF16, fingerprint

from advisor.config import EAGER_FP32
from advisor.db import ResultStore

H200_NEW = fingerprint("gpu-a", GPU_STACK, "gpu-new")
H200_OLD = fingerprint("gpu-a", GPU_STACK_OLD, "gpu-old")
A100 = fingerprint("a100", GPU_STACK, "gpu-new")


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest) -> Iterator[ResultStore]:
    name = "seeded_url" if request.param == "sqlite" else "pg_seeded_url"
    with ResultStore.from_url(request.getfixturevalue(name)) as opened:
        yield opened


def _group(found: list[dict], fp: dict, workload: str = "reranker") -> dict:
    (group,) = [
        g for g in found
        if (g["workload"], g["device_hash"], g["env_hash"])
        == (workload, fp["device_hash"], fp["env_hash"])
    ]  # fmt: skip
    return group


def test_group_summaries_count_every_outcome(store: ResultStore) -> None:
    found = store.group_summaries()
    assert len(found) == 6
    h200 = _group(found, H200_NEW)
    assert (h200["n_trials"], h200["n_ok"], h200["n_passed"], h200["n_failed"]) == (7, 5, 5, 2)
    a100 = _group(found, A100)
    assert (a100["n_trials"], a100["n_ok"], a100["n_passed"], a100["n_failed"]) == (5, 4, 3, 1)
    assert h200["device_name"] == "NVIDIA H200" and h200["torch_version"] == "2.11.0+cu130"
    assert _group(found, H200_OLD)["last_started_at"] < h200["first_started_at"]
    cpu = _group(found, fingerprint("cpu", CPU_STACK, "cpu"), "tiny-mlp")
    assert cpu["driver_version"] is None and cpu["n_trials"] == 3
    assert [g["workload"] for g in store.group_summaries("embedder")] == ["embedder"]


def test_near_best_trials_are_the_leaders_and_the_eager_baselines(store: ResultStore) -> None:
    near = store.near_best_trials(0.02, "reranker")
    mine = [r for r in near if (r["device_hash"], r["env_hash"])
            == (H200_NEW["device_hash"], H200_NEW["env_hash"])]  # fmt: skip
    assert sorted(r["config_key"] for r in mine) == sorted([RO_BF16.key, EAGER_FP32.key])
    leader = next(r for r in mine if r["config_key"] == RO_BF16.key)
    assert leader["median_ms"] == pytest.approx(0.96) and leader["cold_compile_s"] == 31.0
    assert leader["config"] == RO_BF16.to_dict() and leader["passed"] is True
    assert {r["workload"] for r in near} == {"reranker"}
    # The A100's fastest ran but failed its quality check: the leader is the next one.
    a100 = [r for r in near if r["device_hash"] == A100["device_hash"]]
    assert sorted(r["median_ms"] for r in a100) == pytest.approx([7.0, 9.0])


def test_near_best_trials_carry_the_records_extra_keys(store: ResultStore) -> None:
    near = store.near_best_trials(0.10, "embedder")
    replays = sorted(r["replay"]["strategy"] for r in near if "replay" in r)
    assert replays == ["buckets:pow2", "static"]  # 0.55 ms is within 10% of 0.5 ms


def test_config_dicts_and_group_trials(store: ResultStore) -> None:
    configs = store.config_dicts("reranker")
    assert len(configs) == 7 and configs[RO_BF16.key] == RO_BF16.to_dict()
    old = store.group_trials("reranker", H200_OLD["device_hash"], H200_OLD["env_hash"])
    assert len(old) == 4
    assert {r["fingerprint"]["env_hash"] for r in old} == {H200_OLD["env_hash"]}
    assert old[0]["kernel_names"] and len(old[0]["shapes"]) == 2  # full records
