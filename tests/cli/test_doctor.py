"""`advisor doctor --db URL`: connectivity, schema revision and clock skew, on both backends."""

from __future__ import annotations

import json
import subprocess
import sys


def test_doctor_checks_database_revision_and_clock(db_url: str) -> None:
    done = subprocess.run([sys.executable, "-m", "advisor", "doctor", "--db", db_url, "--json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["database"]["ok"] and "schema revision" in checks["database"]["detail"]
    assert checks["clock"]["ok"]
    assert report["fingerprint"]["fingerprint_hash"]


def test_doctor_reports_an_unreachable_database_in_one_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "advisor", "doctor", "--db",
         "postgresql+psycopg://advisor:secret@127.0.0.1:1/nowhere", "--json"],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    report = json.loads(done.stdout)
    database = next(c for c in report["checks"] if c["name"] == "database")
    assert not database["ok"] and "secret" not in done.stdout + done.stderr
    # the device is checked all the same, its CPU named with the ISA torch dispatches to
    cpu, isa = next(c for c in report["checks"] if c["name"] == "CPU"), report["fingerprint"]
    assert isa["cpu_isa"] and f"torch dispatches to {isa['cpu_isa']}" in cpu["detail"]
