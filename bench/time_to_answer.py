"""Time to an answer: how soon `advisor sweep`, run as a user runs it, has a first result, a first
compiled result and a pick within 3% of its final one, and how long the whole sweep takes.

    python bench/time_to_answer.py --workload workloads/reranker.py --deadline-s 480
    python bench/time_to_answer.py --workload workloads/reranker.py --traffic-only \\
        --shapes static,dynamic,buckets:pow2,buckets:fitted-4 --requests 300 --deadline-s 480
    python bench/time_to_answer.py --workload workloads/pointwise.py \\
        --sweep-args "--modes eager,default --dtypes fp32"                 # a CPU proof (1 min)

Each ``--workload`` file (repeatable; one after another) is swept by a fresh process,
``python -m advisor sweep FILE --db sqlite:///NEW.db`` plus ``--sweep-args`` and nothing else: the
sweep's default flags, a new database file, what a user's first sweep is. With ``--traffic CSV``
or ``--shapes S`` the file is swept again, into another new database, with ``--traffic CSV
[--shapes S]``; without ``--traffic`` the log is generated: ``--requests`` long-tail requests (each
dim uniform over the workload's declared range, nearly every request a new shape:
``bench/shapes_bench.py``'s ``longtail`` trace), written beside the results.
``--traffic-only`` skips the plain sweeps. From the stored trials, in seconds from the sweep
process's start (the wall clock just before it was started; trials store ISO start and finish
times):

    first result      the first stored ok trial (one with a figure) of any config
    first compiled    the first stored ok trial of a compiled config (mode not eager); the
                      first compiled trial to finish with any status (pruned: proven slower
                      than the best so far; failed) is reported beside it
    within 3%         the finished trials replayed in finished_at order: at each prefix the pick
                      that evidence supports (`advisor.recommendation.decide.recommend`, the one
                      function every surface decides with); the first moment that pick's figure
                      is within 3% of the final pick's (``advisor.recommend`` on the finished
                      store, the sweep's confirmation of its leaders included; when that stored
                      confirmation decides, its creation is a step of its own). Figures: paired
                      when the confirmation measured both configs (the final recommendation's
                      ranked entries with confirmed=True), else each config's pooled trial
                      medians over the whole sweep; each row says which decided it. "settled":
                      from when on every pick stayed within 3%.
    wall, rc          the sweep process's wall time and exit code

Targets: the first compiled result in <= 90 s; a pick within 3% in <= 25% of the full sweep's
wall; a traffic sweep done in <= 10 min. Each row says hit or miss. A sweep past
``--deadline-s`` is stopped (SIGINT, its finished trials are kept; SIGKILL ``--grace-s`` later),
counted as a miss, and reported with what it stored; so is one stopped by Ctrl-C (or
``bench/run_bench.sh``'s time limit), after which no further sweep starts.

Results: ``OUT/time_to_answer_<device>_<UTC>.json`` and ``.md`` (one run, one pair of new files,
rewritten after each sweep, never an earlier run's), with the host's facts: hostname, cores, load
average at the start and end, GPU name and driver, torch and triton versions, and each sweep's
stored fingerprint. Bad arguments: one line on stderr, exit 2, nothing written.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.common import (  # noqa: E402
    RESULTS,
    dated,
    gpus,
    host_facts,
    repo_env,
    stored_time_s,
    utc_stamp,
)

if TYPE_CHECKING:
    from advisor.recommendation import Recommendation

WITHIN = 0.03
TARGET_COMPILED_S = 90.0
TARGET_SHARE = 0.25
TARGET_TRAFFIC_S = 600.0
FINISHED_RCS = (0, 1)  # `advisor sweep` ran to its end (1: some trial failed or none passed)
OWN_FLAGS = ("--db", "--traffic", "--shapes")  # the bench sets them; not in --sweep-args


def fail(message: str) -> NoReturn:
    print(f"time_to_answer: {message}", file=sys.stderr)
    raise SystemExit(2)


# --- pure: trials, picks, targets -------------------------------------------------------------


def _label(record: Mapping[str, Any]) -> str:
    from advisor.config import CompileConfig

    return CompileConfig.from_dict(record["config"]).label


def finished_in_order(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The records that finished, in finished_at order (the store's order among equal times)."""
    done = [r for r in records if r.get("finished_at")]
    return sorted(done, key=lambda r: stored_time_s(r["finished_at"]))


