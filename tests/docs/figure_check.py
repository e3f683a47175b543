"""Figures in the docs, read back from the raw files they cite (tests/docs/test_figures.py).

A *figure* is a number written with a unit of measurement: ``0.993 ms``, ``37.9 s``, ``7 min 57 s``,
``5.80x``, ``+197.5%``, ``633 CPU-seconds``, ``7.50 us``, ``3.9 MB``. A page is read in *units*:
a paragraph, a list item, a table row (with the paragraph that introduces its table) and a
fenced block. A unit's figures must each be found in one of the raw files the unit cites:

- a citation is a link or a code span naming a file under ``bench/results/`` (``[x](../bench/
  results/NAME)``, ``bench/results/NAME``, a bare ``NAME`` of a kept file, a glob ``..._2026*.md``
  or braces ``run{8,9}.md``; ``..._031323Z.txt`` after a full name is that name's sibling);
- a figure is found when some number of the file rounds to it at the figure's own precision
  (``5.80x`` matches 5.8, 5.7956 or 5.80; ``633`` matches 632.77); a time written
  ``7 min 57 s`` matches 477 s, ``0:07:57`` or ``7m57s``;
- a figure derived from others says so by arithmetic: ``A + B = C``, ``A / B = C``, ``A - B = C``
  or ``A * B = C`` (each of A, B found in a cited file, C what the arithmetic gives, rounded);
- a figure that no kept file holds carries ``(no raw file)`` (or ``(no raw file: why)``) after
  it in its sentence;
- what is not a measurement is written in a code span (flags, settings: ``--budget 2m``) or
  named by the word after it (``a 3% target``, ``the 10-minute aim``).

A fenced block marked ``text`` is an excerpt: each of its lines must be a verbatim part of a
line of a file the paragraph before it cites.

Everything here is pure: functions take the repository root, so a test can point them at a
copy (tmp_path) and show that a changed figure or a changed file fails."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cache
from pathlib import Path

RESULTS = Path("bench") / "results"
NO_FILE = "(no raw file)"
NOT_RESULTS = {"README.md", "MANIFEST.sha256"}  # the folder's index and checksums

_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_UNIT = r"CPU-seconds|CPU-s|CPU\s+seconds|seconds|ms|us|s|min|MB|MiB|GiB|GB|KiB|%"  # "5.80x": tight
_SIGNED = rf"[+\-\u2212]?(?:{_NUM})"
# "7 min 57 s" (a time in minutes and seconds), or "NUM[-NUM] UNIT".
FIGURE = re.compile(
    rf"(?<![\w.])(?P<m>\d+)\s+min\s+(?P<s>\d+(?:\.\d+)?)\s*s\b"
    rf"|(?<![\w.])(?P<a>{_SIGNED})(?:\s*(?:-|\u2013|to|\.\.)\s*(?P<b>{_SIGNED}))?"
    rf"(?:(?P<tight>x|%)|\s?(?P<unit>{_UNIT}))(?![\w-])"
)
# A number that is a target, a limit or a confidence level, not a measurement: named so by the
# word after it ("a 3% target", "the 95% interval") or before it ("at most 30 s", "within 2% of").
NOT_MEASURED = re.compile(r"\s*(?:-?\s*)(?:targets?|aims?|goals?|limits?|deadlines?|budgets?|"
                          r"thresholds?|cap|intervals?|CI|confidence)\b", re.IGNORECASE)
TARGET_BEFORE = re.compile(r"(?:(?:target|aim|goal|limit|deadline|threshold)s?\s+(?:of\s+)?"
                           r"|at most\s+|at least\s+|<=\s*|\u2264\s*)$", re.IGNORECASE)
WITHIN = re.compile(r"within\s+$")  # "within 2% of the leader": a rule's margin
CODE_SPAN = re.compile(r"`[^`]*`")  # may run over a line break, as in markdown
LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*```(\w*)")
HEADING = re.compile(r"^(#+)\s+(.*\S)\s*$")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(*\[`])")
# Between two operands: the operator, and a word that names the next one ("user 1.0 s + sys 0.2 s").
DERIVED = re.compile(r"\s*(?P<op>[+\-/*\u00d7])\s*(?:[a-z]+\s+)?")


@dataclass
class Unit:
    """A paragraph, list item, table row or fenced block of a page."""

    page: str
    line: int
    text: str
    kind: str = "prose"  # prose | row | excerpt
    context: str = ""  # the paragraph that introduces a table or an excerpt


@dataclass
class Figure:
    text: str
    start: int
    end: int
    values: list[Decimal] = field(default_factory=list)
    minutes_seconds: bool = False
    unit: str = ""


# A size may be written in the file in bytes: "3.9 MB" matches 3,931,297.
SCALES = {"MB": Decimal(10) ** 6, "GB": Decimal(10) ** 9, "KiB": Decimal(2) ** 10,
          "MiB": Decimal(2) ** 20, "GiB": Decimal(2) ** 30}


def kept_files(root: Path) -> dict[str, Path]:
    """Every kept result file by name (bench/results and bench/results/archive)."""
    base = root / RESULTS
    return {p.name: p for p in sorted(base.rglob("*"))
            if p.is_file() and p.name not in NOT_RESULTS and "__pycache__" not in p.parts}


def split_units(page: str, text: str) -> list[Unit]:
    """The page's units, in order (headings are skipped; see the module docstring)."""
    units: list[Unit] = []
    lines = text.splitlines()
    block: list[str] = []
    block_start = 0
    last_prose = ""
    i = 0

    def flush() -> None:
        nonlocal last_prose
        if block:
            unit = Unit(page, block_start + 1, "\n".join(block))
            units.append(unit)
            last_prose = unit.text
            block.clear()

    while i < len(lines):
        line = lines[i]
        fence = FENCE.match(line)
        if fence:
            flush()
            start = i
            i += 1
            body: list[str] = []
            while i < len(lines) and not FENCE.match(lines[i]):
                body.append(lines[i])
                i += 1
            if fence.group(1) == "text":
                units.append(Unit(page, start + 1, "\n".join(body), "excerpt", last_prose))
            i += 1
            continue
        if not line.strip() or HEADING.match(line):
            flush()
        elif line.lstrip().startswith("|"):
            flush()
            if not re.fullmatch(r"\s*\|[\s:|-]*\|\s*", line):  # not the --- separator row
                units.append(Unit(page, i + 1, line, "row", last_prose))
        elif re.match(r"\s*(?:[-*]|\d+\.)\s", line):
            flush()
            block_start = i
            block.append(line)
        else:
            if not block:
                block_start = i
            block.append(line)
        i += 1
    flush()
    return units


