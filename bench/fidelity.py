"""Fidelity of the advisor's timing: its medians against two reference harnesses.

    python bench/fidelity.py --workload workloads/reranker.py --device cuda \
        --shape batch=50,seq=128 --repeats 5 --out bench/results --configs \
        fp32:eager,bf16:eager,bf16:default,bf16:reduce-overhead,fp16:max-autotune-no-cudagraphs

Every recommendation stands on the advisor's medians, so its way of timing must give what the
best harnesses give, and give it again when asked twice. The bar: the advisor's median agrees
with each reference within 3% (|ratio - 1| <= 0.03), and repeats with a coefficient of variation
(stdev / mean over rounds) of at most 2%.

Each config (``dtype:mode``) is built, cast, compiled and first-called once, as the confirmation
child does (`advisor.child.confirm._Runner`), in ONE process, under ``torch.inference_mode()`` for
an
inference workload. Then ``--repeats`` rounds time the SAME compiled callable of every config
with four methods, each giving one figure per round:

- advisor: what a trial does (`advisor.child.trial.TrialRun._measure`):
  `advisor.child.measure.warm_up` then
  `advisor.child.measure.sample` under ``SamplingPolicy.for_device``, median of the samples;
- plain: the article's harness (``plain_median_ms`` of bench/trial_vs_plain.py): 25 warm-up
  calls, synchronize, 100 samples each between two fresh CUDA events (perf_counter on CPU);
- do_bench: ``triton.testing.do_bench(fn, return_mode="median")``, the harness Inductor's own
  autotuner trusts (CUDA only). It clears the L2 cache before every call, so it sees a colder
  cache than back-to-back calls do, and it queues calls without waiting for each: it reads GPU
  time, where the advisor and the plain loop read a synchronized call's latency;
- back_to_back: the trial's back-to-back figure (`advisor.child.measure.back_to_back_ms`: the
  policy's ``throughput_calls`` calls queued, a CUDA event after each, one synchronize), the
  median ms per call; its throughput is 1000 / this. The quantity do_bench measures, so it is
  compared with do_bench.

CUDA-graph modes call ``torch.compiler.cudagraph_mark_step_begin()`` before every call in all
four. Each round rotates the order of the configs and of the methods, so that no method always
goes first. Per config: the median over rounds of each method's figure; advisor/plain,
advisor/do_bench and back_to_back/do_bench (the median of the per-round ratios); the CV over the
rounds of each method's figure. A config that fails to compile or to run is
reported as failed with its one-line error, and the others go on. Results go to
``OUT/fidelity_<device>_<workload>_<UTC>.json`` and ``.md``. Bad arguments: one line on stderr, exit
code 2, nothing written.

Under ``ADVISOR_DEVICE_LOCK`` (`advisor.device_lock`) the bench shares the device while it
compiles and holds it alone while it measures, like any trial.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from advisor.config import CompileConfig, parse_shape, shape_name  # noqa: E402
from advisor.errors import AdvisorError, ConfigError  # noqa: E402
from bench.common import dated, utc_stamp  # noqa: E402

AGREE_WITHIN = 0.03  # |advisor / reference - 1| at most this
CV_LIMIT_PCT = 2.0  # the advisor's median repeats this well over rounds
METHODS = ("advisor", "plain", "do_bench", "back_to_back")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        _fail(message)


def _fail(message: str) -> NoReturn:
    print(f"fidelity: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def parse_configs(text: str) -> dict[str, CompileConfig]:
    """``fp32:eager,bf16:default`` -> {"fp32:eager": CompileConfig, ...}; ConfigError if bad."""
    configs: dict[str, CompileConfig] = {}
    for item in (part.strip() for part in text.split(",")):
        dtype, sep, mode = item.partition(":")
        if not sep:
            raise ConfigError(f"bad config {item!r}: write dtype:mode, e.g. bf16:default")
        configs[item] = CompileConfig(mode=mode, dtype=dtype)
    return configs


# --- the methods: each gives one figure (ms) of one zero-argument call ---------------------------


def advisor_ms(runner: Any) -> float:
    from advisor.child.measure import SamplingPolicy, sample, warm_up
    from advisor.stats import Stats

    policy = SamplingPolicy.for_device("cuda" if runner.timer.cuda else "cpu")
    warm_up(runner.timer, runner.calls[0], policy)
    return Stats(sample(runner.timer, runner.calls[0], policy)).median_ms


def plain_ms(runner: Any) -> float:
    from bench.trial_vs_plain import plain_median_ms

    device = "cuda" if runner.timer.cuda else "cpu"
    return plain_median_ms(runner.calls[0], (), device, runner.config.uses_cudagraphs)


def do_bench_ms(runner: Any) -> float | None:
    if not runner.timer.cuda:
        return None
    from triton.testing import do_bench

    call = runner.calls[0]
    return float(do_bench(lambda: runner.timer.call(call), return_mode="median"))


def back_to_back_ms(runner: Any) -> float:
    """The trial's other figure: the median ms per call of calls queued back to back with one
    synchronize at the end (`advisor.child.measure.back_to_back_ms`), the quantity do_bench
    times."""
    from advisor.child.measure import SamplingPolicy, back_to_back_ms

    policy = SamplingPolicy.for_device("cuda" if runner.timer.cuda else "cpu")
    return statistics.median(back_to_back_ms(runner.timer, runner.calls[0],
                                             policy.throughput_calls))


MEASURE: dict[str, Callable[[Any], float | None]] = {
    "advisor": advisor_ms, "plain": plain_ms, "do_bench": do_bench_ms,
    "back_to_back": back_to_back_ms,
}


# --- building and measuring -------------------------------------------------------------------


def build(wl: Any, configs: dict[str, CompileConfig], device: str,
          dims: dict[str, int]) -> tuple[dict[str, Any], dict[str, str]]:
    """A compiled, first-called runner per config, and the one-line error of each that failed."""
    from advisor.child.confirm import _Runner

    runners, failures = {}, {}
    for name, config in configs.items():
        t0 = time.perf_counter()
        try:
            runners[name] = _Runner(wl, config, device, [{"dims": dims, "weight": 1.0}])
        except Exception as exc:  # noqa: BLE001 - one config failing is data
            failures[name] = _one_line(exc)
            print(f"{name:36s} FAILED to compile: {failures[name]}", flush=True)
            continue
        print(f"{name:36s} compiled and first-called in {time.perf_counter() - t0:.1f} s",
              flush=True)
    return runners, failures


def rounds(runners: dict[str, Any], repeats: int,
           failures: dict[str, str]) -> dict[str, dict[str, list]]:
    """medians[config][method][round]; round r starts at config r and, for the i-th config of
    the round, at method r + i, so no config and no method always goes first."""
    from advisor.child.prepare import set_precision

    medians: dict[str, dict[str, list]] = {n: {m: [] for m in METHODS} for n in runners}
    for r in range(repeats):
        names = [n for n in runners if n not in failures]
        k = r % len(names) if names else 0
        for i, name in enumerate(names[k:] + names[:k]):
            runner = runners[name]
            set_precision(runner.config)
            j = (r + i) % len(METHODS)
            try:
                for method in METHODS[j:] + METHODS[:j]:
                    medians[name][method].append(MEASURE[method](runner))
            except Exception as exc:  # noqa: BLE001 - reported, the others go on
                failures[name] = f"while measuring: {_one_line(exc)}"
                print(f"{name:36s} FAILED {failures[name]}", flush=True)
                continue
            got = {m: medians[name][m][-1] for m in METHODS}
            print(f"round {r + 1}/{repeats} {name:36s} " + "  ".join(
                f"{m} {_ms(v)} ms" for m, v in got.items()), flush=True)
    return {n: m for n, m in medians.items() if n not in failures}


def summarize(medians: dict[str, list]) -> dict[str, Any]:
    """One config's figures from its per-round medians of each method."""
    advisor, plain, bench = medians["advisor"], medians["plain"], medians["do_bench"]
    b2b = medians["back_to_back"]
    has_bench = all(v is not None for v in bench)
    return {
        "advisor_median_ms": statistics.median(advisor),
        "plain_median_ms": statistics.median(plain),
        "do_bench_median_ms": statistics.median(bench) if has_bench else None,
        "back_to_back_ms": statistics.median(b2b),
        "advisor_over_plain": _ratio(advisor, plain),
        "advisor_over_do_bench": _ratio(advisor, bench) if has_bench else None,
        "back_to_back_over_do_bench": _ratio(b2b, bench) if has_bench else None,
        "cv_advisor_pct": _cv_pct(advisor),
        "cv_plain_pct": _cv_pct(plain),
        "cv_do_bench_pct": _cv_pct(bench) if has_bench else None,
        "cv_back_to_back_pct": _cv_pct(b2b),
        "rounds_ms": medians,
    }


