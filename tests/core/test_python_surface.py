"""The Python API takes what the CLI prints and speaks Python: `advisor.recommend(...,
fingerprint=...)` takes a device's short id, its host, its hash or a prefix of it; its errors
name Python arguments (``fingerprint=``), not flags; `advisor.trials` and
`advisor.recommendations` are DataFrames with the columns of the CLI's ``-f csv``."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest
from support.seed import seeded_file

import advisor


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The small seed: reranker on an H200 host with two stacks, another H200, an A100."""
    return seeded_file(tmp_path_factory.mktemp("seeded"))


def _cli(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "advisor", *args], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _devices(url: str) -> list[dict[str, object]]:
    frame = advisor.recommendations("reranker", db=url)
    return list(frame.to_dict("records"))


def test_recommend_takes_every_id_the_cli_prints(url: str) -> None:
    for device in _devices(url):
        full = str(device["fingerprint_hash"])
        device_id = str(device["device_id"])  # `A100 @host-a100 · 1a2b3c4d`, as compare prints
        for selector in (full, full[:8], full[:5], device_id):
            rec = advisor.recommend("reranker", db=url, fingerprint=selector)
            assert rec.fingerprint_hash == full, selector
    a100 = next(d for d in _devices(url) if "A100" in str(d["device_id"]))
    rec = advisor.recommend("reranker", db=url, fingerprint=str(a100["host"]))  # the host
    assert rec.fingerprint_hash == a100["fingerprint_hash"]


def test_errors_name_python_arguments(url: str) -> None:
    with pytest.raises(advisor.ConfigError) as unknown:
        advisor.recommend("reranker", db=url, fingerprint="nowhere")
    assert "fingerprint='nowhere'" in str(unknown.value)
    assert "--fingerprint" not in str(unknown.value)
    with pytest.raises(advisor.ConfigError) as several:  # one host, two stacks
        advisor.recommend("reranker", db=url, fingerprint="host-gpu-a")
    assert "fingerprint='host-gpu-a' names 2 devices" in str(several.value)
    with pytest.raises(advisor.ConfigError) as top:
        advisor.recommend("reranker", db=url, fingerprint="host-a100", top=0)
    assert str(top.value).startswith("top=") and "--top" not in str(top.value)
    with pytest.raises(advisor.ConfigError) as timeout:
        advisor.recommend("reranker", db=url, fingerprint="host-a100", timeout_s=-1)
    assert str(timeout.value).startswith("timeout_s=-1 is not a time limit")
    assert "--" not in str(timeout.value)
    with pytest.raises(advisor.ConfigError) as calls:
        advisor.recommend("reranker", db=url, fingerprint="host-a100", policy="break-even")
    assert "calls_per_process=N" in str(calls.value) and "--" not in str(calls.value)
    # the CLI still names its flag
    done = subprocess.run([sys.executable, "-m", "advisor", "recommend", "reranker", "--db", url,
                           "--fingerprint", "nowhere"], capture_output=True, text=True)
    assert done.returncode == 2 and "--fingerprint 'nowhere'" in done.stderr


def test_apply_errors_name_python_arguments(url: str) -> None:
    """A mistake in apply's own arguments is raised before anything is read (no torch, no
    store), in Python's words; the model is never touched."""
    model = object()
    with pytest.raises(advisor.ConfigError) as calls:
        advisor.apply(model, "reranker", db=url, policy="break-even")
    assert str(calls.value) == "the break-even policy needs calls_per_process=N (N >= 1)"
    with pytest.raises(advisor.ConfigError) as unknown:
        advisor.apply(model, "reranker", db=url, policy="fastest")
    assert "unknown policy 'fastest'" in str(unknown.value) and "--" not in str(unknown.value)


def test_frame_errors_name_python_arguments(url: str) -> None:
    with pytest.raises(advisor.ConfigError) as devices:
        advisor.recommendations("reranker", db=url, devices=["TPU"])
    assert str(devices.value).startswith("no device matches devices=['TPU']")
    assert "--devices" not in str(devices.value)
    assert len(advisor.recommendations("reranker", db=url, devices=["A100"])) == 1
    with pytest.raises(advisor.ConfigError) as workload:
        advisor.trials("nope", db=url)
    assert "'nope'" in str(workload.value) and "--" not in str(workload.value)
    with pytest.raises(advisor.StoreError) as sweep:
        advisor.trials(db=url, sweep=999)
    assert "no sweep 999" in str(sweep.value) and "--" not in str(sweep.value)


def test_flags_outside_backticks_become_arguments() -> None:
    from advisor.arguments import pythonic

    names = {"--fingerprint": "fingerprint=", "--confirm": "confirm=True", "--top": "top="}
    assert pythonic("--fingerprint 'x' names 2 devices", names) == (
        "fingerprint='x' names 2 devices")
    assert pythonic("--top -1 is not allowed; give --top 3", names) == (
        "top=-1 is not allowed; give top=3")
    assert pythonic("drop --confirm or run `advisor recommend W --confirm`", names) == (
        "drop confirm=True or run `advisor recommend W --confirm`")  # a command stays whole
    assert pythonic("--other 3 stays", names) == "--other 3 stays"


def test_a_sweep_error_names_its_argument(tmp_path: Path) -> None:
    with pytest.raises(advisor.ConfigError) as bad:
        advisor.sweep(str(Path(__file__).parents[1] / "workloads" / "tiny_mlp.py"),
                      db=f"sqlite:///{tmp_path / 'a.db'}", workers=2, trials=3)
    text = str(bad.value)
    assert "workers=" in text and "trials=" in text and "--workers" not in text
    assert not (tmp_path / "a.db").exists()


def _header(text: str) -> list[str]:
    return next(csv.reader(io.StringIO(text)))


def test_trials_is_a_frame_of_the_export_csv_columns(url: str) -> None:
    frame = advisor.trials("reranker", db=url)
    assert list(frame.columns) == _header(_cli("export", "-w", "reranker", "-f", "csv",
                                               "--db", url))
    assert len(frame) == len(advisor.trials(db=url)[lambda f: f["workload"].map(
        lambda w: w["name"]) == "reranker"])
    assert isinstance(frame.loc[0, "config"], dict)  # the object the CSV writes as JSON text
    flat = advisor.trials("reranker", db=url, flatten=True)
    assert list(flat.columns) == _header(_cli("export", "-w", "reranker", "-f", "csv",
                                              "--flatten", "--db", url))
    assert set(flat["config.mode"]) >= {"eager", "default", "reduce-overhead"}
    one = advisor.trials(db=url, sweep=1)
    assert list(one.columns) == _header(_cli("show", "1", "-f", "csv", "--db", url))
    with pytest.raises(advisor.ConfigError):
        advisor.trials("nope", db=url)


def test_recommendations_is_a_frame_of_the_compare_csv_columns(url: str) -> None:
    frame = advisor.recommendations(db=url)
    assert list(frame.columns) == ["workload", *_header(_cli("compare", "reranker", "-f", "csv",
                                                             "--db", url))]
    assert set(frame["workload"]) == {"reranker", "embedder", "tiny-mlp"}
    reranker = frame[frame["workload"] == "reranker"]
    assert reranker["vs_best"].iloc[0] == 1.0  # the fastest device first
    assert list(reranker["device_id"]) == list(
        advisor.recommendations("reranker", db=url)["device_id"])