def sections(text: str, headings: list[str]) -> str:
    """Only the parts of a page under the given headings (each to the next heading of its
    level or above); the other lines are blanked, so line numbers stay the page's."""
    lines = text.splitlines()
    keep = [False] * len(lines)
    level = 0
    on = False
    fenced = False
    for n, line in enumerate(lines):
        if FENCE.match(line):
            fenced = not fenced
        head = None if fenced else HEADING.match(line)
        if head:
            depth = len(head.group(1))
            if on and depth <= level:
                on = False
            if head.group(2) in headings:
                on, level = True, depth
        keep[n] = on
    return "\n".join(line if k else "" for line, k in zip(lines, keep, strict=True))


def citations(root: Path, text: str) -> list[str]:
    """The names of the kept files a unit cites, in order; unresolved ones as written."""
    files = kept_files(root)
    found: list[str] = []
    candidates: list[str] = []
    for match in LINK.finditer(text):
        candidates.append(match.group(2))
    for match in CODE_SPAN.finditer(text):
        candidates.extend(match.group(0).strip("`").split())
    candidates.extend(re.findall(r"(?<![\w/.])(?:\.\./)?bench/results/[\w.{},*/-]+", text))
    for cand in candidates:
        cand = cand.split("#")[0].rstrip(".,;:)")
        if "<" in cand or cand.endswith(("_", "-")):
            continue  # a name's template (``cli_startup_<UTC>.json``), not a file
        for name in _expand(cand):
            if name.startswith("..._") or name.startswith("…_"):
                resolved = _sibling(name.split("_", 1)[1], found, files)
                if resolved:
                    found.append(resolved)
                continue
            base = name.split("/")[-1]
            if not base:
                continue
            if "/bench/results/" not in f"/{name}" and base not in files:
                continue  # not a result file (a script, a doc)
            if "*" in base:
                found.extend(sorted(f for f in files if fnmatch.fnmatch(f, base)))
            elif base not in found and base not in NOT_RESULTS:
                found.append(base)
    return found


def _expand(name: str) -> list[str]:
    brace = re.search(r"\{([^{}]*)\}", name)
    if not brace:
        return [name]
    head, tail = name[: brace.start()], name[brace.end():]
    return [x for part in brace.group(1).split(",") for x in _expand(head + part + tail)]


def _sibling(suffix: str, found: list[str], files: dict[str, Path]) -> str | None:
    """``..._031323Z.txt`` after ``fast_lane_cpu_20261205T030718Z.txt``: the kept file ending
    so that shares the longest start with the name cited before it (with no name before it: the
    only kept file ending so, if there is one)."""
    ends = [f for f in files if f.endswith(suffix)]
    if not found:
        return ends[0] if len(ends) == 1 else None  # the one kept file ending so
    prev = found[-1]

    def shared(name: str) -> int:
        n = 0
        while n < min(len(name), len(prev)) and name[n] == prev[n]:
            n += 1
        return n

    return max(ends, key=shared) if ends else None


