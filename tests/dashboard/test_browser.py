"""The dashboard in a real browser: `advisor dashboard` on a free localhost port, Debian's
Chromium driven headless by Playwright through every page (one browser for the module's
tests, each with pages of its own); screenshots under the test's tmp folder. Skipped (with the
install line) only when Chromium is not installed."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from browser import (
    CHROMIUM,
    PAGE_TIMEOUT_MS,
    chromium,
    clipped_tables,
    dashboard,
    error_boxes,
    open_page,
    open_tab,
    remote,
    settled,
)
from support.seed import CPU_STACK, T0, TINY_CPU, Trial, _record, fingerprint, workload

from advisor.config import CompileConfig
from advisor.db import ResultStore

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).is_file(),
    reason=f"needs Chromium at {CHROMIUM}: apt-get install -y chromium chromium-driver",
)


@pytest.fixture
def dashboard_db(seeded_url: str, tmp_path: Path) -> str:
    """A copy of the seeded database: this test adds a trial to its running sweep."""
    copy = tmp_path / "results.db"
    shutil.copyfile(seeded_url.removeprefix("sqlite:///"), copy)
    return f"sqlite:///{copy}"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as shared:
        yield shared


@pytest.fixture
def server(dashboard_db: str, tmp_path: Path) -> Iterator[str]:
    with dashboard(dashboard_db, cwd=tmp_path) as (base, output):
        assert f"advisor dashboard: {base} reading sqlite:///" in "".join(output)
        yield base


def _add_running_trial(url: str) -> None:
    """One more trial of the running tiny-mlp sweep, as a sweep would store it."""
    with ResultStore.from_url(url) as store:
        (sweep,) = store.sweeps(status="running")
        fp = fingerprint("cpu", CPU_STACK, "cpu")
        trial = Trial(CompileConfig(mode="default", dtype="bf16"), 0.131, 13.8)
        record = _record(len(TINY_CPU), workload("tiny-mlp"), fp, trial, T0)
        store.add_trial(record, sweep["id"])


def _cells(page: object) -> set[str]:
    """The texts of the page's tables (the grids' accessible copies of their canvases)."""
    cells = page.locator("[data-testid^='glide-cell-']")  # type: ignore[attr-defined]
    cells.first.wait_for(state="attached", timeout=PAGE_TIMEOUT_MS)
    return {t.strip() for t in cells.all_text_contents()}


@pytest.mark.slow
def test_every_page_in_chromium(server: str, dashboard_db: str, tmp_path: Path,
                                browser: Any) -> None:
    from playwright.sync_api import expect

    shots = tmp_path / "screenshots"
    shots.mkdir()
    page = browser.new_page(viewport={"width": 1440, "height": 2000})
    try:
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        main = page.locator("[data-testid='stMain']")
        page.goto(server)
        settled(page, "Recommendations")
        expect(page.locator("[data-testid='stMetricValue']")).to_have_text(
            ["3", "4", "3", "25", "3"]
        )
        assert {"bf16 + reduce-overhead", "fp32 + default", "fp32 + eager"} <= _cells(page)
        expect(page.locator("[data-testid='stSidebar']")).to_contain_text("sqlite:///")
        assert clipped_tables(page) == 0, "a table wider than the page at 1440 px"
        expect(main).to_contain_text("Speedup of the recommended config")
        assert error_boxes(page) == 0
        page.screenshot(path=shots / "recommendations.png", full_page=True)

        open_page(page, "workload")
        success = page.locator("[data-testid='stAlertContentSuccess']")
        expect(success).to_contain_text("Recommended: bf16 + reduce-overhead")
        for heading in ("Trials", "Latency vs cold compile time", "Speedup by mode x dtype",
                        "Graph breaks"):  # fmt: skip
            expect(page.get_by_role("heading", name=heading, exact=True)).to_have_count(1)
        expect(page.locator("[data-testid='stVegaLiteChart']")).to_have_count(4)
        assert error_boxes(page) == 0 and clipped_tables(page) == 0
        page.screenshot(path=shots / "workload.png", full_page=True)

        open_page(page, "fleet")
        expect(page.locator("[data-testid='stVegaLiteChart']")).to_have_count(1)
        assert error_boxes(page) == 0 and clipped_tables(page) == 0
        page.screenshot(path=shots / "fleet.png", full_page=True)
        open_tab(page, "Software upgrade")
        expect(main).to_contain_text("torch 2.10.0+cu128 → 2.11.0+cu130")
        expect(main).to_contain_text("(-20.0%)")
        open_tab(page, "Two devices")
        expect(main).to_contain_text("They disagree on 2 configs")
        assert error_boxes(page) == 0 and clipped_tables(page) == 0

        open_page(page, "sweeps")
        expect(main).to_contain_text("3/10 trials, best 37.0 µs, 0 failed")
        expect(main).to_contain_text("One sweep, trial by trial")
        assert error_boxes(page) == 0 and clipped_tables(page) == 0
        page.screenshot(path=shots / "sweeps.png", full_page=True)
        # The running sweep gets a trial: the page shows it without a reload.
        _add_running_trial(dashboard_db)
        expect(main).to_contain_text("4/10 trials, best 37.0 µs, 0 failed")
        assert error_boxes(page) == 0 and clipped_tables(page) == 0
        assert any(urlsplit(u).path.endswith(".woff2") for u in requests), "fonts: local"
        assert len(requests) > 20 and remote(requests) == []
    finally:
        page.close()
    for name in ("recommendations", "workload", "fleet", "sweeps"):
        assert (shots / f"{name}.png").stat().st_size > 10_000


@pytest.mark.slow
def test_an_empty_database_turns_into_the_dashboard(tmp_path: Path, browser: Any) -> None:
    """Opened before the first sweep (no database file yet): the page says there is none and
    how to run the sweep that creates it, then shows the results as soon as they are stored,
    without a reload."""
    from playwright.sync_api import expect
    from support.seed import seed

    url = f"sqlite:///{tmp_path / 'later.db'}"
    with dashboard(url, cwd=tmp_path) as (base, _):
        page = browser.new_page(viewport={"width": 1440, "height": 1200})
        try:
            page.goto(base)
            main = page.locator("[data-testid='stMain']")
            expect(main).to_contain_text("There is no results database at",
                                         timeout=PAGE_TIMEOUT_MS)
            expect(main).to_contain_text(f"advisor sweep workloads/reranker.py --db {url}")
            seed(url).close()
            settled(page, "Recommendations")
            assert error_boxes(page) == 0
        finally:
            page.close()
