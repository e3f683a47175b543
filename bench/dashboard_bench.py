"""Dashboard benchmark: each page's first render with 100,000 trials across 50 devices.

    python bench/dashboard_bench.py                 # SQLite, plus PostgreSQL if a URL is known
    python bench/dashboard_bench.py --pg postgresql+psycopg://postgres@127.0.0.1:5432/test

Fills a database as bench/db_bench.py does (100,000 trials: 20 workloads x 50 devices of five
GPU models, each device with its own software stack, one sweep of 100 configs each, two traffic
shapes per trial, about 8% failed), then times every page two ways:

- server: the page's script run by Streamlit's AppTest with every cache cleared first (what a
  first visit costs the server: queries, pandas, Altair specs), median of ``--repeats`` runs;
  the same run again with warm caches for comparison;
- browser: `advisor dashboard` started fresh for each page, Chromium (headless) opening the
  page's URL until the script has finished and every chart is drawn (the whole first render a
  user waits for, the app's imports in a fresh server process included), and, on that cold
  server, the time to its first data (the first table, metric or drawn chart of the page).

``--fleet-size``: the tests' fleet-size data set instead (2,880 trials: 3 workloads x 12
devices, 80 configs each; tests/support/seed.py's seed_fleet size).

Target: every page's first render under 2 s, and its first data on a cold server under 2 s.
Results: bench/results/dashboard_bench_<UTC>.json and .md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import queue
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from advisor.db import ResultStore  # noqa: E402
from bench import db_bench  # noqa: E402  (the same data set)
from bench.common import dated, utc_stamp  # noqa: E402

PAGES = ("recommendations", "workload", "fleet", "sweeps")
TARGET_S = 2.0
RESULTS = ROOT / "bench" / "results"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip
SETTLED = "[data-testid='stApp'][data-test-script-state='notRunning']"
ERROR_BOXES = "[data-testid='stException'], [data-testid='stAlertContentError']"


def fill(url: str, args: argparse.Namespace) -> dict[str, Any]:
    with ResultStore.from_url(url) as store:
        print(f"writing {args.trials:,} trials into {store.masked_url} ...", file=sys.stderr)
        written = db_bench.fill(store, args.trials, args.devices, args.workloads)
        store.analyze()
    print(f"  {written['write_s']} s", file=sys.stderr)
    return written


def _page_run(page: str) -> tuple[float, float, AppTest]:
    """One run of a page's script: wall seconds, CPU seconds of this process, the result."""
    at = AppTest.from_file(str(ROOT / "dashboard" / "views" / f"{page}.py"), default_timeout=120)
    t0, c0 = time.perf_counter(), time.process_time()
    at.run()
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    if at.exception or at.error:
        raise RuntimeError(f"{page}: {[e.value for e in [*at.exception, *at.error]]}")
    return seconds, cpu, at


def server_times(url: str, repeats: int) -> dict[str, Any]:
    """AppTest script-run seconds per page: cold (caches cleared) and warm (cached)."""
    os.environ["ADVISOR_DB_URL"] = url
    _page_run("sweeps")  # imports (pandas, Altair, the dashboard) happen once, not per page
    out = {}
    for page in PAGES:
        cold, cold_cpu, warm, charts = [], [], [], 0
        for _ in range(repeats):
            st.cache_data.clear()
            st.cache_resource.clear()
            seconds, cpu, at = _page_run(page)
            cold.append(seconds)
            cold_cpu.append(cpu)
            warm.append(_page_run(page)[0])
            charts = len(at.get("vega_lite_chart"))
        out[page] = {
            "cold_s": round(statistics.median(cold), 3),
            "cold_max_s": round(max(cold), 3),
            "cold_cpu_s": round(statistics.median(cold_cpu), 3),
            "warm_s": round(statistics.median(warm), 3),
            "charts": charts,
            "tables": len(at.dataframe),
            "runs": repeats,
        }
        print(f"  server {page}: {out[page]}", file=sys.stderr)
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(url: str) -> tuple[subprocess.Popen[str], int]:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "advisor", "dashboard", "--db", url, "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        for line in process.stdout or []:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    while True:
        line = lines.get(timeout=60)
        if line is None:
            raise RuntimeError("advisor dashboard exited before serving")
        if "URL:" in line:
            return process, port


def _stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


FIRST_DATA = ", ".join(
    f"[data-testid='stMain'] {inner}" for inner in (
        "[data-testid='stDataFrame']", "[data-testid='stMetric']",
        "[data-testid='stVegaLiteChart'] canvas", "[data-testid='stVegaLiteChart'] svg"))
