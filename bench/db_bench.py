"""Results-database benchmark: write 100,000 trials, time the dashboard's queries.

    python bench/db_bench.py                       # SQLite, plus PostgreSQL if a URL is known
    python bench/db_bench.py --pg postgresql+psycopg://postgres@127.0.0.1:5432/test

Writes 100,000 trial records (20 workloads x 50 devices, one sweep of 100 trials each, two
traffic shapes per trial, about 8% failed) through `ResultStore.add_trials`, into a fresh SQLite
file and into a scratch database created on the PostgreSQL server (dropped afterwards). Then
times each dashboard query several times and reports the median; the target is 200 ms each.
Results: bench/results/db_bench_<UTC>.json and .md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from advisor.config import DTYPES, MODES, CompileConfig  # noqa: E402
from advisor.db import ResultStore  # noqa: E402
from advisor.records import FAILURE_REASONS, empty_record  # noqa: E402
from bench.common import dated, utc_stamp  # noqa: E402

TARGET_MS = 200.0
RESULTS = Path(__file__).parent / "results"
GPUS = ("NVIDIA H200", "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "NVIDIA L4", "NVIDIA L40S")


def configs(n: int) -> list[CompileConfig]:
    """n configs: eager fp32 first, then the space in a fixed shuffled order."""
    space = [
        CompileConfig(mode=m, dtype=d, fullgraph=f, dynamic=y)
        for m in MODES[1:]
        for d in DTYPES
        for f in (False, True)
        for y in ("auto", "true", "false")
    ]
    random.Random(1).shuffle(space)
    eager = [CompileConfig(mode="eager", dtype=d) for d in DTYPES]
    return (eager + space)[:n]


def fingerprint(i: int) -> dict[str, Any]:
    gpu = GPUS[i % len(GPUS)]
    return {
        "device_hash": f"dev{i:04d}".ljust(16, "0"),
        "env_hash": f"env{i:04d}".ljust(16, "0"),
        "fingerprint_hash": f"fp{i:04d}".ljust(16, "0"),
        "device_kind": "cuda",
        "device_name": gpu,
        "device_uuid": f"GPU-{uuid.UUID(int=i)}",
        "compute_capability": "9.0" if "H" in gpu else "8.0",
        "device_memory_bytes": 80 * 2**30,
        "sm_count": 132,
        "cpu_model": "AMD EPYC 9654",
        "cpu_cores": 96,
        "host_memory_bytes": 1024 * 2**30,
        "driver_version": "570.86.15",
        "cuda_driver_version": "12.8",
        "power_limit_w": 700.0,
        "sm_clock_max_mhz": 1980,
        "torch_version": f"2.{9 + i % 3}.0",
        "triton_version": "3.5.0",
        "cuda_runtime_version": "12.8",
        "cudnn_version": "91000",
        "python_version": "3.11.7",
        "os": "Linux-6.8",
        "advisor_version": "0.1.0",
        "hostname": f"gpu-node-{i:03d}",
    }


def workload(j: int) -> dict[str, Any]:
    return {
        "name": f"workload-{j:02d}",
        "path": f"/srv/workloads/workload_{j:02d}.py",
        "source_sha256": f"{j:064x}",
        "info": {"model": f"org/model-{j}", "params": 22_700_000 + j},
    }


def record(
    rng: random.Random, wl: dict, fp: dict, config: CompileConfig, t: datetime
) -> dict[str, Any]:
    rec = empty_record()
    failed = config.compiled and rng.random() < 0.08
    base = 1.0 + rng.random() * 10
    rec.update(
        trial_uuid=str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        status="failed" if failed else "ok",
        started_at=t.isoformat(),
        finished_at=(t + timedelta(seconds=30)).isoformat(),
        workload=wl,
        config=config.to_dict(),
        config_key=config.key,
        device="cuda",
        fingerprint=fp,
    )
    if failed:
        reason = rng.choice(sorted(FAILURE_REASONS))
        rec.update(failure_reason=reason, error_tail=f"{reason}: traceback ...\n" * 3)
        return rec
    shapes = [shape(rng, "batch=50,seq=128", 0.7, base), shape(rng, "batch=100,seq=256", 0.3, base)]
    rec.update(
        method="cuda_events", warmup_iters=10, shapes=shapes, noisy=False,
        median_ms=base * 1.3, p90_ms=base * 1.4, p99_ms=base * 1.6, mean_ms=base * 1.32,
        cold_compile_s=rng.random() * 60, warm_compile_s=rng.random() * 5,
        eager_first_call_s=0.25, peak_mem_bytes=rng.randrange(2**28, 2**33),
        graph_count=1, graph_break_count=0, recompiles=0, generated_kernel_count=40,
        kernels_per_call=68, launches_per_call=2, eager_kernels_per_call=119,
        eager_launches_per_call=119, kernel_names=[f"triton_poi_fused_{k}" for k in range(12)],
        eager_kernel_names=[f"aten::op_{k}" for k in range(20)],
        max_abs_err=1e-3, max_rel_err=1e-2, atol=5e-2, rtol=5e-2, correct=True, passed=True,
        telemetry={"sm_clock_mhz": 1980, "power_draw_w": 420.5, "temperature_c": 55},
    )  # fmt: skip
    return rec


def shape(rng: random.Random, name: str, weight: float, base: float) -> dict[str, Any]:
    median = base * (1 + rng.random())
    return {
        "shape": name, "dims": {k: int(v) for k, v in (p.split("=") for p in name.split(","))},
        "weight": weight,
        "median_ms": median, "mean_ms": median * 1.01, "min_ms": median * 0.95,
        "max_ms": median * 1.3, "p90_ms": median * 1.1, "p99_ms": median * 1.2,
        "stdev_ms": median * 0.02, "iqr_ms": median * 0.03, "n_samples": 200,
        "noisy": False, "throughput_per_s": 1000 / median, "warmup_iters": 10,
    }  # fmt: skip


def fill(store: ResultStore, n_trials: int, n_devices: int, n_workloads: int) -> dict[str, Any]:
    """Write the data set; returns the write timing and a sweep id to query."""
    rng = random.Random(0)
    per_sweep = n_trials // (n_devices * n_workloads)
    space = configs(per_sweep)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    t0 = time.perf_counter()
    sweep_ids = []
    for j in range(n_workloads):
        wl = workload(j)
        for i in range(n_devices):
            fp = fingerprint(i)
            sweep_id = store.create_sweep(wl, fp, {"budget": per_sweep}, f"s-{j}-{i}", per_sweep)
            when = start + timedelta(hours=len(sweep_ids))
            batch = [
                record(rng, wl, fp, config, when + timedelta(minutes=k))
                for k, config in enumerate(space)
            ]
            store.add_trials(batch, sweep_id)
            store.finish_sweep(sweep_id, "finished")
            sweep_ids.append(sweep_id)
    seconds = time.perf_counter() - t0
    total = per_sweep * len(sweep_ids)
    return {
        "trials": total,
        "sweeps": len(sweep_ids),
        "write_s": round(seconds, 2),
        "trials_per_s": round(total / seconds),
        "sweep_id": sweep_ids[len(sweep_ids) // 2],
    }


def timed(fn: Callable[[], list], repeats: int) -> dict[str, Any]:
    fn()  # warm: connection pool, statement caches
    times, rows = [], 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        rows = len(fn())
        times.append((time.perf_counter() - t0) * 1000)
    median = statistics.median(times)
    return {
        "median_ms": round(median, 2),
        "min_ms": round(min(times), 2),
        "max_ms": round(max(times), 2),
        "runs": repeats,
        "rows": rows,
        "under_target": median < TARGET_MS,
    }


# The dashboard's queries (the target applies to these) and, for information, two heavier reads.
DASHBOARD = (
    "best config per workload x device (all groups)",
    "best config per device, one workload",
    "all trials of one sweep (full records)",
    "one workload across devices (device x config table)",
)


def queries(store: ResultStore, sweep_id: int, repeats: int) -> dict[str, Any]:
    wl = "workload-07"
    device = fingerprint(3)["device_hash"]
    plan: dict[str, Callable[[], list]] = {
        DASHBOARD[0]: store.best_per_workload_device,
        DASHBOARD[1]: lambda: store.best_per_workload_device(wl),
        DASHBOARD[2]: lambda: store.trials(sweep_id=sweep_id),
        DASHBOARD[3]: lambda: store.device_comparison(wl),
        "recent sweeps with counts (50)": lambda: store.sweeps(limit=50),
        "one device's most recent trials (100 full records)": lambda: store.trials(
            device_hash=device, limit=100
        ),
        "one workload across devices (all its full records)": lambda: store.trials(workload=wl),
    }
    return {name: timed(fn, repeats) for name, fn in plan.items()}


def run(url: str, args: argparse.Namespace) -> dict[str, Any]:
    with ResultStore.from_url(url) as store:
        print(f"writing {args.trials} trials into {store.masked_url} ...", file=sys.stderr)
        written = fill(store, args.trials, args.devices, args.workloads)
        print(f"  {written['write_s']} s; timing queries ...", file=sys.stderr)
        timings = queries(store, written["sweep_id"], args.repeats)
        store.analyze()
        analyzed = queries(store, written["sweep_id"], args.repeats)
        return {"url": store.masked_url, **written, "queries": timings, "analyzed": analyzed}


@contextmanager
def scratch_pg(server_url: str) -> Iterator[str]:
    """A fresh database on the server of ``server_url``, dropped afterwards."""
    server = make_url(server_url).set(drivername="postgresql+psycopg")
    name = f"advisor_bench_{os.getpid()}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield server.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def machine() -> dict[str, Any]:
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cores": os.cpu_count(),
        "load_average_1m_at_end": round(os.getloadavg()[0], 2),
        "sqlalchemy": sqlalchemy.__version__,
        "sqlite": sqlite3.sqlite_version,
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def markdown(report: dict[str, Any]) -> str:
    p, m = report["params"], report["machine"]
    per_sweep = p["trials"] // (p["workloads"] * p["devices"])
    backends = report["backends"]
    lines = [
        "# Results database benchmark",
        "",
        f"{p['trials']:,} trials ({p['workloads']} workloads x {p['devices']} devices, one sweep "
        f"of {per_sweep} trials each, two shapes per trial) written through "
        f"`ResultStore.add_trials`. Each query: median of {p['repeats']} runs after a warm-up "
        f"run, in ms (rows returned). Target: each dashboard query under {TARGET_MS:.0f} ms.",
        "",
        f"Machine: {m['cores']} cores, {m['platform']}, Python {m['python']}, SQLAlchemy "
        f"{m['sqlalchemy']}, SQLite {m['sqlite']}; 1-minute load average at the end: "
        f"{m['load_average_1m_at_end']}.",
        "",
        "Each backend is timed as written (`fresh`: on a PostgreSQL whose autovacuum is off, as",
        "on this machine, the planner has no statistics yet) and again after",
        "`ResultStore.analyze()` (`analyzed`, what autovacuum or a large `advisor import` gives).",
        "",
        "| query | dashboard | "
        + " | ".join(f"{b} {when}" for b in backends for when in ("fresh", "analyzed"))
        + " |",
        "| --- | --- |" + " ---: |" * (2 * len(backends)),
    ]
    for name in next(iter(backends.values()))["queries"]:
        cells = [
            f"{backend[when][name]['median_ms']:.1f} ({backend[when][name]['rows']:,})"
            for backend in backends.values()
            for when in ("queries", "analyzed")
        ]
        dashboard = "yes" if name in DASHBOARD else ""
        lines.append(f"| {name} | {dashboard} | " + " | ".join(cells) + " |")
    writes = [f"{b} {v['write_s']} s ({v['trials_per_s']:,} trials/s)" for b, v in backends.items()]
    lines += ["", "Writing the data set: " + "; ".join(writes) + ".", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100_000)
    parser.add_argument("--devices", type=int, default=50)
    parser.add_argument("--workloads", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument(
        "--pg",
        default=os.environ.get("ADVISOR_BENCH_PG_URL") or os.environ.get("ADVISOR_TEST_PG_URL"),
        help="a PostgreSQL server URL; a scratch database is created there and dropped",
    )
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    params = {k: getattr(args, k) for k in ("trials", "devices", "workloads", "repeats")}
    report: dict[str, Any] = {"params": params, "target_ms": TARGET_MS, "backends": {}}
    with tempfile.TemporaryDirectory() as tmp:
        report["backends"]["sqlite"] = run(f"sqlite:///{tmp}/bench.db", args)
    if args.pg:
        with scratch_pg(args.pg) as url:
            report["backends"]["postgresql"] = run(url, args)
    else:
        print("no PostgreSQL URL (--pg, $ADVISOR_TEST_PG_URL): SQLite only", file=sys.stderr)
    report["machine"] = machine()
    args.out.mkdir(parents=True, exist_ok=True)
    path = dated(args.out, "db_bench", utc_stamp(), "json")
    path.write_text(json.dumps(report, indent=2) + "\n")
    path.with_suffix(".md").write_text(markdown(report))
    print(markdown(report))
    print(f"wrote {path} and .md")


if __name__ == "__main__":
    main()
