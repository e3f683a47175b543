"""`advisor diff SWEEP_A SWEEP_B`: two sweeps of one workload config by config, verdicts on the
95% intervals (never on two medians alone), as pytest-benchmark's compare; hand-computed cases
for the verdicts, then the command on the seeded database."""

from __future__ import annotations

import json

from report_support import run

from advisor.presentation.diff import Side, compare, summary, verdict


def _side(median: float, low: float | None = None, high: float | None = None,
          noisy: bool = False) -> Side:
    ci = [low, high] if low is not None and high is not None else None
    return Side(median_ms=median, ci_ms=ci, noisy=noisy, trials=1)


def test_verdicts_come_from_the_intervals() -> None:
    a = _side(1.0, 0.95, 1.05)
    assert verdict(a, _side(0.8, 0.78, 0.82)) == "faster"  # wholly under A's interval
    assert verdict(a, _side(1.2, 1.1, 1.3)) == "slower"
    assert verdict(a, _side(0.93, 0.90, 0.96)) == "within noise"  # overlaps: 7% on medians
    assert verdict(a, _side(0.5)) == "cannot tell"  # no interval
    assert verdict(a, _side(0.5, 0.49, 0.51, noisy=True)) == "cannot tell"
    assert verdict(None, a) == "only in B" and verdict(a, None) == "only in A"


def test_rows_in_both_first_fastest_first_with_the_change() -> None:
    rows = compare({"x": ("fp32 + eager", _side(2.0, 1.9, 2.1)),
                    "y": ("fp32 + default", _side(1.0, 0.95, 1.05))},
                   {"y": ("fp32 + default", _side(0.5, 0.45, 0.55)),
                    "x": ("fp32 + eager", _side(2.0, 1.95, 2.05)),
                    "z": ("bf16 + eager", _side(0.1, 0.09, 0.11))})
    assert [r.config for r in rows] == ["fp32 + default", "fp32 + eager", "bf16 + eager"]
    assert rows[0].change == -0.5 and rows[0].verdict == "faster"
    assert rows[1].verdict == "within noise" and rows[2].verdict == "only in B"
    assert summary(rows) == "1 faster, 1 within noise, 1 only in B"


def test_the_command_compares_two_sweeps_of_a_workload(seeded_url: str) -> None:
    done = run("list", "--db", seeded_url, "--workload", "reranker", "--json")
    sweeps = {(s["device_id"].split(" @")[0], s["fingerprint"]["torch_version"]): s["id"]
              for s in json.loads(done.stdout) if "gpu-a" in s["device_id"]}
    old, new = sweeps["H200", "2.10.0+cu128"], sweeps["H200", "2.11.0+cu130"]
    done = run("diff", str(old), str(new), "--db", seeded_url, "--json")
    assert done.exit_code == 0, done.output
    document = json.loads(done.stdout)
    assert document["a"]["sweep_id"] == old and document["b"]["sweep_id"] == new
    assert not document["same_device_and_stack"]
    by = {c["config"]: c for c in document["configs"]}
    # the torch upgrade: bf16 + reduce-overhead 1.20 ms -> 0.96 ms; one trial each, no interval
    assert abs(by["bf16 + reduce-overhead"]["change"] + 0.2) < 1e-9
    assert by["bf16 + reduce-overhead"]["verdict"] == "cannot tell"
    assert by["bf16 + eager"]["verdict"] == "only in B"
    table = run("diff", str(old), str(new), "--db", seeded_url)
    assert table.exit_code == 0 and "B against A: " in table.stdout
    csv_text = run("diff", str(old), str(new), "--db", seeded_url, "-f", "csv").stdout
    assert csv_text.splitlines()[0] == ("config,config_key,a_median_ms,a_median_ci_ms,"
                                        "b_median_ms,b_median_ci_ms,change,verdict")


def test_sweeps_of_two_workloads_are_one_line_exit_2(seeded_url: str) -> None:
    listed = json.loads(run("list", "--db", seeded_url, "--json").stdout)
    ids = {s["workload"]["name"]: s["id"] for s in listed}
    done = run("diff", str(ids["reranker"]), str(ids["embedder"]), "--db", seeded_url)
    assert done.exit_code == 2
    assert "are of different workloads (reranker, embedder)" in done.stderr