def _ratio(values: list[float], references: list[float]) -> float:
    """The median over rounds of value / reference, paired by round."""
    return statistics.median(v / r for v, r in zip(values, references, strict=True))


def _cv_pct(values: list[float]) -> float | None:
    if len(values) < 2:
        return None
    return 100 * statistics.stdev(values) / statistics.fmean(values)


def worst(entries: list[dict[str, Any]], field: str) -> dict[str, Any] | None:
    """The entry farthest from ratio 1 in ``field``: its config and |ratio - 1|."""
    found = [(abs(e[field] - 1), e["config"]) for e in entries if e.get(field) is not None]
    if not found:
        return None
    dev, name = max(found)
    return {"config": name, "abs_ratio_minus_1": dev, "within": dev <= AGREE_WITHIN}


# --- the run ------------------------------------------------------------------------------------


def check(args: argparse.Namespace) -> tuple[Any, dict[str, CompileConfig], dict[str, int], str]:
    """The workload, configs, shape and device the arguments ask for; AdvisorError if bad."""
    from advisor.devices import resolve_device
    from advisor.workload import load_workload

    if args.repeats < 1:
        raise ConfigError(f"--repeats must be at least 1, not {args.repeats}")
    configs = parse_configs(args.configs)
    dims = parse_shape(args.shape) if args.shape else None
    device = resolve_device(args.device)
    wl = load_workload(args.workload).workload
    for name, config in configs.items():
        if config.dtype not in wl.dtypes:
            raise ConfigError(f"config {name}: dtype {config.dtype} is not allowed by "
                              f"{Path(args.workload).name} (allowed: {', '.join(wl.dtypes)})")
    if dims is None:
        dims = wl.shape
    if set(dims) != set(wl.shape):  # as `advisor trial` says it, without importing the CLI
        raise ConfigError(f"shape dims {', '.join(dims)} do not match "
                          f"{Path(args.workload).name}'s dims {', '.join(wl.shape)}; e.g. "
                          f"--shape {shape_name(wl.shape)}")
    return wl, configs, dims, device