FLEET_SIZE = {"trials": 2_880, "devices": 12, "workloads": 3}  # the tests' seed_fleet
DRAWN = (
    "() => { const c = document.querySelectorAll('[data-testid=stVegaLiteChart]');"
    " return c.length > 0 && [...c].every(e => e.querySelector('canvas, svg')); }"
)
TITLES = {page: page.capitalize() for page in PAGES}
PATHS = {page: "" if page == "recommendations" else page for page in PAGES}  # "": the default


def _drawn(page: Any, title: str) -> None:
    """Wait until the page shows ``title``, its script has finished and every chart is drawn."""
    page.get_by_role("heading", name=title, exact=True).wait_for(timeout=120_000)
    page.locator(SETTLED).wait_for(timeout=120_000)
    page.wait_for_function(DRAWN, timeout=120_000)


def browser_times(url: str, repeats: int) -> dict[str, Any]:
    """Seconds until each page is fully drawn in Chromium, each time on a dashboard just
    started (median of ``repeats``): ``first_render_s`` from a click on the page's link, after
    another page that shares none of its cached data was opened (the server's imports are done,
    the page's data is not cached); ``fresh_server_s`` opening the page's URL straight away."""
    from playwright.sync_api import sync_playwright

    runs: dict[str, dict[str, list[float]]] = {p: {"fresh": [], "first": [], "data": []}
                                               for p in PAGES}
    errors = 0
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        for _ in range(repeats):
            for name in PAGES:
                process, port = _start(url)
                try:
                    page = browser.new_page(viewport={"width": 1440, "height": 1200})
                    t0 = time.perf_counter()
                    page.goto(f"http://127.0.0.1:{port}/{PATHS[name]}")
                    page.locator(FIRST_DATA).first.wait_for(timeout=120_000)
                    runs[name]["data"].append(time.perf_counter() - t0)  # cold: first data
                    _drawn(page, TITLES[name])
                    runs[name]["fresh"].append(time.perf_counter() - t0)
                    page.close()
                finally:
                    _stop(process)
                other = "recommendations" if name == "sweeps" else "sweeps"
                process, port = _start(url)
                try:
                    page = browser.new_page(viewport={"width": 1440, "height": 1200})
                    page.goto(f"http://127.0.0.1:{port}/{PATHS[other]}")
                    _drawn(page, TITLES[other])
                    t0 = time.perf_counter()
                    nav = page.locator("[data-testid='stTopNav']")
                    nav.get_by_role("link", name=TITLES[name]).click()
                    _drawn(page, TITLES[name])
                    runs[name]["first"].append(time.perf_counter() - t0)
                    errors += page.locator(ERROR_BOXES).count()
                    page.close()
                finally:
                    _stop(process)
        browser.close()
    out: dict[str, Any] = {}
    for name, times in runs.items():
        out[name] = {
            "first_render_s": round(statistics.median(times["first"]), 3),
            "first_render_max_s": round(max(times["first"]), 3),
            "fresh_server_s": round(statistics.median(times["fresh"]), 3),
            "fresh_first_data_s": round(statistics.median(times["data"]), 3),
            "fresh_first_data_max_s": round(max(times["data"]), 3),
            "runs": repeats,
        }
        print(f"  browser {name}: {out[name]}", file=sys.stderr)
    out["error_boxes"] = errors
    return out


def run(url: str, args: argparse.Namespace, written: dict[str, Any]) -> dict[str, Any]:
    load_before = os.getloadavg()[0]
    server = server_times(url, args.repeats)
    use_browser = Path(CHROMIUM).is_file() and not args.no_browser
    browser = browser_times(url, args.browser_repeats) if use_browser else {}
    return {
        "url": ResultStore.from_url(url).masked_url, **written, "server": server,
        "browser": browser, "load_1m": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }  # fmt: skip


