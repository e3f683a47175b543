"""Traffic: parsing request logs (good and bad), the trace, the trial spec round trip."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.errors import ConfigError
from advisor.traffic import Traffic, load_traffic, parse_traffic

DIMS = ["batch", "seq"]


def test_rows_become_weighted_distinct_shapes() -> None:
    text = "batch,seq\n50,128\n10,64\n50,128\n50,128\n"
    traffic = parse_traffic(text, "requests.csv", DIMS)
    assert traffic.shapes == (({"batch": 10, "seq": 64}, 0.25), ({"batch": 50, "seq": 128}, 0.75))
    assert traffic.requests == 4
    assert traffic.source == "requests.csv"
    assert traffic.varying_dims() == ["batch", "seq"]


def test_columns_in_any_order_spaces_comments_blank_lines_and_counts() -> None:
    text = (
        "\ufeff# exported from the gateway\n seq , batch ,count\n\n128, 50, 3\n# a note\n64,10,1\n"
    )
    traffic = parse_traffic(text.removeprefix("\ufeff"), "log.csv", DIMS)
    assert traffic.shapes == (({"batch": 10, "seq": 64}, 0.25), ({"batch": 50, "seq": 128}, 0.75))
    assert list(traffic.shapes[0][0]) == DIMS  # the workload's dim order
    assert traffic.requests == 4


def test_a_bom_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "requests.csv"
    path.write_bytes("\ufeffbatch,seq\n2,7\n".encode())
    assert load_traffic(path, DIMS).shapes == (({"batch": 2, "seq": 7}, 1.0),)


def test_without_workload_dims_the_header_decides() -> None:
    traffic = parse_traffic("n\n3\n5\n", "t")
    assert traffic.dims == ["n"]
    assert traffic.values("n") == [3, 5]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", ["empty", "header", "batch,seq"]),
        ("\n\n# nothing\n", ["empty"]),
        ("batch,seq\n", ["no requests after the header"]),
        ("batch,seq\n\n\n", ["no requests"]),
        ("batch,tokens\n1,2\n", ["line 1", "'tokens'", "not a dim", "batch, seq"]),
        ("batch\n1\n", ["no column for dim seq"]),
        ("batch,seq,batch\n1,2,3\n", ["batch is named twice"]),
        ("batch,seq\n1,2,3\n", ["line 2", "3 values for 2 columns"]),
        ("batch,seq\n1\n", ["line 2", "1 values"]),
        ("batch,seq\n4,0\n", ["line 2", "seq", "positive whole number", "'0'"]),
        ("batch,seq\n4,-3\n", ["seq", "'-3'"]),
        ("batch,seq\n4,1.5\n", ["seq", "'1.5'"]),
        ("batch,seq\n4,x\n", ["seq", "'x'"]),
        ("batch,seq\n4,\n", ["seq", "''"]),
        ("batch,seq,count\n4,8,0\n", ["count", "'0'"]),
        ("1,2\n3,4\n", ["line 1", "'1'", "not a dim name"]),
    ],
)
def test_bad_traffic_is_one_clear_line(text: str, words: list[str]) -> None:
    with pytest.raises(ConfigError) as info:
        parse_traffic(text, "requests.csv", DIMS)
    message = str(info.value)
    assert message.startswith("requests.csv")
    assert len(message.splitlines()) == 1
    for word in words:
        assert word in message


def test_missing_and_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such traffic file"):
        load_traffic(tmp_path / "nope.csv", DIMS)
    with pytest.raises(ConfigError, match="no such traffic file"):
        load_traffic(tmp_path, DIMS)  # a directory
    binary = tmp_path / "x.csv"
    binary.write_bytes(b"\xff\xfe\x00batch")
    with pytest.raises(ConfigError, match="not a UTF-8 text file"):
        load_traffic(binary, DIMS)


def test_trace_is_the_same_for_the_same_traffic_and_follows_the_weights() -> None:
    traffic = Traffic.from_pairs([({"seq": 8}, 3), ({"seq": 16}, 1)])
    trace = traffic.trace(400)
    assert trace == Traffic.from_pairs([({"seq": 16}, 1), ({"seq": 8}, 3)]).trace(400)
    assert trace != traffic.trace(400, seed=1)
    assert 0.65 < trace.count(0) / 400 < 0.85


def test_spec_round_trip_marks_a_replay() -> None:
    traffic = Traffic.from_pairs(
        [({"batch": 2, "seq": 8}, 1), ({"batch": 2, "seq": 16}, 3)], source="requests.csv"
    )
    entries = traffic.to_spec()
    assert all(e["traffic"] == "requests.csv" for e in entries)
    again = Traffic.from_spec(entries)
    assert again is not None
    assert again.shapes == traffic.shapes and again.source == "requests.csv"
    assert Traffic.from_spec([{"dims": {"batch": 2}, "weight": 1.0}]) is None
    assert Traffic.from_spec(None) is None
