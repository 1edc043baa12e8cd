"""The OpenAI provider's own SSE reading, over HTTP from the replay server.

The provider reads the body with ``threadline.llm.sse`` rather than the SDK's
stream objects, so these are the wire shapes the SDK used to absorb: odd network
chunking, CRLF, keep-alives, what follows ``[DONE]``, error events in the shapes
servers use, and bodies that are not JSON.
"""

from __future__ import annotations

import socket
import sys

import pytest
from llm_helpers import OPENAI, assert_human, collect, simple_request
from tests.support import sse_streams as s
from tests.support.sse_server import ReplayServer

from threadline.llm import errors
from threadline.llm.base import ChatParams

PIECES = ["Hel", "lo, ", "wor", "ld!"]


async def run(replay_server: ReplayServer, chunks: list[bytes]):  # type: ignore[no-untyped-def]
    provider = OPENAI.make(replay_server)
    replay_server.enqueue(s.sse_response(chunks))
    try:
        return await collect(provider.stream(simple_request(), ChatParams(OPENAI.model)))
    finally:
        await provider.aclose()


def rechunk(chunks: list[bytes], size: int) -> list[bytes]:
    raw = b"".join(chunks)
    return [raw[i : i + size] for i in range(0, len(raw), size)]


@pytest.mark.asyncio
@pytest.mark.parametrize("size", [1, 7, 50])
async def test_events_split_across_network_chunks_with_crlf_and_keepalives(
    replay_server: ReplayServer, size: int
) -> None:
    chunks = s.openai_text_stream(PIECES)
    chunks.insert(2, b": keep-alive\n\n")
    raw = [c.replace(b"\n", b"\r\n") for c in chunks]
    got = await run(replay_server, rechunk(raw, size))
    assert got.error is None
    assert got.text == "Hello, world!"
    assert got.finished.usage is not None and got.finished.usage.output_tokens == 7


@pytest.mark.asyncio
async def test_line_separator_characters_inside_the_text_arrive_intact(replay_server: ReplayServer) -> None:
    pieces = ["one\u2028two", "\u2029three\x85four"]  # raw in the JSON: the stream writes ensure_ascii=False
    chunks = s.openai_text_stream(pieces)
    assert "\u2028".encode() in chunks[1]
    got = await run(replay_server, chunks)
    assert got.error is None
    assert got.text == "".join(pieces)


@pytest.mark.asyncio
async def test_multi_line_data(replay_server: ReplayServer) -> None:
    chunks = s.openai_text_stream(PIECES)
    chunks[1] = chunks[1].replace(b',"', b',\ndata: "')  # one JSON object over several data: lines
    assert chunks[1].count(b"data: ") > 2
    got = await run(replay_server, chunks)
    assert got.error is None
    assert got.text == "Hello, world!"


@pytest.mark.asyncio
async def test_nothing_after_done_is_read_as_events(replay_server: ReplayServer) -> None:
    chunks = [*s.openai_text_stream(PIECES), b"data: this is not JSON\n\n"]
    got = await run(replay_server, chunks)
    assert got.error is None
    assert got.text == "Hello, world!"


