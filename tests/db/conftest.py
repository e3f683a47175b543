"""Fixtures of the results-database tests: realistic records, and a fresh database per test.

Every contract test runs against a SQLite file in tmp_path and, when ADVISOR_TEST_PG_URL names
a PostgreSQL server, against a scratch database created on that server for the test and
dropped afterwards.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy import MetaData, create_engine
from support.backends import BACKENDS, create_pg_database, drop_pg_database, pg_server

from advisor.config import CompileConfig
from advisor.db import ResultStore
from advisor.records import SHAPE_KEYS, empty_record

CONFIGS = (
    CompileConfig(mode="eager", dtype="fp32"),
    CompileConfig(mode="default", dtype="fp32"),
    CompileConfig(mode="reduce-overhead", dtype="bf16", fullgraph=True),
    CompileConfig(mode="max-autotune-no-cudagraphs", dtype="fp16", dynamic="false"),
    CompileConfig(mode="default", dtype="tf32", options={"freezing": True, "shape_padding": False}),
)
T0 = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)


def make_fingerprint(i: int = 0, **overrides: Any) -> dict[str, Any]:
    """A fingerprint as advisor.fingerprint makes it: every key, GPU i of a small fleet."""
    fp = {
        "device_hash": f"{i:016x}",
        "env_hash": f"e{i:015x}",
        "fingerprint_hash": f"f{i:015x}",
        "device_kind": "cuda",
        "device_name": ("NVIDIA H200", "NVIDIA A100-SXM4-80GB", "NVIDIA L4")[i % 3],
        "device_uuid": f"GPU-{uuid.UUID(int=i + 1)}",
        "compute_capability": ("9.0", "8.0", "8.9")[i % 3],
        "device_memory_bytes": 150_754_820_096,
        "sm_count": 132,
        "cpu_model": "Intel(R) Xeon(R) Platinum 8480C",
        "cpu_cores": 224,
        "host_memory_bytes": 2_163_473_076_224,
        "driver_version": "570.86.15",
        "cuda_driver_version": "12.8",
        "power_limit_w": 700.0,
        "sm_clock_max_mhz": 1980,
        "torch_version": "2.11.0+cu128",
        "triton_version": "3.6.0",
        "cuda_runtime_version": "12.8",
        "cudnn_version": "91002",
        "python_version": "3.11.7",
        "os": "Linux-6.8.0-x86_64-with-glibc2.36",
        "advisor_version": "0.1.0",
        "hostname": f"gpu-node-{i}",
    }
    fp.update(overrides)
    return fp


def make_workload(name: str = "reranker", **overrides: Any) -> dict[str, Any]:
    workload = {
        "name": name,
        "path": f"/home/user/workloads/{name}.py",
        "source_sha256": uuid.uuid5(uuid.NAMESPACE_URL, name).hex * 2,
        "info": {"model": "cross-encoder/ms-marco-MiniLM-L-6-v2", "layers": 6},
    }
    workload.update(overrides)
    return workload


def _shape(i: int, dims: dict[str, int], weight: float, median: float) -> dict[str, Any]:
    shape = {
        "shape": ",".join(f"{k}={v}" for k, v in dims.items()),
        "dims": dims,
        "weight": weight,
        "median_ms": median,
        "mean_ms": median * 1.0123,
        "min_ms": median * 0.97,
        "max_ms": median * 1.6,
        "p90_ms": median * 1.05,
        "p99_ms": median * 1.21,
        "stdev_ms": 0.0123456789,
        "iqr_ms": 0.0234567891,
        "n_samples": 200 + i,
        "noisy": i % 2 == 1,
        "throughput_per_s": 1000.0 / median,
        "warmup_iters": 25,
    }
    assert set(shape) == set(SHAPE_KEYS)
    return shape


def make_record(
    i: int = 0,
    *,
    workload: dict[str, Any] | None = None,
    fingerprint: dict[str, Any] | None = None,
    config: CompileConfig | None = None,
    status: str = "ok",
    median_ms: float | None = None,
    passed: bool = True,
    **overrides: Any,
) -> dict[str, Any]:
    """A trial record with every key of records.empty_record() filled as a real trial fills it.

    A failed record has its failure reason, error tail and no figures, as the launcher makes it.
    """
    config = config or CONFIGS[i % len(CONFIGS)]
    started = T0 + timedelta(minutes=i, microseconds=i)
    record = empty_record()
    record.update(
        trial_uuid=str(uuid.UUID(int=(i + 1) * 7919 + 12345, version=4)),
        status=status,
        started_at=started.isoformat(),
        finished_at=(started + timedelta(seconds=41.5)).isoformat(),
        workload=workload or make_workload(),
        config=config.to_dict(),
        config_key=config.key,
        device="cuda:0",
        fingerprint=fingerprint or make_fingerprint(),
        telemetry={},
    )
    if status == "failed":
        record.update(
            failure_reason="compile_error",
            error_tail="Traceback (most recent call last):\n  ...\ninductor.exc.Error: boom\n",
        )
    else:
        record.update(_measurement(i, median_ms or 1.0 + (i % 7) * 0.37, passed))
    record.update(overrides)
    assert set(empty_record()) <= set(record)
    return record


def _measurement(i: int, median: float, passed: bool) -> dict[str, Any]:
    shapes = [
        _shape(i, {"batch": 50, "seq": 128}, 0.7, median * 0.9),
        _shape(i + 1, {"batch": 100, "seq": 256}, 0.3, median * 1.2333333333333333),
    ]
    return {
        "method": "cuda_events",
        "warmup_iters": 25,
        "shapes": shapes,
        "median_ms": median,
        "p90_ms": median * 1.05,
        "p99_ms": median * 1.2,
        "mean_ms": median * 1.01,
        "noisy": False,
        "cold_compile_s": 17.25 + i,
        "warm_compile_s": 0.41,
        "eager_first_call_s": 0.25,
        "peak_mem_bytes": 34_359_738_368 + i,
        "telemetry": {
            "sm_clock_mhz": 1980,
            "sm_clock_max_mhz": 1980,
            "power_draw_w": 411.25,
            "temperature_c": 53,
            "throttle_reasons": ["sw_power_cap"] if i % 2 else [],
        },
        "graph_count": 1,
        "graph_break_count": 1,
        "recompiles": 0,
        "generated_kernel_count": 41,
        "graph_breaks": [{"reason": "builtin print", "count": 1}],
        "kernels_per_call": 68,
        "launches_per_call": 2,
        "kernel_names": ["triton_poi_fused_add_0", "triton_red_fused_layer_norm_1"],
        "eager_kernels_per_call": 119,
        "eager_launches_per_call": 119,
        "eager_kernel_names": ["ampere_sgemm_128x64_tn", "vectorized_elementwise_kernel"],
        "max_abs_err": 0.0009765625,
        "max_rel_err": 0.0123,
        "atol": 0.05,
        "rtol": 0.05,
        "correct": passed,
        "quality_name": "top10_overlap",
        "quality_value": 0.97,
        "quality_threshold": 0.9,
        "quality_passed": True,
        "passed": passed,
    }


def as_stored(record: dict[str, Any], sweep_id: int | None, sweep_uuid: str | None) -> dict:
    """What `ResultStore.trials` returns for ``record``."""
    return {**record, "sweep_id": sweep_id, "sweep_uuid": sweep_uuid}


# -- databases ---------------------------------------------------------------------------------


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def new_db_url(backend: str, tmp_path: Path) -> Iterator[Callable[[], str]]:
    """Makes URLs of new, empty databases of the test's backend (dropped afterwards)."""
    made: list[str] = []

    def make() -> str:
        if backend == "sqlite":
            url = f"sqlite:///{tmp_path / f'advisor-{len(made)}.db'}"
        else:
            url = create_pg_database(pg_server())
        made.append(url)
        return url

    yield make
    for url in made:
        if url.startswith("postgresql"):
            drop_pg_database(pg_server(), url)


