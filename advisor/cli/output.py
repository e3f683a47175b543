"""One output contract for the read commands (list, show, recommend, compare, export) and the
reports of import, worker, db current and trial.

``-f/--format {table,json,yaml,csv}`` (``--json`` is ``-f json``), ``-o/--output FILE`` (the
same text to a file instead of stdout), ``--flatten`` (CSV: one column per field, nested objects
as dotted columns: ``workload.name``, ``config.mode``, ``fingerprint.torch_version``; lists as
JSON text). JSON and YAML print the command's one document; CSV prints its rows. The shapes are
written down in docs/cli.md.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import typer

from advisor.errors import ConfigError

FORMATS = ("table", "json", "yaml", "csv")


def format_option(default: str = "table", choices: tuple[str, ...] = FORMATS) -> Any:
    return typer.Option(default, "--format", "-f", help=f"Output format: {', '.join(choices)}.")


JsonOption = typer.Option(False, "--json", help="The same as -f json.")
OutputOption = typer.Option(
    None, "--output", "-o", help="Write to this file instead of stdout.", show_default=False,
    readable=False,  # written, not read: advisor.paths.writable_file checks it
)
FlattenOption = typer.Option(
    False, "--flatten",
    help="CSV: one column per field (workload.name, config.mode, fingerprint.torch_version, "
    "...) instead of nested objects as JSON text.",
)


def resolve(fmt: str, as_json: bool, output: Path | None,
            choices: tuple[str, ...] = FORMATS) -> str:
    """The format asked for (``--json`` wins), checked, and the output file checked
    (`check_path`): a bad value raises ConfigError before anything is read or written."""
    fmt = "json" if as_json else fmt
    if fmt not in choices:
        raise ConfigError(f"unknown format {fmt!r}: choose one of {', '.join(choices)}")
    if output is not None:
        check_path(output)
    return fmt


def check_path(output: Path) -> None:
    """``-o FILE`` names a file this process can write: not a directory, in a folder that
    exists and that this user may enter and write to (`advisor.paths.writable_file`). Raises
    ConfigError (one line) otherwise."""
    from advisor import paths

    paths.writable_file(output, "-o")


def write_file(output: Path, text: str) -> None:
    """Write ``text`` to ``output`` whole or not at all: a regular file through a temporary
    file beside it, renamed over it once written (a full disk leaves no partial file); a device
    or a pipe (/dev/stdout) straight. A failure is the user's one line, exit code 2."""
    from advisor.cli.common import fail

    target = output.resolve() if output.is_symlink() else output
    try:
        if target.exists() and not target.is_file():
            with target.open("w", encoding="utf-8") as stream:
                stream.write(text)
            return
        _replace(target, text)
    except OSError as e:
        fail(f"-o {output}: cannot write it ({e.strerror or e}); nothing written: free space "
             "or choose another file")


def _replace(target: Path, text: str) -> None:
    import tempfile  # not for `--help`

    mode = target.stat().st_mode & 0o777 if target.exists() else 0o666 & ~_umask()
    fd, partial = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial",
                                   dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.chmod(partial, mode)
        os.replace(partial, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(value, default=str)


def to_csv(rows: Sequence[Mapping[str, Any]], flat: bool = False) -> str:
    """Rows as CSV: a header of every key seen (in order), one line per row."""
    import csv  # not for `--help`

    from advisor.frames import flatten  # one flattening: the CSV's and the DataFrames'

    rows = [flatten(r) if flat else r for r in rows]
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row.get(c)) for c in columns])
    return buffer.getvalue()


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return "nan"
        if value in (float("inf"), float("-inf")):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise ConfigError(f"cannot write {type(value).__name__} {value!r} as TOML")


def to_toml(tables: Mapping[str, Mapping[str, Any]]) -> str:
    """Tables of plain values (text, numbers, booleans, lists of them; None left out) as TOML,
    the format `tomllib` reads back to the same values."""
    lines: list[str] = []
    for name, table in tables.items():
        lines.append(f"[{name}]")
        for key, value in table.items():
            if value is not None:
                bare = key.replace("-", "").replace("_", "").isalnum() and key.isascii()
                lines.append(f"{key if bare else json.dumps(key)} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


def render_text(fmt: str, *, document: Any, rows: Callable[[], Sequence[Mapping[str, Any]]],
                table: Callable[[], None], flat: bool = False) -> str:
    """The text of one format: the document as JSON or YAML, the rows as CSV, or the table as
    the terminal shows it."""
    if fmt == "json":
        return json.dumps(document, indent=2, default=str) + "\n"
    if fmt == "yaml":
        from advisor.recommendation import to_yaml

        return to_yaml(json.loads(json.dumps(document, default=str)))
    if fmt == "csv":
        return to_csv(rows(), flat)
    if fmt == "toml":
        return to_toml(document)
    from advisor.cli import render

    with render.console.capture() as captured:
        table()
    return captured.get()


def line(text: str) -> Callable[[], None]:
    """The table of a command whose table is one line of text (printed whole, never wrapped)."""
    def table() -> None:
        from advisor.cli import render

        render.console.print(text, soft_wrap=True, markup=False, highlight=False)

    return table


def emit(fmt: str, output: Path | None, *, document: Any,
         rows: Callable[[], Sequence[Mapping[str, Any]]], table: Callable[[], None],
         flat: bool = False) -> None:
    """Print (or write to ``output``) the command's output in ``fmt``."""
    if output is None and fmt == "table":
        table()  # straight to the terminal: its width, its colours
        return
    text = render_text(fmt, document=document, rows=rows, table=table, flat=flat)
    if output is None:
        typer.echo(text, nl=False)
        return
    write_file(output, text)
    typer.echo(f"wrote {output}", err=True)