def machine() -> dict[str, Any]:
    import pandas
    import sqlalchemy

    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cores": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "load_average_1m_at_end": round(os.getloadavg()[0], 2),
        "streamlit": st.__version__,
        "pandas": pandas.__version__,
        "sqlalchemy": sqlalchemy.__version__,
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def _cpu_model() -> str:
    """The CPU's model name (page timings differ by machine: say which one)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def markdown(report: dict[str, Any]) -> str:
    p, m = report["params"], report["machine"]
    lines = [
        "# Dashboard benchmark",
        "",
        f"{p['trials']:,} trials ({p['workloads']} workloads x {p['devices']} devices of five GPU "
        "models, each device with its own software stack; one sweep of "
        f"{p['trials'] // (p['workloads'] * p['devices'])} configs per workload and device; two "
        "traffic shapes per trial; about 8% failed), written as `bench/db_bench.py` writes them. "
        f"Target: each page's first render, and its first data on a cold server, under "
        f"{TARGET_S:.0f} s.",
        "",
        f"- **server, cold**: the page's script run by Streamlit's AppTest with every cache "
        f"cleared first (median of {p['repeats']} runs; max in brackets), wall clock and the "
        "CPU time it took (less sensitive to other work on the machine); **warm**: the same "
        "run with the caches filled.",
        "- **browser, first render**: headless Chromium on an `advisor dashboard` just started "
        "and showing another page (which shares none of this page's cached data), from the "
        "click on the page's link until its script has finished and every chart is drawn (median "
        f"of {p['browser_repeats']} runs, max in brackets); **fresh "
        "dashboard**: opening the page's URL on a dashboard just started (the server's imports "
        "and the browser's first load of the app included: the cost of the first visit after "
        "`advisor dashboard` starts); **first data, cold**: on that fresh dashboard, from "
        "opening the URL until the page's first table, metric or drawn chart shows (median, max "
        "in brackets). Under 2 s: server cold, browser first render and first data, cold.",
        "",
        f"Machine: {m['cores']} cores ({m.get('cpu_model', 'unknown CPU')}), {m['platform']}, "
        f"Python {m['python']}, Streamlit "
        f"{m['streamlit']}, pandas {m['pandas']}, SQLAlchemy {m['sqlalchemy']}; 1-minute load "
        f"average at the end: {m['load_average_1m_at_end']}.",
        "",
    ]
    for name, backend in report["backends"].items():
        before, after = backend["load_1m"]
        lines += [
            f"## {name} (writing the data set: {backend['write_s']} s; 1-minute load average "
            f"{before} before the timings, {after} after)",
            "",
            "| page | server, cold (s) | server, cold, CPU (s) | server, warm (s) | browser, first "
            "render (s) | browser, fresh dashboard (s) | first data, cold (s) | charts | tables "
            "| under 2 s |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
        ]
        for page in PAGES:
            s = backend["server"][page]
            b = backend["browser"].get(page, {})
            first, fresh = b.get("first_render_s"), b.get("fresh_server_s")
            data = b.get("fresh_first_data_s")
            worst = max(s["cold_s"], first or 0.0, data or 0.0)
            lines.append(
                f"| {page} | {s['cold_s']:.2f} ({s['cold_max_s']:.2f}) | {s['cold_cpu_s']:.2f} | "
                f"{s['warm_s']:.2f} | "
                f"{_secs(first)} ({_secs(b.get('first_render_max_s'))}) | {_secs(fresh)} | "
                f"{_secs(data)} ({_secs(b.get('fresh_first_data_max_s'))}) | "
                f"{s['charts']} | {s['tables']} | {'yes' if worst < TARGET_S else 'NO'} |"
            )
        if backend["browser"]:
            lines += ["", f"Error boxes seen in the browser: {backend['browser']['error_boxes']}."]
        lines.append("")
    return "\n".join(lines)


def _secs(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100_000)
    parser.add_argument("--devices", type=int, default=50)
    parser.add_argument("--workloads", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--browser-repeats", type=int, default=3)
    parser.add_argument("--no-browser", action="store_true", help="server timings only")
    parser.add_argument("--fleet-size", action="store_true",
                        help="the tests' fleet-size data set: " + ", ".join(
                            f"{v:,} {k}" for k, v in FLEET_SIZE.items()))
    parser.add_argument(
        "--sqlite-file", type=Path,
        help="keep the SQLite data set in this file and reuse it when it exists",
    )  # fmt: skip
    parser.add_argument(
        "--pg",
        default=os.environ.get("ADVISOR_BENCH_PG_URL") or os.environ.get("ADVISOR_TEST_PG_URL"),
        help="a PostgreSQL server URL; a scratch database is created there and dropped",
    )
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.fleet_size:
        for name, value in FLEET_SIZE.items():
            setattr(args, name, value)
    names = ("trials", "devices", "workloads", "repeats", "browser_repeats")
    params = {k: getattr(args, k) for k in names}
    report: dict[str, Any] = {"params": params, "target_s": TARGET_S, "backends": {}}
    with tempfile.TemporaryDirectory() as tmp:
        path = args.sqlite_file or Path(tmp) / "bench.db"
        url = f"sqlite:///{path.resolve()}"
        reuse = args.sqlite_file is not None and path.exists()
        written = {"write_s": "reused"} if reuse else fill(url, args)
        report["backends"]["sqlite"] = run(url, args, written)
    if args.pg:
        with db_bench.scratch_pg(args.pg) as url:
            report["backends"]["postgresql"] = run(url, args, fill(url, args))
    else:
        print("no PostgreSQL URL (--pg, $ADVISOR_TEST_PG_URL): SQLite only", file=sys.stderr)
    report["machine"] = machine()
    args.out.mkdir(parents=True, exist_ok=True)
    path = dated(args.out, "dashboard_bench", utc_stamp(), "json")
    path.write_text(json.dumps(report, indent=2) + "\n")
    path.with_suffix(".md").write_text(markdown(report))
    print(markdown(report))
    print(f"wrote {path} and .md")


if __name__ == "__main__":
    main()
