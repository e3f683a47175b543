"""advisor.settings: every ADVISOR_* variable in one table, read when called, written for
children in one place, and documented by a table generated from it (docs/settings.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import advisor
from advisor import settings
from advisor.errors import ConfigError

REPO = Path(advisor.__file__).resolve().parents[1]
SOURCES = [p for d in ("advisor", "dashboard", "migrations") for p in (REPO / d).rglob("*.py")
           if p != REPO / "advisor" / "settings.py"]


def test_the_docs_table_is_the_modules() -> None:
    text = (REPO / "docs" / "settings.md").read_text()
    _, begin, rest = text.partition(settings.BEGIN)
    table, end, _ = rest.partition(settings.END)
    assert begin and end, "docs/settings.md lost its table markers"
    assert table.strip() == settings.markdown_table().strip(), (
        "docs/settings.md's table differs from advisor.settings.SETTINGS: "
        "run python -m advisor.settings docs/settings.md")
    for s in settings.SETTINGS:
        assert f"| `{s.name}` |" in table


def test_every_setting_has_a_reader_named_after_it() -> None:
    names = [s.name for s in settings.SETTINGS]
    assert len(names) == len(set(names))
    for s in settings.SETTINGS:
        assert s.name.startswith("ADVISOR_")
        assert set(s.readers) <= {"parent", "child", "serving"} and s.readers
        assert set(s.set_by.split(", ")) <= {"user", "advisor"}
        assert callable(getattr(settings, s.name.removeprefix("ADVISOR_").lower()))


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _is_environ(node: ast.AST) -> bool:
    """os.environ, environ, or os.getenv."""
    if isinstance(node, ast.Attribute):
        return node.attr in ("environ", "getenv")
    return isinstance(node, ast.Name) and node.id in ("environ", "getenv")


def _environ_keys(tree: ast.AST) -> list[ast.AST]:
    """The key expressions of every environment read: environ[K], environ.get(K), getenv(K),
    environ.pop(K), K in environ."""
    keys: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and _is_environ(node.value):
            keys.append(node.slice)
        elif isinstance(node, ast.Call) and node.args:
            f = node.func
            if _is_environ(f) or (isinstance(f, ast.Attribute) and _is_environ(f.value)):
                keys.append(node.args[0])
        elif isinstance(node, ast.Compare) and any(_is_environ(c) for c in node.comparators):
            keys.append(node.left)
    return keys


def test_no_module_but_settings_names_a_variable() -> None:
    """Outside advisor/settings.py no code spells a variable of the table (docstrings may) and
    no environment read takes an ADVISOR_ name spelled out (a variable missing from the table)."""
    names = {s.name for s in settings.SETTINGS}
    offenders = []
    for path in SOURCES:
        tree = ast.parse(path.read_text())
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and node.value in names and id(node) not in docs):
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno} {node.value}")
        for key in _environ_keys(tree):
            for sub in ast.walk(key):
                if (isinstance(sub, ast.Constant) and isinstance(sub.value, str)
                        and sub.value.startswith("ADVISOR_")):
                    offenders.append(f"{path.relative_to(REPO)}:{sub.lineno} reads {sub.value}")
    assert offenders == [], "use advisor.settings instead: " + "; ".join(offenders)


def test_the_check_sees_an_environment_read() -> None:
    tree = ast.parse('import os\nos.environ.get("ADVISOR_X")\nos.getenv("ADVISOR_Y")\n'
                     '"ADVISOR_Z" in os.environ\nos.environ["ADVISOR_W"]\n')
    keys = [k.value for k in _environ_keys(tree) if isinstance(k, ast.Constant)]
    assert sorted(keys) == ["ADVISOR_W", "ADVISOR_X", "ADVISOR_Y", "ADVISOR_Z"]


def test_readers_read_when_called(monkeypatch: pytest.MonkeyPatch) -> None:
    for s in settings.SETTINGS:
        monkeypatch.delenv(s.name, raising=False)
    assert settings.heartbeat_s() == 5 and settings.sweep_dead_after_s() == 120.0
    assert settings.db_url() is None and settings.measure_core() == set()
    assert settings.recompile_limit() is None and settings.replay_requests() == 300
    assert settings.fingerprint_overrides() == {} and settings.log_level() is None
    monkeypatch.setenv("ADVISOR_HEARTBEAT_S", "2")
    monkeypatch.setenv("ADVISOR_SWEEP_DEAD_AFTER_S", "0.5")
    monkeypatch.setenv("ADVISOR_MEASURE_CORE", "14, 15")
    monkeypatch.setenv("ADVISOR_RESERVED_CORES", "none")
    monkeypatch.setenv("ADVISOR_FINGERPRINT_OVERRIDES", '{"torch_version": "0.0-x"}')
    monkeypatch.setenv("ADVISOR_LOG_LEVEL", "info")
    monkeypatch.setenv("ADVISOR_DB_URL", "")
    assert settings.heartbeat_s() == 2 and settings.sweep_dead_after_s() == 0.5
    assert settings.measure_core() == {14, 15} and settings.reserved_cores() == set()
    assert settings.fingerprint_overrides() == {"torch_version": "0.0-x"}
    assert settings.log_level() == "INFO"
    assert settings.db_url() is None and settings.is_set(settings.DB_URL)


@pytest.mark.parametrize(("name", "value", "reader"), [
    ("ADVISOR_HEARTBEAT_S", "0", settings.heartbeat_s),
    ("ADVISOR_REPLAY_REQUESTS", "ten", settings.replay_requests),
    ("ADVISOR_RECOMPILE_LIMIT", "-3", settings.recompile_limit),
    ("ADVISOR_FINGERPRINT_OVERRIDES", "[1]", settings.fingerprint_overrides),
    ("ADVISOR_PROBED_FINGERPRINT", "{not json", settings.probed_fingerprint),
])
def test_a_bad_value_names_its_variable(monkeypatch: pytest.MonkeyPatch, name: str, value: str,
                                        reader: object) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=name):
        reader()  # type: ignore[operator]


def test_child_env_writes_the_given_settings_over_a_base() -> None:
    base = {"PATH": "/bin", "ADVISOR_MEASURE_CORE": "none"}
    env = settings.child_env(base, {
        settings.DEVICE_LOCK: "/tmp/lock", settings.RESERVED_CORES: {15, 14},
        settings.PROBED_FINGERPRINT: {"a": 1}, settings.MEASURE_CORE: None,
    })
    assert env == {"PATH": "/bin", "ADVISOR_MEASURE_CORE": "none",
                   "ADVISOR_DEVICE_LOCK": "/tmp/lock", "ADVISOR_RESERVED_CORES": "14,15",
                   "ADVISOR_PROBED_FINGERPRINT": '{"a": 1}'}
    assert base == {"PATH": "/bin", "ADVISOR_MEASURE_CORE": "none"}  # a copy
