"""Every option that takes a path, as an ordinary user meets it: a path under a folder it cannot
enter (another user's 0700 home folder), a file it cannot read, a folder it cannot write in.
Each is one line naming the path and what to do, exit code 2, and nothing written (it was a
~47-line PermissionError traceback, exit 1). The CLI runs as an unprivileged user (`nobody`,
or one made with useradd), through runuser (whose exec, unlike setpriv's first one, already
looks paths up as that user). A refused path is judged before any database is opened (the
first test below shows it with a PostgreSQL URL where no server listens), so those refusals run
on SQLite; `--keep-caches`, judged once the sweep has its database, and the user's own reads and
writes run on SQLite and PostgreSQL."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from reliability_support import advisor, one_line_error, sweep_support

from advisor.db import ResultStore

FOUR = sweep_support.FOUR_DTYPES
SWEEP = ("sweep", FOUR, "--device", "cpu", "--modes", "eager", "--dtypes", "fp32", "--no-warm")
FP = "f000000000000000"  # make.fingerprint(0)'s fingerprint_hash
USER = "advisor-probe"  # made when no unprivileged user is there to use

pytestmark = [  # some 90 commands as another user: a minute and a half
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("runuser"),
                       reason="needs root to act as another user (runuser)"),
]


def _user() -> pwd.struct_passwd:
    for name in ("nobody", USER):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    done = subprocess.run(["useradd", "--system", "--no-create-home", USER], capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"no unprivileged user, and useradd failed: {done.stderr.strip()}")
    return pwd.getpwnam(USER)


@dataclass
class Place:
    """Folders as the unprivileged user finds them: ``work`` its own (its working directory
    and SQLite databases), ``secret`` another user's 0700 folder, ``closed`` a folder it may
    enter and read but not write, whose files (``closed_*``) it may not read."""

    root: Path
    work: Path
    secret: Path
    closed: Path
    command: list[str]
    env: dict[str, str]


def _as_user(user: pwd.struct_passwd, home: Path) -> list[str]:
    return ["runuser", "-u", user.pw_name, "--", "env", f"HOME={home}"]


def _interpreter(user: pwd.struct_passwd, home: Path, env: dict[str, str]) -> list[str] | None:
    """A Python the user can run with advisor on its path: this one, else the system's of the
    same version with this environment's packages (this one may lie under root's 0700 home)."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for python in (sys.executable, shutil.which(version, path="/usr/bin:/usr/local/bin")):
        if python is None:
            continue
        done = subprocess.run([*_as_user(user, home), python, "-c",
                               "import advisor.cli.main, sqlalchemy, typer"],
                              env=env, capture_output=True, check=False)
        if done.returncode == 0:
            return [python, "-c", "from advisor.cli.main import main; main()"]
    return None


@pytest.fixture(scope="module")
def place() -> Iterator[Place]:
    user = _user()
    root = Path(tempfile.mkdtemp(prefix="advisor-unprivileged-", dir="/tmp"))
    try:
        root.chmod(0o755)
        work, secret, closed = root / "work", root / "secret", root / "closed"
        for folder in (work, secret, closed):
            folder.mkdir()
        os.chown(work, user.pw_uid, user.pw_gid)
        secret.chmod(0o700)  # another user's home folder
        closed.chmod(0o755)  # enter and list, not write
        for folder in (secret, closed):
            shutil.copy(FOUR, folder / "w.py")
            (folder / "t.csv").write_text("batch\n4\n")
            (folder / "s.toml").write_text('modes = ["eager"]\n')
            (folder / "good.json").write_text("[]\n")
        for f in closed.iterdir():
            f.chmod(0o600)  # root's own files
        env = {k: v for k, v in sweep_support.cli_env().items()  # the shared fork server is
               if k not in ("PYTHONPATH", "ADVISOR_FORK_SERVER_SOCKET")}  # root's: not its own
        env |= {"PYTHONPATH": f"{sweep_support.REPO}:{sysconfig.get_paths()['purelib']}"}
        command = _interpreter(user, work, env)
        if command is None:
            pytest.skip("no Python interpreter this user may run with advisor on its path")
        yield Place(root, work, secret, closed, [*_as_user(user, work), *command], env)
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def url(place: Place, backend: str, db_url: str, make: SimpleNamespace) -> Iterator[str]:
    """A database of the test's backend holding one finished sweep of one trial: a SQLite file
    in the user's own folder (its own), or the PostgreSQL database of `db_url`."""
    path = place.work / "results.db"
    found = f"sqlite:///{path}" if backend == "sqlite" else db_url
    with ResultStore.from_url(found) as store:
        sweep_id = store.create_sweep(make.workload(), make.fingerprint(), {}, "s", 1)
        store.add_trial(make.record(0), sweep_id)
        store.finish_sweep(sweep_id, "finished")
    owner = place.work.stat()
    for made in place.work.iterdir():
        os.chown(made, owner.st_uid, owner.st_gid)
    yield found
    for made in place.work.iterdir():
        made.unlink()


