"""`advisor recommend`: policies, constraints, export formats, staleness and --confirm, through
the real CLI on real SQLite files holding trials with known answers."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from recommend_support import TINY_MLP, advisor, json_out, other_stack, record, shape

from advisor.db import ResultStore

GIB = 2**30


def _trials(fp: dict[str, Any]) -> list[dict[str, Any]]:
    """Known answers: latency -> max-autotune-no-cudagraphs, tail and throughput -> bf16,
    2 GiB -> no bf16, 30 s of compile -> default, break-even: eager below 240 000 calls."""
    return [
        record(fp, "eager", median_ms=0.10, ci=(0.099, 0.101), p99_ms=0.2),
        record(fp, "default", median_ms=0.05, ci=(0.049, 0.051), p99_ms=0.08),
        record(fp, "default", "bf16", 0.06, ci=(0.059, 0.061), p99_ms=0.062, cold_compile_s=14.0,
               peak_mem_bytes=3 * GIB, shapes=[shape({"batch": 16}, 1.0, 0.06,
                                                     throughput_per_s=30000.0)]),
        record(fp, "max-autotune-no-cudagraphs", median_ms=0.045, ci=(0.044, 0.046),
               p99_ms=0.09, cold_compile_s=60.0),
    ]  # fmt: skip


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory, cpu_fp: dict[str, Any]) -> tuple[str, Path]:
    where = tmp_path_factory.mktemp("recommend-cli")
    url = f"sqlite:///{where / 'advisor.db'}"
    with ResultStore.from_url(url) as store:
        store.add_trials(_trials(cpu_fp))
    return url, where


def _recommend(db: tuple[str, Path], fp: dict[str, Any], *args: str) -> Any:
    url, cwd = db
    done = advisor("recommend", "tiny-mlp", "--db", url, "--fingerprint", fp["fingerprint_hash"],
                   *args, cwd=cwd)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done


@pytest.mark.slow
def test_every_policy_and_limit_picks_its_known_answer(db: tuple, cpu_fp: dict) -> None:
    cases = {
        (): "fp32 + max-autotune-no-cudagraphs",
        ("--policy", "latency", "--max-compile-s", "30"): "fp32 + default",
        ("--policy", "tail"): "bf16 + default",
        ("--policy", "tail", "--max-memory", "2GiB"): "fp32 + default",
        ("--policy", "throughput"): "bf16 + default",
        ("--policy", "break-even", "--calls-per-process", "1000"): "fp32 + eager",
        ("--policy", "break-even", "--calls-per-process", "1000000"): "fp32 + default",
    }
    for args, label in cases.items():
        out = json_out(_recommend(db, cpu_fp, *args, "--format", "json"))
        assert out["label"] == label, (args, out["sentence"])
    full = json_out(_recommend(db, cpu_fp, "--policy", "break-even", "--calls-per-process",
                               "1000", "--json"))  # fmt: skip
    pays = {r["label"]: r["break_even_calls"] for r in full["ranked"]}
    # 12 s / (0.10 - 0.05) ms = 240 000 calls; 14 s / 0.04 ms = 350 000; 60 s / 0.055 ms
    assert pays == {"fp32 + eager": None, "fp32 + default": 240000, "bf16 + default": 350000,
                    "fp32 + max-autotune-no-cudagraphs": 1090910}  # fmt: skip
    assert "soonest: fp32 + default pays off after 240,000 calls" in full["sentence"]
    limited = json_out(_recommend(db, cpu_fp, "--max-memory", "2GiB", "--json"))
    assert limited["excluded"] == {"peak memory over 2 GiB": 1}
    assert limited["constraints"] == {"max_memory_bytes": 2 * GIB}


def test_the_table_shows_intervals_and_break_even(db: tuple, cpu_fp: dict) -> None:
    text = _recommend(db, cpu_fp).stdout
    assert "recommendation: fp32 + max-autotune-no-cudagraphs: 45.0 µs" in " ".join(text.split())
    assert "44.0-46.0 µs" in text and "240,000 calls" in text and "95% CI" in text


def test_exports_are_what_a_service_pastes(db: tuple, cpu_fp: dict) -> None:
    data = json_out(_recommend(db, cpu_fp, "--format", "json"))
    assert data["torch_compile"] == {"fullgraph": False, "mode": "max-autotune-no-cudagraphs"}
    assert data["dtype"]["name"] == "fp32" and not data["dtype"]["cast_model"]
    assert data["figures"]["median_ci_ms"] == [0.044, 0.046]
    assert data["figures"]["eager_fp32_median_ms"] == 0.10
    assert data["shapes"] == [{"shape": "batch=16", "dims": {"batch": 16}, "weight": 1.0}]
    assert data["staleness"] is None and data["fingerprint_hash"] == cpu_fp["fingerprint_hash"]
    python = _recommend(db, cpu_fp, "--format", "python", "--policy", "throughput").stdout
    ast.parse(python)
    assert "model = model.to(torch.bfloat16)" in python
    assert "torch.compile(model, fullgraph=False)" in python
    import yaml

    as_yaml = yaml.safe_load(_recommend(db, cpu_fp, "--format", "yaml").stdout)
    assert as_yaml == data


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--policy", "fastest"], "unknown policy 'fastest'"),
        (["--policy", "break-even"], "needs --calls-per-process"),
        (["--max-memory", "lots"], "bad memory size 'lots'"),
        (["--max-compile-s", "0"], "(--max-compile-s) must be more than zero"),
        (["--format", "xml"], "unknown format 'xml'"),
        (["--top", "0"], "--top must be at least 1"),
        (["--fingerprint", "0000"], "no trials of tiny-mlp"),
    ],
)
def test_bad_flags_are_one_line_and_exit_2(db: tuple, args: list[str], words: str) -> None:
    url, cwd = db
    done = advisor("recommend", "tiny-mlp", "--db", url, *args, cwd=cwd)
    assert done.returncode == 2, done.stdout
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("advisor: error: ") and words in line


@pytest.mark.slow
def test_another_stack_is_named_and_its_nearest_recommendation_offered(
    tmp_path: Path, cpu_fp: dict[str, Any]
) -> None:
    """Swept under other drivers of torch and triton only: this device gets the nearest one's
    recommendation, with a warning that names each changed field, on stderr and in the export."""
    near = other_stack(cpu_fp, torch_version="2.99.0+cpu")
    far = other_stack(cpu_fp, torch_version="2.98.0+cpu", triton_version="9.9")
    url = f"sqlite:///{tmp_path / 'advisor.db'}"
    with ResultStore.from_url(url) as store:
        store.add_trials(_trials(near) + _trials(far)[:2])
    done = advisor("recommend", "tiny-mlp", "--db", url, "--device", "cpu", "--format", "json",
                   cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (warning,) = done.stderr.strip().splitlines()
    assert warning.startswith("advisor: warning: no sweep on this device and stack")
    assert f"torch_version: 2.99.0+cpu measured, {cpu_fp['torch_version']} here" in warning
    assert near["fingerprint_hash"] in warning and "triton" not in warning
    data = json_out(done)
    assert data["fingerprint_hash"] == near["fingerprint_hash"]
    assert data["label"] == "fp32 + max-autotune-no-cudagraphs"
    assert data["staleness"]["current_hash"] == cpu_fp["fingerprint_hash"]
    assert [c["field"] for c in data["staleness"]["changed"]] == ["torch_version"]
    python = advisor("recommend", "tiny-mlp", "--db", url, "--device", "cpu", "--format",
                     "python", cwd=tmp_path).stdout  # fmt: skip
    assert "# WARNING: no sweep on this device and stack" in python
    refused = advisor("recommend", "tiny-mlp", "--db", url, "--device", "cpu", "--confirm",
                      cwd=tmp_path)  # fmt: skip
    assert refused.returncode == 2 and "sweep it here first" in refused.stderr


@pytest.mark.slow
def test_confirm_remeasures_interleaved_and_later_recommendations_use_it(
    tmp_path: Path, cpu_fp: dict[str, Any]
) -> None:
    """One real child: eager fp32 and fp32 + default, compiled once, timed A B A B ...; the
    paired figures are stored and decide this and every later recommendation."""
    url = f"sqlite:///{tmp_path / 'advisor.db'}"
    with ResultStore.from_url(url) as store:
        store.add_trials(_trials(cpu_fp)[:2])
    done = advisor("recommend", "tiny-mlp", "--db", url, "--device", "cpu", "--confirm",
                   "--top", "1", "--no-artifact", "--json", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "confirming: compiling fp32 + default" in done.stderr
    rec = json_out(done)
    assert rec["confirmation"]["used"] and "paired figures: 2 configs" in rec["note"]
    confirmed = {r["label"]: r for r in rec["ranked"] if r["confirmed"]}
    assert set(confirmed) == {"fp32 + eager", "fp32 + default"}
    assert confirmed["fp32 + eager"]["speedup"] == 1.0
    low, high = confirmed["fp32 + default"]["speedup_ci"]
    assert 0 < low <= confirmed["fp32 + default"]["speedup"] <= high
    with ResultStore.from_url(url) as store:
        (stored,) = store.confirmations("tiny-mlp")
        assert store.artifacts() == []  # --no-artifact
    assert stored["status"] == "ok" and stored["method"] == "perf_counter"
    assert stored["fingerprint"]["fingerprint_hash"] == cpu_fp["fingerprint_hash"]
    rounds = stored["rounds"]
    assert rounds >= 30 and all(len(e["samples_ms"][0]) == rounds for e in stored["entries"])
    again = advisor("recommend", "tiny-mlp", "--db", url, "--fingerprint",
                    cpu_fp["fingerprint_hash"], "--json", cwd=tmp_path)  # fmt: skip
    later = json_out(again)
    assert later["confirmation"]["uuid"] == stored["uuid"] and later["confirmation"]["used"]
    assert later["decision"] == rec["decision"]  # paired figures: the same answer again
    assert (later["best"] or {}).get("label") == (rec["best"] or {}).get("label")
    assert json.dumps(later["best"]) == json.dumps(rec["best"])
    elsewhere = advisor("recommend", "tiny-mlp", "--db", url, "--fingerprint", "0" * 16,
                        "--confirm", cwd=tmp_path)  # fmt: skip
    assert elsewhere.returncode == 2


def test_confirm_needs_the_workload_file(tmp_path: Path, cpu_fp: dict[str, Any]) -> None:
    url = f"sqlite:///{tmp_path / 'advisor.db'}"
    moved = {"name": "tiny-mlp", "path": str(tmp_path / "gone.py"), "source_sha256": "b" * 64}
    with ResultStore.from_url(url) as store:
        store.add_trials([record(cpu_fp, "eager", workload=moved),
                          record(cpu_fp, "default", median_ms=0.5, workload=moved)])  # fmt: skip
    done = advisor("recommend", "tiny-mlp", "--db", url, "--device", "cpu", "--confirm",
                   cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2
    assert "the workload file of tiny-mlp is not here" in done.stderr and "--file" in done.stderr
    assert TINY_MLP.is_file()
