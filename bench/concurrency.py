"""Concurrent first use: N real `advisor sweep` processes started together on a NEW database.

    nice -n 19 python bench/concurrency.py                       # SQLite; PostgreSQL too when
    nice -n 19 python bench/concurrency.py --pg postgresql+psycopg://postgres@127.0.0.1/test

For each backend and each N in --counts (default 8 and 16): a new database (a SQLite file in a
temporary directory; a scratch database created on the PostgreSQL server and dropped after),
then N `advisor sweep` processes of the tiniest workload (an eager-only Linear+ReLU, on the
CPU, --trials 2: eager fp32 and eager bf16, no warm start, no re-measurement, no priors)
started at once. Counted afterwards: exit codes, processes whose stderr holds a traceback,
stored trials (expected 2 per sweep), sweep rows per status (expected every one finished) and
Optuna studies and their trials per state. Raw results: one file per backend,
OUT/concurrency_<backend>_<UTC timestamp>.json (``--out``, default bench/results; never
overwritten).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

RESULTS = Path(__file__).resolve().parent / "results"
TRIALS = 2
SWEEP_TIMEOUT_S = 1800
WORKLOAD = '''
import torch

from advisor import Workload


def build(device, dtype):
    return torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU()).to(device, dtype).eval()


def inputs(shape, device):
    return (torch.randn(shape["batch"], 16, device=device),)


workload = Workload(name="concurrency-tiny", build=build, inputs=inputs,
                    traffic=[({"batch": 4}, 1)], dtypes=("fp32", "bf16"),
                    tolerances={"bf16": (0.1, 0.1)})
'''


def advisor_command() -> list[str]:
    script = Path(sys.executable).with_name("advisor")
    return [str(script)] if script.exists() else [
        sys.executable, "-c", "from advisor.cli.main import main; main()"]


def sweep_command(workload: Path, url: str) -> list[str]:
    return [*advisor_command(), "sweep", str(workload), "--db", url, "--device", "cpu",
            "--modes", "eager", "--dtypes", "fp32,bf16", "--trials", str(TRIALS), "--no-warm",
            "--no-confirm-leaders", "--no-priors", "--timeout", "600", "--json"]


def run_many(n: int, workload: Path, url: str, workdir: Path) -> dict[str, Any]:
    """Start n sweeps at once and wait for them all; what each did, and what was stored."""
    env = dict(os.environ, TORCHINDUCTOR_COMPILE_THREADS="1", COLUMNS="200")
    env.pop("ADVISOR_DB_URL", None)
    started = time.monotonic()
    procs = [subprocess.Popen(sweep_command(workload, url), cwd=workdir, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(n)]
    runs = []
    for proc in procs:
        try:
            out, err = proc.communicate(timeout=SWEEP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        runs.append({"exit_code": proc.returncode, "traceback": "Traceback" in err,
                     "stderr_tail": err.strip().splitlines()[-3:]})
    wall_s = time.monotonic() - started
    return {"n_sweeps": n, "wall_s": round(wall_s, 1), "runs": runs, **counts(url)}


def counts(url: str) -> dict[str, Any]:
    """What the database holds: advisor's trials and sweeps, Optuna's studies and trials."""
    import optuna

    from advisor.db import ResultStore

    with ResultStore.from_url(url, read_only=True) as store:
        trials = store.trials()
        sweeps = store.sweeps()
    storage = optuna.storages.RDBStorage(url)
    studies = optuna.get_all_study_summaries(storage)
    optuna_states: Counter[str] = Counter()
    for s in studies:
        for t in optuna.load_study(study_name=s.study_name, storage=storage).trials:
            optuna_states[t.state.name] += 1
    storage.engine.dispose()
    return {
        "stored_trials": len(trials),
        "trial_statuses": dict(Counter(
            f"{t['status']}:{t['failure_reason']}" if t["failure_reason"] else t["status"]
            for t in trials)),
        "trials_per_sweep": sorted(s["n_trials"] for s in sweeps),
        "sweep_statuses": dict(Counter(s["status"] for s in sweeps)),
        "optuna_studies": len(studies),
        "optuna_trial_states": dict(optuna_states),
    }


def new_pg_database(server: str) -> str:
    name = f"advisor_concurrency_{uuid.uuid4().hex[:8]}"
    admin = create_engine(make_url(server).set(drivername="postgresql+psycopg"),
                          isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return make_url(server).set(database=name).render_as_string(hide_password=False)


def drop_pg_database(server: str, url: str) -> None:
    admin = create_engine(make_url(server).set(drivername="postgresql+psycopg"),
                          isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'DROP DATABASE IF EXISTS "{make_url(url).database}" WITH (FORCE)'))
    admin.dispose()


def bench_backend(backend: str, sizes: list[int], pg_server: str | None) -> dict[str, Any]:
    runs = []
    with tempfile.TemporaryDirectory(prefix="advisor-concurrency-") as tmp:
        workdir = Path(tmp)
        workload = workdir / "concurrency_tiny.py"
        workload.write_text(WORKLOAD)
        for n in sizes:
            if backend == "sqlite":
                url = f"sqlite:///{workdir / f'new-{n}.db'}"
            else:
                assert pg_server is not None
                url = new_pg_database(pg_server)
            try:
                result = run_many(n, workload, url, workdir)
            finally:
                if backend == "postgresql":
                    drop_pg_database(pg_server or "", url)
            result["expected_trials"] = n * TRIALS
            result["all_stored"] = result["stored_trials"] == n * TRIALS
            runs.append(result)
            print(f"{backend}: {n} sweeps: {result['stored_trials']}/{n * TRIALS} trials, "
                  f"sweeps {result['sweep_statuses']}, exit codes "
                  f"{dict(Counter(r['exit_code'] for r in result['runs']))}, "
                  f"{sum(r['traceback'] for r in result['runs'])} tracebacks, "
                  f"{result['wall_s']} s", flush=True)
    return {"backend": backend, "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="8,16", help="Concurrent sweeps per run.")
    parser.add_argument("--pg", default=os.environ.get("ADVISOR_TEST_PG_URL"),
                        help="A PostgreSQL server URL (a scratch database is created on it).")
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--out", type=Path, default=RESULTS, help="Results folder.")
    args = parser.parse_args()
    sizes = [int(n) for n in args.counts.split(",")]
    args.out.mkdir(parents=True, exist_ok=True)
    for backend in args.backends.split(","):
        if backend == "postgresql" and not args.pg:
            print("postgresql: skipped (no --pg or ADVISOR_TEST_PG_URL)")
            continue
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        result = bench_backend(backend, sizes, args.pg)
        result |= {"machine": {"host": platform.node(), "cpus": os.cpu_count(),
                               "python": platform.python_version(),
                               "load_1m_at_end": os.getloadavg()[0]},
                   "workload": "eager-only Linear(16,16)+ReLU, batch 4, cpu",
                   "sweep_flags": sweep_command(Path("WORKLOAD"), "URL")[1:],
                   "finished_at": datetime.now(UTC).isoformat()}
        path = args.out / f"concurrency_{backend}_{stamp}.json"
        path.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
