"""`advisor sweep --traffic --shapes`: every config replays the same trace, stored per bucket."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from advisor import units
from advisor.db.store import ResultStore

ROOT = Path(__file__).resolve().parents[2]
TINY_SEQ = ROOT / "tests" / "workloads" / "tiny_seq.py"
TINY_MLP = ROOT / "tests" / "workloads" / "tiny_mlp.py"
ENV = {"ADVISOR_REPLAY_REQUESTS": "60", "TORCHINDUCTOR_COMPILE_THREADS": "1", "COLUMNS": "200"}


def advisor(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **ENV}
    env.pop("ADVISOR_DB_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "advisor", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--traffic", "missing.csv"], ["missing.csv", "no such traffic file"]),
        (["--traffic", "bad.csv"], ["bad.csv line 2", "seq", "positive whole number"]),
        (["--traffic", "empty.csv"], ["empty.csv", "empty"]),
        (["--traffic", "tokens.csv"], ["'tokens' is not a dim"]),
        (["--shapes", "static,buckets:pow3"], ["unknown shape strategy 'buckets:pow3'"]),
        (["--shapes", "dynamic", "--shape", "batch=2,seq=5"], ["drop --shape"]),
        (["--traffic", "good.csv", "--holdout", "1.5"], ["holdout share 1.5", "between 0 and 1"]),
        (["--traffic", "good.csv", "--calls-per-process", "0"], ["--calls-per-process"]),
    ],
)
def test_bad_traffic_or_strategy_is_one_line_exit_2_nothing_written(
    tmp_path: Path, args: list[str], words: list[str]
) -> None:
    (tmp_path / "bad.csv").write_text("batch,seq\n2,0\n")
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "tokens.csv").write_text("batch,tokens\n2,5\n")
    (tmp_path / "good.csv").write_text("batch,seq\n2,5\n2,7\n")
    result = advisor("sweep", TINY_SEQ, "--db", "sqlite:///sweep.sqlite", *args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for word in words:
        assert word in lines[0]
    assert not (tmp_path / "sweep.sqlite").exists()


def test_buckets_need_pad_and_cut(tmp_path: Path) -> None:
    result = advisor(
        "sweep",
        TINY_MLP,
        "--shapes",
        "static,buckets:pow2",
        "--db",
        "sqlite:///sweep.sqlite",
        cwd=tmp_path,
    )
    assert result.returncode == 2
    assert "no pad() and cut()" in result.stderr
    assert not (tmp_path / "sweep.sqlite").exists()


@pytest.mark.slow
def test_a_sweep_compares_strategies_on_one_trace(tmp_path: Path) -> None:
    import optuna

    rows = ("2,5\n" * 4 + "2,7\n" * 3 + "2,30\n") * 15  # each half holds every length
    (tmp_path / "requests.csv").write_text("batch,seq\n" + rows)
    url = f"sqlite:///{tmp_path / 'sweep.sqlite'}"
    result = advisor(
        "sweep",
        TINY_SEQ,
        "--traffic",
        "requests.csv",
        "--shapes",
        "static,buckets:fitted-2",
        "--modes",
        "default",
        "--dtypes",
        "fp32",
        "--device",
        "cpu",
        "--no-warm",
        # a process so long that no compiled start-up proves a strategy worse than eager's
        # (advisor.search.sweep.prune_bar): every strategy is measured in full
        "--calls-per-process",
        "1000000000",
        "--json",
        "--db",
        url,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    outcome = json.loads(result.stdout)
    trials = {t["config_key"]: t for t in outcome["trials"]}
    assert set(trials) == {
        "eager/fp32",
        "default/fp32/graphbreaks-ok/dynamic-auto",
        "default/fp32/graphbreaks-ok/dynamic-auto/shapes-buckets:fitted-2",
    }
    for record in trials.values():  # the eager baseline replays the same trace too
        assert record["status"] == "ok", record["error_tail"]
        assert record["replay"]["requests"] == 60 and record["replay"]["trace_shapes"] == 3
        assert record["replay"]["split"] == 60  # fitted on the log's first half
        assert record["replay"]["stream"]["new_shape_events"] == 0  # every length warmed
        assert record["median_ms"] == record["replay"]["p50_ms"]
    bucketed = trials["default/fp32/graphbreaks-ok/dynamic-auto/shapes-buckets:fitted-2"]
    # both halves hold every length: two buckets prepared at start-up, no recompile ever
    replay = bucketed["replay"]
    assert replay["strategy"] == "buckets:fitted-2" and replay["boundaries"] == {"seq": [7, 30]}
    assert replay["stance"] == "fail_on_recompile"  # any recompile would have failed the trial
    assert replay["recompiles"] == 0 and bucketed["recompiles"] == 0
    assert replay["graphs"] == 2 and replay["buckets"] == 2 and replay["eager_fallbacks"] == 0
    assert replay["holdout"] == 0.5
    stream = replay["stream"]
    assert stream["requests"] == 60 and stream["startup_shapes"] == 2  # both buckets, up front
    assert stream["new_shape"] == [] and stream["last_new_shape_s"] is None
    assert len(stream["per_request_ms"]) == 60
    assert replay["flags"] == [] and 0 < replay["padding_waste"] < 0.5
    assert replay["compile_s_total"] == pytest.approx(bucketed["cold_compile_s"])
    assert bucketed["p99_ms"] == replay["p99_ms"] and replay["expected_ms"] > 0
    # cut outputs of padded calls match the unpadded fp32 eager reference
    assert bucketed["correct"] and bucketed["passed"]
    assert bucketed["config"]["shapes"] == "buckets:fitted-2"
    static = trials["default/fp32/graphbreaks-ok/dynamic-auto"]
    assert static["replay"]["graphs"] >= 2  # automatic dynamic: a recompile at start-up
    rec = outcome["recommendation"]
    # the traffic varies: the cost over a process's life is every config's figure (eager and
    # default are close on this tiny model, so a loaded host may leave them undecided)
    assert all(r["figure"] == "process" for r in rec["ranked"])
    if rec["best"] is not None:
        assert rec["decided_by"].startswith("expected ms per request")

    # the store keeps the replay (extra JSON) and one shape row per bucket
    with ResultStore.from_url(url, create=False) as store:
        stored = {t["config_key"]: t for t in store.trials(sweep_id=outcome["sweep_id"])}
        sweep = store.sweeps("tiny-seq")[0]
    again = stored[bucketed["config_key"]]
    assert again["replay"] == bucketed["replay"]
    assert [s["shape"] for s in again["shapes"]] == ["batch=2,seq=7", "batch=2,seq=30"]
    assert again["shapes"][0]["median_ms"] == pytest.approx(bucketed["shapes"][0]["median_ms"])
    # per-bucket latencies, weighted by the traffic they serve (the log's later 60 requests)
    served = rows.splitlines()[60:120]
    assert sum(s["weight"] for s in again["shapes"]) == pytest.approx(1.0)
    assert again["shapes"][0]["weight"] == pytest.approx(1 - served.count("2,30") / 60)
    assert sweep["settings"]["traffic"][0]["traffic"].endswith("requests.csv")

    # Optuna sees the strategy as a parameter of compiled configs
    study = optuna.load_study(study_name=outcome["study_name"], storage=url)
    params = [t.params for t in study.trials if t.params.get("mode") == "default"]
    assert sorted(p["shapes"] for p in params) == ["buckets:fitted-2", "static"]


@pytest.mark.slow
def test_a_pooled_sweep_serves_its_leaders_again_alone(tmp_path: Path) -> None:
    """Trials run at once paid their start-ups and new shapes beside each other's work. Under
    varying traffic those are part of the deciding figure, so a pooled sweep serves its leaders'
    start-up and stream again, one at a time, cold, and decides on those (eager configs: no
    compile, so the test stays short; a compiled config runs the same child)."""
    from advisor.serving import DEFAULT_CALLS_PER_PROCESS, process_life_ms

    rows = ("2,5\n" * 4 + "2,7\n" * 3 + "2,30\n") * 15
    (tmp_path / "requests.csv").write_text("batch,seq\n" + rows)
    url = f"sqlite:///{tmp_path / 'sweep.sqlite'}"
    result = advisor("sweep", TINY_SEQ, "--traffic", "requests.csv", "--modes", "eager",
                     "--dtypes", "fp32,bf16", "--device", "cpu", "--jobs", "2", "--no-warm",
                     "--json", "--db", url, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    outcome = json.loads(result.stdout)
    rec = outcome["recommendation"]
    with ResultStore.from_url(url, create=False) as store:
        stored = {t["trial_uuid"]: t for t in store.trials(sweep_id=outcome["sweep_id"])}
    assert len(stored) == 2
    judged = [r for r in rec["ranked"] if r["figure"] == "process"]
    assert judged and rec["baseline"]["trial_uuid"] in {r["trial_uuid"] for r in judged}
    for ranked in judged:
        replay = stored[ranked["trial_uuid"]]["replay"]
        stream, alone = replay["stream"], replay["stream"]["alone"]
        assert f"serving {ranked['label']} again, alone" in result.stderr
        # the same stream served again: as many requests, every length warmed at start-up
        assert alone["startup_s"] > 0 and len(alone["per_request_ms"]) == stream["requests"]
        assert alone["new_shape"] == stream["new_shape"] == []
        # the figure that decides is the one served alone, not the trial's own
        assert ranked["median_ms"] == pytest.approx(
            process_life_ms(replay, DEFAULT_CALLS_PER_PROCESS), rel=1e-9)
        trials_own = {**replay, "stream": {k: v for k, v in stream.items() if k != "alone"}}
        assert ranked["median_ms"] != process_life_ms(trials_own, DEFAULT_CALLS_PER_PROCESS)


@pytest.mark.slow
def test_a_sweep_prunes_a_replay_proven_worse_than_its_best(tmp_path: Path) -> None:
    """The eager baseline finishes first; over a 100-request process it costs well under a
    millisecond a request. The compiled config's start-up alone (a compile of seconds, over 100
    requests) proves it above that bar plus the margin: its stream stops before its first
    request, Optuna is told PRUNED, the store keeps its bound, and every surface says so."""
    import optuna

    from advisor.search.sweep import PRUNE_MARGIN
    from advisor.serving import process_life_ms

    rows = ("2,5\n" * 4 + "2,7\n" * 3 + "2,30\n") * 15
    (tmp_path / "requests.csv").write_text("batch,seq\n" + rows)
    url = f"sqlite:///{tmp_path / 'sweep.sqlite'}"
    result = advisor("sweep", TINY_SEQ, "--traffic", "requests.csv", "--modes", "eager,default",
                     "--dtypes", "fp32", "--device", "cpu", "--jobs", "1", "--no-warm",
                     "--calls-per-process", "100", "--json", "--db", url, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    outcome = json.loads(result.stdout)
    trials = {t["config_key"]: t for t in outcome["trials"]}
    eager, compiled = trials["eager/fp32"], trials["default/fp32/graphbreaks-ok/dynamic-auto"]
    assert eager["status"] == "ok", eager["error_tail"]
    assert compiled["status"] == "pruned", compiled["error_tail"]
    pruned = compiled["pruned"]
    assert pruned["above_ms"] == pytest.approx(
        (1 + PRUNE_MARGIN) * process_life_ms(eager["replay"], 100), rel=1e-9)
    assert pruned["requests_served"] == 0 and pruned["requests_total"] == 60
    assert pruned["lower_bound_ms"] > pruned["above_ms"] and compiled["median_ms"] is None
    rec = outcome["recommendation"]
    assert rec["best"]["config"]["mode"] == "eager"
    assert (rec["n_failed"], rec["n_pruned"]) == (0, 1)
    text = f"pruned: at least {units.duration_ms(pruned['lower_bound_ms'])} a request"
    assert text in result.stderr  # the sweep's progress line

    study = optuna.load_study(study_name=outcome["study_name"], storage=url)
    (stopped,) = [t for t in study.trials if t.params.get("mode") == "default"]
    assert stopped.state == optuna.trial.TrialState.PRUNED and stopped.value is None
    assert stopped.user_attrs["pruned_lower_bound_ms"] == pruned["lower_bound_ms"]

    shown = advisor("show", str(outcome["sweep_id"]), "--db", url, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "pruned: at least" in shown.stdout and "1 pruned" in shown.stdout
