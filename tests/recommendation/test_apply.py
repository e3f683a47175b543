"""`advisor.apply` on the CPU with the tiny workload: a stored recommendation compiled (its
warm-start artifact loaded) gives eager's results; without one, eager and a warning."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from recommend_support import TINY_MLP, other_stack, record

import advisor
from advisor.config import CompileConfig
from advisor.db import ResultStore
from advisor.runtime import RecommendationWarning
from advisor.search.confirm import save_artifact
from advisor.workload import load_workload

HERE = Path(__file__).parent
WL = load_workload(TINY_MLP).workload


def _model(dtype: torch.dtype = torch.float32) -> torch.nn.Module:
    torch.manual_seed(0)
    return WL.build("cpu", dtype)


def _inputs() -> tuple[torch.Tensor]:
    torch.manual_seed(0)
    return WL.inputs({"batch": 16}, "cpu")


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'advisor.db'}"


@pytest.mark.slow
def test_a_stored_recommendation_is_compiled_warm_and_equals_eager(
    sqlite_url: str, cpu_fp: dict[str, Any], tmp_path: Path
) -> None:
    """The real path: sweep figures say fp32 + default; its artifact is saved by a fresh child;
    a fresh serving process applies it with empty caches, loads the artifact, warms up every
    traffic shape and matches eager fp32."""
    with ResultStore.from_url(sqlite_url) as store:
        store.add_trials([
            record(cpu_fp, "eager", median_ms=0.10, ci=(0.099, 0.101)),
            record(cpu_fp, "default", median_ms=0.05, ci=(0.049, 0.051)),
        ])  # fmt: skip
        workload = store.trials()[0]["workload"]
        saved, why = save_artifact(store, workload, cpu_fp, "cpu", CompileConfig(), TINY_MLP,
                                   verify=False)  # fmt: skip
        assert saved is not None, why
        assert saved["size_bytes"] > 0 and saved["cold_start_s"] > 0
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "serving-cache")}
    env.pop("ADVISOR_FINGERPRINT_OVERRIDES", None)
    done = subprocess.run(
        [sys.executable, str(HERE / "serve_tiny.py"), sqlite_url, str(TINY_MLP)],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    served = json.loads(done.stdout.strip().splitlines()[-1])
    assert served["compiled"] and served["config"] == CompileConfig().to_dict()
    assert served["artifact"] is not None and served["artifact"]["uuid"] == saved["uuid"]
    assert served["fxgraph_cache_hit"] >= 1 and served["fxgraph_cache_miss"] == 0
    assert served["graphs"] >= 1 and served["graphs_after_warmup"] == 0  # every shape warm
    assert served["warmup_s"] > 0
    atol, rtol = WL.tolerance("fp32")
    assert max(served["max_abs_diff"]) <= atol
    assert served["warnings"] == []


def test_no_recommendation_means_eager_and_a_warning(sqlite_url: str) -> None:
    ResultStore.from_url(sqlite_url).close()  # a database without tiny-mlp
    model = _model()
    with pytest.warns(RecommendationWarning, match="no trials of tiny-mlp") as caught:
        applied = advisor.apply(model, workload="tiny-mlp", db=sqlite_url, device="cpu")
    # one warning of the advisor's (the worker may meet others it imports first: not ours)
    ours = [str(w.message) for w in caught if issubclass(w.category, RecommendationWarning)]
    assert len(ours) == 1 and "running the model eager" in ours[0], [
        f"{w.category.__name__}: {w.message}" for w in caught]
    assert applied.fn is model and not applied.compiled and applied.recommendation is None
    with torch.inference_mode():
        assert torch.equal(applied(*_inputs()), model(*_inputs()))


def test_no_database_means_eager_and_a_warning_and_no_file(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'missing.db'}"
    with pytest.warns(RecommendationWarning, match="no advisor results database"):
        applied = advisor.apply(_model(), workload=TINY_MLP, db=url, device="cpu")
    assert not applied.compiled and not (tmp_path / "missing.db").exists()


def test_nothing_passed_means_eager_and_a_warning(sqlite_url: str, cpu_fp: dict) -> None:
    with ResultStore.from_url(sqlite_url) as store:
        store.add_trial(record(cpu_fp, "default", median_ms=0.01, passed=False))
    with pytest.warns(RecommendationWarning, match="nothing to recommend"):
        applied = advisor.apply(_model(), workload=TINY_MLP, db=sqlite_url, device="cpu")
    assert not applied.compiled


def test_another_stack_gives_its_recommendation_with_a_warning(
    sqlite_url: str, cpu_fp: dict
) -> None:
    """Measured only under another torch: that stack's recommendation (bf16, eager: nothing to
    compile) is applied, with a warning that names the field; no artifact crosses stacks."""
    elsewhere = other_stack(cpu_fp, torch_version="2.99.0+cpu")
    with ResultStore.from_url(sqlite_url) as store:
        store.add_trials([record(elsewhere, "eager", "fp32", 0.10),
                          record(elsewhere, "eager", "bf16", 0.05)])  # fmt: skip
    model = _model()
    with pytest.warns(RecommendationWarning) as caught:
        applied = advisor.apply(model, workload=TINY_MLP, db=sqlite_url, device="cpu")
    (message,) = [str(w.message) for w in caught]
    here = cpu_fp["torch_version"]
    assert f"torch_version: 2.99.0+cpu measured, {here} here" in message
    assert elsewhere["fingerprint_hash"] in message and "may be stale" in message
    assert applied.config == CompileConfig(mode="eager", dtype="bf16")
    assert applied.staleness is not None
    assert [c.field for c in applied.staleness.changed] == ["torch_version"]
    assert applied.artifact is None and applied.warmup_s is not None
    assert next(model.parameters()).dtype == torch.bfloat16  # cast as recommended
    out = applied(*_inputs())  # fp32 inputs are cast to bf16
    reference = _model(torch.bfloat16)(*(x.to(torch.bfloat16) for x in _inputs()))
    assert out.dtype == torch.bfloat16 and torch.equal(out, reference)


def _rows_pad(args: tuple, from_dims: dict, to_dims: dict) -> tuple:
    (x,) = args
    return (torch.nn.functional.pad(x, (0, 0, 0, to_dims["batch"] - from_dims["batch"])),)


def _rows_cut(out: torch.Tensor, from_dims: dict) -> torch.Tensor:
    return out[: from_dims["batch"]]


def test_a_bucketed_recommendation_pads_each_request_to_its_bucket(
    sqlite_url: str, cpu_fp: dict
) -> None:
    """The trial measured buckets:pow2 with boundaries 4 and 8: apply takes those boundaries,
    raises the recompile limit to the buckets, and `request` pads 3 rows to 4 and cuts back."""
    padded = advisor.Workload(
        name="padded-mlp", build=WL.build, inputs=WL.inputs,
        traffic=[({"batch": 3}, 1), ({"batch": 4}, 1), ({"batch": 6}, 1)],
        pad=_rows_pad, cut=_rows_cut,
    )  # fmt: skip
    config = CompileConfig(mode="default", shapes="buckets:pow2")
    workload = {"name": "padded-mlp", "path": None, "source_sha256": "c" * 64, "info": {}}
    replay = {"strategy": "buckets:pow2", "boundaries": {"batch": [4, 8]}, "padding_waste": 0.2}
    with ResultStore.from_url(sqlite_url) as store:
        store.add_trials([
            record(cpu_fp, "eager", median_ms=0.10, workload=workload),
            record(cpu_fp, "default", median_ms=0.05, workload=workload, replay=replay,
                   config=config.to_dict(), config_key=config.key),
        ])  # fmt: skip
    model = _model()
    applied = advisor.apply(model, workload=padded, db=sqlite_url, device="cpu", warmup=False)
    assert applied.config == config and applied.buckets is not None
    assert applied.buckets.bounds == {"batch": (4, 8)}
    assert applied.recommendation is not None
    assert applied.recommendation.best.buckets == {**replay}  # type: ignore[union-attr]
    assert torch._dynamo.config.recompile_limit >= 2
    # The padding is what is checked here, not Inductor: run the padded calls eagerly.
    seen: list[int] = []
    applied.fn = lambda x: (seen.append(x.shape[0]), model(x))[1]
    torch.manual_seed(0)
    (x,) = WL.inputs({"batch": 3}, "cpu")
    out = applied.request({"batch": 3}, x)
    assert seen == [4] and out.shape == (3, 8)
    with torch.inference_mode():
        assert torch.allclose(out, model(x), atol=1e-6)
