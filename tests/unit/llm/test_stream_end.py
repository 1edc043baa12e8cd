"""How an OpenAI-style stream's end decides complete or cut: ``[DONE]``, ``finish_reason``, neither.

Byte-exact streams from the replay server, read by the real provider.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from llm_helpers import OPENAI, collect, simple_request
from tests.support import sse_streams as s
from tests.support.sse_server import ReplayServer

from threadline.llm import errors
from threadline.llm.base import ChatParams, Provider
from threadline.llm.events import STOP_END, STOP_TOOL_CALLS


def _finishes(chunk: bytes) -> bool:
    data = chunk.removeprefix(b"data: ").strip()
    if data == b"[DONE]":
        return False
    return any(choice.get("finish_reason") for choice in json.loads(data).get("choices") or ())


def without_finish_reason(chunks: list[bytes]) -> list[bytes]:
    """``chunks`` less the chunk that carries the ``finish_reason`` (what some servers send)."""
    kept = [c for c in chunks if not _finishes(c)]
    assert len(kept) == len(chunks) - 1, "the builder's finish chunk was not found"
    return kept


async def run(provider: Provider):  # type: ignore[no-untyped-def]
    return await collect(provider.stream(simple_request(), ChatParams(OPENAI.model)))


@pytest_asyncio.fixture
async def openai_provider(replay_server: ReplayServer) -> AsyncIterator[Provider]:
    made = OPENAI.make(replay_server)
    yield made
    await made.aclose()


@pytest.mark.asyncio
async def test_done_without_a_finish_reason_completes_the_reply(
    openai_provider: Provider, replay_server: ReplayServer
) -> None:
    chunks = without_finish_reason(s.openai_text_stream(["All ", "there."], usage=None))
    assert chunks[-1] == s.OPENAI_DONE
    replay_server.enqueue(s.sse_response(chunks))
    got = await run(openai_provider)
    assert got.error is None
    assert got.text == "All there."
    assert got.finished.stop_reason == STOP_END


@pytest.mark.asyncio
async def test_done_without_a_finish_reason_after_tool_calls_asks_for_the_tools(
    openai_provider: Provider, replay_server: ReplayServer
) -> None:
    stream = s.openai_tool_call_stream([("call_1", "get_weather", '{"city": "Paris"}')], usage=None)
    replay_server.enqueue(s.sse_response(without_finish_reason(stream)))
    got = await run(openai_provider)
    assert got.error is None
    assert got.finished.stop_reason == STOP_TOOL_CALLS
    assert [c.name for c in got.finished.tool_calls] == ["get_weather"]


@pytest.mark.asyncio
async def test_a_clean_end_without_done_or_finish_reason_is_incomplete(
    openai_provider: Provider, replay_server: ReplayServer
) -> None:
    """The body ended properly (last chunk sent) but the server never said the reply was over."""
    chunks = without_finish_reason(s.openai_text_stream(["half"], usage=None, done=False))
    replay_server.enqueue(s.sse_response(chunks))
    got = await run(openai_provider)
    assert got.text == "half"
    assert isinstance(got.error, errors.MalformedStreamError)
    assert "ended before the reply was finished" in got.error.user_message


@pytest.mark.asyncio
async def test_a_finish_reason_without_done_completes_the_reply(
    openai_provider: Provider, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(s.sse_response(s.openai_text_stream(["fine"], done=False)))
    got = await run(openai_provider)
    assert got.error is None and got.text == "fine"
    assert got.finished.stop_reason == STOP_END
