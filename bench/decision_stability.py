"""Does the main job's answer hold? `advisor sweep workloads/reranker.py` run several times on a
quiet host, beside spinning processes and beside torch processes, each run on a fresh database:
how many runs said decided, and whether every decided run named the same config (or one of the
equivalents its answer stated). Target: decided runs never disagree, and a busy host says so
instead of deciding.

    python bench/decision_stability.py                       # 5 runs each: quiet, spin, torch
    python bench/decision_stability.py --runs 3 --conditions quiet --device cuda

The neighbours of a busy condition start before the run and are killed when it ends (each also
ends by itself after ``--timeout`` seconds): ``spin``, two Python processes spinning in a loop;
``torch``, two torch processes running matmuls on their default intra-op threads. Writes
``OUT/decision_stability_<device>_<UTC>.md`` and ``.json`` (every run's decision, pick, coverage,
wall, load and the host figures its trials stored).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run as a script: bench/ is a package of the repository

from bench.common import RESULTS, dated, host_facts, load_span, utc_stamp  # noqa: E402

AGREEING = ("decided", "tie", "equivalent")
NEIGHBOURS = {
    "quiet": None,
    "spin": "import time\nend = time.time() + {limit}\nwhile time.time() < end:\n    pass\n",
    "torch": ("import time, torch\na = torch.randn(512, 512)\nend = time.time() + {limit}\n"
              "while time.time() < end:\n    a @ a\n"),
}


def run_once(workload: Path, device: str, condition: str, timeout_s: float,
             extra: list[str]) -> dict[str, Any]:
    """One run of the main job on a fresh database, beside the condition's neighbours."""
    code = NEIGHBOUR_CODE(condition, timeout_s)
    neighbours = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(2)] if code else []
    load_before = os.getloadavg()[0]
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="stability-") as tmp:
        url = f"sqlite:///{tmp}/run.db"
        command = [sys.executable, "-m", "advisor", "sweep", str(workload), "--db", url,
                   "--device", device, "--json", *extra]
        try:
            done = subprocess.run(command, cwd=tmp, capture_output=True, text=True,
                                  timeout=timeout_s, check=False)
            out, err, code_ = done.stdout, done.stderr, done.returncode
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
            code_ = None
        finally:
            for n in neighbours:
                n.kill()
                n.wait()
    wall = time.monotonic() - start
    row: dict[str, Any] = {"condition": condition, "exit": code_, "wall_s": round(wall, 1),
                           "load_before": round(load_before, 2),
                           "load_after": round(os.getloadavg()[0], 2)}
    document = _last_json(out)
    if document is None:
        row.update(decision="no answer", pick=None, equivalents=[], sentence="",
                   error=(err.strip().splitlines() or ["(no output)"])[-1][:300])
        return row
    rec = document["recommendation"]
    hosts = [t.get("host") or {} for t in document.get("trials", [])]
    row.update(
        decision=rec["decision"], pick=(rec.get("best") or {}).get("label"),
        equivalents=rec.get("undecided") or [], sentence=rec["sentence"],
        unmeasured=rec.get("unmeasured") or [], trials=len(hosts),
        contended_trials=sum(1 for h in hosts if h.get("contended")),
        others_cores_max=max((h.get("others_cores", 0.0) for h in hosts), default=None),
        threads=sorted({h["threads"] for h in hosts if "threads" in h}),
        # why a pick is or is not paired: what stopped the trials, what the budget left out
        # (the pairing, the warm start) and the confirmation the answer used, if any
        stopped_by=document.get("stopped_by"), left_out=document.get("left_out") or [],
        paired=(rec.get("confirmation") or {}).get("used"),
        timeline=[_trial_line(t) for t in document.get("trials", []) if isinstance(t, dict)],
    )
    return row


def _trial_line(t: dict[str, Any]) -> dict[str, Any]:
    """One stored trial, in the JSON only: what was measured when, and what it waited for (a
    baseline missing from a budgeted answer shows here: queued, stopped, or waiting its turn)."""
    config = t.get("config") or {}
    return {"mode": config.get("mode"), "dtype": config.get("dtype"), "status": t.get("status"),
            "median_ms": t.get("median_ms"), "cold_compile_s": t.get("cold_compile_s"),
            "device_wait_s": t.get("device_wait_s"), "started_at": t.get("started_at"),
            "finished_at": t.get("finished_at"), "error": str(t.get("error") or "")[:160]}


def NEIGHBOUR_CODE(condition: str, limit_s: float) -> str | None:  # noqa: N802 - a table's read
    template = NEIGHBOURS[condition]
    return None if template is None else template.format(limit=int(limit_s))


def _last_json(text: str) -> dict[str, Any] | None:
    for line in reversed(text.strip().splitlines()):
        try:
            found = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(found, dict) and "recommendation" in found:
            return found
    return None


