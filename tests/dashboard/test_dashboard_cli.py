"""`advisor dashboard`: what it starts (Streamlit, headless, on localhost, the URL in the
environment only) and the one-line errors of a bad URL, port or address."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import advisor.cli.dashboard as dashboard_cli
from advisor.cli.app import app

runner = CliRunner()


class _Started:
    """Stands in for the Streamlit child: records how it was started, exits at once."""

    calls: list[dict[str, Any]] = []

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.calls.append({"command": command, "env": env})

    def wait(self, timeout: float | None = None) -> int:
        return 0


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    _Started.calls = []
    monkeypatch.setattr(dashboard_cli.subprocess, "Popen", _Started)
    monkeypatch.delenv("ADVISOR_DB_URL", raising=False)
    return _Started.calls


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_starts_streamlit_headless_on_localhost(
    started: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    port = _free_port()
    url = "postgresql+psycopg://advisor:s3cret@db.example:5432/results"
    result = runner.invoke(app, ["dashboard", "--db", url, "--port", str(port)])
    assert result.exit_code == 0, result.output
    (call,) = started
    command = call["command"]
    # Streamlit's command line, after the pages' libraries are imported (the server listens
    # with them loaded)
    assert command[1:4] == ["-c", dashboard_cli.PRELOAD, "run"]
    assert "from streamlit.web.cli import main" in command[2] and "pandas" in command[2]
    assert Path(command[4]) == dashboard_cli.APP and dashboard_cli.APP.is_file()
    flags = dict(zip(command[5::2], command[6::2], strict=True))
    assert flags["--server.address"] == "127.0.0.1" and flags["--server.port"] == str(port)
    assert flags["--server.headless"] == "true"
    assert flags["--browser.gatherUsageStats"] == "false"
    assert "s3cret" not in " ".join(command)  # the URL travels in the environment only
    assert call["env"]["ADVISOR_DB_URL"] == url
    assert call["env"]["PYTHONPATH"].split(":")[0] == str(dashboard_cli.ROOT)
    assert "advisor:***@db.example:5432/results" in result.output and "s3cret" not in result.output


def test_default_database_is_an_absolute_sqlite_path(
    started: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["dashboard", "--port", str(_free_port()), "--host", "localhost"])
    assert result.exit_code == 0, result.output
    (call,) = started
    assert call["env"]["ADVISOR_DB_URL"] == f"sqlite:///{tmp_path.resolve() / 'advisor.db'}"
    assert "--server.address" in call["command"] and "localhost" in call["command"]
    assert not (tmp_path / "advisor.db").exists()  # nothing written


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--db", "mysql://u:pw@h/db"], "unsupported database URL 'mysql://u:***@h/db'"),
        (["--port", "0"], "--port 0 is not a port number"),
        (["--port", "70000"], "--port 70000 is not a port number"),
        (["--host", "203.0.113.9"], "cannot listen on 203.0.113.9:"),
    ],
)
def test_mistakes_are_one_line_and_exit_2(
    started: list[dict[str, Any]], args: list[str], message: str
) -> None:
    result = runner.invoke(app, ["dashboard", *args])
    assert result.exit_code == 2
    assert result.output.startswith(f"advisor: error: {message}")
    assert len(result.output.strip().splitlines()) == 1
    assert not started


def test_a_port_in_use_is_refused(started: list[dict[str, Any]]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = runner.invoke(app, ["dashboard", "--port", str(port)])
    assert result.exit_code == 2
    assert f"cannot listen on 127.0.0.1:{port}" in result.output and "--port" in result.output
    assert not started
