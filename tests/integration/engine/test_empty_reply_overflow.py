"""A context overflow however a server reports it: a 400 naming it, or — as a llama.cpp server
does for a streamed request over its window — HTTP 200 with an empty body. Both end in a
compacted, successful turn, whether the model's window is known or not (llama-cpp-python's
server lists its model with ``owned_by: "me"``, no window and no ``/props``); when nothing can
be compacted, the error names the likely cause and offers Compact, the window setting and Retry.
A tiny request's empty reply is a broken stream."""

from __future__ import annotations

from dataclasses import replace

import pytest
from tests.integration.engine.helpers import failure, turn
from tests.support.sse_server import (
    ReplayServer,
    ScriptedResponse,
    json_response,
    openai_text_stream,
    sse_response,
)

from threadline.engine.engine import Engine
from threadline.engine.events import ErrorAction
from threadline.engine.providers import CONTEXT_WINDOWS_SETTING

pytestmark = pytest.mark.asyncio

LONG = "word " * 96  # ~480 characters, ~120 estimated tokens
EMPTY_200 = ScriptedResponse(status=200, headers={"Content-Type": "text/event-stream"}, chunks=[])
"""What llama-cpp-python's server (n_ctx 512) sent for a streamed request over its window."""


def reply(text: str) -> ScriptedResponse:
    return sse_response(openai_text_stream([text]))


async def two_long_turns(engine: Engine, server: ReplayServer) -> str:
    session = await engine.sessions.new_session()
    server.enqueue(reply("A1 " + LONG), reply("A2 " + LONG))
    await turn(engine, session.id, "Q1 " + LONG)
    await turn(engine, session.id, "Q2 " + LONG)
    return session.id


async def know_window(engine: Engine, tokens: int) -> None:
    """The user gave the model's window (Settings → Models); replies keep 100 tokens back."""
    await engine.settings.set_setting(CONTEXT_WINDOWS_SETTING, {"replay/gpt-4o-mini": tokens})
    agent = await engine.agents.get_agent()
    await engine.agents.save_agent(replace(agent, max_tokens=100))


LOCAL_MODEL = "qwen2.5-0.5b-instruct-q4_k_m.gguf"
LISTED = {"id": LOCAL_MODEL, "object": "model", "owned_by": "me", "permissions": []}
LLAMA_CPP_PYTHON_MODELS = json_response(200, {"object": "list", "data": [LISTED]})
"""What llama-cpp-python's server (``--n_ctx 512``) lists: no window; it has no ``/props`` either."""


async def llama_cpp_python_session(engine: Engine, server: ReplayServer) -> str:
    """A chat on the replay server's model as llama-cpp-python lists it: the window stays unknown."""
    server.models_response = LLAMA_CPP_PYTHON_MODELS
    assert [m.id for m in await engine.providers.list_models("replay")] == [LOCAL_MODEL]
    session = await engine.sessions.new_session()
    await engine.sessions.set_session_model(session.id, "replay", LOCAL_MODEL)
    assert engine.hub.context_window("replay", LOCAL_MODEL) is None
    return session.id


async def test_with_an_unknown_window_and_nothing_to_compact_the_error_names_the_cause(
    engine: Engine, replay_server: ReplayServer
) -> None:
    session_id = await llama_cpp_python_session(engine, replay_server)
    replay_server.enqueue(EMPTY_200)
    before = len(replay_server.requests)
    failed = failure(await turn(engine, session_id, "Q1 " + LONG))
    assert failed is not None
    assert len(replay_server.requests) == before + 1  # nothing older to summarise: not sent again
    assert failed.error.message.startswith("Your message “Q1 word word")  # the one that does not fit
    assert "context window" in failed.error.message and "smaller than this request" in failed.error.message
    assert "Settings → Models" in failed.error.message
    assert failed.error.actions == (ErrorAction.COMPACT, ErrorAction.SET_CONTEXT_WINDOW, ErrorAction.RETRY)


async def test_without_a_known_window_the_empty_reply_says_where_to_give_it(
    engine: Engine, replay_server: ReplayServer
) -> None:
    session = await engine.sessions.new_session()
    await engine.sessions.set_session_model(session.id, "replay", "tiny-local-model")
    replay_server.enqueue(EMPTY_200)
    failed = failure(await turn(engine, session.id, "hello"))
    assert failed is not None
    assert "without sending anything" in failed.error.message
    assert "Settings → Models" in failed.error.message
    assert failed.error.actions == (ErrorAction.RETRY,)  # a tiny request: a broken stream, not an overflow


async def test_an_empty_reply_to_a_small_request_says_so_plainly(
    engine: Engine, replay_server: ReplayServer
) -> None:
    session = await engine.sessions.new_session()
    await engine.settings.set_setting(CONTEXT_WINDOWS_SETTING, {"replay/gpt-4o-mini": 100_000})
    replay_server.enqueue(EMPTY_200)
    failed = failure(await turn(engine, session.id, "hello"))
    assert failed is not None
    assert "without sending anything" in failed.error.message and "100,000" in failed.error.message
    assert len(replay_server.requests) == 1  # nothing was compacted or sent again