def _number(text: str) -> Decimal:
    return Decimal(text.replace(",", "").replace("\u2212", "-").lstrip("+-"))


def figures(text: str) -> list[Figure]:
    """The figures of a unit's text, code spans and link targets blanked first."""
    clean = _blank(text)
    found: list[Figure] = []
    for m in FIGURE.finditer(clean):
        after = clean[m.end():]
        before = clean[: m.start()]
        if (NOT_MEASURED.match(after) or TARGET_BEFORE.search(before)
                or (WITHIN.search(before) and re.match(r"\s+of\b", after))):
            continue
        if m.group("m") is not None:
            total = Decimal(m.group("m")) * 60 + Decimal(m.group("s"))
            found.append(Figure(m.group(0), m.start(), m.end(), [total], True))
            continue
        values = [_number(m.group("a"))]
        if m.group("b") is not None:
            values.append(_number(m.group("b")))
        unit = m.group("tight") or m.group("unit") or ""
        found.append(Figure(m.group(0), m.start(), m.end(), values, unit=unit))
    return found


def _blank(text: str) -> str:
    """Code spans, link targets and a link's text (a file name) replaced by spaces, so that
    positions stay put."""
    def spaces(m: re.Match[str]) -> str:
        return " " * len(m.group(0))

    text = CODE_SPAN.sub(spaces, text)
    text = LINK.sub(lambda m: " " * len(m.group(0)), text)
    return re.sub(r"(?<![\w/])(?:\.\./)?bench/results/\S+", spaces, text)


def _decimals(value: Decimal) -> int:
    exponent = value.as_tuple().exponent
    return -exponent if isinstance(exponent, int) and exponent < 0 else 0


@cache
def _numbers_of(path: Path, stamp: float) -> tuple[Decimal, ...]:
    text = path.read_text(encoding="utf-8", errors="replace")
    nums = [_number(t) for t in re.findall(_NUM, text)]
    for h, m, s in re.findall(r"(?<!\d)(\d+):(\d\d):(\d\d(?:\.\d+)?)", text):
        nums.append(Decimal(h) * 3600 + Decimal(m) * 60 + Decimal(s))
    for m, s in re.findall(r"(?<![\w.])(\d+)m(\d+(?:\.\d+)?)s", text):
        nums.append(Decimal(m) * 60 + Decimal(s))
    for m, s in re.findall(r"(?<![\w.])(\d+) min (\d+(?:\.\d+)?) s\b", text):
        nums.append(Decimal(m) * 60 + Decimal(s))
    return tuple(nums)


def numbers_in(path: Path) -> tuple[Decimal, ...]:
    return _numbers_of(path, path.stat().st_mtime)


def rounds_to(candidate: Decimal, figure: Decimal) -> bool:
    """True when ``candidate`` written at ``figure``'s precision is ``figure``."""
    half = Decimal(5) * Decimal(10) ** (-_decimals(figure) - 1)
    return abs(candidate - figure) <= half


def found_in(value: Decimal, paths: list[Path], unit: str = "") -> bool:
    scales = [Decimal(1)] + ([SCALES[unit]] if unit in SCALES else [])
    return any(rounds_to(n / scale, value)
               for p in paths for n in numbers_in(p) for scale in scales)


def _derived(clean: str, figs: list[Figure], k: int) -> tuple[bool, list[int]]:
    """Whether figure k is the result of ``A op B [op C ...] = k``; the operands' indexes."""
    eq = clean[figs[k - 1].end: figs[k].start] if k else ""
    if k == 0 or not re.fullmatch(r"\s*=\s*", eq):
        return False, []
    operands = [k - 1]
    ops: list[str] = []
    j = k - 1
    while j > 0:
        gap = clean[figs[j - 1].end: figs[j].start]
        op = DERIVED.fullmatch(gap)
        if not op:
            break
        ops.insert(0, op.group("op"))
        operands.insert(0, j - 1)
        j -= 1
    if not ops:
        return False, []
    vals = [figs[i].values[0] for i in operands]
    total = vals[0]
    slack = Decimal(5) * Decimal(10) ** (-_decimals(vals[0]) - 1)
    for op, v in zip(ops, vals[1:], strict=True):
        slack += Decimal(5) * Decimal(10) ** (-_decimals(v) - 1)
        if op == "+":
            total += v
        elif op == "-":
            total -= v
        elif op in "*\u00d7":
            total *= v
        else:
            total /= v
    stated = figs[k].values[0]
    if op_is_ratio := any(o in "/*\u00d7" for o in ops):
        slack = abs(total) * Decimal("0.005") + slack / max(min(vals), Decimal("1e-9"))
    del op_is_ratio
    half = Decimal(5) * Decimal(10) ** (-_decimals(stated) - 1)
    return abs(total - stated) <= half + slack, operands


