"""`advisor import` checks every record with the validators a sweep uses, all or nothing: one
bad record is one line naming its index and field, exit code 2, and nothing is written."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from reliability_support import advisor, one_line_error

from advisor.db import ResultStore


def _bad(field: str, value: Any) -> Any:
    def spoil(record: dict[str, Any]) -> None:
        if field.startswith("config."):
            record["config"] = {**record["config"], field.removeprefix("config."): value}
        elif field == "shapes[0].shape":
            record["shapes"][0]["shape"] = value
        else:
            record[field] = value
    return spoil


BAD = [
    ("config.mode", "warp", "unknown mode 'warp'"),
    ("config.dtype", "fp8x", "unknown dtype 'fp8x'"),
    ("config.fullgraph", "yes", "fullgraph"),
    ("config.dynamic", "sometimes", "dynamic"),
    ("config.shapes", "buckets:zigzag", "shape strategy"),
    ("config.colour", "red", "unknown config fields"),
    ("config", None, "config must be a dict"),
    ("config_key", "default/fp32/nope", "config_key"),
    ("failure_reason", "gremlins", "failure_reason 'gremlins'"),
    ("device", "tpu:0", "device 'tpu:0'"),
    ("shapes[0].shape", "batch=0", "shapes[0].shape"),
    ("status", "great", "status 'great'"),
    ("started_at", "yesterday", "started_at"),
]


@pytest.mark.parametrize(("field", "value", "says"), BAD, ids=[b[0] for b in BAD])
def test_one_bad_record_imports_nothing(
    field: str, value: Any, says: str, store_url: str, make: SimpleNamespace, tmp_path: Path
) -> None:
    records = [make.record(i) for i in range(4)]
    for r in records:
        r["sweep"] = None
    _bad(field, value)(records[2])
    path = tmp_path / "export.json"
    path.write_text(json.dumps(records))
    code, out, err = advisor("import", path, "--db", store_url)
    message = one_line_error(code, err)
    assert message.startswith(("trial record 2 ", "trial record 2:")), message
    assert says in message, message
    assert out == ""
    with ResultStore.from_url(store_url, read_only=True) as store:
        assert store.trials() == [] and store.sweeps() == []


def test_valid_records_import_and_every_reader_works(
    store_url: str, make: SimpleNamespace, tmp_path: Path
) -> None:
    records = [make.record(i) for i in range(5)]
    path = tmp_path / "export.json"
    path.write_text(json.dumps(records))
    code, out, err = advisor("import", path, "--db", store_url)
    assert code == 0, err
    assert out.startswith("imported 5 trials")
    for command in (("list",), ("compare", "reranker"), ("export",)):
        code, out, err = advisor(*command, "--db", store_url)
        assert code == 0, (command, err)


def test_a_sweep_stores_nothing_the_import_would_refuse(
    store: ResultStore, make: SimpleNamespace
) -> None:
    # the same validators for the sweep's own writes
    record = make.record(0)
    record["config"] = {**record["config"], "mode": "warp"}
    sweep_id = store.create_sweep(make.workload(), make.fingerprint(), {}, "s", 1)
    with pytest.raises(Exception, match="unknown mode 'warp'"):
        store.add_trial(record, sweep_id)
    assert store.trials() == []