def first_result(
    records: Sequence[Mapping[str, Any]],
    started_s: float,
    compiled: bool = False,
    any_status: bool = False,
) -> dict[str, Any] | None:
    """The first stored ok trial (one with a figure; of a compiled config with ``compiled``;
    with ``any_status`` a failed or pruned one too): seconds from ``started_s`` to its finish,
    its config, its status, whether it passed. Pure."""
    for r in finished_in_order(records):
        if not any_status and (r["status"] != "ok" or r.get("median_ms") is None):
            continue
        if compiled and r["config"]["mode"] == "eager":
            continue
        return {
            "t_s": round(stored_time_s(r["finished_at"]) - started_s, 2),
            "config": _label(r),
            "status": r["status"],
            "passed": bool(r.get("passed")),
        }
    return None


def prefix_picks(
    workload: str,
    records: Sequence[Mapping[str, Any]],
    fingerprint_hash: str | None,
    started_s: float,
    calls_per_process: int | None = None,
) -> list[dict[str, Any]]:
    """After each finished trial, the pick the trials finished by then support (no
    confirmation yet: the sweep confirms after its trials). Pure."""
    from advisor.recommendation import recommend
    from advisor.recommendation.answers import pick_label

    done = finished_in_order(records)
    out = []
    for i, r in enumerate(done):
        rec = recommend(
            workload, done[: i + 1], fingerprint_hash, calls_per_process=calls_per_process
        )
        out.append(
            {
                "t_s": round(stored_time_s(r["finished_at"]) - started_s, 2),
                "step": f"trial {_label(r)} ({r['status']})",
                "pick": rec.best.config_key if rec.best else None,
                "pick_label": pick_label(rec),
            }
        )
    return out


def final_key(final: Recommendation) -> str | None:
    """The final pick's config key: the pick, else (no pick: undecided on noise) the leader."""
    chosen = final.best or final.leader
    return chosen.config_key if chosen else None


def ratio_to_final(
    key: str | None, final: Recommendation, medians: Recommendation
) -> tuple[float | None, str]:
    """The figure of config ``key`` over the final pick's, and which figures: "paired" when the
    final recommendation's confirmation measured both (confirmed ranked entries), else
    "medians" (``medians``: the whole sweep's trials, pooled per config, unconfirmed). Pure."""
    target = final_key(final)
    if key is None or target is None:
        return None, "no pick"
    paired = {r.config_key: r.median_ms for r in final.ranked if r.confirmed}
    if key in paired and target in paired:
        return paired[key] / paired[target], "paired"
    pooled = {r.config_key: r.median_ms for r in medians.ranked}
    if key in pooled and target in pooled:
        return pooled[key] / pooled[target], "medians"
    return None, "no figure"


def score_picks(
    picks: list[dict[str, Any]], final: Recommendation, medians: Recommendation
) -> None:
    """Adds each pick's ratio to the final pick and the figures it was judged on. Pure."""
    for p in picks:
        ratio, basis = ratio_to_final(p["pick"], final, medians)
        p["ratio"] = None if ratio is None else round(ratio, 4)
        p["basis"] = basis


def within_times(picks: Sequence[Mapping[str, Any]], within: float = WITHIN) -> dict[str, Any]:
    """The first pick within ``within`` of the final (its time and figures), and the time from
    which every later pick stayed within (None when the last one is not). Pure."""

    def ok(p: Mapping[str, Any]) -> bool:
        return p.get("ratio") is not None and p["ratio"] <= 1 + within

    first = next((p for p in picks if ok(p)), None)
    settled = None
    for p in reversed(picks):
        if not ok(p):
            break
        settled = p
    return {
        "within_s": first["t_s"] if first else None,
        "within_basis": first["basis"] if first else None,
        "within_pick": first["pick_label"] if first else None,
        "settled_s": settled["t_s"] if settled else None,
    }


