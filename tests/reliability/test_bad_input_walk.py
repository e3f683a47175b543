"""Every option of every command, given bad values: the table of options is generated from the
CLI itself (a new option lands in it, and fails here until it has bad values), each bad value
is tried on a command that is otherwise good, against a database holding one sweep, and each
must be clean: exit code 2, one `advisor: error:` line (or the CLI parser's usage error naming
the option), nothing on stdout, no traceback, nothing written (the database and every file as
they were). docs/trust.md quotes the count this walk measures.

Values a type allows and a command may take (a workload name that exists, `--screen 0`) are not
bad; each bad value below is one a user could type by mistake, or one a hostile user would."""

from __future__ import annotations

import re
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import typer
from reliability_support import sweep_support
from typer.testing import CliRunner

from advisor.db import ResultStore

FOUR = str(sweep_support.FOUR_DTYPES)
FP = "f000000000000000"  # make.fingerprint(0)'s fingerprint_hash
DOCS = sweep_support.REPO / "docs" / "trust.md"

# A good command line of each command; the option walked is added last (the last one wins), or
# replaces the positional argument walked. {tmp}: the test's folder; --db: the seeded database.
BASES: dict[str, list[str]] = {
    "check": ["check", "reranker", "--against", FP, "--fingerprint", FP],
    "compare": ["compare", "reranker"],
    "dashboard": ["dashboard"],
    "db current": ["db", "current"],
    "db upgrade": ["db", "upgrade"],
    "diff": ["diff", "1", "1"],
    "doctor": ["doctor"],
    "export": ["export"],
    "import": ["import", "{tmp}/good.json"],
    "list": ["list"],
    "recommend": ["recommend", "reranker", "--fingerprint", FP],
    "report": ["report", "reranker", "--fingerprint", FP, "-o", "{tmp}/report.html"],
    "show": ["show", "1"],
    "sweep": ["sweep", FOUR, "--device", "cpu", "--modes", "eager", "--dtypes", "fp32",
              "--no-warm"],
    "trial": ["trial", FOUR, "--device", "cpu", "--mode", "eager", "--no-warm"],
    "worker": ["worker", "1"],
}

INT = ["abc", "-1", "0", "99999999999999999999999"]
COUNT = ["abc", "-1", "0"]  # a count past any real one still means "all of them": not bad
FLOAT = ["abc", "nan", "inf", "-1"]
DB = ["nope", "mysql://user@host/db", "sqlite:////nonexistent-dir/results.db"]
INPUT_FILE = ["{tmp}/missing.{suffix}", "{tmp}/a-folder", "{tmp}/zero.{suffix}"]
OUTPUT_FILE = ["{tmp}/a-folder", "{tmp}/a-file/out.{suffix}", "{tmp}/no-such-folder/out.{suffix}"]

# option (its parameter's name), or "command:name" for one command's -> bad values
BAD: dict[str, list[str]] = {
    "db": DB,
    "fmt": ["xml", ""],
    "out": OUTPUT_FILE, "output": OUTPUT_FILE,
    "workload": ["", "  "],
    "sweep_id": INT,
    "sweep_a": INT, "sweep_b": INT,
    "device": ["tpu", "cuda:abc", "cuda:-1"],
    "fingerprint": ["zzzz", ""],
    "against": ["zzzz", ""],
    "policy": ["fastest", ""],
    "calls_per_process": COUNT,
    "max_compile_s": ["abc", "nan", "-1"],  # inf: no limit
    "max_memory": ["lots", "-1GiB", ""],
    "top": COUNT,
    "timeout_s": FLOAT,
    "file": INPUT_FILE,
    "files": INPUT_FILE,
    "baseline": INPUT_FILE,
    "fail_if_slower": ["much", "-5%", "nan"],
    "devices": ["", ","],
    "port": INT,
    "host": ["999.1.1.1"],
    "config": INPUT_FILE,
    "trials": COUNT,
    "budget": ["soon", "-5m", ""],
    "modes": ["warp", ","],
    "dtypes": ["fp64", ","],
    "fullgraph": ["perhaps"],
    "dynamic": ["maybe"],
    "options": ["nope=1", "max_autotune"], "option": ["nope=1", "max_autotune"],
    "shape": ["batch", "batch=0", "batch=99999999999", "nobatch=4"],
    "shapes": ["wobbly", ","],
    "traffic": INPUT_FILE,
    "holdout": FLOAT,
    "workers": INT,
    "jobs": INT,
    "screen": FLOAT,
    "sampler": ["annealing", ""],
    "keep_caches": ["", "{tmp}/a-file/caches", "/proc/nope"],
    "mode": ["warp", ""],
    "dtype": ["fp64", ""],
    "dashboard:db": ["nope", "mysql://user@host/db"],  # a missing file: the page says so
    "doctor:db": ["nope", "mysql://user@host/db"],  # one it cannot open: a check that FAILs
}
SUFFIX = {"import": "json", "check": "json", "report": "html"}  # else by option below
SUFFIX_OF = {"files": "py", "file": "py", "config": "toml", "traffic": "csv", "baseline": "json"}