def agreement(rows: list[dict[str, Any]]) -> tuple[bool, list[str]]:
    """Whether every decided run named the same config or one of the equivalents the others
    stated; the picks of the decided runs."""
    decided = [r for r in rows if r["decision"] in AGREEING and r["pick"]]
    picks = [r["pick"] for r in decided]
    agree = all(a["pick"] == b["pick"] or a["pick"] in b["equivalents"]
                or b["pick"] in a["equivalents"] for a in decided for b in decided)
    return agree, picks


def report(rows: list[dict[str, Any]], args: argparse.Namespace, host: dict[str, Any],
           stamp: str) -> str:
    lines = [f"# Decision stability: the main job, {args.runs} run(s) per condition",
             "",
             f"- when: {stamp}; host: {host['hostname']}, {host['cores']} cores; "
             f"GPUs: {_gpus(host)}; "
             f"torch {host['torch']}, triton {host['triton']}, Python {host['python']}",
             f"- command: `advisor sweep {args.workload} --device {args.device} --json"
             f"{' ' + ' '.join(args.extra) if args.extra else ''}` on a fresh SQLite database "
             f"per run; commit {args.commit or 'not given'}",
             f"- {load_span(host)}",
             "", "| # | condition | decision | pick | equivalents | paired | stopped by; left out "
             "| busy trials | others' cores (max) | threads | wall | load before/after | exit |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for i, r in enumerate(rows, 1):
        lines.append(
            f"| {i} | {r['condition']} | {r['decision']} | {r['pick'] or '-'} | "
            f"{', '.join(r['equivalents']) or '-'} | "
            f"{_yes_no(r.get('paired'))} | {r.get('stopped_by') or '-'}; "
            f"{', '.join(r.get('left_out') or []) or '-'} | "
            f"{r.get('contended_trials', '-')} of {r.get('trials', '-')} | "
            f"{r.get('others_cores_max', '-')} | {r.get('threads', '-')} | {r['wall_s']} s | "
            f"{r['load_before']} / {r['load_after']} | {r['exit']} |")
    lines += ["", "## Per condition", ""]
    for condition in dict.fromkeys(r["condition"] for r in rows):
        mine = [r for r in rows if r["condition"] == condition]
        agree, picks = agreement(mine)
        decided = sum(1 for r in mine if r["decision"] in AGREEING)
        lines.append(f"- {condition}: {decided} of {len(mine)} decided (decided, tie or "
                     f"equivalent); picks {picks or 'none'}; "
                     f"{'agree' if agree else 'DISAGREE'}")
    agree, picks = agreement(rows)
    lines += ["", f"All conditions together: the decided runs "
              f"{'agree' if agree else 'DISAGREE'} ({picks or 'none decided'}).", "",
              "## Sentences", ""]
    lines += [f"{i}. [{r['condition']}] {r['sentence'] or r.get('error', '')}"
              for i, r in enumerate(rows, 1)]
    return "\n".join(lines) + "\n"


def _yes_no(paired: bool | None) -> str:
    """Whether the answer used a paired re-measurement ("-": not known, an older run's row)."""
    return "-" if paired is None else ("yes" if paired else "no")


def _gpus(host: dict[str, Any]) -> str:
    return ", ".join(f"{g['name']} (driver {g['driver']})" for g in host["gpus"]) or "none"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--conditions", default="quiet,spin,torch")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--workload", default="workloads/reranker.py")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    parser.add_argument("--commit", default=os.environ.get("GIT_COMMIT", ""))
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("extra", nargs="*", help="more `advisor sweep` flags, after --")
    args = parser.parse_args()
    conditions = [c for c in args.conditions.split(",") if c]
    unknown = [c for c in conditions if c not in NEIGHBOURS]
    if unknown or args.runs < 1:
        parser.error(f"conditions are {', '.join(NEIGHBOURS)}; runs >= 1 (got {unknown})")
    host, stamp = host_facts(), utc_stamp()
    workload = (REPO / args.workload).resolve()
    rows = []
    try:
        for condition in conditions:
            for i in range(args.runs):
                print(f"[{condition} {i + 1}/{args.runs}] running ...", flush=True)
                rows.append(run_once(workload, args.device, condition, args.timeout,
                                     args.extra))
                r = rows[-1]
                print(f"  {r['decision']}: {r['pick']} ({r['wall_s']} s)", flush=True)
    except KeyboardInterrupt:
        print("stopped: the runs so far are written", flush=True)
    text = report(rows, args, host, stamp)
    print(text)
    stem = f"decision_stability_{args.device.split(':')[0]}"
    args.out.mkdir(parents=True, exist_ok=True)
    dated(args.out, stem, stamp, "md").write_text(text)
    dated(args.out, stem, stamp, "json").write_text(json.dumps(
        {"host": host, "args": {k: str(v) for k, v in vars(args).items()}, "runs": rows},
        indent=1))
    print(f"written {dated(args.out, stem, stamp, 'md')}")


if __name__ == "__main__":
    main()