def _run(place: Place, *args: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*place.command, *map(str, args)], cwd=place.work, env=place.env,
                          capture_output=True, text=True, timeout=300, check=False)


def _state(url: str) -> tuple[list[Any], list[Any]]:
    with ResultStore.from_url(url, read_only=True) as store:
        return store.sweeps(), store.trials()


def _everything(place: Place) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in place.root.rglob("*") if p.is_file()}


def _refused(place: Place, url: str | None, args: tuple[Any, ...], *words: str) -> str:
    """Run ``args`` as the user: one line, exit 2, naming each of ``words``; the database and
    every file as they were."""
    before = _everything(place)
    state = _state(url) if url is not None else None
    done = _run(place, *args)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    line = lines[0]
    assert line.startswith("advisor: error: ") and "Traceback" not in done.stderr, line
    for word in words:
        assert word in line, line
    assert done.stdout == ""
    assert _everything(place) == before  # nothing written, nothing left beside
    if url is not None:
        assert _state(url) == state
    return line


def _output_commands(work: Path) -> list[tuple[str, tuple[Any, ...]]]:
    good = work / "empty.json"
    return [
        ("list", ("list",)), ("show", ("show", "1")),
        ("recommend", ("recommend", "reranker", "--fingerprint", FP)),
        ("compare", ("compare", "reranker")),
        ("report", ("report", "reranker", "--fingerprint", FP)),
        ("export", ("export",)), ("db-current", ("db", "current")),
        ("worker", ("worker", "1", "--device", "cpu")),
        ("import", ("import", good)),
        ("trial", ("trial", FOUR, "--device", "cpu", "--mode", "eager")),
    ]


OUTPUTS = ["list", "show", "recommend", "compare", "report", "export", "db-current", "worker",
           "import", "trial"]
UNREACHABLE = "postgresql+psycopg://advisor@127.0.0.1:1/none"  # no server listens on port 1
ON_SQLITE = pytest.mark.parametrize("backend", ["sqlite"])  # see the first test


def test_a_path_is_refused_before_any_database_is_opened(tmp_path: Path) -> None:
    """Each command of the refusals below (in this process: a folder that does not exist stands
    for one the user may not use), given a PostgreSQL URL where no server listens, names its
    path in one line, never the server: no backend is reached before the path is judged, so
    those refusals would run the same code on PostgreSQL. (`--keep-caches` is judged once the
    sweep has its database, so its refusals below run on both.)"""
    missing = tmp_path / "missing"
    (tmp_path / "empty.json").write_text("[]\n")

    def refused(*args: Any) -> str:
        db = ("--db", UNREACHABLE) if args[0] != "trial" else ()
        code, _, err = advisor(*args, *db)
        line = one_line_error(code, err)
        assert "127.0.0.1" not in line and "connect" not in line, (args, line)
        return line

    for which, args in _output_commands(tmp_path):
        target = missing / ("out.html" if which == "report" else "out.json")
        line = refused(*args, "-o", target)
        assert f"-o {target}" in line and "does not exist" in line, line
    for _, given, _ in INPUTS:
        assert str(missing) in refused(*given(missing))