def targets(row: Mapping[str, Any]) -> dict[str, str]:
    """Hit or miss per target. A sweep that did not run to its end (stopped at the deadline or
    interrupted, or exited with another code) misses the whole-sweep targets. Pure."""
    done = row.get("stopped") is None and row.get("rc") in FINISHED_RCS
    out: dict[str, str] = {}
    compiled = row.get("first_compiled")
    if not row.get("compiled_in_space", True):
        out["first_compiled"] = "n/a: no compiled config in the space"
    else:
        hit = compiled is not None and compiled["t_s"] <= TARGET_COMPILED_S
        out["first_compiled"] = "hit" if hit else "miss"
    within, wall = row.get("within_s"), row.get("wall_s")
    hit = done and within is not None and wall is not None and within <= TARGET_SHARE * wall
    out["within_3pct"] = "hit" if hit else "miss"
    if row.get("kind") == "traffic":
        hit = done and wall is not None and wall <= TARGET_TRAFFIC_S
        out["traffic_sweep"] = "hit" if hit else "miss"
    return out


def evaluate(
    workload: str,
    records: Sequence[Mapping[str, Any]],
    fingerprint_hash: str | None,
    started_s: float,
    final: Recommendation | None,
    calls_per_process: int | None = None,
    confirmed_at: str | None = None,
) -> dict[str, Any]:
    """Everything a row reports from the stored trials and the final recommendation. Pure."""
    from advisor.recommendation import recommend

    out: dict[str, Any] = {
        "trials": len(records),
        "ok": sum(1 for r in records if r["status"] == "ok"),
        "first_result": first_result(records, started_s),
        "first_compiled": first_result(records, started_s, compiled=True),
        # a compiled trial that finished without a figure (pruned: proven slower; failed)
        "first_compiled_trial": first_result(records, started_s, compiled=True, any_status=True),
    }
    if final is None:
        out.update(
            picks=[], within_s=None, within_basis=None, within_pick=None, settled_s=None, final=None
        )
        return out
    medians = recommend(
        workload, finished_in_order(records), fingerprint_hash, calls_per_process=calls_per_process
    )
    picks = prefix_picks(workload, records, fingerprint_hash, started_s, calls_per_process)
    if confirmed_at is not None and final.confirmation and final.confirmation.get("used"):
        picks.append(
            {
                "t_s": round(stored_time_s(confirmed_at) - started_s, 2),
                "step": "confirmation of the leaders (paired)",
                "pick": final_key(final),
                "pick_label": _final_label(final),
            }
        )
    score_picks(picks, final, medians)
    chosen = final.best or final.leader
    out.update(
        picks=picks,
        **within_times(picks),
        final={
            "pick": _final_label(final),
            "decision": final.decision,
            "median_ms": chosen.median_ms if chosen else None,
            "figure": "paired" if chosen and chosen.confirmed else "medians",
            "speedup": chosen.speedup if chosen else None,
        },
    )
    return out


def _final_label(final: Recommendation) -> str:
    if final.best is not None:
        return final.best.label
    leader = final.leader
    return f"{leader.label} (leader; no pick: {final.decision})" if leader else "none"


# --- traffic ----------------------------------------------------------------------------------


def dim_ranges(traffic: Sequence[tuple[Mapping[str, int], float]]) -> dict[str, tuple[int, int]]:
    """Each dim's range over a workload's declared traffic shapes: smallest to largest. Pure."""
    dims = list(traffic[0][0])
    return {d: (min(s[d] for s, _ in traffic), max(s[d] for s, _ in traffic)) for d in dims}


def longtail_log(workload_file: Path, requests: int, seed: int = 0) -> str:
    """A long-tail traffic log (CSV, one row a request) over the workload's declared ranges:
    shapes_bench's ``longtail`` trace."""
    from advisor.workload import load_workload
    from bench.shapes_bench import log_text, make_trace

    wl = load_workload(workload_file).workload
    return log_text(make_trace("longtail", dim_ranges(wl.traffic), requests, seed=seed))


