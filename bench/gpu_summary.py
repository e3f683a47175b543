"""Print what the GPU scripts' result databases hold, compactly (one line per trial).

    python bench/gpu_summary.py A.db [B.db ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from advisor.db.store import ResultStore  # noqa: E402
from advisor.recommend import recommend  # noqa: E402
from advisor.replay import strategy_rows  # noqa: E402


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


if __name__ == "__main__":
    main(sys.argv[1:])
