"""Driving the dashboard in headless Chromium: start `advisor dashboard`, wait for pages, take
screenshots. Used by test_browser.py, and on its own to refresh docs/screenshots/:

    python tests/dashboard/browser.py --db sqlite:////tmp/docs.db --out docs/screenshots

Never downloads a browser: Debian's Chromium (apt-get install -y chromium chromium-driver).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

CHROMIUM = os.environ.get("ADVISOR_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip
PAGES = {"recommendations": "Recommendations", "workload": "Workload", "fleet": "Fleet",
         "sweeps": "Sweeps"}  # fmt: skip
START_TIMEOUT_S = 60
PAGE_TIMEOUT_MS = 30_000
SETTLED = "[data-testid='stApp'][data-test-script-state='notRunning']"
DRAWN = (  # every chart drawn, and no placeholder left of an element still on its way
    "() => [...document.querySelectorAll('[data-testid=stVegaLiteChart]')]"
    ".every(e => e.querySelector('canvas, svg'))"
    " && !document.querySelector('[data-testid*=Skeleton]')"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def dashboard(url: str, cwd: Path | None = None) -> Iterator[tuple[str, list[str]]]:
    """`advisor dashboard --db URL` on a free localhost port: yields (base URL, its output
    lines so far); stopped (SIGTERM, passed on to Streamlit) and reaped afterwards."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "advisor", "dashboard", "--db", url, "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        cwd=cwd,
    )  # fmt: skip
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        for line in process.stdout or []:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    seen: list[str] = []
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        while True:  # Streamlit prints the URL once it is listening
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            if line is None:
                raise RuntimeError(f"advisor dashboard exited: {''.join(seen)}")
            seen.append(line)
            if "URL:" in line and f"127.0.0.1:{port}" in line:
                break
        yield f"http://127.0.0.1:{port}", seen
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        with contextlib.suppress(ProcessLookupError):  # nothing of it is left behind
            os.killpg(process.pid, signal.SIGKILL)


def launch(playwright: Any) -> Any:
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """Headless Chromium driven through Playwright's sync API (its waits `PAGE_TIMEOUT_MS`),
    closed afterwards: a test module's tests share one, each opening pages of its own."""
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=PAGE_TIMEOUT_MS)
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            yield browser
        finally:
            browser.close()


def settled(page: Any, title: str) -> None:
    """The page shows ``title``, its script has finished and its charts are drawn."""
    page.get_by_role("heading", name=title, exact=True).wait_for(timeout=PAGE_TIMEOUT_MS)
    page.locator(SETTLED).wait_for(timeout=PAGE_TIMEOUT_MS)
    page.wait_for_function(DRAWN, timeout=PAGE_TIMEOUT_MS)


def error_boxes(page: Any) -> int:
    return int(page.locator("[data-testid='stException'], "
                            "[data-testid='stAlertContentError']").count())  # fmt: skip


CLIPPED = (  # the tables wider than their frame (they would scroll sideways), by column header
    "() => [...document.querySelectorAll('[data-testid=stDataFrame]')].filter(d => {"
    " const s = d.querySelector('.dvn-scroller'); return s && s.scrollWidth > s.clientWidth + 1;"
    " }).length"
)


def clipped_tables(page: Any) -> int:
    """How many of the page's tables do not fit their width (and would scroll sideways)."""
    return int(page.evaluate(CLIPPED))


def remote(requests: list[str]) -> list[str]:
    """The requests that would leave this machine (the dashboard must work air-gapped)."""
    return [u for u in requests if urlsplit(u).scheme in ("http", "https", "ws", "wss")
            and urlsplit(u).hostname not in ("127.0.0.1", "localhost", "::1")]  # fmt: skip


def open_page(page: Any, name: str) -> None:
    """Go to a page through the navigation at the top and wait until it is drawn."""
    page.locator("[data-testid='stTopNav']").get_by_role("link", name=PAGES[name]).click()
    settled(page, PAGES[name])


TAB_CLICK_WAIT_MS = 5_000


def open_tab(page: Any, label: str) -> None:
    """Open one of the page's tabs and wait until its content is drawn. A click that lands
    while the page is drawn again (the tab bar replaced under it) is lost: the tab is clicked
    again until it is selected, within the page's timeout (a clean-clone run once waited its
    30 s on the fleet page's "Software upgrade" tab)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    main = page.locator("[data-testid='stMain']")
    tab = main.get_by_role("tab", name=label, exact=True)
    selected = main.get_by_role("tab", name=label, exact=True, selected=True)
    deadline = time.monotonic() + PAGE_TIMEOUT_MS / 1000
    while True:
        tab.click(timeout=PAGE_TIMEOUT_MS)
        try:
            selected.wait_for(timeout=TAB_CLICK_WAIT_MS)
            break
        except PlaywrightTimeout:
            if time.monotonic() > deadline:
                raise
    page.locator(SETTLED).wait_for(timeout=PAGE_TIMEOUT_MS)
    page.wait_for_function(DRAWN, timeout=PAGE_TIMEOUT_MS)


def screenshot(page: Any, path: Path) -> None:
    """The whole page: the window is made as tall as the page's content first (again, while a
    taller window lets more of the page lay out)."""
    width = page.viewport_size["width"]
    height = 0
    for _ in range(4):
        needed = int(page.evaluate(
            "() => document.querySelector('[data-testid=stMainBlockContainer]').scrollHeight"
        ))  # fmt: skip
        if needed <= height:
            break
        height = needed
        page.set_viewport_size({"width": width, "height": height + 80})
        page.wait_for_function(DRAWN, timeout=PAGE_TIMEOUT_MS)
    page.screenshot(path=path, full_page=True)


# The screenshots: (file, page, tab to open or None).
SHOTS = [
    ("recommendations", "recommendations", None),
    ("workload", "workload", None),
    ("fleet", "fleet", None),
    ("fleet-latency", "fleet", "Latency per device"),
    ("fleet-two-devices", "fleet", "Two devices"),
    ("sweeps", "sweeps", None),
]


def main() -> None:
    parser = argparse.ArgumentParser(description="Screenshots of every dashboard page.")
    parser.add_argument("--db", required=True, help="results database URL")
    parser.add_argument("--out", type=Path, required=True, help="folder for the PNG files")
    parser.add_argument("--width", type=int, default=1440)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    requests: list[str] = []
    with dashboard(args.db) as (base, _), sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page(viewport={"width": args.width, "height": 1000})
        page.on("request", lambda request: requests.append(request.url))
        page.goto(base)
        settled(page, PAGES["recommendations"])
        current = "recommendations"
        for shot, name, tab in SHOTS:
            if name != current:
                open_page(page, name)
                current = name
            if tab is not None:
                open_tab(page, tab)
            if error_boxes(page):
                raise SystemExit(f"{shot}: the page shows an error")
            if clipped_tables(page):
                raise SystemExit(f"{shot}: a table is wider than the page at {args.width} px")
            screenshot(page, args.out / f"{shot}.png")
            page.set_viewport_size({"width": args.width, "height": 1000})
            print(args.out / f"{shot}.png")
        browser.close()
    if remote(requests):
        raise SystemExit(f"requests left this machine: {remote(requests)}")


if __name__ == "__main__":
    main()
