"""The SSE decoder on bytes cut every way a network can cut them."""

from __future__ import annotations

import pytest

from threadline.llm.sse import ServerSentEvent, SSEDecoder


def decode(*chunks: bytes) -> list[ServerSentEvent]:
    decoder = SSEDecoder()
    out: list[ServerSentEvent] = []
    for chunk in chunks:
        out += decoder.feed(chunk)
    out += decoder.finish()
    return out


def pairs(*chunks: bytes) -> list[tuple[str, bytes]]:
    return [(e.event, e.data) for e in decode(*chunks)]


OPENAI_LIKE = (
    b'data: {"choices":[{"delta":{"content":"Hel"}}]}\n\n'
    b": keep-alive\n\n"
    b'data: {"choices":[{"delta":{"content":"lo"}}]}\n\n'
    b"data: [DONE]\n\n"
)
EXPECTED = [
    ("", b'{"choices":[{"delta":{"content":"Hel"}}]}'),
    ("", b'{"choices":[{"delta":{"content":"lo"}}]}'),
    ("", b"[DONE]"),
]


def test_data_events_and_done() -> None:
    assert pairs(OPENAI_LIKE) == EXPECTED


def test_multi_line_data_is_joined_with_newlines() -> None:
    assert pairs(b'data: {"a":\ndata: 1}\n\n') == [("", b'{"a":\n1}')]
    assert pairs(b"data:x\ndata:\ndata:  y\n\n") == [("", b"x\n\n y")]  # one space is removed, no more


def test_comments_and_keepalives_are_ignored() -> None:
    assert pairs(b": ping\n\n:\n\ndata: a\n: inside an event\ndata: b\n\n") == [("", b"a\nb")]


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"], ids=["LF", "CRLF", "CR"])
def test_line_endings(newline: bytes) -> None:
    assert pairs(OPENAI_LIKE.replace(b"\n", newline)) == EXPECTED


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"], ids=["LF", "CRLF", "CR"])
def test_events_split_at_every_byte(newline: bytes) -> None:
    raw = OPENAI_LIKE.replace(b"\n", newline)
    assert pairs(*(raw[i : i + 1] for i in range(len(raw)))) == EXPECTED
    for cut in range(1, len(raw)):  # every place one network chunk can end and the next begin
        assert pairs(raw[:cut], raw[cut:]) == EXPECTED, cut
    for size in (2, 3, 5, 7, 64):
        assert pairs(*(raw[i : i + size] for i in range(0, len(raw), size))) == EXPECTED, size


def test_a_cr_ending_a_chunk_and_an_lf_starting_the_next_end_one_line() -> None:
    # "data: a\r" | "\ndata: b\r\n\r\n" is one event "a\nb", not "a" then "b"
    assert pairs(b"data: a\r", b"\ndata: b\r\n\r\n") == [("", b"a\nb")]
    assert pairs(b"data: a\r", b"\n", b"\r", b"\n") == [("", b"a")]


def test_several_events_in_one_chunk() -> None:
    assert pairs(b"data: 1\n\ndata: 2\n\ndata: 3\n\n") == [("", b"1"), ("", b"2"), ("", b"3")]


def test_only_cr_and_lf_end_lines() -> None:
    # JSON strings may hold these raw; str.splitlines would break the line at each of them
    text = "a\u2028b\u2029c\x85d\x0be\x0cf\x1cg".encode()
    assert pairs(b'data: {"t":"' + text + b'"}\n\n') == [("", b'{"t":"' + text + b'"}')]


def test_event_names() -> None:
    raw = b"event: message_start\ndata: {}\n\nevent: ping\ndata: {}\n\ndata: {}\n\n"
    assert pairs(raw) == [("message_start", b"{}"), ("ping", b"{}"), ("", b"{}")]


def test_an_event_without_data_is_dropped_and_its_name_forgotten() -> None:
    assert pairs(b"event: ping\n\ndata: 1\n\n") == [("", b"1")]


def test_id_retry_and_unknown_fields_are_ignored() -> None:
    assert pairs(b"id: 7\nretry: 1000\nfoo: bar\ndata: x\nnocolon\n\n") == [("", b"x")]


def test_a_data_field_without_a_colon_is_empty_data() -> None:
    assert pairs(b"data\n\n") == [("", b"")]


def test_an_error_event() -> None:
    body = b'{"error":{"message":"Overloaded","type":"server_error"}}'
    assert pairs(b"data: " + body + b"\n\n") == [("", body)]
    assert pairs(b"event: error\ndata: " + body + b"\n\n") == [("error", body)]


def test_llama_cpp_error_field_is_an_error_event() -> None:
    body = (
        b'{"code":400,"message":"the request exceeds the available context size",'
        b'"type":"exceed_context_size_error"}'
    )
    assert pairs(b"error: " + body + b"\n\n") == [("error", body)]


def test_an_unterminated_event_at_the_end_is_discarded() -> None:
    assert pairs(b"data: 1\n\ndata: 2\n") == [("", b"1")]
    assert pairs(b"data: 1\n\ndata: 2") == [("", b"1")]


def test_empty_chunks_change_nothing() -> None:
    assert pairs(b"", b"data: 1", b"", b"\n", b"", b"\n") == [("", b"1")]


def test_a_large_event_in_many_small_chunks() -> None:
    data = b"x" * 100_000
    raw = b"data: " + data + b"\n\n"
    assert pairs(*(raw[i : i + 1000] for i in range(0, len(raw), 1000))) == [("", data)]


BOM = b"\xef\xbb\xbf"


def test_a_byte_order_mark_starting_the_stream_is_dropped_however_it_is_cut() -> None:
    raw = BOM + OPENAI_LIKE
    assert pairs(raw) == EXPECTED
    assert pairs(*(raw[i : i + 1] for i in range(len(raw)))) == EXPECTED
    for cut in range(len(raw) + 1):
        assert pairs(raw[:cut], raw[cut:]) == EXPECTED, cut
    for first in range(1, 6):  # three chunks: the mark may be cut twice
        for second in range(first, 8):
            assert pairs(raw[:first], raw[first:second], raw[second:]) == EXPECTED, (first, second)


def test_a_byte_order_mark_anywhere_else_is_not_dropped() -> None:
    # only the stream's first bytes: a second mark, or one after the first line, is part of a line
    assert pairs(BOM + BOM + b"data: x\n\n") == []  # "\ufeffdata" is an unknown field
    assert pairs(b"data: x\n\n" + BOM + b"data: y\n\n") == [("", b"x")]
    assert pairs(b"data: " + BOM + b"x\n\n") == [("", BOM + b"x")]
    assert pairs(BOM[:2] + b"data: x\n\n") == []  # half a mark is no mark: the line is garbage
