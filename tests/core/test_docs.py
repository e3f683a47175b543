"""The docs cannot drift silently: every path, `advisor.<module>` name, `Class.member` and test
that docs/architecture.md cites exists (read from the source, nothing imported), README.md keeps
its two commands as .ci/run runs them, and the docs' relative links lead to files."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ARCHITECTURE = REPO / "docs" / "architecture.md"
README = REPO / "README.md"
MAIN_JOB = ("python3 -m venv .venv && . .venv/bin/activate && pip install torch==2.13.0 && "
            "pip install -e '.[examples,dashboard]' && advisor sweep workloads/reranker.py")
PATH = re.compile(r"(?<![\w/.:])(?:advisor|tests|migrations|docs|dashboard|workloads|bench)"
                  r"/[\w/.-]*")
DOTTED = re.compile(r"(?<![\w.])advisor(?:\.\w+)+")
SPAN = re.compile(r"`([^`\n]+)`")


def _members(body: list[ast.stmt]) -> set[str]:
    """The names a module or class body defines (under `if TYPE_CHECKING:` too)."""
    names: set[str] = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.If):
            names |= _members(node.body) | _members(node.orelse)
    return names


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text())


def _module_file(dotted: str) -> Path | None:
    base = REPO.joinpath(*dotted.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _classes() -> dict[str, list[ast.ClassDef]]:
    found: dict[str, list[ast.ClassDef]] = {}
    for path in (REPO / "advisor").rglob("*.py"):
        for node in _tree(path).body:
            if isinstance(node, ast.ClassDef):
                found.setdefault(node.name, []).append(node)
    return found


def _resolves(dotted: str) -> bool:
    """``advisor.a.b.Name.member``: the longest prefix that is a module file, then a name that
    module defines, then (optionally) a member of that class."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        path = _module_file(".".join(parts[:cut]))
        if path is None:
            continue
        rest = parts[cut:]
        if not rest:
            return True
        body = _tree(path).body
        if rest[0] not in _members(body):
            return False
        if len(rest) == 1:
            return True
        classes = [n for n in body if isinstance(n, ast.ClassDef) and n.name == rest[0]]
        return len(rest) == 2 and any(rest[1] in _members(c.body) for c in classes)
    return False


def _text() -> str:
    return ARCHITECTURE.read_text()


def test_every_path_the_architecture_cites_exists() -> None:
    cited = {m.rstrip(".,") for m in PATH.findall(_text())}
    assert len(cited) > 20, "the page cites the code by path"
    assert sorted(p for p in cited if not (REPO / p).exists()) == []


def test_every_advisor_name_the_architecture_cites_exists() -> None:
    cited = set(DOTTED.findall(_text()))
    assert len(cited) > 40, "the page names the code"
    assert sorted(n for n in cited if not _resolves(n)) == []


def test_every_class_member_the_architecture_cites_exists() -> None:
    classes = _classes()
    cited = {s for s in SPAN.findall(_text()) if re.fullmatch(r"[A-Z]\w*\.\w+", s)}
    assert cited, "the page names methods as Class.member"
    missing = [s for s in sorted(cited) if not any(
        s.split(".")[1] in _members(c.body) for c in classes.get(s.split(".")[0], []))]
    assert missing == []


def test_every_test_the_architecture_names_exists() -> None:
    text = _text()
    files = {REPO / p.rstrip(".,") for p in PATH.findall(text) if p.startswith("tests/")}
    defined = {n.name for f in files if f.suffix == ".py"
               for n in _tree(f).body if isinstance(n, ast.FunctionDef)}
    named = {s for s in SPAN.findall(text) if re.fullmatch(r"test_\w+", s)}
    assert named and sorted(named - defined) == []


def test_the_resolver_refuses_what_does_not_exist() -> None:
    assert _resolves("advisor.search.sweep.Sweeper.run")
    assert _resolves("advisor.apply")  # the public API, imported on first use
    assert not _resolves("advisor.search.sweep.Sweeper.fly")
    assert not _resolves("advisor.search.nowhere")
    assert not _resolves("advisor.recommend.answers.answer")


def test_readme_keeps_the_main_job_and_the_test_command_ci_runs() -> None:
    # the README splits long commands over continuation lines, which the shell joins
    readme = " ".join(README.read_text().replace("\\\n", " ").split())
    assert MAIN_JOB in readme
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    tests = [" ".join(line.split()) for line in ci if line.strip().startswith("python -m pytest")]
    assert tests, ".ci/run runs pytest"
    for line in tests:
        assert line in readme, f"README.md's test command must be what .ci/run runs: {line}"
    assert "pip install -e '.[dev]'" in readme


@pytest.mark.parametrize("doc", ["README.md", "docs/architecture.md", "docs/performance.md"])
def test_relative_links_lead_to_files(doc: str) -> None:
    path = REPO / doc
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text())
    local = [link for link in links if "://" not in link]
    assert sorted(link for link in local if not (path.parent / link).exists()) == []