@pytest.fixture
def db_url(new_db_url: Callable[[], str]) -> str:
    """The URL of a new, empty database of the test's backend (no advisor tables yet)."""
    return new_db_url()


@pytest.fixture(scope="session")
def pg_scratch() -> Iterator[str]:
    """One scratch PostgreSQL database for this test run, at head; dropped at the end."""
    server = pg_server()
    url = create_pg_database(server)
    ResultStore.from_url(url).close()
    yield url
    drop_pg_database(server, url)


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file at head with no data, copied for each test that needs one."""
    path = tmp_path_factory.mktemp("template") / "advisor.db"
    ResultStore.from_url(f"sqlite:///{path}").close()
    return path


def empty_tables(url: str) -> None:
    """Delete every advisor row and drop every other table (Optuna's) of a database."""
    engine = create_engine(url)
    tables = MetaData()
    tables.reflect(engine)
    ours = [t for t in tables.sorted_tables if t.name.startswith("advisor_")]
    with engine.begin() as connection:
        for table in reversed(ours):
            if table.name != "advisor_alembic_version":
                connection.execute(table.delete())
        others = [t for t in tables.sorted_tables if t not in ours]
        tables.drop_all(connection, tables=others)
    engine.dispose()


@pytest.fixture
def store_url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """The URL of a database at head holding no results."""
    if backend == "sqlite":
        path = tmp_path / "store.db"
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        return f"sqlite:///{path}"
    url = request.getfixturevalue("pg_scratch")
    empty_tables(url)
    return url


@pytest.fixture
def store(store_url: str) -> Iterator[ResultStore]:
    with ResultStore.from_url(store_url) as opened:
        yield opened


@pytest.fixture
def make() -> SimpleNamespace:
    """The record builders: make.record(i, ...), make.fingerprint(i), make.workload(name),
    make.stored(record, sweep_id, sweep_uuid), make.configs."""
    return SimpleNamespace(
        record=make_record,
        fingerprint=make_fingerprint,
        workload=make_workload,
        stored=as_stored,
        configs=CONFIGS,
    )
