"""Logging: the library logs under "advisor" and configures no handler; the `advisor` command
writes log lines to stderr at -v (DEBUG) or $ADVISOR_LOG_LEVEL, and none otherwise, with what
it prints unchanged."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from advisor.cli import logs
from advisor.cli.main import app, register

register()
LINE = re.compile(r"^\S+ \S+ (DEBUG|INFO|WARNING|ERROR) advisor[.\w]*\[\d+\]: .*\n?",
                  re.MULTILINE)  # a whole log line


@pytest.fixture(autouse=True)
def _no_handler_left(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("ADVISOR_LOG_LEVEL", raising=False)  # restored after -v handed it on
    yield
    monkeypatch.delenv("ADVISOR_LOG_LEVEL", raising=False)
    logs.configure(False)  # the command's handler removed


def _upgrade(tmp_path: Path, name: str, *flags: str) -> tuple[list[str], str, str]:
    """`advisor [flags] db upgrade` on a new database: (log levels seen, stderr without its log
    lines, stdout), the database's name written DB."""
    url = f"sqlite:///{tmp_path / name}"
    result = CliRunner().invoke(app, [*flags, "db", "upgrade", "--db", url])
    if "-v" in flags:  # -v hands $ADVISOR_LOG_LEVEL on to the processes it starts: here, this
        os.environ.pop("ADVISOR_LOG_LEVEL")  # one (the fixture restores it either way)
    assert result.exit_code == 0, result.output
    err = result.stderr.replace(name, "DB")
    return LINE.findall(err), LINE.sub("", err), result.stdout.replace(name, "DB")


def test_verbose_logs_debug_lines_and_prints_the_same(tmp_path: Path) -> None:
    levels, err, out = _upgrade(tmp_path, "a.db", "-v")
    assert "DEBUG" in levels and "INFO" in levels
    quiet_levels, quiet_err, quiet_out = _upgrade(tmp_path, "b.db")
    assert quiet_levels == []
    assert (out, err) == (quiet_out, quiet_err) and "created advisor's tables" in out


def test_the_level_variable_and_the_log_lines(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADVISOR_LOG_LEVEL", "info")
    levels, _, _ = _upgrade(tmp_path, "c.db")
    assert levels and set(levels) == {"INFO"}
    result = CliRunner().invoke(app, ["--verbose", "db", "upgrade", "--db",
                                      f"sqlite:///{tmp_path / 'd.db'}"])
    assert "schema created at" in result.stderr and "opening sqlite:///" in result.stderr


def test_a_bad_level_is_one_line_and_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADVISOR_LOG_LEVEL", "chatty")
    result = CliRunner().invoke(app, ["list"])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "advisor: error: ADVISOR_LOG_LEVEL='CHATTY' is not a log level: "
        "use DEBUG, INFO, WARNING or ERROR"]


def test_the_library_configures_no_handler() -> None:
    import advisor.db.schema  # noqa: F401 - modules that log, imported
    import advisor.search.launcher  # noqa: F401

    logger = logging.getLogger("advisor")
    assert logger.handlers == [] and logger.level == logging.NOTSET
    assert logging.getLogger("advisor.search.launcher").parent is logger