@dataclass(frozen=True)
class Option:
    """One row of the table: a command, one of its parameters, how it is given."""

    command: str
    name: str
    flag: str  # the option's long name, or "ARG" for a positional argument
    kind: str  # int, float, path, text or flag (a flag takes no value: no bad value)


def _kind(annotation: Any) -> str:
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) is not None and args:
        return _kind(args[0])
    return {bool: "flag", int: "int", float: "float", Path: "path"}.get(annotation, "text")


def options_table() -> list[Option]:
    """Every parameter of every `advisor` command, read from the CLI."""
    from advisor.cli.main import app, register

    register()
    rows: list[Option] = []

    def walk(command: Any, path: list[str]) -> None:
        if hasattr(command, "commands"):
            for name, sub in sorted(command.commands.items()):
                walk(sub, [*path, name])
            return
        for param in command.params:
            longs = [o for o in param.opts if o.startswith("--")]
            flag = longs[0] if param.param_type_name == "option" else "ARG"
            kind = "flag" if getattr(param, "is_flag", False) else _kind(
                param.type_descriptor.annotation)
            rows.append(Option(" ".join(path), param.name, flag, kind))

    walk(typer.main.get_command(app), [])
    return rows


def bad_values(option: Option) -> list[str]:
    if option.kind == "flag":
        return []
    return BAD.get(f"{option.command}:{option.name}", BAD.get(option.name, []))


@dataclass(frozen=True)
class Case:
    option: Option
    value: str

    @property
    def id(self) -> str:
        return f"{option_id(self.option)}={self.value[:24]}"


def option_id(option: Option) -> str:
    return f"{option.command.replace(' ', '-')}:{option.name}"


TABLE = options_table()
CASES = [Case(o, v) for o in TABLE for v in bad_values(o)]


def test_every_option_that_takes_a_value_has_bad_values() -> None:
    """A new option (or command) is walked once it has bad values here."""
    missing = [option_id(o) for o in TABLE if o.kind != "flag" and not bad_values(o)]
    assert missing == []
    assert {o.command for o in TABLE} == set(BASES)


def test_the_docs_quote_the_count_this_walk_measures() -> None:
    options = [o for o in TABLE if o.kind != "flag"]
    said = (f"{len(CASES)} bad values of the {len(options)} options and arguments that take a "
            f"value, over the {len(BASES)} commands")
    assert said in " ".join(DOCS.read_text().split()), said


def _make(folder: Path, make: SimpleNamespace) -> str:
    """A database holding one finished sweep of one trial, a good (empty) export, a folder, a
    file, and /dev/zero behind each suffix."""
    url = f"sqlite:///{folder / 'results.db'}"
    with ResultStore.from_url(url) as store:
        sweep_id = store.create_sweep(make.workload(), make.fingerprint(), {}, "s", 1)
        store.add_trial(make.record(0), sweep_id)
        store.finish_sweep(sweep_id, "finished")
    (folder / "good.json").write_text("[]\n")
    (folder / "a-folder").mkdir()
    (folder / "a-file").write_text("x")
    for suffix in ("json", "py", "toml", "csv", "html"):
        (folder / f"zero.{suffix}").symlink_to("/dev/zero")
    return url


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, State]]:
    """The folder, the seeded database and what it holds (every case must leave it so: a
    case that wrote fails, and so does every case after it)."""
    from support import records as helpers

    make = SimpleNamespace(workload=helpers.make_workload, fingerprint=helpers.make_fingerprint,
                           record=helpers.make_record)
    folder = tmp_path_factory.mktemp("walk")
    url = _make(folder, make)
    yield folder, url, _state(url)


def _command(case: Case, folder: Path, url: str) -> list[str]:
    option = case.option
    suffix = SUFFIX_OF.get(option.name) or SUFFIX.get(option.command, "json")
    value = case.value.format(tmp=folder, suffix=suffix)
    args = [a.format(tmp=folder) for a in BASES[option.command]]
    if option.flag == "ARG":
        depth = len(option.command.split())
        args[depth] = value  # the command's first positional argument
    else:
        args += [option.flag, value]
    has_db = any(o.command == option.command and o.name == "db" for o in TABLE)
    if has_db and option.name != "db":
        args += ["--db", url]
    return args


def _files(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.lstat().st_mtime_ns for p in folder.rglob("*")
            if not p.name.startswith("results.db") and "__pycache__" not in p.parts}


State = tuple[list[Any], list[Any]]


def _state(url: str) -> State:
    with ResultStore.from_url(url, read_only=True) as store:
        return store.sweeps(), store.trials()


USAGE = re.compile(r"Usage: advisor .*(Invalid value|No such option|Missing|requires)", re.S)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_bad_value_is_refused_cleanly(case: Case, place: tuple[Path, str, State]) -> None:
    from advisor.cli.main import app, register

    folder, url, state = place
    register()
    before = _files(folder)
    args = _command(case, folder, url)
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{args}: a traceback") from result.exception
    err = result.stderr
    assert result.exit_code == 2, (args, result.exit_code, err, result.stdout[-500:])
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    one_line = len(lines) == 1 and lines[0].startswith("advisor: error: ")
    assert one_line or USAGE.search(err), (args, err)
    assert result.stdout == "", (args, result.stdout)
    assert _files(folder) == before, args
    assert _state(url) == state, args
