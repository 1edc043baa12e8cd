"""The recorded streams in tests/fixtures/sse replayed over HTTP through each SDK."""

from __future__ import annotations

import pytest
from llm_helpers import ANTHROPIC, OPENAI, collect, simple_request
from tests.support import sse_streams as s
from tests.support.sse_server import ReplayServer

from threadline.llm.base import ChatParams


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("fixture", "text", "calls"),
    [
        ("openai_text.sse", "Hello there", []),
        ("openai_parallel_tool_calls.sse", "", ["get_weather", "get_time"]),
        ("ollama_tool_call.sse", "", ["get_weather"]),
    ],
)
async def test_openai_recordings(
    replay_server: ReplayServer, fixture: str, text: str, calls: list[str]
) -> None:
    provider = OPENAI.make(replay_server)
    replay_server.enqueue(s.sse_response(s.load_sse_fixture(fixture)))
    got = await collect(provider.stream(simple_request(), ChatParams("gpt-4o")))
    await provider.aclose()
    assert got.error is None
    assert got.text == text
    assert [c.name for c in got.finished.tool_calls] == calls


MESSAGE_IDS = {
    "anthropic_text.sse": "msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY",
    "anthropic_tool_use.sse": "msg_014p7gG3wDgGV9EUtLvnow3U",
}


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("fixture", "text", "calls"),
    [
        ("anthropic_text.sse", "Hello!", []),
        ("anthropic_tool_use.sse", "Okay, let's check the weather for San Francisco, CA:", ["get_weather"]),
    ],
)
async def test_anthropic_recordings(
    replay_server: ReplayServer, fixture: str, text: str, calls: list[str]
) -> None:
    provider = ANTHROPIC.make(replay_server)
    replay_server.enqueue(s.sse_response(s.load_sse_fixture(fixture)))
    got = await collect(provider.stream(simple_request(), ChatParams(ANTHROPIC.model)))
    await provider.aclose()
    assert got.error is None
    assert got.text == text
    assert [c.name for c in got.finished.tool_calls] == calls
    assert got.finished.request_id == MESSAGE_IDS[fixture]  # no request-id header: the message's id
