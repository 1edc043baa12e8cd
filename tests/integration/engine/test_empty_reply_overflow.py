"""A context overflow however a server reports it: a 400 naming it, or — as a llama.cpp server
does for a streamed request over its window — HTTP 200 with an empty body. Both end in a
compacted, successful turn, whether the model's window is known or not (llama-cpp-python's
server lists its model with ``owned_by: "me"``, no window and no ``/props``); when nothing can
be compacted, the error names the likely cause and offers Compact, the window setting and Retry.
A tiny request's empty reply is a broken stream."""

from __future__ import annotations

from dataclasses import replace

import pytest
from tests.integration.engine.helpers import failure, stored_path, turn
from tests.support.sse_server import (
    ReplayServer,
    ScriptedResponse,
    json_response,
    openai_text_stream,
    sse_response,
)
from tests.support.sse_streams import openai_context_length_error

from threadline.core.messages import MessageKind
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


LOCAL_MODEL = "qwen2.5-0.5b-instruct-q4_k_m.gguf"
LISTED = {"id": LOCAL_MODEL, "object": "model", "owned_by": "me", "permissions": []}
LLAMA_CPP_PYTHON_MODELS = json_response(200, {"object": "list", "data": [LISTED]})
"""What llama-cpp-python's server (``--n_ctx 512``) lists: no window; it has no ``/props`` either."""


async def llama_cpp_python_session(engine: Engine, server: ReplayServer) -> str:
    """A chat on the replay server's model as llama-cpp-python lists it: the window stays unknown."""
    server.models_response = LLAMA_CPP_PYTHON_MODELS
    assert [m.id for m in await engine.list_models("replay")] == [LOCAL_MODEL]
    session = await engine.new_session()
    await engine.set_session_model(session.id, "replay", LOCAL_MODEL)
    assert engine.hub.context_window("replay", LOCAL_MODEL) is None
    return session.id


async def test_with_an_unknown_window_an_empty_reply_compacts_and_retries(
    engine: Engine, replay_server: ReplayServer
) -> None:
    """The issue's own case: ~600 tokens of history, under 1,024, and the server's window unknown."""
    session_id = await llama_cpp_python_session(engine, replay_server)
    replay_server.enqueue(reply("A1 " + LONG), reply("A2 " + LONG))
    await turn(engine, session_id, "Q1 " + LONG)
    await turn(engine, session_id, "Q2 " + LONG)
    replay_server.enqueue(EMPTY_200, reply("Summary: two long questions were asked."), reply("A3"))
    before = len(replay_server.requests)
    events = await turn(engine, session_id, "Q3 " + LONG)
    assert failure(events) is None
    refused, summarising, retried = (r.body for r in replay_server.requests[before:])
    sent_first = [str(m["content"]) for m in refused["messages"] if m["role"] == "user"]
    assert sent_first == ["Q1 " + LONG, "Q2 " + LONG, "Q3 " + LONG]  # ~600 tokens: under the old 1,024
    assert "Q1" in str(summarising["messages"][-1]["content"])
    assert "two long questions were asked" in str(retried["messages"][0]["content"])
    assert [str(m["content"]) for m in retried["messages"] if m["role"] == "user"] == ["Q3 " + LONG]
    path = await stored_path(engine.data_dir, session_id)
    assert [m.kind for m in path][-3:] == [MessageKind.PROMPT, MessageKind.SUMMARY, MessageKind.RESPONSE]
    assert path[-1].text == "A3"


async def test_with_an_unknown_window_and_nothing_to_compact_the_error_names_the_cause(
    engine: Engine, replay_server: ReplayServer
) -> None:
    session_id = await llama_cpp_python_session(engine, replay_server)
    replay_server.enqueue(EMPTY_200)
    before = len(replay_server.requests)
    failed = failure(await turn(engine, session_id, "Q1 " + LONG))
    assert failed is not None
    assert len(replay_server.requests) == before + 1  # nothing older to summarise: not sent again
    assert "context window" in failed.error.message and "smaller than this request" in failed.error.message
    assert "Settings → Models" in failed.error.message
    assert failed.error.actions == (ErrorAction.COMPACT, ErrorAction.SET_CONTEXT_WINDOW, ErrorAction.RETRY)


async def test_with_an_unknown_window_an_empty_retry_after_compacting_says_so(
    engine: Engine, replay_server: ReplayServer
) -> None:
    session_id = await llama_cpp_python_session(engine, replay_server)
    replay_server.enqueue(reply("A1 " + LONG), reply("A2 " + LONG))
    await turn(engine, session_id, "Q1 " + LONG)
    await turn(engine, session_id, "Q2 " + LONG)
    replay_server.enqueue(EMPTY_200, reply("Summary: two long questions."), EMPTY_200)
    before = len(replay_server.requests)
    failed = failure(await turn(engine, session_id, "Q3 " + LONG))
    assert failed is not None
    assert len(replay_server.requests) == before + 3  # refused, summarised, refused again: no loop
    assert "again, after the earlier messages were summarised" in failed.error.message
    assert "smaller than this request" in failed.error.message
    assert failed.error.actions == (ErrorAction.COMPACT, ErrorAction.SET_CONTEXT_WINDOW, ErrorAction.RETRY)


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
    assert failed.error.actions == (ErrorAction.RETRY,)  # a tiny request: a broken stream, not an overflow


