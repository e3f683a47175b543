"""Which children a fork server may fork (advisor.search.forkserver.unforkable), and which
modules a child's server imports for it (advisor.protocol.compiler_modules): a CPU child that
compiles has Inductor's settings imported by its server, after which the Inductor and Triton
variables read at import must be the server's; a GPU's child, an eager one and a probe import
nothing there."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.config import EAGER_FP32, CompileConfig
from advisor.protocol import COMPILER_MODULES, compiler_modules
from advisor.search.forkserver import forkable, unforkable

SERVER = {"PATH": "/usr/bin", "TORCHINDUCTOR_CACHE_DIR": "/a", "TRITON_CACHE_DIR": "/a/triton",
          "TORCHINDUCTOR_COMPILE_THREADS": "1", "ADVISOR_MEASURE_S": "1"}


@pytest.mark.parametrize(("changed", "before", "after"), [
    ({"TORCHINDUCTOR_CACHE_DIR": "/b", "TRITON_CACHE_DIR": "/b/triton"}, [], []),
    ({"TORCHINDUCTOR_COMPILE_THREADS": "2"}, [], ["TORCHINDUCTOR_COMPILE_THREADS"]),
    ({"TRITON_DEBUG": "1"}, [], ["TRITON_DEBUG"]),
    ({"ADVISOR_MEASURE_S": "0.25", "PYTEST_CURRENT_TEST": "x"}, [], []),
    ({"OMP_NUM_THREADS": "1"}, ["OMP_NUM_THREADS"], ["OMP_NUM_THREADS"]),
])
def test_once_inductors_settings_are_imported_only_its_cache_folders_may_differ(
        changed: dict[str, str], before: list[str], after: list[str]) -> None:
    child = {**SERVER, **changed}
    assert unforkable(child, SERVER) == before
    assert unforkable(child, SERVER, compiler=True) == after
    assert forkable(child, SERVER, compiler=True) is not after


def _spec(kind: str, device: str, *configs: CompileConfig) -> dict[str, Any]:
    spec: dict[str, Any] = {"kind": kind, "device": device, "workload_path": "w.py"}
    if kind == "confirm":
        spec["configs"] = [c.to_dict() for c in configs]
    elif configs:
        spec["config"] = configs[0].to_dict()
    return spec


DEFAULT = CompileConfig(mode="default")


@pytest.mark.parametrize(("spec", "modules"), [
    (_spec("trial", "cpu", DEFAULT), COMPILER_MODULES),
    (_spec("warm", "cpu", DEFAULT), COMPILER_MODULES),
    (_spec("artifact", "cpu", DEFAULT), COMPILER_MODULES),
    (_spec("confirm", "cpu", EAGER_FP32, DEFAULT), COMPILER_MODULES),
    (_spec("trial", "cpu", EAGER_FP32), ()),
    (_spec("confirm", "cpu", EAGER_FP32), ()),
    (_spec("trial", "cuda", DEFAULT), ()),  # timed with its imports, as before
    (_spec("trial", "cuda:1", DEFAULT), ()),
    ({"kind": "probe", "device": "cpu"}, ()),
    (_spec("describe", "cpu"), ()),
])
def test_only_a_cpu_child_that_compiles_has_inductor_imported_by_its_server(
        spec: dict[str, Any], modules: tuple[str, ...]) -> None:
    assert compiler_modules(spec) == modules