@pytest.mark.asyncio
async def test_the_connection_is_reused_after_done(
    replay_server: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted: list[object] = []
    track = replay_server._track  # test support's hook, called as each connection is accepted

    def counting(connection: socket.socket, *, add: bool) -> None:
        if add:
            accepted.append(connection)
        track(connection, add=add)

    monkeypatch.setattr(replay_server, "_track", counting)
    provider = OPENAI.make(replay_server, timeout=5)
    for _ in range(3):
        replay_server.enqueue(s.sse_response(s.openai_text_stream(PIECES)))
        got = await collect(provider.stream(simple_request(), ChatParams(OPENAI.model)))
        assert got.text == "Hello, world!"
    await provider.aclose()
    assert len(accepted) == 1  # the body after [DONE] was read, so the connection went back to the pool


@pytest.mark.asyncio
async def test_a_stream_without_done_still_finishes(replay_server: ReplayServer) -> None:
    got = await run(replay_server, s.openai_text_stream(PIECES, done=False))
    assert got.error is None
    assert got.finished.stop_reason == "end"


@pytest.mark.asyncio
async def test_an_error_event_mid_stream_maps_to_its_kind(replay_server: ReplayServer) -> None:
    chunks = s.openai_text_stream(["Hel"], done=False)[:2]
    chunks.append(
        s.openai_event(
            s.openai_error_body(
                "This model's maximum context length is 8192 tokens", "x", "context_length_exceeded"
            )
        )
    )
    got = await run(replay_server, chunks)
    assert got.text == "Hel"
    assert isinstance(got.error, errors.ContextOverflowError)
    assert_human(got.error, OPENAI.name, model=OPENAI.model)


@pytest.mark.asyncio
async def test_a_rate_limit_error_event_is_retryable(replay_server: ReplayServer) -> None:
    chunks = [s.openai_event({"error": {"message": "Rate limit reached", "type": "rate_limit_error"}})]
    got = await run(replay_server, chunks)
    assert isinstance(got.error, errors.RateLimitError)
    assert got.error.retryable
    assert got.events == []


@pytest.mark.asyncio
async def test_an_error_string_event(replay_server: ReplayServer) -> None:
    got = await run(replay_server, [s.openai_event({"error": "upstream overloaded, try later"})])
    assert isinstance(got.error, errors.ServerError)
    assert "upstream overloaded" in got.error.detail
    assert_human(got.error, OPENAI.name)


@pytest.mark.asyncio
async def test_a_named_error_event(replay_server: ReplayServer) -> None:
    chunks = [b'event: error\ndata: {"message":"Internal error","type":"server_error"}\n\n']
    got = await run(replay_server, chunks)
    assert isinstance(got.error, errors.ServerError)
    assert got.error.detail == "Internal error"


@pytest.mark.asyncio
async def test_llama_cpp_error_field_mid_stream(replay_server: ReplayServer) -> None:
    chunks = s.openai_text_stream(["Hel"], done=False)[:2]
    chunks.append(
        b'error: {"code":400,"message":"the request exceeds the available context size, '
        b'try increasing it","type":"exceed_context_size_error"}\n\n'
    )
    got = await run(replay_server, chunks)
    assert got.text == "Hel"
    assert isinstance(got.error, errors.ContextOverflowError)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("event", "what"),
    [
        (b"data: not json\n\n", "not valid JSON"),
        (b"data: \xff\xfe{}\n\n", "not valid JSON"),
        (b"data: [1, 2]\n\n", "not a JSON object"),
        (b'data: {"choices": {"index": 0}}\n\n', "chat-completions shape"),
    ],
    ids=["text", "not-utf8", "array", "wrong-shape"],
)
async def test_undecodable_events_are_a_malformed_stream(
    replay_server: ReplayServer, event: bytes, what: str
) -> None:
    chunks = s.openai_text_stream(PIECES)
    chunks.insert(2, event)
    got = await run(replay_server, chunks)
    assert isinstance(got.error, errors.MalformedStreamError)
    assert what in got.error.user_message
    assert got.text == "Hel"
    assert_human(got.error, OPENAI.name)


@pytest.mark.asyncio
async def test_an_unterminated_last_event_is_discarded(replay_server: ReplayServer) -> None:
    chunks = s.openai_text_stream(PIECES, usage=None, done=False)
    chunks[-1] = chunks[-1].rstrip(b"\n")  # the finish chunk never ends: the reply did not finish
    got = await run(replay_server, chunks)
    assert isinstance(got.error, errors.MalformedStreamError)
    assert "ended before the reply was finished" in got.error.user_message


@pytest.mark.asyncio
async def test_a_non_2xx_status_is_mapped_from_the_http_status(replay_server: ReplayServer) -> None:
    from threadline.llm._http import httpx_module

    provider = OPENAI.make(replay_server)
    replay_server.enqueue(s.openai_server_error(500))
    got = await collect(provider.stream(simple_request(), ChatParams(OPENAI.model)))
    await provider.aclose()
    assert isinstance(got.error, errors.ServerError)
    assert got.error.status_code == 500
    assert isinstance(got.error.__cause__, httpx_module().HTTPStatusError)  # raised on entering the response
    assert got.error.__cause__.response.status_code == 500


@pytest.mark.asyncio
async def test_the_response_is_read_without_the_sdk(
    replay_server: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [m for m in sys.modules if m == "openai" or m.startswith("openai.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "openai", None)  # any import of the SDK now fails
    got = await run(replay_server, s.openai_tool_call_stream([("c1", "get_weather", {"city": "Paris"})]))
    assert got.error is None
    assert got.finished.tool_calls[0].parsed_arguments() == {"city": "Paris"}


def chunkings(raw: bytes) -> list[list[bytes]]:
    """Every cut of ``raw`` into two chunks near its start (where the mark is), one byte per chunk,
    and a few fixed sizes: the ways a network may hand over the body's first bytes."""
    ways = [[raw[:cut], raw[cut:]] for cut in range(1, 12)]
    ways += [[raw[i : i + size] for i in range(0, len(raw), size)] for size in (1, 2, 3, 5, 64)]
    ways += [[raw[:1], raw[1:2], raw[2:]], [raw[:2], raw[2:3], raw[3:]]]
    return ways


@pytest.mark.asyncio
async def test_a_stream_starting_with_a_byte_order_mark_loses_no_event(replay_server: ReplayServer) -> None:
    chunks = s.openai_text_stream(PIECES)[1:]  # no role chunk: the first event holds "Hel"
    raw = b"\xef\xbb\xbf" + b"".join(chunks)
    for way in chunkings(raw):
        got = await run(replay_server, way)
        assert got.error is None, [len(c) for c in way[:3]]
        assert got.text == "Hello, world!", [len(c) for c in way[:3]]
        assert got.finished.usage is not None and got.finished.usage.output_tokens == 7
