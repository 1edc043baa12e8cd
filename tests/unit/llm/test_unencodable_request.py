"""A history holding a lone surrogate is sent, with U+FFFD in its place, by both providers.

A reply or tool result kept in memory may hold ``"\\ud800"`` (JSON allows it);
the request body is UTF-8, which cannot encode it, so without repair the next
request of the chat would fail before it is sent.
"""

from __future__ import annotations

import pytest
from llm_helpers import ANTHROPIC, OPENAI, Api, body_of, collect, simple_request
from tests.support.sse_server import ReplayServer, sse_response

from threadline.llm.base import ChatParams


@pytest.mark.asyncio
@pytest.mark.parametrize("api", [OPENAI, ANTHROPIC], ids=["openai", "anthropic"])
async def test_a_lone_surrogate_in_the_history_is_sent_as_a_replacement_character(
    replay_server: ReplayServer, api: Api
) -> None:
    provider = api.make(replay_server)
    replay_server.enqueue(sse_response(api.text_stream(["Fine."])))
    try:
        got = await collect(provider.stream(simple_request("a\ud800b \ud83d\ude00"), ChatParams(api.model)))
    finally:
        await provider.aclose()
    assert got.error is None
    assert got.text == "Fine."
    message = body_of(replay_server)["messages"][-1]
    content = message["content"]
    text = content if isinstance(content, str) else content[0]["text"]
    assert text == "a\ufffdb 😀"
