"""`advisor dashboard`: the results dashboard (Streamlit), read-only, on this machine by default.

Starts ``streamlit run dashboard/app.py`` in a child process, headless, bound to 127.0.0.1
unless ``--host`` says otherwise. The database URL travels in the child's environment
($ADVISOR_DB_URL), never on its command line; only its masked form is printed.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
from pathlib import Path

import typer

from advisor.cli.app import app
from advisor.cli.common import DbOption, fail, fail_on
from advisor.errors import AdvisorError

# dashboard/ sits next to advisor/ (in a checkout and in site-packages alike).
ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "dashboard" / "app.py"
DEFAULT_PORT = 8501
DASHBOARD_MODULES = ("streamlit", "altair", "pandas")  # the `dashboard` extra
# Streamlit's own command line, run after the libraries the pages use are imported (pandas,
# Altair, SQLAlchemy and the advisor modules they read with; not the pages' own modules, whose
# caches need Streamlit's runtime): the server listens only then, so a browser's first page finds
# them loaded instead of paying for them on its first script run.
PRELOAD = ("import sys\n"
           "import altair, pandas\n"
           "import advisor.db, advisor.presentation.charts, advisor.presentation.report\n"
           "import advisor.recommendation.answers, advisor.devices\n"
           "from streamlit.web.cli import main\n"
           "sys.argv[0] = 'streamlit'\n"
           "sys.exit(main())\n")
STREAMLIT_FLAGS = (
    "--server.headless", "true",
    "--server.fileWatcherType", "none",
    "--server.runOnSave", "false",
    "--browser.gatherUsageStats", "false",
    "--client.toolbarMode", "viewer",
)  # fmt: skip


@app.command()
def dashboard(
    db: str | None = DbOption,
    port: int = typer.Option(DEFAULT_PORT, "--port", help="Port to serve on."),
    host: str = typer.Option(
        "127.0.0.1",
        "--host",
        help="Address to listen on (default: this machine only; 0.0.0.0 opens it to the network).",
    ),
) -> None:
    """Open the results dashboard: recommendations, trials, fleet comparisons and sweeps."""
    missing = [name for name in DASHBOARD_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        fail(f"the dashboard needs {', '.join(missing)} (not installed): "
             "pip install 'advisor[dashboard]'")  # fmt: skip
    from advisor import settings
    from advisor.db.engine import masked_url

    try:
        url = _absolute_url(db)
    except AdvisorError as e:
        fail_on(e)
    if not 0 < port < 65536:
        fail(f"--port {port} is not a port number: use 1-65535")
    if not APP.is_file():
        fail(f"the dashboard's app is missing ({APP}): reinstall advisor")
    _check_free(host, port)
    path = os.environ.get("PYTHONPATH")
    env = settings.child_env(None, {settings.DB_URL: url})
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + path if path else "")
    command = [sys.executable, "-c", PRELOAD, "run", str(APP), "--server.address", host,
               "--server.port", str(port), *STREAMLIT_FLAGS]  # fmt: skip
    typer.echo(f"advisor dashboard: http://{host}:{port} reading {masked_url(url)} "
               "(Ctrl-C stops it)", err=True)  # fmt: skip
    raise typer.Exit(_run(command, env))


def _absolute_url(db: str | None) -> str:
    """The database URL to serve (as `ResultStore` resolves it), a SQLite path made absolute;
    a malformed or unsupported URL raises StoreError."""
    from advisor.db.engine import parse_url, resolve_url

    url = parse_url(resolve_url(db))
    database = url.database
    if url.get_backend_name() == "sqlite" and database and database != ":memory:":
        url = url.set(database=str(Path(database).expanduser().resolve()))
    return url.render_as_string(hide_password=False)


def _check_free(host: str, port: int) -> None:
    import socket  # not for `--help`

    try:
        with socket.create_server((host, port)):
            pass
    except OSError as e:
        fail(f"cannot listen on {host}:{port} ({e.strerror or e}): choose another --port "
             "or --host")  # fmt: skip


def _run(command: list[str], env: dict[str, str]) -> int:
    """Run Streamlit until it exits. Ctrl-C reaches it too (same process group); SIGTERM and
    SIGHUP sent to this process are passed on, so stopping `advisor dashboard` stops it."""
    process = subprocess.Popen(command, env=env)

    def forward(signum: int, _frame: object) -> None:
        process.send_signal(signum)

    passed_on = (signal.SIGTERM, signal.SIGHUP)
    previous = {signum: signal.signal(signum, forward) for signum in passed_on}
    try:
        return process.wait()
    except KeyboardInterrupt:
        try:
            return process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            return process.wait()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
