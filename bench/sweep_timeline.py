"""One stored sweep's trials against time: when each started and finished, how many ran at once,
and its autotuning trials (max-autotune, with or without CUDA graphs) against their cheaper twins
(`bench/search_bench.py`'s `autotuning`: how many at once, any started before its twin finished).

    python bench/sweep_timeline.py sqlite:///held_back.db [--sweep ID] [--out bench/results]

Seconds count from the sweep's start. Written to ``OUT/sweep_timeline_<UTC stamp>.md`` (a new
name each run) and printed. A database that cannot be read or holds no such sweep: one line,
exit 2, nothing written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.common import stored_time_s, write_dated  # noqa: E402
from bench.search_bench import autotuning, max_at_once  # noqa: E402


def points(trials: list[dict[str, Any]], started: float) -> list[dict[str, Any]]:
    """Each trial as a point (seconds since ``started``), by finish time. Pure."""
    from advisor.config import CompileConfig

    out = []
    for r in sorted(trials, key=lambda r: r["finished_at"] or ""):
        if not r.get("finished_at"):
            continue
        out.append({
            "t_s": round(stored_time_s(r["finished_at"]) - started, 2),
            "start_s": round(stored_time_s(r["started_at"]) - started, 2) if r.get("started_at")
            else None,
            "config": r["config_key"], "label": CompileConfig.from_dict(r["config"]).label,
            "status": r["status"], "median_ms": r.get("median_ms"),
            "tried_because": r.get("tried_because") or ""})
    return out


def markdown(url: str, sweep: dict[str, Any], pts: list[dict[str, Any]]) -> str:
    auto = autotuning(pts)
    lines = [f"# sweep {sweep['id']} of {sweep['workload']['name']}: its trials against time", "",
             f"database {url}; status {sweep['status']}; started {sweep['started_at']}; "
             f"{len(pts)} trials stored, at most {max_at_once(pts)} running at once", "",
             "| trial | started (s) | finished (s) | status | median (ms) | tried because |",
             "| --- | ---: | ---: | --- | ---: | --- |"]
    for p in sorted(pts, key=lambda p: (p["start_s"] is None, p["start_s"] or 0)):
        ms = "" if p["median_ms"] is None else f"{p['median_ms']:.4g}"
        start = "" if p["start_s"] is None else f"{p['start_s']:.1f}"
        lines.append(f"| {p['label']} | {start} | {p['t_s']:.1f} | {p['status']} | {ms} | "
                     f"{p['tried_because'].replace('|', '/')} |")
    early = auto["started_before_twin_finished"]
    lines += ["", f"autotuning trials: {len(auto['trials'])}, at most {auto['max_at_once']} "
              f"running at once; started before their cheaper twin finished: "
              f"{', '.join(early) if early else 'none'}", ""]
    for t in auto["trials"]:
        twin = "never finished" if t["twin_t_s"] is None else f"finished at {t['twin_t_s']:.1f} s"
        lines.append(f"- {t['label']}: started {t['start_s']} s, finished {t['t_s']:.1f} s; "
                     f"its twin {twin}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("url", help="the sweep's database URL (sqlite:///path or postgresql://...)")
    p.add_argument("--sweep", type=int, help="the sweep's id (default: the newest)")
    p.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = p.parse_args(argv)
    from advisor.db.store import ResultStore

    try:
        with ResultStore.from_url(args.url, create=False, read_only=True) as store:
            if args.sweep is not None:
                sweep = store.get_sweep(args.sweep)
            else:
                sweep = max(store.sweeps(), key=lambda s: s["id"], default=None)
                if sweep is None:
                    raise LookupError(f"no sweep in {args.url}")
            trials = store.trials(sweep_id=sweep["id"])
    except Exception as e:  # one line, exit 2, nothing written
        print(f"sweep_timeline: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    text = markdown(args.url, dict(sweep), points(trials, stored_time_s(str(sweep["started_at"]))))
    write_dated(args.out, "sweep_timeline", text)


if __name__ == "__main__":
    main()