# --- one sweep --------------------------------------------------------------------------------


def sweep_command(
    workload: Path,
    db: Path,
    sweep_args: Sequence[str],
    traffic: Path | None = None,
    shapes: str | None = None,
) -> list[str]:
    cmd = [
        sys.executable,
        "-m",
        "advisor",
        "sweep",
        str(workload),
        "--db",
        f"sqlite:///{db}",
        *sweep_args,
    ]
    if traffic is not None:
        cmd += ["--traffic", str(traffic)]
    if shapes:
        cmd += ["--shapes", shapes]
    return cmd


def run_sweep(cmd: list[str], deadline_s: float | None, grace_s: float) -> dict[str, Any]:
    """The sweep process, stopped at ``deadline_s`` (or Ctrl-C): its start, wall, exit code."""
    env = repo_env()
    started_s, t0, load = time.time(), time.monotonic(), os.getloadavg()
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    stopped = None
    try:
        _, err = proc.communicate(timeout=deadline_s)
    except subprocess.TimeoutExpired:
        stopped = "deadline"
    except KeyboardInterrupt:
        stopped = "interrupted"
    stopped_at_s = round(time.monotonic() - t0, 1) if stopped else None
    if stopped:  # SIGINT: the sweep keeps its finished trials; SIGKILL if it lingers
        os.killpg(proc.pid, signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=grace_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            _, err = proc.communicate()
    return {
        "command": shlex.join(["python", *cmd[1:]]),
        "started_s": started_s,
        "wall_s": round(time.monotonic() - t0, 1),
        "rc": proc.returncode,
        "stopped": stopped,
        "stopped_at_s": stopped_at_s,
        "load_at_start": [round(x, 2) for x in load],
        "load_at_end": [round(x, 2) for x in os.getloadavg()],
        "stderr_tail": (err or "").splitlines()[-6:],
    }


def read_back(db: Path, started_s: float) -> dict[str, Any]:
    """The stored sweep, its trials and the final recommendation, evaluated."""
    import advisor
    from advisor.db.store import ResultStore
    from advisor.errors import AdvisorError

    if not db.exists():
        return {"error": "no database written"}
    url = f"sqlite:///{db}"
    with ResultStore.from_url(url, read_only=True) as store:
        sweeps = store.sweeps()
        if not sweeps:
            return {"error": "no sweep stored"}
        sweep = sweeps[-1]  # a fresh database: its only sweep
        name, fp = sweep["workload"]["name"], sweep["fingerprint_hash"]
        records = store.trials(sweep_id=sweep["id"])
        found = store.confirmations(name, fp, limit=1)
    settings = sweep.get("settings") or {}
    calls = settings.get("calls_per_process")
    try:
        final = advisor.recommend(name, db=url, fingerprint=fp, calls_per_process=calls)
    except AdvisorError as e:
        final = None
        note = f"no final recommendation: {e}"
    else:
        note = ""
    fingerprint: Mapping[str, Any] = next(
        (dict(facts) for r in records if (facts := r.get("fingerprint"))), {}
    )
    row = {
        "workload": name,
        "sweep_status": sweep["status"],
        "note": note,
        "compiled_in_space": any(
            c.get("mode") != "eager" for c in settings.get("space") or [{"mode": "?"}]
        ),
        "fingerprint": {
            k: fingerprint.get(k)
            for k in (
                "device_name",
                "driver_version",
                "cuda_runtime_version",
                "torch_version",
                "triton_version",
                "hostname",
                "fingerprint_hash",
            )
        },
    }
    row.update(
        evaluate(
            name, records, fp, started_s, final, calls, found[0]["created_at"] if found else None
        )
    )
    return row


# --- the run ----------------------------------------------------------------------------------


def plan(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The sweeps to run, in order: per workload its plain sweep, then its traffic sweep."""
    rows = []
    for wl in args.workload:
        if not args.traffic_only:
            rows.append({"file": str(wl), "kind": "plain"})
        if args.traffic or args.shapes:
            rows.append({"file": str(wl), "kind": "traffic"})
    return rows


def run(args: argparse.Namespace) -> dict[str, Any]:
    stamp = utc_stamp()
    device = args.device or ("cuda" if gpus() else "cpu")
    stem = f"time_to_answer_{device}"
    paths = [dated(args.out, stem, stamp, ext) for ext in ("json", "md")]
    if any(p.exists() for p in paths):
        fail(f"{paths[0]} exists: run again (results are never overwritten)")
    args.out.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {
        "bench": "time_to_answer",
        "date": stamp,
        "device": device,
        "host": host_facts(),
        "sweep_args": args.sweep_args,
        "deadline_s": args.deadline_s,
        "note": args.note,
        "targets": {
            "first_compiled_s": TARGET_COMPILED_S,
            "within": WITHIN,
            "within_share_of_wall": TARGET_SHARE,
            "traffic_sweep_s": TARGET_TRAFFIC_S,
        },
        "rows": plan(args),
    }

    def save() -> None:
        report["host"]["load_at_end"] = [round(x, 2) for x in os.getloadavg()]
        paths[0].write_text(json.dumps(report, indent=1, default=str))
        paths[1].write_text(markdown(report))

    save()
    with tempfile.TemporaryDirectory(prefix="time-to-answer-") as tmp:
        dbs = args.keep_dbs or Path(tmp)
        dbs.mkdir(parents=True, exist_ok=True)
        interrupted = False
        for i, row in enumerate(report["rows"]):
            if interrupted:
                row["skipped"] = "not run: the bench was interrupted"
                continue
            wl = Path(row["file"])
            traffic, shapes = None, None
            if row["kind"] == "traffic":
                traffic, shapes = args.traffic, args.shapes
                if traffic is None:
                    traffic = dated(args.out, f"{stem}_{wl.stem}_traffic", stamp, "csv")
                    # the machine it was generated and swept on, in the file itself
                    host = json.dumps(report["host"], default=str)
                    traffic.write_text(f"# host: {host}\n"
                                       + longtail_log(wl, args.requests, args.seed))
                row["traffic"] = str(traffic)
                row["shapes"] = shapes
            db = dbs / f"{stamp}_{i}_{wl.stem}_{row['kind']}.db"
            print(f"time_to_answer: {wl.stem} {row['kind']} sweep ...", file=sys.stderr, flush=True)
            row.update(
                run_sweep(
                    sweep_command(wl, db, args.sweep_args, traffic, shapes),
                    args.deadline_s,
                    args.grace_s,
                )
            )
            if args.keep_dbs:
                row["db"] = str(db)
            try:
                row.update(read_back(db, row["started_s"]))
            except Exception as e:  # the other rows still run and are reported
                row["error"] = f"reading the results failed: {type(e).__name__}: {e}"
            row["targets"] = targets(row)
            interrupted = row["stopped"] == "interrupted"
            print(line(row), file=sys.stderr, flush=True)
            save()
    save()
    print(paths[1].read_text())
    print(f"written: {paths[0]}, {paths[1]}", file=sys.stderr)
    return report


# --- the report -------------------------------------------------------------------------------


def _deadline(seconds: float | None) -> str:
    return "none" if seconds is None else f"{seconds:g} s"


def _t(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def line(row: Mapping[str, Any]) -> str:
    first = row.get("first_compiled") or {}
    return (
        f"time_to_answer: {Path(row['file']).stem} {row['kind']}: rc {row.get('rc')}, "
        f"wall {row.get('wall_s')} s, first compiled {_t(first.get('t_s'))} s, within 3% "
        f"{_t(row.get('within_s'))} s ({row.get('within_basis')}); {row.get('targets')}"
    )


def markdown(report: Mapping[str, Any]) -> str:
    host = report["host"]
    sweep = shlex.join(
        [
            "python",
            "-m",
            "advisor",
            "sweep",
            "FILE",
            "--db",
            "sqlite:///NEW.db",
            *report["sweep_args"],
        ]
    )
    gpu = (
        "; ".join(
            f"{g['name']} (driver {g['driver']}, max SM {g['sm_clock_max']})" for g in host["gpus"]
        )
        or "none"
    )
    lines = [
        f"# time to answer, {report['device']}, {report['date']}",
        "",
        f"host {host['hostname']}, {host['cores']} cores, load average at start "
        f"{host['load_at_start']}, at end {host.get('load_at_end')}; GPU: {gpu}; torch "
        f"{host['torch']}, triton {host['triton']}, python {host['python']}.",
        "",
        f"Each sweep: `{sweep}` (a new database each; traffic sweeps add `--traffic CSV "
        f"--shapes S`); deadline per sweep: {_deadline(report['deadline_s'])}.",
        "",
        f"Targets: first compiled result <= {TARGET_COMPILED_S:.0f} s; a pick within "
        f"{WITHIN:.0%} of the final pick in <= {TARGET_SHARE:.0%} of the sweep's wall; a traffic "
        f"sweep in <= {TARGET_TRAFFIC_S / 60:.0f} min. Times in seconds from the sweep process's "
        'start. "figures": what the within-3% pick was compared on (paired: both measured '
        "side by side in the sweep's confirmation; medians: the trials' pooled medians).",
        "",
    ]
    if report.get("note"):
        lines += [f"Note: {report['note']}", ""]
    lines += [
        "| workload | sweep | rc | wall s | ok / trials | first result s | first compiled s "
        "| <= 90 s | within 3% at s (/ wall) | figures | <= 25% | settled at s | final pick "
        "| traffic <= 10 min |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- | --- | ---: | --- "
        "| --- |",
    ]
    for row in report["rows"]:
        lines.append(_table_row(row))
    lines.append("")
    for row in report["rows"]:
        lines += _details(row)
    return "\n".join(lines)


def _table_row(row: Mapping[str, Any]) -> str:
    name = Path(row["file"]).stem
    kind = row["kind"] + (f" ({row['shapes']})" if row.get("shapes") else "")
    if "rc" not in row:
        return f"| {name} | {kind} | {row.get('skipped', 'not run yet')} |" + " |" * 11
    tg = row.get("targets") or {}
    first, compiled = row.get("first_result") or {}, row.get("first_compiled") or {}
    within = row.get("within_s")
    share = f" ({within / row['wall_s']:.0%})" if within is not None and row["wall_s"] else ""
    stopped = f" (stopped: {row['stopped']} at {row['stopped_at_s']} s)" if row["stopped"] else ""
    final = (row.get("final") or {}).get("pick") or row.get("error") or "-"
    return (
        f"| {name} | {kind} | {row['rc']} | {row['wall_s']}{stopped} | "
        f"{row.get('ok', '-')} / {row.get('trials', '-')} | {_t(first.get('t_s'))} | "
        f"{_t(compiled.get('t_s'))} | {tg.get('first_compiled', '-')} | {_t(within)}{share} | "
        f"{row.get('within_basis') or '-'} | {tg.get('within_3pct', '-')} | "
        f"{_t(row.get('settled_s'))} | {final} | {tg.get('traffic_sweep', 'n/a')} |"
    )


def _details(row: Mapping[str, Any]) -> list[str]:
    if "rc" not in row:
        return []
    head = f"- {Path(row['file']).stem} {row['kind']}"
    out = [f"{head}: `{row['command']}`"]
    if row.get("traffic"):
        out.append(f"  traffic log: {row['traffic']}")
    fp = row.get("fingerprint") or {}
    if fp:
        out.append(
            f"  measured on {fp.get('device_name')} (driver {fp.get('driver_version')}, "
            f"torch {fp.get('torch_version')}, triton {fp.get('triton_version')}, host "
            f"{fp.get('hostname')}); sweep {row.get('sweep_status')}; load "
            f"{row['load_at_start']} -> {row['load_at_end']}"
        )
    trial = row.get("first_compiled_trial")
    if trial and trial != row.get("first_compiled"):
        out.append(
            f"  first compiled trial to finish (any status): {trial['t_s']:.1f} s, "
            f"{trial['config']} ({trial['status']})"
        )
    final = row.get("final")
    if final:
        out.append(
            f"  final pick: {final['pick']} ({final['decision']}; "
            f"{final['median_ms']:.4g} ms, {final['figure']})"
        )
    steps, last = [], None
    for p in row.get("picks") or []:
        if p["pick_label"] != last:
            ratio = "-" if p["ratio"] is None else f"x{p['ratio']:.3f}"
            steps.append(f"{p['t_s']:.1f}s {p['pick_label']} ({ratio}, {p['basis']})")
            last = p["pick_label"]
    if steps:
        out.append(f"  picks over time (figure / final pick's): {'; '.join(steps)}")
    for text in (row.get("note"), row.get("error")):
        if text:
            out.append(f"  {text}")
    if row["rc"] not in (0,) and row.get("stderr_tail"):
        out.append(f"  stderr: {' | '.join(row['stderr_tail'])[-600:]}")
    return out


# --- arguments --------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2 (argparse prints its usage)
        fail(message)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = _Parser(description=(__doc__ or "").splitlines()[0])
    p.add_argument(
        "--workload",
        action="append",
        type=Path,
        default=[],
        help="a workload file (repeatable): each swept in turn",
    )
    p.add_argument("--traffic", type=Path, help="a traffic log (CSV) for a traffic sweep")
    p.add_argument(
        "--shapes",
        help="shape strategies of the traffic sweep, e.g. "
        "static,dynamic,buckets:pow2,buckets:fitted-4 (alone: a generated log)",
    )
    p.add_argument(
        "--requests",
        type=int,
        default=300,
        help="requests of the generated long-tail log (default 300)",
    )
    p.add_argument("--seed", type=int, default=0, help="the generated log's seed")
    p.add_argument("--traffic-only", action="store_true", help="skip the plain sweeps")
    p.add_argument(
        "--sweep-args",
        default="",
        help='flags passed to every `advisor sweep`, e.g. "--modes eager,default --dtypes fp32"',
    )
    p.add_argument("--deadline-s", type=float, help="stop a sweep after this many seconds")
    p.add_argument(
        "--grace-s",
        type=float,
        default=60.0,
        help="seconds from a stop's SIGINT to SIGKILL (default 60)",
    )
    p.add_argument("--keep-dbs", type=Path, help="keep the sweeps' databases in this folder")
    p.add_argument("--note", default="", help="written into the report")
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args(argv)
    if not args.workload:
        fail("give at least one --workload FILE")
    for wl in args.workload:
        if not wl.is_file():
            fail(f"--workload {wl}: no such file")
    if args.traffic is not None and not args.traffic.is_file():
        fail(f"--traffic {args.traffic}: no such file")
    if args.traffic_only and not (args.traffic or args.shapes):
        fail("--traffic-only needs --traffic CSV or --shapes STRATEGIES")
    if (
        args.requests < 1
        or (args.deadline_s is not None and args.deadline_s <= 0)
        or (args.grace_s <= 0)
    ):
        fail("--requests must be at least 1, --deadline-s and --grace-s above 0")
    try:
        args.sweep_args = shlex.split(args.sweep_args)
    except ValueError as e:
        fail(f"--sweep-args: {e}")
    own = [a for a in args.sweep_args if a.split("=")[0] in OWN_FLAGS]
    if own:
        fail(
            f"--sweep-args must not set {own[0].split('=')[0]}: the bench sets it (give "
            "--traffic and --shapes to the bench)"
        )
    args.device = next(
        (
            args.sweep_args[i + 1].split(":")[0]
            for i, a in enumerate(args.sweep_args[:-1])
            if a == "--device"
        ),
        None,
    )
    if args.device is None:
        args.device = next(
            (
                a.split("=", 1)[1].split(":")[0]
                for a in args.sweep_args
                if a.startswith("--device=")
            ),
            None,
        )
    return args


def main(argv: Sequence[str] | None = None) -> None:
    run(parse_args(argv))


if __name__ == "__main__":
    main()
