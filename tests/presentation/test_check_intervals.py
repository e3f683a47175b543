"""`advisor check` decides on 95% intervals: slower, faster, within the threshold, or "cannot
tell" (its own exit code), never a pass on noise. Real SQLite databases written through the
store as sweeps write them, real `advisor export` files, the CLI run in this process.

The data: reduce-overhead bf16 of a reranker on one H200 on two software stacks (1.20 ms
[1.18-1.22] on torch 2.10, 0.96 ms [0.95-0.97] on torch 2.11) and on a second H200 on torch
2.11 (0.98 ms [0.97-0.99]); and a small CPU workload measured twice on the same loaded host,
whose eager fp32 figure swung 37x between the two exports (941 ms [263 ms-3.05 s], flagged
noisy, then 25.4 ms [24.9-26.0])."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from report_support import run
from support.seed import CPU_STACK, GPU_STACK, GPU_STACK_OLD, fingerprint, workload

from advisor.cli import exits
from advisor.config import CompileConfig
from advisor.db import ResultStore
from advisor.presentation.check import Figure, decide
from advisor.records import empty_record

EAGER = CompileConfig(mode="eager", dtype="fp32")
DEFAULT = CompileConfig(mode="default", dtype="fp32")
RO_BF16 = CompileConfig(mode="reduce-overhead", dtype="bf16")
T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)

# (config, median ms, 95% interval, noisy) per trial
Measured = tuple[CompileConfig, float, tuple[float, float], bool]
OLD: list[Measured] = [(EAGER, 6.5, (6.45, 6.55), False), (DEFAULT, 5.1, (5.05, 5.15), False),
                       (RO_BF16, 1.20, (1.18, 1.22), False)]
NEW: list[Measured] = [(EAGER, 6.2, (6.15, 6.25), False), (DEFAULT, 4.9, (4.85, 4.95), False),
                       (RO_BF16, 0.96, (0.95, 0.97), False)]
TWIN: list[Measured] = [(EAGER, 6.25, (6.2, 6.3), False), (DEFAULT, 4.95, (4.9, 5.0), False),
                        (RO_BF16, 0.98, (0.97, 0.99), False)]
# the loaded 2-core host: compiling does not pay off there; eager fp32 is the pick both times
YESTERDAY: list[Measured] = [(EAGER, 941.0, (263.0, 3050.0), True),
                             (DEFAULT, 1400.0, (900.0, 4100.0), True)]
TODAY: list[Measured] = [(EAGER, 25.4, (24.9, 26.0), False), (DEFAULT, 58.1, (57.4, 59.0), False)]


def _record(i: int, wl: dict[str, Any], fp: dict[str, Any], m: Measured) -> dict[str, Any]:
    config, median, ci, noisy = m
    started = T0 + timedelta(days=i // 10, minutes=i)
    record: dict[str, Any] = dict(empty_record())
    record.update(
        trial_uuid=str(uuid.uuid5(uuid.NAMESPACE_OID, f"check-{fp['fingerprint_hash']}-{i}")),
        status="ok", started_at=started.isoformat(),
        finished_at=(started + timedelta(seconds=40)).isoformat(), workload=wl,
        config=config.to_dict(), config_key=config.key, device=fp["device_kind"], fingerprint=fp,
        method="cuda_events" if fp["device_kind"] == "cuda" else "perf_counter",
        warmup_iters=25, median_ms=median, median_ci_ms=list(ci), p90_ms=median * 1.05,
        p99_ms=median * 1.25, mean_ms=median * 1.01, noisy=noisy,
        cold_compile_s=None if config.mode == "eager" else 30.0, max_abs_err=0.0, atol=0.05,
        rtol=0.05, correct=True, passed=True,
    )  # fmt: skip
    return record


def _write(url: str, name: str, fp: dict[str, Any], trials: list[Measured], day: int) -> None:
    wl = workload(name)
    with ResultStore.from_url(url) as store:
        sweep_id = store.create_sweep(wl, fp, {"device": fp["device_kind"]}, f"{name}-{day}",
                                      len(trials))
        store.add_trials([_record(day * 10 + i, wl, fp, t) for i, t in enumerate(trials)],
                         sweep_id)
        store.finish_sweep(sweep_id, "finished")


FP = {"old": fingerprint("gpu-a", GPU_STACK_OLD, "gpu-old"),
      "new": fingerprint("gpu-a", GPU_STACK, "gpu-new"),
      "twin": fingerprint("gpu-b", GPU_STACK, "gpu-new"),
      "cpu": fingerprint("cpu", CPU_STACK, "cpu")}
HASH = {k: str(fp["fingerprint_hash"]) for k, fp in FP.items()}


@pytest.fixture(scope="module")
def stacks(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The reranker on three stacks of two H200s, in one SQLite file."""
    url = f"sqlite:///{tmp_path_factory.mktemp('stacks') / 'results.db'}"
    for day, (key, trials) in enumerate((("old", OLD), ("new", NEW), ("twin", TWIN))):
        _write(url, "reranker", FP[key], trials, day)
    return url


