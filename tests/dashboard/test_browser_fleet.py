"""Every dashboard page on the fleet-size seed in Chromium at 1280 px (a laptop's width): no
error box on any page or fleet view, no failed request in the browser's network log, the two
devices view on the pair that disagrees most with its counts in words, the workload page's
trials sorted by the deciding figure with every row there; a page opened from a link shows what
the link says, and a click on a tab puts the tab in the address; a missing database is an error
page with the fix. One dashboard on the fleet database and one browser serve the module's tests
(each test its own pages). Skipped (with the install line) only when Chromium is not installed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from browser import (
    CHROMIUM,
    PAGE_TIMEOUT_MS,
    chromium,
    dashboard,
    error_boxes,
    open_page,
    open_tab,
    remote,
    settled,
)
from support.seed import seeded_file

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path(CHROMIUM).is_file(),
                       reason=f"needs Chromium at {CHROMIUM}: apt-get install -y chromium "
                       "chromium-driver"),
]
WIDTH = 1280
TABS = ("Speedup: device x config", "Latency per device", "Software upgrade", "Two devices")
# Streamlit's frontend, on a page opened from its own address (/fleet), looks for the server
# under that path and under its parent, at once (Streamlit 1.67's bundled frontend: the base
# URIs it probes are the page's path and the path above it, `_stcore/health` and
# `_stcore/host-config` under each; its issue 7074). The page's own pair answers 404: a
# multipage app serves `_stcore` at the root only, and no setting moves the probe (with
# `server.baseUrlPath` the page's path is still probed first). So a page opened from a link
# shows exactly these two 404s, its own; any other failed request fails the test.
PROBES = ("_stcore/health", "_stcore/host-config")


@pytest.fixture(scope="module")
def fleet_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    return seeded_file(tmp_path_factory.mktemp("fleet"), fleet=True)


@pytest.fixture(scope="module")
def fleet_base(fleet_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`advisor dashboard` on the fleet database: its base URL."""
    with dashboard(fleet_url, cwd=tmp_path_factory.mktemp("served")) as (base, _):
        yield base


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as shared:
        yield shared


def _failures(page: Any) -> list[tuple[int, str]]:
    """Every response of 400 or more the page gets (and every request that fails outright)."""
    failed: list[tuple[int, str]] = []
    page.on("response", lambda r: failed.append((r.status, r.url)) if r.status >= 400 else None)
    page.on("requestfailed", lambda r: failed.append((0, r.url)))
    return failed


def test_every_page_and_view_at_1280_px(fleet_base: str, browser: Any) -> None:
    from playwright.sync_api import expect

    base = fleet_base
    page = browser.new_page(viewport={"width": WIDTH, "height": 1000})
    try:
        failed = _failures(page)
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        main = page.locator("[data-testid='stMain']")
        page.goto(base)
        settled(page, "Recommendations")
        assert error_boxes(page) == 0
        open_page(page, "workload")
        assert error_boxes(page) == 0
        expect(main).to_contain_text("trials, the fastest by the steady-state p50")
        open_page(page, "fleet")
        for tab in TABS:
            open_tab(page, tab)
            assert error_boxes(page) == 0, tab
        # the pair that disagrees most, each kind counted in words
        device_a = page.get_by_role("combobox", name="Device A").input_value()
        device_b = page.get_by_role("combobox", name="Device B").input_value()
        assert device_a.split()[0] != device_b.split()[0], (device_a, device_b)
        expect(main).to_contain_text("faster than eager fp32 on one device and slower on "
                                     "the other")
        expect(main).to_contain_text("failed or rejected on one device and not on the other")
        open_page(page, "sweeps")
        assert error_boxes(page) == 0
        assert failed == [], failed  # through the navigation: none at all
        # pages opened from their own address, as a shared link opens them
        for path, title in (("/workload", "Workload"), ("/fleet?fleet_view=Two+devices",
                                                         "Fleet"), ("/sweeps", "Sweeps")):
            page.goto(base + path)
            settled(page, title)
            assert error_boxes(page) == 0, path
            own = urlsplit(path).path
            seen = sorted((status, urlsplit(url).path) for status, url in failed)
            assert seen and set(seen) <= {(404, f"{own}/{probe}") for probe in PROBES}, seen
            failed.clear()
        assert remote(requests) == []
    finally:
        page.close()


def test_a_link_round_trip_in_chromium(fleet_base: str, browser: Any) -> None:
    """Opened from a link, the page shows what the link says; a click on a tab puts the tab
    in the address (the workload kept), and that address opens the same view again."""
    page = browser.new_page(viewport={"width": 1440, "height": 1200})
    again = browser.new_page(viewport={"width": 1440, "height": 1200})
    try:
        page.goto(f"{fleet_base}/fleet?fleet_workload=guardrail&fleet_view=Two+devices")
        settled(page, "Fleet")
        main = page.locator("[data-testid='stMain']")
        assert main.get_by_role("tab", selected=True).inner_text() == "Two devices"
        assert page.get_by_role("combobox", name="Workload").input_value() == "guardrail"
        open_tab(page, "Latency per device")
        page.wait_for_url("**fleet_view=Latency*")
        query = parse_qs(urlsplit(page.url).query)
        assert query == {"fleet_workload": ["guardrail"], "fleet_view": ["Latency per device"]}
        again.goto(page.url)
        settled(again, "Fleet")
        tab = again.locator("[data-testid='stMain']").get_by_role("tab", selected=True)
        assert tab.inner_text() == "Latency per device"
        assert again.get_by_role("combobox", name="Workload").input_value() == "guardrail"
    finally:
        page.close()
        again.close()


def test_a_missing_database_is_an_error_page_with_the_fix(tmp_path: Path, browser: Any) -> None:
    from playwright.sync_api import expect

    url = f"sqlite:///{tmp_path / 'typo.db'}"
    with dashboard(url, cwd=tmp_path) as (base, _):
        page = browser.new_page(viewport={"width": WIDTH, "height": 1000})
        try:
            page.goto(base)
            error = page.locator("[data-testid='stAlertContentError']")
            expect(error).to_contain_text(f"There is no results database at {tmp_path}/typo.db",
                                          timeout=PAGE_TIMEOUT_MS)
            expect(page.locator("[data-testid='stMain']")).to_contain_text(
                f"advisor sweep workloads/reranker.py --db {url}")
            assert not (tmp_path / "typo.db").exists()
        finally:
            page.close()
