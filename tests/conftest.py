"""Markers that skip themselves: `gpu` without CUDA, `postgres` without ADVISOR_TEST_PG_URL."""

from __future__ import annotations

import os

import pytest

# The same variable and words as tests/db/conftest.py, which also skips inside its fixtures.
PG_URL_ENV = "ADVISOR_TEST_PG_URL"

# The suite runs two workers on two cores: each trial child compiles in its own thread instead
# of starting a pool of compile workers (children inherit this; tests that set it keep theirs).
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
# Every trial compiles into an empty Inductor cache, where Inductor would first dry-compile and
# load a test program for each vector ISA the CPU lists (about 7 s of g++ per cold compile on the
# 2-core machine, more than the model's own kernels). The tests take the CPU's list as it is:
# the same ISAs are found valid and the same one picked (torch._inductor.cpu_vec_isa), so the
# kernels compiled and run are the ones a user's trial compiles; only the probe is skipped.
os.environ.setdefault("TORCHINDUCTOR_VEC_ISA_OK", "1")
PG_SKIP = (
    f"needs a PostgreSQL server: set {PG_URL_ENV} "
    "(e.g. postgresql+psycopg://postgres@127.0.0.1/test)"
)


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    gpu = [item for item in items if item.get_closest_marker("gpu") is not None]
    # torch is imported (slow) only when some collected test needs a GPU.
    if gpu and not _cuda_available():
        skip = pytest.mark.skip(reason="needs a CUDA device (torch.cuda.is_available() is False)")
        for item in gpu:
            item.add_marker(skip)
    if not os.environ.get(PG_URL_ENV):
        skip = pytest.mark.skip(reason=PG_SKIP)
        for item in items:
            if item.get_closest_marker("postgres") is not None:
                item.add_marker(skip)
