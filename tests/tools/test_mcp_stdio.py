"""The bounded stdio plumbing under the MCP SDK session (issue 21 item 3): lines are split in linear time,
a line over the cap is discarded as it arrives and the request it answers gets a "response too large" error."""

import json
import time

import pytest

from factory.tools.mcp_stdio import LineSplitter, Oversized, _message, message_cap, too_large_error


def feed_all(splitter: LineSplitter, data: bytes, chunk: int) -> list:
    out = []
    for i in range(0, len(data), chunk):
        out += splitter.feed(data[i : i + chunk])
    return out


def test_lines_split_across_chunks_in_order() -> None:
    data = b'{"a":1}\n{"b":2}\n\n{"c":' + b"3}\n" + b'{"partial"'
    for chunk in (1, 3, 7, len(data)):
        s = LineSplitter(cap=100)
        assert feed_all(s, data, chunk) == [b'{"a":1}', b'{"b":2}', b"", b'{"c":3}']
        assert s.pending == len(b'{"partial"')


def test_a_line_at_the_cap_is_kept_and_one_byte_more_is_oversized() -> None:
    s = LineSplitter(cap=10)
    (kept,) = s.feed(b"x" * 10 + b"\n")
    assert kept == b"x" * 10
    (over,) = s.feed(b"y" * 11 + b"\nz\n")[:1]
    assert isinstance(over, Oversized) and over.size == 11


def test_oversized_line_keeps_only_head_and_tail_and_finds_the_id() -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 17, "result": {"content": [{"type": "text", "text": "x" * 300_000}]}})
    s = LineSplitter(cap=50_000)
    lines = feed_all(s, body.encode() + b'\n{"jsonrpc":"2.0","id":18,"result":{}}\n', 4096)
    over, after = lines
    assert isinstance(over, Oversized) and over.size == len(body)
    assert len(over.head) + len(over.tail) < 10_000
    assert over.request_id() == 17
    assert after == b'{"jsonrpc":"2.0","id":18,"result":{}}'  # the next message is intact


def test_request_id_written_last_or_as_string() -> None:
    last = Oversized(10**6, b'{"jsonrpc":"2.0","result":{"id":99,"t":"xxxx', b'xxxx"},"id":"req-7"}')
    assert last.request_id() == "req-7"


def test_nested_ids_are_not_taken_for_the_request_id() -> None:
    # an id inside the result (a record) is not the top-level one; an id closing nested objects neither
    nested = Oversized(10**6, b'{"jsonrpc":"2.0","result":{"items":[{"id":5,"x":"', b'xxx"}],"meta":{"id":6}}}')
    assert nested.request_id() is None


def test_splitting_is_linear_on_one_huge_line() -> None:
    cap = 1_000_000
    s = LineSplitter(cap)
    chunk = b"x" * 65536
    t0 = time.perf_counter()
    for _ in range(40 * 1024 * 1024 // len(chunk)):  # 40 MB
        assert s.feed(chunk) == []
    (over,) = s.feed(b"\n")
    assert time.perf_counter() - t0 < 5  # quadratic re-scanning of the buffer would take minutes
    assert isinstance(over, Oversized) and over.size == 40 * 1024 * 1024


def test_an_oversized_answer_becomes_an_error_for_its_request() -> None:
    over = Oversized(5_000_000, b'{"jsonrpc":"2.0","id":3,"result":{"x":"', b'xx"}}')
    msg = _message(over, 1000, "test")
    err = msg.message
    assert err.id == 3 and "response too large" in err.error.message and "5000000 bytes" in err.error.message


def test_an_oversized_message_without_id_is_dropped() -> None:
    assert (
        _message(Oversized(5_000_000, b'{"jsonrpc":"2.0","method":"notify","params":{"x":"', b'"}}'), 10, "t") is None
    )


def test_unparsable_line_is_passed_on_as_an_error_value() -> None:
    assert isinstance(_message(b"not json", 100, "t"), ValueError)
    assert _message(b"   ", 100, "t") is None


def test_caps_are_positive_and_leave_room_for_the_envelope() -> None:
    with pytest.raises(ValueError, match="positive"):
        LineSplitter(0)
    assert message_cap(1_000_000) > 2 * 1_000_000
    assert too_large_error(1, 10, 5)["error"]["code"] < 0