def check_unit(root: Path, unit: Unit, known: set[Decimal] | None = None) -> list[str]:
    """What is wrong with one unit: each figure no cited file holds, each citation that leads
    nowhere, an excerpt line no cited file holds. ``known``: the results of the arithmetic
    checked so far on the page (a sum stated once may be quoted again); this unit's are added."""
    known = set() if known is None else known
    files = kept_files(root)
    own = citations(root, unit.text)
    # A table row or an excerpt that cites nothing itself reads the files of the paragraph
    # that introduces it.
    cited = own if own or unit.kind == "prose" else citations(root, unit.context)
    where = f"{unit.page}:{unit.line}"
    problems = [f"{where}: cites {c}, which is not kept" for c in own if c not in files]
    paths = [files[c] for c in cited if c in files]
    if unit.kind == "excerpt":
        if not paths:
            return [f"{where}: an excerpt (```text) whose paragraph cites no kept file"]
        lines = [ln for p in paths for ln in p.read_text(errors="replace").splitlines()]
        for line in unit.text.splitlines():
            if line.strip() and not any(line.strip() in ln for ln in lines):
                problems.append(f"{where}: excerpt line not in {_names(cited)}: {line!r}")
        return problems
    clean = _blank(unit.text)
    figs = figures(unit.text)
    operands: set[int] = set()
    derived: set[int] = set()
    for k in range(len(figs)):
        ok, used = _derived(clean, figs, k)
        if used:
            operands.update(used)
            if not ok:
                problems.append(f"{where}: {figs[k].text!r} is not what its arithmetic gives")
            else:
                known.add(figs[k].values[0])
            derived.add(k)
    for k, fig in enumerate(figs):
        if k in derived:
            continue
        if _marked_no_file(clean, fig) or all(v in known for v in fig.values):
            continue
        if not paths:
            problems.append(f"{where}: {fig.text!r} names no raw file (cite one, or mark it "
                            f"{NO_FILE})")
            continue
        missing = [v for v in fig.values if not found_in(v, paths, fig.unit)]
        if missing:
            problems.append(f"{where}: {fig.text!r} is not in {_names(cited)}")
    return problems


def _names(cited: list[str]) -> str:
    return ", ".join(cited[:3]) + (f" (and {len(cited) - 3} more)" if len(cited) > 3 else "")


def _marked_no_file(clean: str, fig: Figure) -> bool:
    """``(no raw file)`` after the figure, in the same sentence."""
    rest = clean[fig.end:]
    stop = SENTENCE_END.search(rest)
    sentence = rest[: stop.start()] if stop else rest
    return NO_FILE.rstrip(")") in sentence  # "(no raw file)", "(no raw file: an example)"


def check_page(root: Path, page: str, headings: list[str] | None = None,
               paragraphs: list[str] | None = None) -> list[str]:
    """Every problem of a page; or of the sections under ``headings`` and the units that start
    with one of ``paragraphs``, when either is given."""
    text = (root / page).read_text(encoding="utf-8")
    units = split_units(page, text)
    if headings is not None or paragraphs is not None:
        kept = {u.line for u in split_units(page, sections(text, headings or []))}
        units = [u for u in units if u.line in kept
                 or any(u.text.startswith(p) for p in paragraphs or [])]
    known: set[Decimal] = set()
    return [p for unit in units for p in check_unit(root, unit, known)]


def result_links(root: Path, page: str) -> list[str]:
    """The bench/results paths a page links to or names in full that do not exist."""
    path = root / page
    text = path.read_text(encoding="utf-8")
    missing = []
    for target in [m.group(2) for m in LINK.finditer(text)] + re.findall(
            r"(?<![\w/.])(?:\.\./)?bench/results/[\w.{},*/-]*[\w*}]", text):
        target = target.split("#")[0]
        if "bench/results" not in target and "results/" not in target:
            continue
        if "<" in target or target.endswith(("_", "-")):
            continue
        for name in _expand(target):
            base = (path.parent / name) if name.startswith(("..", "results")) else root / name
            if name.startswith("bench/"):
                base = root / name
            if "*" in name:
                if not list(base.parent.glob(base.name)):
                    missing.append(target)
            elif not base.exists():
                missing.append(target)
    return sorted(set(missing))
