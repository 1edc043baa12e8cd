"""A context overflow however a server reports it: a 400 naming it, or — as a llama.cpp server
does for a streamed request over its window — HTTP 200 with an empty body. Both end in a
compacted, successful turn when the model's window is known; without a known window the
empty reply says what may be wrong and where to give the window."""

from __future__ import annotations

from dataclasses import replace

import pytest
from tests.integration.engine.helpers import failure, stored_path, turn
from tests.support.sse_server import ReplayServer, ScriptedResponse, openai_text_stream, sse_response
from tests.support.sse_streams import openai_context_length_error

from threadline.core.messages import MessageKind
from threadline.engine.engine import Engine
from threadline.engine.providers import CONTEXT_WINDOWS_SETTING

pytestmark = pytest.mark.asyncio

LONG = "word " * 96  # ~480 characters, ~120 estimated tokens
EMPTY_200 = ScriptedResponse(status=200, headers={"Content-Type": "text/event-stream"}, chunks=[])
"""What llama-cpp-python's server (n_ctx 512) sent for a streamed request over its window."""


def reply(text: str) -> ScriptedResponse:
    return sse_response(openai_text_stream([text]))


async def two_long_turns(engine: Engine, server: ReplayServer) -> str:
    session = await engine.new_session()
    server.enqueue(reply("A1 " + LONG), reply("A2 " + LONG))
    await turn(engine, session.id, "Q1 " + LONG)
    await turn(engine, session.id, "Q2 " + LONG)
    return session.id


async def know_window(engine: Engine, tokens: int) -> None:
    """The user gave the model's window (Settings → Models); replies keep 100 tokens back."""
    await engine.set_setting(CONTEXT_WINDOWS_SETTING, {"replay/gpt-4o-mini": tokens})
    agent = await engine.get_agent()
    await engine.save_agent(replace(agent, max_tokens=100))


@pytest.mark.parametrize("overflow", ["empty 200", "400 error"])
async def test_an_overflow_ends_in_a_compacted_successful_turn(
    engine: Engine, replay_server: ReplayServer, overflow: str
) -> None:
    session_id = await two_long_turns(engine, replay_server)
    await know_window(engine, 1000)  # the next request (~600 tokens) fits the budget, past half the window
    refused = EMPTY_200 if overflow == "empty 200" else openai_context_length_error(1000, 1200)
    replay_server.enqueue(refused, reply("Summary: two long questions were asked."), reply("A3"))
    before = len(replay_server.requests)
    events = await turn(engine, session_id, "Q3 " + LONG)
    assert failure(events) is None
    assert len(replay_server.requests) == before + 3  # refused, the summary request, the retry
    path = await stored_path(engine.data_dir, session_id)
    assert [m.kind for m in path][-3:] == [MessageKind.PROMPT, MessageKind.SUMMARY, MessageKind.RESPONSE]
    assert path[-1].text == "A3"
    retried = replay_server.requests[-1].body["messages"]
    assert "two long questions were asked" in str(retried[0]["content"])
    users = [str(m["content"]) for m in retried if m["role"] == "user"]
    assert users == ["Q3 " + LONG]  # only the kept turn: the summary stands for the rest


async def test_an_empty_reply_far_from_the_window_is_not_taken_for_an_overflow(
    engine: Engine, replay_server: ReplayServer
) -> None:
    session = await engine.new_session()
    await engine.set_setting(CONTEXT_WINDOWS_SETTING, {"replay/gpt-4o-mini": 100_000})
    replay_server.enqueue(EMPTY_200)
    failed = failure(await turn(engine, session.id, "hello"))
    assert failed is not None and "could not read" in failed.error.message
    assert len(replay_server.requests) == 1  # nothing was compacted or sent again


async def test_without_a_known_window_the_empty_reply_says_where_to_give_it(
    engine: Engine, replay_server: ReplayServer
) -> None:
    session = await engine.new_session()
    await engine.set_session_model(session.id, "replay", "tiny-local-model")
    replay_server.enqueue(EMPTY_200)
    failed = failure(await turn(engine, session.id, "hello"))
    assert failed is not None
    assert "without sending anything" in failed.error.message
    assert "Settings → Models" in failed.error.message