def _export(url: str, name: str, to: Path) -> Path:
    done = run("export", "--workload", name, "--db", url, "-o", to)
    assert done.exit_code == 0, done.output
    return to


def _check(url: str, here: str, *args: object) -> Any:
    return run("check", "reranker", "--db", url, "--fingerprint", here, *args)


def _verdict(done: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(done.stdout)
    return data


# -- the three outcomes, on the store --------------------------------------------------------


def test_intervals_clear_of_each_other_by_the_threshold_fail(stacks: str) -> None:
    done = _check(stacks, HASH["old"], "--against", HASH["new"], "--fail-if-slower", "5%")
    assert done.exit_code == exits.SLOWER == 3, done.output
    line = done.stdout.strip()
    assert line.startswith("reranker: FAIL: slower by more than 5.0%: bf16 + reduce-overhead: "
                           "1.20 ms [1.18-1.22 ms] on this stack vs 0.960 ms "
                           "[0.950-0.970 ms] on ")
    # the least slowdown the intervals allow, 1.18 / 0.97, and the most, 1.22 / 0.95
    assert line.endswith(", 21.6% to 28.4% slower (95% intervals)")
    verdict = _verdict(_check(stacks, HASH["old"], "--against", HASH["new"], "--json"))
    assert verdict["outcome"] == "slower" and verdict["slower"]
    assert verdict["slowdown_range"] == pytest.approx([1.18 / 0.97 - 1, 1.22 / 0.95 - 1])
    assert verdict["slowdown"] == pytest.approx(1.2 / 0.96 - 1)


def test_faster_on_clear_intervals_passes(stacks: str) -> None:
    done = _check(stacks, HASH["new"], "--against", HASH["old"])
    assert done.exit_code == exits.OK, done.output
    assert done.stdout.startswith("reranker: ok: faster: bf16 + reduce-overhead: 0.960 ms")
    assert done.stdout.strip().endswith(", 17.8% to 22.1% faster (95% intervals)")


def test_the_same_stack_on_another_host_is_within_the_threshold(stacks: str) -> None:
    """Overlapping intervals are no reason to fail, nor to pass blindly: they pass only when
    even the largest slowdown they allow, 0.99 / 0.95 (4.2%), is within the threshold."""
    done = _check(stacks, HASH["twin"], "--against", HASH["new"])
    assert done.exit_code == exits.OK, done.output
    assert done.stdout.startswith("reranker: ok: within 5.0%: ")
    assert done.stdout.strip().endswith(", 0.0% to 4.2% slower (95% intervals)")
    tight = _check(stacks, HASH["twin"], "--against", HASH["new"], "--fail-if-slower", "3%")
    assert tight.exit_code == exits.CANNOT_TELL == 4, tight.output
    assert tight.stdout.startswith("reranker: cannot tell, not a pass (the 95% intervals "
                                   "overlap and allow a slowdown of more than 3.0%): ")


def test_a_threshold_inside_the_slowdowns_range_cannot_tell(stacks: str) -> None:
    """Slower for sure (21.6% to 28.4%), but whether by more than 25% is inside the noise."""
    done = _check(stacks, HASH["old"], "--against", HASH["new"], "--fail-if-slower", "25%")
    assert done.exit_code == exits.CANNOT_TELL, done.output
    assert ("cannot tell, not a pass (slower, but whether by more than 25.0% is inside the 95% "
            "intervals)") in done.stdout
    loose = _check(stacks, HASH["old"], "--against", HASH["new"], "--fail-if-slower", "30%")
    assert loose.exit_code == exits.OK and "ok: within 30.0%" in loose.stdout


# -- export files -----------------------------------------------------------------------------


def test_an_export_file_gives_the_same_verdict_as_the_store(stacks: str, tmp_path: Path) -> None:
    file = _export(stacks, "reranker", tmp_path / "baseline.json")
    done = _check(stacks, HASH["old"], "--baseline", file, "--against", HASH["new"], "--json")
    assert done.exit_code == exits.SLOWER, done.output
    verdict = _verdict(done)
    assert verdict["same_config"] and verdict["outcome"] == "slower"
    assert verdict["here"]["median_ci_ms"] == [1.18, 1.22]
    assert verdict["there"]["median_ci_ms"] == [0.95, 0.97]
    assert verdict["there"]["noisy"] is False
    assert verdict["slowdown_range"] == pytest.approx([1.18 / 0.97 - 1, 1.22 / 0.95 - 1])


@pytest.mark.parametrize("flag", ["--format json", "--json"])
def test_a_recommend_document_is_a_baseline_with_its_intervals(
        stacks: str, tmp_path: Path, flag: str) -> None:
    doc = run("recommend", "reranker", "--db", stacks, "--fingerprint", HASH["new"], *flag.split())
    assert doc.exit_code == 0, doc.output
    file = tmp_path / "rec.json"
    file.write_text(doc.stdout)
    done = _check(stacks, HASH["old"], "--baseline", file, "--json")
    assert done.exit_code == exits.SLOWER, done.output
    assert _verdict(done)["slowdown_range"][0] == pytest.approx(1.18 / 0.97 - 1)


# -- the 37x swing: two exports of one loaded host ---------------------------------------------


@pytest.fixture(scope="module")
def swing(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """Yesterday's and today's exports of one CPU host; today's imported into the database the
    check reads, yesterday's the baseline file."""
    where = tmp_path_factory.mktemp("swing")
    files = []
    for day, trials in ((0, YESTERDAY), (1, TODAY)):
        url = f"sqlite:///{where / f'day{day}.db'}"
        _write(url, "tiny-mlp", FP["cpu"], trials, day)
        files.append(_export(url, "tiny-mlp", where / f"day{day}.json"))
    here = f"sqlite:///{where / 'here.db'}"
    done = run("import", files[1], "--db", here)
    assert done.exit_code == 0, done.output
    return here, files[0]


def test_a_37x_swing_on_a_noisy_host_cannot_tell(swing: tuple[str, Path]) -> None:
    """It read "97.3% faster; ok" before: a pass on noise."""
    here, yesterday = swing
    done = run("check", "tiny-mlp", "--db", here, "--fingerprint", HASH["cpu"],
               "--baseline", yesterday)
    assert done.exit_code == exits.CANNOT_TELL, done.output
    line = done.stdout.strip()
    assert line.startswith("tiny-mlp: cannot tell, not a pass (the timings on the baseline are "
                           "noisy; measure again on a quiet host): fp32 + eager: 25.4 ms "
                           "[24.9-26.0 ms] on this stack vs 941 ms [0.263-3.05 s] (noisy) "
                           "on ")
    assert "ok" not in line
    verdict = _verdict(run("check", "tiny-mlp", "--db", here, "--fingerprint", HASH["cpu"],
                           "--baseline", yesterday, "--json"))
    assert verdict["outcome"] == "cannot tell" and not verdict["slower"]
    assert verdict["slowdown"] == pytest.approx(25.4 / 941 - 1)  # the -97.3% it used to pass on
    assert verdict["there"]["noisy"] is True


def test_without_a_noise_flag_the_intervals_decide() -> None:
    """The swing again, the flag lost (a document that does not carry it): a figure clear
    under the baseline's interval is faster, over the range the intervals allow, never the
    point "97.3%"; intervals that overlap and allow a slowdown over the threshold cannot tell;
    a side without an interval cannot tell."""
    here = Figure("k", "fp32 + eager", 25.4, [24.9, 26.0])
    there = Figure("k", "fp32 + eager", 941.0, [263.0, 3050.0])
    assert decide(here, there, 0.05) == (
        "faster", pytest.approx([24.9 / 3050 - 1, 26.0 / 263 - 1]), "")
    wide = Figure("k", "fp32 + eager", 25.4, [24.9, 300.0])
    assert decide(wide, there, 0.05) == (
        "cannot tell", pytest.approx([24.9 / 3050 - 1, 300 / 263 - 1]),
        "the 95% intervals overlap and allow a slowdown of more than 5.0%")
    assert decide(here, Figure("k", "x", 941.0, None), 0.05) == (
        "cannot tell", None, "no 95% interval on the baseline")
    noisy = Figure("k", "x", 25.0, [24.0, 26.0], noisy=True)
    assert decide(noisy, there, 0.05)[:1] == ("cannot tell",)  # even when clearly faster
    assert decide(noisy, Figure("k", "x", 5.0, [4.9, 5.1]), 0.05)[0] == "cannot tell"


# -- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "[" * 100_000 + "]" * 100_000,
    '{"workload": ' * 50_000 + "1" + "}" * 50_000,
    "trial_uuid,config\nx,\"" + "[" * 5_000 + "]" * 5_000 + "\"\n",  # a CSV export's cell
])
def test_a_deeply_nested_baseline_is_one_line_and_exit_2(
        stacks: str, tmp_path: Path, text: str) -> None:
    file = tmp_path / ("base.csv" if text.startswith("trial_uuid") else "base.json")
    file.write_text(text)
    done = _check(stacks, HASH["new"], "--baseline", file)
    assert done.exit_code == exits.BAD_INPUT, done.output
    assert len(done.output.strip().splitlines()) == 1
    assert done.output.startswith(f"advisor: error: {file}") and "nested too deeply" in done.output


def test_help_names_the_outcomes_and_their_exit_codes() -> None:
    done = run("check", "--help")
    text = " ".join(done.stdout.split())
    assert done.exit_code == 0
    assert "Exit codes: 0 faster or within the threshold; 3 slower by more; 4 cannot tell" in text
    docs = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    assert f"\n| {exits.CANNOT_TELL} | `advisor check`: cannot tell" in docs
