"""What the recommendation tests share: trial records on a real fingerprint, the CLI, databases.

Records are hand-built (known answers) but carry this machine's real CPU fingerprint, so that
`advisor recommend` and `advisor.apply` find them as measured here; `other_stack` makes the same
fingerprint with one field changed, hashed as advisor.fingerprint hashes it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from support.records import trial

from advisor.fingerprint import add_hashes

REPO = Path(__file__).resolve().parents[2]
TINY_MLP = REPO / "tests" / "workloads" / "tiny_mlp.py"
# The real file's hash: recommendations say when the workload file changed since its trials.
TINY_WORKLOAD = {"name": "tiny-mlp", "path": str(TINY_MLP),
                 "source_sha256": hashlib.sha256(TINY_MLP.read_bytes()).hexdigest(), "info": {}}


def other_stack(fp: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """``fp`` with some fields changed and its hashes recomputed."""
    return add_hashes({**fp, **changes})


def shape(dims: dict[str, int], weight: float, median_ms: float, **fields: Any) -> dict[str, Any]:
    out = {
        "shape": ",".join(f"{k}={v}" for k, v in dims.items()), "dims": dims, "weight": weight,
        "median_ms": median_ms, "mean_ms": median_ms, "min_ms": median_ms * 0.9,
        "max_ms": median_ms * 2, "p90_ms": median_ms * 1.1, "p99_ms": median_ms * 1.3,
        "stdev_ms": 0.01, "iqr_ms": 0.01, "n_samples": 30, "noisy": False,
        "throughput_per_s": 1000.0 / median_ms, "warmup_iters": 5,
    }  # fmt: skip
    out.update(fields)
    return out


def record(
    fp: dict[str, Any],
    mode: str,
    dtype: str = "fp32",
    median_ms: float = 1.0,
    *,
    ci: tuple[float, float] | None = None,
    workload: dict[str, Any] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """A stored-looking ok, passed trial of one config on fingerprint ``fp``, every field a
    stored trial has filled (`records.trial`)."""
    stored: dict[str, Any] = {
        "cold_compile_s": 12.0, "trial_uuid": str(uuid.uuid4()), "device": "cpu",
        "fingerprint": fp, "workload": workload or TINY_WORKLOAD,
        "started_at": "2026-10-03T10:00:00+00:00", "method": "perf_counter", "warmup_iters": 5,
        "shapes": [shape({"batch": 16}, 1.0, median_ms)], "p99_ms": median_ms * 1.3,
        "mean_ms": median_ms, "noisy": False, "graph_count": 0 if mode == "eager" else 1,
        "correct": True, "peak_mem_bytes": 300 * 2**20, "max_abs_err": 1e-6,
    }  # fmt: skip
    stored.update(fields)
    return trial(mode, dtype, median_ms, ci=ci, **stored)


def advisor_command() -> list[str]:
    script = Path(sys.executable).with_name("advisor")
    if script.exists():
        return [str(script)]
    found = shutil.which("advisor")
    return [found] if found else [sys.executable, "-m", "advisor"]


def advisor(*args: str | Path, cwd: Path, timeout: float = 300,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `advisor ARGS` to completion; stdout and stderr captured as text."""
    full_env = dict(os.environ)
    full_env.pop("ADVISOR_DB_URL", None)
    full_env.pop("ADVISOR_FINGERPRINT_OVERRIDES", None)
    full_env["COLUMNS"] = "200"
    full_env.update(env or {})
    return subprocess.run(
        [*advisor_command(), *map(str, args)], cwd=cwd, env=full_env, capture_output=True,
        text=True, timeout=timeout, check=False,
    )  # fmt: skip


def json_out(done: subprocess.CompletedProcess[str]) -> Any:
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError as e:
        raise AssertionError(f"stdout is not JSON ({e}):\n{done.stdout}\n--- {done.stderr}") from e