def environment(device: str) -> dict[str, Any]:
    import torch

    from advisor import fingerprint

    try:
        import triton

        triton_version = triton.__version__
    except ImportError:
        triton_version = None
    name = torch.cuda.get_device_name() if device.startswith("cuda") else "cpu"
    return {"device": device, "device_name": name, "torch": torch.__version__,
            "triton": triton_version, "fingerprint": fingerprint.collect(device)}


def run(wl: Any, configs: dict[str, CompileConfig], dims: dict[str, int], device: str,
        repeats: int) -> dict[str, Any]:
    import torch
    import torch._dynamo

    from advisor import fingerprint
    from advisor.child.measure import SamplingPolicy
    from advisor.device_lock import DeviceLock

    if device.startswith("cuda"):
        torch.cuda.set_device(fingerprint.cuda_index(device))
    # Every config compiles the same forward: room for all of them, no silent eager fallback.
    torch._dynamo.config.recompile_limit = max(64, 8 * len(configs))
    lock = DeviceLock.from_env()  # compile beside other trials, measure alone
    ctx = torch.inference_mode() if wl.inference else contextlib.nullcontext()
    try:
        lock.hold("work")
        with ctx:
            runners, failures = build(wl, configs, device, dims)
            lock.hold("measure")
            medians = rounds(runners, repeats, failures)
    finally:
        lock.release()
    entries = []
    for name, config in configs.items():
        entry: dict[str, Any] = {"config": name, "key": config.key, "label": config.label}
        if name in medians:
            entry.update(status="ok", compile_s=runners[name].compile_s,
                         **summarize(medians[name]))
        else:
            entry.update(status="failed", error=failures[name])
        entries.append(entry)
    ok = [e for e in entries if e["status"] == "ok"]
    return {
        "created_at": datetime.now(UTC).isoformat(), "workload": wl.name,
        "shape": shape_name(dims), "repeats": repeats, **environment(device),
        "methods": {
            "advisor": {"policy": SamplingPolicy.for_device(device).to_dict(),
                        "timer": "cuda_events" if device.startswith("cuda") else "perf_counter"},
            "plain": {"warmup": 25, "iterations": 100},
            "do_bench": {"return_mode": "median"} if device.startswith("cuda") else None,
            "back_to_back": {"calls": SamplingPolicy.for_device(device).throughput_calls},
        },
        "criteria": {"agree_within": AGREE_WITHIN, "cv_limit_pct": CV_LIMIT_PCT},
        "lock_waited_s": lock.waited_s, "configs": entries,
        "worst": {"plain": worst(ok, "advisor_over_plain"),
                  "do_bench": worst(ok, "advisor_over_do_bench"),
                  "back_to_back vs do_bench": worst(ok, "back_to_back_over_do_bench")},
    }


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"# Fidelity: {result['workload']} at {result['shape']} on {result['device_name']}",
        "",
        f"torch {result['torch']}, triton {result['triton'] or '-'}, {result['repeats']} rounds, "
        f"{result['created_at']}. Bar: |ratio - 1| <= {AGREE_WITHIN}, CV <= {CV_LIMIT_PCT} %.",
        "",
        "| config | advisor median ms | plain median ms | do_bench median ms | advisor/plain "
        "| advisor/do_bench | CV advisor % | CV plain % | back-to-back ms "
        "| back-to-back/do_bench | CV back-to-back % | CV do_bench % |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for e in result["configs"]:
        if e["status"] != "ok":
            lines.append(f"| {e['config']} | failed: {e['error'].replace('|', '/')} "
                         "| | | | | | | | | | |")
            continue
        lines.append(
            f"| {e['config']} | {_ms(e['advisor_median_ms'])} | {_ms(e['plain_median_ms'])} | "
            f"{_ms(e['do_bench_median_ms'])} | {_num(e['advisor_over_plain'], 3)} | "
            f"{_num(e['advisor_over_do_bench'], 3)} | {_num(e['cv_advisor_pct'], 2)} | "
            f"{_num(e['cv_plain_pct'], 2)} | {_ms(e['back_to_back_ms'])} | "
            f"{_num(e['back_to_back_over_do_bench'], 3)} | "
            f"{_num(e['cv_back_to_back_pct'], 2)} | {_num(e['cv_do_bench_pct'], 2)} |")
    return "\n".join([*lines, "", verdict(result), ""])