@ON_SQLITE
@pytest.mark.parametrize("which", OUTPUTS)
@pytest.mark.parametrize("where", ["secret", "closed"])
def test_output_where_the_user_cannot_write_is_one_line(
    which: str, where: str, place: Place, url: str
) -> None:
    (place.work / "empty.json").write_text("[]\n")
    (place.work / "empty.json").chmod(0o644)
    args = dict(_output_commands(place.work))[which]
    folder = place.secret if where == "secret" else place.closed
    target = folder / ("out.html" if which == "report" else "out.json")
    db = ("--db", url) if which != "trial" else ()
    words = (f"-o {target}", f"cannot enter the folder {place.secret}") if where == "secret" \
        else (f"-o {target}", f"cannot write in {place.closed}")
    _refused(place, url, (*args, *db, "-o", target), *words)


INPUTS = [  # (id, the command's arguments given the file; the flag or name said)
    ("sweep-workload", lambda f: ("sweep", f / "w.py", "--device", "cpu"), "workload file"),
    ("trial-workload", lambda f: ("trial", f / "w.py", "--device", "cpu"), "workload file"),
    ("sweep-traffic", lambda f: (*SWEEP, "--traffic", f / "t.csv"), "--traffic"),
    ("trial-traffic", lambda f: ("trial", FOUR, "--device", "cpu", "--shapes", "dynamic",
                                 "--traffic", f / "t.csv"), "--traffic"),
    ("sweep-config", lambda f: ("sweep", "--config", f / "s.toml", FOUR), "--config"),
    ("import-file", lambda f: ("import", f / "good.json"), "import file"),
    ("check-baseline", lambda f: ("check", "reranker", "--baseline", f / "good.json"),
     "--baseline"),
    ("recommend-confirm-file", lambda f: ("recommend", "reranker", "--confirm", "--file",
                                          f / "w.py"), "--file"),
]


@ON_SQLITE
@pytest.mark.parametrize(("args", "flag"), [i[1:] for i in INPUTS], ids=[i[0] for i in INPUTS])
@pytest.mark.parametrize("where", ["secret", "closed"])
def test_a_file_the_user_cannot_read_is_one_line(
    args: Any, flag: str, where: str, place: Place, url: str
) -> None:
    folder = place.secret if where == "secret" else place.closed
    made = args(folder)
    db = ("--db", url) if made[0] != "trial" else ()
    said = (f"cannot enter the folder {place.secret}" if where == "secret"
            else "cannot read it")
    _refused(place, url, (*made, *db), flag, said)


@pytest.mark.parametrize("where", ["secret", "closed", "proc"])
def test_keep_caches_the_user_cannot_make_leaves_no_sweep_running(
    where: str, place: Place, url: str
) -> None:
    target = {"secret": place.secret / "caches", "closed": place.closed / "caches",
              "proc": Path("/proc/nope")}[where]
    _refused(place, url, (*SWEEP, "--keep-caches", target, "--db", url), "--keep-caches",
             str(target))
    assert all(s["status"] != "running" for s in _state(url)[0])


@pytest.mark.parametrize("args", [("list",), ("db", "upgrade"), (*SWEEP,), ("export",)],
                         ids=["list", "db-upgrade", "sweep", "export"])
@pytest.mark.parametrize("depth", ["in", "below"])
def test_a_sqlite_database_the_user_cannot_reach_is_one_line(
    args: tuple[Any, ...], depth: str, place: Place
) -> None:
    path = place.secret / ("r.db" if depth == "in" else "sub/r.db")
    _refused(place, None, (*args, "--db", f"sqlite:///{path}"),
             f"cannot enter the folder {place.secret}", "--db")
    assert sorted(p.name for p in place.secret.iterdir()) == ["good.json", "s.toml", "t.csv",
                                                              "w.py"]


def test_the_user_reads_and_writes_where_it_may(place: Place, url: str) -> None:
    """The same commands work for this user where the paths are its own: the refusals above
    are about the paths, not the user."""
    out = place.work / "list.json"
    done = _run(place, "list", "--db", url, "--json", "-o", out)
    assert done.returncode == 0, done.stderr
    assert '"reranker"' in out.read_text()
