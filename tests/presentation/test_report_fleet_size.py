"""`advisor report` at fleet size, on the fleet-size seed (support.seed.seed_fleet: a hundred
configs a device, twelve devices, one noisy host): the answer and the charts before the long
tables, the speedup bars capped with every other config in a table, scatter labels that never
touch, a noisy warning that names a handful and counts the rest, the paste-ready snippet equal
to what `advisor recommend -f python` prints, an evidence table that never widens the page.
The HTML is also laid out by Chromium (when installed) and measured there."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from report_support import run
from support.seed import FLEET_NOISY_DEVICE, seeded_file

from advisor.db import ResultStore
from advisor.presentation import charts, report
from advisor.recommendation import to_python
from advisor.recommendation.answers import answer

HOST = f"node-{FLEET_NOISY_DEVICE}"  # the busy host: every figure of it noisy
CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="module")
def fleet_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    return seeded_file(tmp_path_factory.mktemp("fleet"), fleet=True)


@pytest.fixture(scope="module")
def pages(fleet_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The reranker's report on the noisy host, as HTML and as Markdown, through the CLI."""
    out = tmp_path_factory.mktemp("pages")
    found = {}
    for kind in ("html", "md"):
        done = run("report", "reranker", "--db", fleet_url, "--fingerprint", HOST,
                   "-o", out / f"report.{kind}")  # fmt: skip
        assert done.exit_code == 0, done.output
        found[kind] = (out / f"report.{kind}").read_text(encoding="utf-8")
    found["path"] = str(out / "report.html")
    return found


@pytest.fixture(scope="module")
def rec(fleet_url: str, pages: dict[str, str]) -> object:
    fp = re.search(r"fingerprint ([0-9a-f]{16})", pages["md"])
    assert fp is not None
    with ResultStore.from_url(fleet_url, create=False) as store:
        return answer(store, "reranker", fp.group(1))


def _section(page: str, title: str) -> int:
    return page.index(f"<h2>{title}</h2>")


def _rows(table_html: str) -> list[list[str]]:
    """The cells of each data row of the first table in ``table_html``."""
    table = table_html[table_html.index("<table"):table_html.index("</table>")]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table)[1:]  # the header row first
    return [[html.unescape(c) for c in re.findall(r"<td>(.*?)</td>", r)] for r in rows]


def test_the_answer_and_the_charts_come_before_any_table(pages: dict[str, str]) -> None:
    page = pages["html"]
    order = [_section(page, t) for t in ("Recommendation", "Charts",
                                         "Paste into your serving code", "Evidence")]
    assert order == sorted(order)
    assert page.index("<svg") < page.index("<table")  # nothing tabular above the charts
    assert page.count("<tr", 0, page.index("<svg")) == 0
    md = pages["md"]
    heads = [md.index(h) for h in ("## Recommendation", "## Latency vs cold compile",
                                   "## Speedup per config", "## Paste into your serving code",
                                   "## Evidence", "### The other", "## Device and stack")]
    assert heads == sorted(heads)


def test_the_bars_are_capped_and_every_other_config_is_in_a_table(
        pages: dict[str, str], rec: object) -> None:
    page = pages["html"]
    everything = charts.evidence(rec)
    assert len(everything) > 80  # fleet size: a hundred configs tried, ~90 passed
    bars = page[_section(page, "Charts"):_section(page, "Paste into your serving code")]
    speed_svg = bars.split("<svg")[2]  # the second chart: speedups
    names = re.findall(r"<text class='name'[^>]*>.*?<title>(.*?)</title>", speed_svg)
    assert len(names) == report.TOP_BARS
    assert rec.best.label in [html.unescape(n) for n in names]
    shown, rest = report.speedup_split({"charts": {"speedups": charts.speedups(rec)}})
    assert len(shown) == report.TOP_BARS and len(rest) == len(charts.speedups(rec)) - len(shown)
    assert f"the fastest {report.TOP_BARS} of {len(shown) + len(rest)} configs" in page

    evidence = page[_section(page, "Evidence"):]
    full = _rows(evidence)
    assert len(full) <= report.EVIDENCE_ROWS + 2  # the pick and the baseline beyond the top
    assert f"{rec.best.label} (recommended)" in [r[0] for r in full]
    assert any(r[0].endswith("(baseline)") for r in full)
    others = _rows(evidence[evidence.index("<details><summary>The other"):])
    assert f"<summary>The other {len(others)} configs</summary>" in evidence
    labels = [r[0].removesuffix(" (recommended)").removesuffix(" (baseline)")
              for r in full + others]  # fmt: skip
    assert sorted(labels) == sorted(r.label for r in everything)  # each config once, none lost
    md = pages["md"]
    speed_md = md[md.index("## Speedup per config"):md.index("## Kernels")]
    assert speed_md.count("█") and len(re.findall(r"^\| .* \| █+ \|$", speed_md, re.M)) == 15
    assert f"### The other {len(others)} configs" in md


def test_the_evidence_table_scrolls_inside_the_page(pages: dict[str, str]) -> None:
    page = pages["html"]
    evidence = page[_section(page, "Evidence"):]
    assert evidence.index("<div class=scroll><table class=num>") < evidence.index("<table")
    assert re.search(r"\.scroll\{overflow-x:auto", page)
    assert "<details><summary>The other" in evidence  # the long rest folded under its count


