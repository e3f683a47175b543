"""Check the advisor's medians against a plain benchmark in the article's style.

For every successful trial of a sweep (run with ``--keep-caches DIR``), rebuild the same
component in a fresh process, compile it with the same config from that trial's Inductor cache,
and time it the way the article's benchmark_fusion.py does: 25 warm-up calls, synchronize, then
100 samples, each between two fresh CUDA events (perf_counter on CPU), median. Prints and writes
a table of advisor median vs plain median and their ratio.

    python bench/trial_vs_plain.py --db sqlite:///h200.db --sweep 1 --caches DIR --out bench/results
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def plain_median_ms(
    fn: Any, args: Any, device: str, cudagraphs: bool, warmup: int = 25, iterations: int = 100
) -> float:
    import torch

    def call() -> Any:
        if cudagraphs:
            torch.compiler.cudagraph_mark_step_begin()
        return fn(**args) if isinstance(args, dict) else fn(*args)

    for _ in range(warmup):
        call()
    samples: list[float] = []
    if device.startswith("cuda"):
        torch.cuda.synchronize()
        for _ in range(iterations):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            call()
            end.record()
            end.synchronize()
            samples.append(start.elapsed_time(end))
    else:
        for _ in range(iterations):
            t0 = time.perf_counter()
            call()
            samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


def bench_trial(record: dict[str, Any], caches: Path) -> float:
    import torch
    from torch._inductor.runtime.cache_dir_utils import temporary_cache_dir

    from advisor.child.prepare import cast_inputs, torch_dtype
    from advisor.config import CompileConfig
    from advisor.workload import load_workload

    config = CompileConfig.from_dict(record["config"])
    device = record["device"]
    wl = load_workload(record["workload"]["path"]).workload
    dtype = torch_dtype(config.dtype)
    torch.set_float32_matmul_precision("high" if config.dtype == "tf32" else "highest")
    cache = caches / record["trial_uuid"] / "inductor-cache"
    os.environ["TRITON_CACHE_DIR"] = str(cache / "triton")
    torch._dynamo.reset()
    with temporary_cache_dir(str(cache)), torch.inference_mode():
        torch.manual_seed(0)
        model = wl.build(device, dtype)
        torch.manual_seed(0)
        args = cast_inputs(wl.inputs(dict(record["shapes"][0]["dims"]), device), config)
        fn = torch.compile(model, **config.compile_kwargs()) if config.compiled else model
        return plain_median_ms(fn, args, device, config.uses_cudagraphs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--sweep", type=int, required=True)
    parser.add_argument("--caches", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = parser.parse_args()

    from advisor.db.store import ResultStore
    from bench.common import dated, utc_stamp

    store = ResultStore.from_url(args.db)
    rows = []
    for record in store.trials(sweep_id=args.sweep, status="ok"):
        plain = bench_trial(record, args.caches)
        label = f"{record['config']['dtype']} + {record['config']['mode']}"
        rows.append(
            {
                "config": label,
                "shape": record["shapes"][0]["shape"],
                "device": record["fingerprint"]["device_name"],
                "advisor_median_ms": record["median_ms"],
                "plain_median_ms": plain,
                "ratio": record["median_ms"] / plain,
                "cold_compile_s": record["cold_compile_s"],
                "kernels_per_call": record["kernels_per_call"],
                "launches_per_call": record["launches_per_call"],
                "eager_kernels_per_call": record["eager_kernels_per_call"],
            }
        )
        print(
            f"{label:40s} advisor {record['median_ms']:.4f} ms  plain {plain:.4f} ms  "
            f"ratio {record['median_ms'] / plain:.3f}",
            flush=True,
        )
    args.out.mkdir(parents=True, exist_ok=True)
    path = dated(args.out, "trial_vs_plain", utc_stamp(), "json")
    path.write_text(json.dumps(rows, indent=2))
    lines = [
        "| config | shape | advisor median ms | plain median ms | ratio | cold compile s "
        "| kernels/call | launches/call |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['config']} | {r['shape']} | {r['advisor_median_ms']:.4f} | "
            f"{r['plain_median_ms']:.4f} | {r['ratio']:.3f} | {r['cold_compile_s']:.1f} | "
            f"{r['kernels_per_call']} | {r['launches_per_call']} |"
        )
    path.with_suffix(".md").write_text("\n".join(lines) + "\n")
    worst = max(abs(r["ratio"] - 1) for r in rows) if rows else None
    print(f"{len(rows)} configs; worst |ratio - 1| = {worst:.3f}" if rows else "no trials")


if __name__ == "__main__":
    main()