def verdict(result: dict[str, Any]) -> str:
    parts = []
    labels = {"plain": "advisor/plain", "do_bench": "advisor/do_bench",
              "back_to_back vs do_bench": "back-to-back/do_bench"}
    for ref, label in labels.items():
        w = result["worst"][ref]
        parts.append(f"{label} -" if w is None else
                     f"{label} {w['abs_ratio_minus_1']:.3f} ({w['config']}, "
                     f"{'within' if w['within'] else 'OUTSIDE'} {AGREE_WITHIN})")
    return "worst |ratio - 1|: " + "; ".join(parts)


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _num(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", required=True, help="workload file (.py)")
    parser.add_argument("--device", default=None, help="cuda, cuda:N or cpu (default: cuda if "
                        "a GPU is visible)")
    parser.add_argument("--shape", default=None, help="e.g. batch=50,seq=128 (default: the "
                        "workload's shape)")
    parser.add_argument("--configs", required=True, help="dtype:mode,... e.g. "
                        "fp32:eager,bf16:default,bf16:reduce-overhead")
    parser.add_argument("--repeats", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = parser.parse_args(argv)
    try:
        wl, configs, dims, device = check(args)
    except AdvisorError as exc:
        _fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    result = run(wl, configs, dims, device, args.repeats)
    for e in result["configs"]:
        if e["status"] == "ok":
            print(f"{e['config']:36s} advisor {_ms(e['advisor_median_ms'])}  plain "
                  f"{_ms(e['plain_median_ms'])}  do_bench {_ms(e['do_bench_median_ms'])} ms  "
                  f"advisor/plain {_num(e['advisor_over_plain'], 3)}  advisor/do_bench "
                  f"{_num(e['advisor_over_do_bench'], 3)}  CV advisor "
                  f"{_num(e['cv_advisor_pct'], 2)} %  CV plain {_num(e['cv_plain_pct'], 2)} %",
                  flush=True)
        else:
            print(f"{e['config']:36s} failed: {e['error']}", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    path = dated(args.out, f"fidelity_{device.replace(':', '')}_{wl.name}", utc_stamp(), "json")
    path.write_text(json.dumps(result, indent=2, default=str) + "\n")
    path.with_suffix(".md").write_text(markdown(result))
    print(f"wrote {path} and .md", flush=True)
    print(verdict(result), flush=True)
    return 0 if any(e["status"] == "ok" for e in result["configs"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
