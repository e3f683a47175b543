"""Print what the GPU scripts' result databases hold, compactly (one line per trial).

    python bench/gpu_summary.py A.db [B.db ...]
    python bench/gpu_summary.py --timeline A.db   # each sweep's trials and re-measurement in time

The timeline counts seconds from the moment the sweep's row was written: each trial's start and
end, its cold compile, median and time waited for the device, the sweep's end, and each leaders'
re-measurement stored after the sweep began (when, how many rounds, its entries).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from advisor.db.store import ResultStore  # noqa: E402
from advisor.recommendation import recommend  # noqa: E402
from advisor.serving import strategy_rows  # noqa: E402
from bench.common import stored_time_s  # noqa: E402


def _f(value: object, fmt: str = ".3f") -> str:
    return "-" if value is None else format(value, fmt)


def main(paths: list[str]) -> None:
    for path in paths:
        store = ResultStore.from_url(f"sqlite:///{Path(path).resolve()}", create=False)
        for workload in store.workloads():
            records = store.trials(workload=workload)
            print(f"== {workload} ({path}): {len(records)} trials")
            for r in sorted(records, key=lambda r: r.get("median_ms") or 1e9):
                c = r["config"]
                label = f"{c['dtype']}+{c['mode']}" + (
                    f"/{c['shapes']}" if c.get("shapes", "static") != "static" else "")
                if r["status"] != "ok":
                    tail = (r.get("error_tail") or "").strip().splitlines()[-1:] or [""]
                    print(f"  {label:34s} FAILED {r['failure_reason']}: {tail[0][:150]}")
                    continue
                print(f"  {label:34s} med {_f(r['median_ms'])} p99 {_f(r.get('p99_ms'))} "
                      f"cold {_f(r.get('cold_compile_s'), '.1f')} "
                      f"k/l {r.get('kernels_per_call')}/{r.get('launches_per_call')} "
                      f"eager k/l {r.get('eager_kernels_per_call')}/"
                      f"{r.get('eager_launches_per_call')} passed {r.get('passed')} "
                      f"q {_f(r.get('quality_value'))} wait {_f(r.get('device_wait_s'), '.1f')}"
                      + (" SCREENED" if r.get("screened_out") else ""))
            for row in strategy_rows(records):
                print("  strategy", row)
            fp = records[0]["fingerprint"]["fingerprint_hash"] if records else None
            rec = recommend(workload, records, fp)
            print("  recommendation:", rec.sentence)


def timeline(paths: list[str]) -> None:
    for path in paths:
        store = ResultStore.from_url(f"sqlite:///{Path(path).resolve()}", create=False)
        for sweep in reversed(store.sweeps()):
            t0, name = stored_time_s(sweep["started_at"]), sweep["workload"]["name"]

            def at(text: str, t0: float = t0) -> float:  # seconds after the sweep's row
                return stored_time_s(text) - t0

            print(f"== {name} sweep {sweep['id']} ({path}): seconds after its row "
                  f"was written, {sweep['started_at']}")
            records: list[dict[str, Any]] = store.trials(sweep_id=sweep["id"])
            for r in sorted(records, key=lambda r: at(r["started_at"])):
                c = r["config"]
                print(f"  {c['dtype']:5s} {c['mode']:27s} start {at(r['started_at']):6.1f} "
                      f"end {at(r['finished_at']):6.1f} "
                      f"cold {_f(r.get('cold_compile_s'), '6.1f')} s "
                      f"median {_f(r.get('median_ms'), '.4f')} ms, "
                      f"waited {_f(r.get('device_wait_s'), '.1f')} s for the device"
                      + (" screened out" if r.get("screened_out") else "")
                      + ("" if r["status"] == "ok" else f" {r['status']}"))
            if sweep.get("finished_at"):
                print(f"  sweep {sweep['status']} {at(sweep['finished_at']):.1f}")
            for conf in store.confirmations(name):
                if at(conf["created_at"]) < 0:
                    continue
                print(f"  leaders' re-measurement stored {at(conf['created_at']):.1f} "
                      f"({conf['rounds']} rounds, {conf['status']}):")
                for e in conf["entries"]:
                    print(f"    {e['label']:24s} median {_f(e.get('median_ms'), '.4f')} ms, "
                          f"speedup {_f(e.get('speedup'))}, compile {_f(e.get('compile_s'), '.2f')}"
                          f" s, from the kept cache: {e.get('compiled_from_kept_cache')}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--timeline"]:
        timeline(sys.argv[2:])
    else:
        main(sys.argv[1:])
