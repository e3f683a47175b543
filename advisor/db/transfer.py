"""Export files: trial records as JSON (a list of records) or CSV (one row per record).

JSON is lossless. CSV is for spreadsheets and imports too: text fields are written as they are,
everything else (numbers, booleans, lists, dicts) as JSON, and an empty cell is None; so the
only thing CSV loses is the difference between an empty text and None.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TextIO

from advisor.errors import StoreError

FORMATS = ("json", "csv")
TEXT_KEYS = frozenset({
    "trial_uuid", "status", "failure_reason", "error_tail", "started_at", "finished_at",
    "config_key", "device", "quality_name", "method", "sweep_uuid",
})  # fmt: skip


def write_records(records: Sequence[Mapping[str, Any]], out: TextIO, fmt: str) -> None:
    """Write records to ``out`` as ``json`` or ``csv``."""
    if fmt == "json":
        json.dump(records, out, indent=1)
        out.write("\n")
    elif fmt == "csv":
        _write_csv(records, out)
    else:
        raise StoreError(f"unknown export format {fmt!r}: choose one of {', '.join(FORMATS)}")


def _columns(records: Iterable[Mapping[str, Any]]) -> list[str]:
    columns: dict[str, None] = {}
    for record in records:
        columns.update(dict.fromkeys(record))
    return list(columns)


def _cell(key: str, value: Any) -> str:
    if value is None:
        return ""
    if key in TEXT_KEYS and isinstance(value, str):
        return value
    return json.dumps(value)


def _write_csv(records: Sequence[Mapping[str, Any]], out: TextIO) -> None:
    columns = _columns(records) or ["trial_uuid"]  # no records: the header `import` knows
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for record in records:
        writer.writerow([_cell(key, record.get(key)) for key in columns])


def read_records(path: str) -> list[dict[str, Any]]:
    """Records from an export file (``-``: stdin); JSON or CSV, told by suffix or content.
    Every record is checked as `advisor import` will store it (`check_records`), so that a bad
    file is refused before any database is opened."""
    text = _read_text(path)
    if not text.strip():
        return []  # an empty file: an export of nothing, as `[]` and a header-only CSV are
    is_json = path.endswith(".json") or (not path.endswith(".csv") and text.lstrip()[:1] in "[{")
    records = _parse_json(text, path) if is_json else _parse_csv(text, path)
    for i, record in enumerate(records):
        if not isinstance(record, dict):
            raise StoreError(f"{path}: entry {i} is not a trial record (a JSON object)")
    check_records(records)
    return records


def check_records(records: Sequence[Any]) -> None:
    """Check records for an import, without a database: everything a sweep's write is checked
    for (`writes.prepare`), then what `rows.check_imported` asks of a file from elsewhere
    (uuids, hashes, figures). Raises StoreError naming the first bad record."""
    from advisor.db import rows, writes

    for i, record in enumerate(records):
        writes.prepare(record, None, i)
        rows.check_imported(record, i)


def _loads(text: str, what: str) -> Any:
    """``json.loads``, its limits as one-line StoreErrors: nesting that exhausts the parser's
    recursion, a number past Python's digit limit for int()."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise StoreError(f"{what}: JSON nested too deeply to be an advisor export") from None
    except ValueError:  # "Exceeds the limit (4300 digits) for integer string conversion"
        raise StoreError(f"{what}: holds a number of thousands of digits, which no figure has: "
                         "not an advisor export") from None


def _read_text(path: str) -> str:
    """The file's text, read as this user and bounded (`advisor.paths.EXPORT_MAX_BYTES`)."""
    from advisor import paths

    if path != "-":
        paths.readable_file(path, "import file", StoreError,
                            missing=f"cannot read {path}: No such file or directory")
    return paths.read_text(path, "import file", paths.EXPORT_MAX_BYTES, error=StoreError,
                           fix="split it: `advisor export --workload NAME` per workload")


def _parse_json(text: str, path: str) -> list[Any]:
    try:
        data = _loads(text, path)
    except json.JSONDecodeError as e:
        raise StoreError(f"{path} is not valid JSON: {e}") from e
    if not isinstance(data, list):
        raise StoreError(f"{path} is not an advisor export: expected a JSON list of trial records")
    return data


def _parse_csv(text: str, path: str) -> list[dict[str, Any]]:
    csv.field_size_limit(2**31 - 1)
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        if not reader.fieldnames or "trial_uuid" not in reader.fieldnames:
            raise StoreError(f"{path} is not an advisor export: no trial_uuid column")
        return [_parse_row(row, path, reader.line_num) for row in reader]
    except csv.Error as e:
        raise StoreError(f"{path} is not valid CSV: {e}") from e


def _parse_row(row: dict[str, Any], path: str, line: int) -> dict[str, Any]:
    if None in row:
        raise StoreError(f"{path} line {line}: more cells than columns")
    record: dict[str, Any] = {}
    for key, cell in row.items():
        if cell is None or cell == "":
            record[key] = None
        elif key in TEXT_KEYS:
            record[key] = cell
        else:
            try:
                record[key] = _loads(cell, f"{path} line {line}: {key}")
            except json.JSONDecodeError:
                raise StoreError(f"{path} line {line}: {key} is not a JSON value") from None
    return record