async def test_an_empty_reply_to_a_big_request_counts_as_an_overflow_without_a_known_window(
    engine: Engine, replay_server: ReplayServer
) -> None:
    session = await engine.new_session()
    await engine.set_session_model(session.id, "replay", "tiny-local-model")  # no window known anywhere
    huge = "word " * 900  # ~1,100 estimated tokens per prompt
    replay_server.enqueue(reply("A1"), reply("A2"))
    await turn(engine, session.id, "Q1 " + huge)
    await turn(engine, session.id, "Q2 " + huge)
    replay_server.enqueue(EMPTY_200, reply("Summary: two huge questions."), reply("A3"))
    before = len(replay_server.requests)
    events = await turn(engine, session.id, "Q3")
    assert failure(events) is None
    assert len(replay_server.requests) == before + 3
    retried = replay_server.requests[-1].body["messages"]
    assert "two huge questions" in str(retried[0]["content"])
    assert [str(m["content"]) for m in retried[1:]] == ["Q3"]


async def test_an_empty_reply_after_compacting_fails_with_a_clear_message(
    engine: Engine, replay_server: ReplayServer
) -> None:
    session_id = await two_long_turns(engine, replay_server)
    await know_window(engine, 1000)
    big = "Q3 " + LONG * 5  # ~600 tokens: past half the window even after the rest is summarised
    replay_server.enqueue(reply("Summary: two long questions."), EMPTY_200)
    before = len(replay_server.requests)
    failed = failure(await turn(engine, session_id, big))
    assert failed is not None
    assert len(replay_server.requests) == before + 2  # compacted before sending, refused: no loop
    assert "empty reply" in failed.error.message and "new session" in failed.error.message
    assert ErrorAction.COMPACT in failed.error.actions
    # The summary stays: Retry starts from the compacted path (and the server answers this time).
    replay_server.enqueue(reply("A3"))
    engine.retry(session_id)
    await engine.wait_idle(session_id)
    users = [str(m["content"]) for m in replay_server.requests[-1].body["messages"] if m["role"] == "user"]
    assert users == [big]
    assert (await stored_path(engine.data_dir, session_id))[-1].text == "A3"


async def test_an_empty_reply_to_a_small_request_says_so_plainly(
    engine: Engine, replay_server: ReplayServer
) -> None:
    session = await engine.new_session()
    await engine.set_setting(CONTEXT_WINDOWS_SETTING, {"replay/gpt-4o-mini": 100_000})
    replay_server.enqueue(EMPTY_200)
    failed = failure(await turn(engine, session.id, "hello"))
    assert failed is not None
    assert "without sending anything" in failed.error.message and "100,000" in failed.error.message
    assert len(replay_server.requests) == 1  # nothing was compacted or sent again


async def test_a_small_known_window_compacts_before_sending(
    engine: Engine, replay_server: ReplayServer
) -> None:
    """A 512-token window (llama.cpp ``--n_ctx 512``): the reply's reserve shrinks so a quarter
    of the window is left, and a request near that is compacted before it is sent, so the
    server never sees it whole."""
    session_id = await two_long_turns(engine, replay_server)
    await engine.set_setting(CONTEXT_WINDOWS_SETTING, {"replay/gpt-4o-mini": 512})
    replay_server.enqueue(reply("Summary: two long questions."), reply("A3"))
    before = len(replay_server.requests)
    events = await turn(engine, session_id, "Q3")
    assert failure(events) is None
    assert len(replay_server.requests) == before + 2  # the summary request, then the turn's own
    summary_request = str(replay_server.requests[before].body["messages"][-1]["content"])
    assert "Q1" in summary_request and "Q3" not in summary_request
    sent = replay_server.requests[-1].body["messages"]
    assert "two long questions" in str(sent[0]["content"])
    assert [str(m["content"]) for m in sent if m["role"] == "user"] == ["Q3"]


async def test_a_summary_request_that_overflows_escalates_and_still_sends_what_it_left_out(
    engine: Engine, replay_server: ReplayServer
) -> None:
    """The turn overflows, and so do the first two summary requests; the last escalation leaves
    the newest two messages (Q2, A2) out of the summary, so the retry still sends them."""
    session_id = await two_long_turns(engine, replay_server)
    too_long = openai_context_length_error(1000, 1200)
    replay_server.enqueue(too_long, too_long, too_long, reply("Summary: Q1 was asked."), reply("A3"))
    before = len(replay_server.requests)
    events = await turn(engine, session_id, "Q3 " + LONG)
    assert failure(events) is None
    sent = [r.body["messages"] for r in replay_server.requests[before:]]
    assert len(sent) == 5  # refused, three summary requests, the retry
    shortest = str(sent[3][-1]["content"])
    assert "Q1" in shortest and "Q2" not in shortest and "A2" not in shortest
    retried = sent[4]
    assert "Q1 was asked" in str(retried[0]["content"])
    assert [str(m["content"]) for m in retried[1:]] == ["Q2 " + LONG, "A2 " + LONG, "Q3 " + LONG]
    path = await stored_path(engine.data_dir, session_id)
    summary = next(m for m in path if m.kind is MessageKind.SUMMARY)
    assert summary.summarised_through == next(m.id for m in path if m.text == "A1 " + LONG)