def test_the_snippet_is_what_recommend_f_python_prints(
        fleet_url: str, pages: dict[str, str], rec: object) -> None:
    printed = run("recommend", "reranker", "--db", fleet_url, "--fingerprint", HOST,
                  "-f", "python")  # fmt: skip
    assert printed.exit_code == 0, printed.output
    snippet = printed.stdout
    assert "model = torch.compile(model," in snippet
    pre = re.search(r"<pre class=snippet>(.*?)</pre>", pages["html"], re.S)
    assert pre is not None and html.unescape(pre.group(1)) == snippet
    block = re.search(r"```python\n(.*?)```\n", pages["md"], re.S)
    assert block is not None and block.group(1) == snippet
    device = re.search(r"# advisor recommendation for reranker on (.*?) \(", snippet)
    assert device is not None and snippet == to_python(rec, device_id=device.group(1))


def test_the_noisy_warning_names_a_handful_and_counts_the_rest(
        pages: dict[str, str], rec: object) -> None:
    noisy = [r.label for r in rec.ranked if r.noisy]
    assert len(noisy) > 50
    # the noise said once: one warning (why the figures cannot carry the answer, and which
    # configs were noisy), the headline "on noisy evidence" without saying why again
    (line,) = [w for w in pages["md"].splitlines() if w.startswith("**warning**: noisy")]
    which = line.split("; noisy timings in ", 1)[1]
    listed = which.split("): ", 1)[1].split(" and ")[0]
    assert listed.split(", ") == noisy[:report.NAMED]
    assert f" and {len(noisy) - report.NAMED} more;" in which
    assert len(line) < 600
    (headline,) = [w for w in pages["md"].splitlines() if w.startswith("**recommended")]
    assert headline.startswith("**recommended on noisy evidence**: ") and "noisy" not in (
        headline.split("**: ", 1)[1])
    # not in a green box: the amber one of an answer its evidence does not carry
    assert "<div class='pick undecided'><b>recommended on noisy evidence</b>" in pages["html"]


def _label_boxes(svg: str, char_w: float = 6.6) -> list[tuple[float, float, float, float]]:
    """Each written name's box from the SVG's coordinates: 11 px text, at most ``char_w`` px a
    character (Chromium's widest measured here: 6.3), 10 px above its baseline and 3 below."""
    boxes = []
    for x, y, anchor, text in re.findall(
            r"<text class='label' x='([\d.]+)' y='([\d.]+)' text-anchor='(\w+)'>(.*?)</text>",
            svg):  # fmt: skip
        w = char_w * len(html.unescape(text))
        x0 = float(x) - {"start": 0.0, "middle": w / 2, "end": w}[anchor]
        boxes.append((x0, float(y) - 10, x0 + w, float(y) + 3))
    return boxes


def _touch(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_no_two_scatter_labels_overlap(pages: dict[str, str], rec: object) -> None:
    svg = pages["html"].split("<svg")[1].split("</svg>")[0]
    boxes = _label_boxes(svg)
    assert len(boxes) >= 2
    assert not [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:] if _touch(a, b)]
    width = float(re.search(r"width='(\d+)'", svg).group(1))  # type: ignore[union-attr]
    assert all(b[0] >= 0 and b[2] <= width for b in boxes)
    assert f">{html.escape(rec.best.label)}</text>" in svg  # the pick is named
    assert svg.count("<title>") == len([p for p in charts.latency_points(rec)
                                        if p["median_ms"] is not None])  # every point: a tooltip


def test_labels_of_a_crowded_front_are_left_to_tooltips() -> None:
    """Forty points on one front, a pixel apart: the names that fit are written, the others
    are not (their tooltips say them), and none touches another."""
    points = [{"config": f"fp16 + reduce-overhead + dynamic=false #{i}", "mode": "default",
               "median_ms": 1.0 + i * 0.01, "cold_compile_s": 30.0 - i * 0.05,
               "pareto": True, "recommended": i == 7} for i in range(40)]  # fmt: skip
    svg = report.scatter_svg(points)
    boxes = _label_boxes(svg)
    assert 1 <= len(boxes) < 40
    assert not [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:] if _touch(a, b)]
    assert ">fp16 + reduce-overhead + dynamic=false #7</text>" in svg  # the pick first
    assert svg.count("<title>") == 40


@pytest.mark.slow
@pytest.mark.skipif(not CHROMIUM.is_file(), reason="needs Chromium: apt-get install -y chromium")
def test_the_page_laid_out_in_chromium(pages: dict[str, str]) -> None:
    """At 1280 x 900: the charts start on the first screen, nothing widens the page, and the
    written names measured by the browser's own fonts touch neither each other nor an edge."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM),
                                             args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(Path(pages["path"]).as_uri())
            got = page.evaluate("""() => {
              const top = e => e.getBoundingClientRect().top + window.scrollY;
              const box = t => { const b = t.getBBox(); return [b.x, b.y, b.x + b.width,
                                                                  b.y + b.height]; };
              const svgs = [...document.querySelectorAll('svg')];
              return {
                page: document.documentElement.scrollWidth, view: window.innerWidth,
                chart: top(svgs[0]), table: top(document.querySelector('table')),
                labels: [...svgs[0].querySelectorAll('text.label')].map(box),
                names: [...svgs[1].querySelectorAll('text.name, text.value')].map(box),
                widths: svgs.slice(0, 2).map(s => s.viewBox.baseVal.width),
              };
            }""")  # fmt: skip
        finally:
            browser.close()
    assert got["page"] <= got["view"], "something is wider than the page"
    assert got["chart"] < 900 and got["chart"] < got["table"]
    labels = got["labels"]
    assert len(labels) >= 2
    assert not [(a, b) for i, a in enumerate(labels) for b in labels[i + 1:] if _touch(a, b)]
    assert all(b[0] >= 0 and b[2] <= got["widths"][0] for b in labels)
    assert all(b[0] >= 0 and b[2] <= got["widths"][1] for b in got["names"])  # none clipped
