"""The regression gate's baseline read from a file (`advisor check --baseline FILE`): an
`advisor export` of trial records, answered again the same way from a scratch SQLite database,
or an `advisor recommend --format json` / `--json` document (advisor.presentation.check, which
does no I/O, turns either into a `Baseline`)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from advisor.errors import ConfigError
from advisor.presentation.check import Baseline, from_document, from_recommendation


def read_baseline(path: str, workload: str, fingerprint: str | None) -> Baseline:
    """A baseline from a file: an `advisor export` (JSON or CSV trial records), or an
    `advisor recommend --format json` / `--json` document. ``fingerprint`` picks one of several
    fingerprints an export holds. A file nested too deeply to read is bad input too."""
    text = _read(path)
    data: Any = None
    try:
        if text.lstrip()[:1] in "[{":
            try:
                data = json.loads(text)
            except json.JSONDecodeError as e:
                raise ConfigError(f"{path} is not valid JSON: {e}") from e
        if isinstance(data, dict):
            return from_document(data, path, workload)
        return _from_export(path, workload, fingerprint)
    except RecursionError:  # json, the import and the records' checks all recurse
        raise ConfigError(f"{path} is nested too deeply to be a baseline: not an `advisor "
                          "export` or an `advisor recommend` document") from None


def _read(path: str) -> str:
    """The baseline's text, read as this user and bounded (`advisor.paths.EXPORT_MAX_BYTES`)."""
    from advisor import paths

    paths.readable_file(path, "--baseline", missing=f"cannot read --baseline {path}: No such "
                        "file or directory")
    return paths.read_text(path, "--baseline", paths.EXPORT_MAX_BYTES,
                           fix="pass an `advisor export --workload NAME` of one workload")


def _from_export(path: str, workload: str, fingerprint: str | None) -> Baseline:
    """Answer the export's trials the way the store answers them: imported into a scratch
    SQLite file, then `advisor.recommendation.answers.answer`."""
    from advisor.db import ResultStore
    from advisor.db.transfer import read_records
    from advisor.recommendation.answers import answer

    records = [r for r in read_records(path) if (r.get("workload") or {}).get("name") == workload]
    if not records:
        raise ConfigError(f"{path} holds no trial of workload {workload!r}")
    found = sorted({str(r.get("fingerprint_hash") or (r.get("fingerprint") or {})
                        .get("fingerprint_hash")) for r in records})
    if fingerprint is None and len(found) > 1:
        raise ConfigError(f"{path} holds {workload} on {len(found)} fingerprints "
                          f"({', '.join(found)}): pass --against to choose one")
    chosen = fingerprint or found[0]
    if chosen not in found:
        raise ConfigError(f"{path} holds no trial of {workload} on fingerprint {chosen} "
                          f"(it has {', '.join(found)})")
    with (tempfile.TemporaryDirectory(prefix=f"advisor-check-{os.getpid()}-") as where,
          ResultStore.from_url(f"sqlite:///{Path(where) / 'baseline.db'}") as store):
        store.import_records(records)
        rec = answer(store, workload, chosen)
    return from_recommendation(rec, f"{path} (fingerprint {chosen})")
