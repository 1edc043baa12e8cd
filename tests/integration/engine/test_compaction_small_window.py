"""Compaction that fits a small window: a server whose window is small, and often unknown
(llama.cpp answering an overflow with an empty 200), still gets a compacted, answered turn.
What stays word for word is chosen by the window; the rest is summarised in pieces that each
fit, with a summary of the summary when it grows too big; only a single message that cannot
fit is refused, and the error names it. The server here counts its window with Threadline's
own estimate (tests/support/small_window.py), so every request it refuses is one Threadline
sent believing it might fit."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from tests.integration.engine.helpers import failure, stored_path, turn
from tests.support.small_window import SmallWindowModel
from tests.support.sse_server import (
    ReplayServer,
    ScriptedResponse,
    json_response,
    openai_text_stream,
    sse_response,
)

from threadline.core.messages import MessageKind
from threadline.engine.engine import Engine
from threadline.engine.events import ErrorAction
from threadline.engine.providers import CONTEXT_WINDOWS_SETTING

pytestmark = pytest.mark.asyncio

TURN = "word " * 100  # ~500 characters: a turn (question and answer) of ~1,000 characters
LOCAL_MODEL = "qwen2.5-0.5b-instruct-q4_k_m.gguf"
LLAMA_CPP_PYTHON_MODELS = json_response(
    200, {"object": "list", "data": [{"id": LOCAL_MODEL, "object": "model", "owned_by": "me"}]}
)
"""What llama-cpp-python's server lists: no window, and it has no ``/props`` either."""


def reply(text: str) -> ScriptedResponse:
    return sse_response(openai_text_stream([text]))


async def local_chat(
    engine: Engine, server: ReplayServer, turns: int, *, known_window: int | None = None
) -> str:
    """``turns`` turns of ~1,000 characters answered before the small window applies."""
    server.models_response = LLAMA_CPP_PYTHON_MODELS
    await engine.providers.list_models("replay")
    session = await engine.sessions.new_session()
    await engine.sessions.set_session_model(session.id, "replay", LOCAL_MODEL)
    if known_window is not None:
        await engine.settings.set_setting(CONTEXT_WINDOWS_SETTING, {f"replay/{LOCAL_MODEL}": known_window})
        agent = await engine.agents.get_agent()
        await engine.agents.save_agent(replace(agent, max_tokens=60))
    for index in range(1, turns + 1):
        server.enqueue(reply(f"A{index} " + TURN))
        await turn(engine, session.id, f"Q{index} " + TURN)
    return session.id


def user_texts(body: dict[str, object]) -> list[str]:
    return [str(m["content"]) for m in body["messages"] if m["role"] == "user"]  # type: ignore[attr-defined]


def system_text(body: dict[str, object]) -> str:
    messages = body["messages"]
    return next((str(m["content"]) for m in messages if m["role"] == "system"), "")  # type: ignore[attr-defined]


async def test_the_issues_case_two_turns_and_a_third_prompt_on_an_unknown_small_window(
    engine: Engine, replay_server: ReplayServer
) -> None:
    session_id = await local_chat(engine, replay_server, 2)
    model = SmallWindowModel(window=420)  # Q1…Q3 (~620 tokens) do not fit; one turn's summary does
    replay_server.responder = model
    events = await turn(engine, session_id, "Q3 " + TURN)

    assert failure(events) is None
    assert model.refused == 1  # only the turn's own first request: every summary request fit
    answered = replay_server.requests[-1].body
    assert (
        "Summary(" in system_text(answered)
        and "Q1" in system_text(answered)
        and "Q2" in system_text(answered)
    )
    assert user_texts(answered) == ["Q3 " + TURN]
    path = await stored_path(engine.data_dir, session_id)
    assert [m.kind for m in path][-3:] == [MessageKind.PROMPT, MessageKind.SUMMARY, MessageKind.RESPONSE]
    assert path[-1].text == "Answer to Q3."


@pytest.mark.parametrize("says_overflow", [False, True], ids=["empty 200", "400 naming it"])
async def test_a_long_chat_is_summarised_in_pieces_that_each_fit(
    engine: Engine, replay_server: ReplayServer, says_overflow: bool
) -> None:
    session_id = await local_chat(engine, replay_server, 6)
    model = SmallWindowModel(window=400, says_overflow=says_overflow)
    replay_server.responder = model
    events = await turn(engine, session_id, "Q7 " + TURN)

    assert failure(events) is None
    summaries = [body for body in model.answered if "faithful, compact summaries" in system_text(body)]
    assert len(summaries) >= 3  # in pieces
    assert all(tokens <= 400 for tokens, fit in model.seen if fit)
    # Every question went to a summary request, in order, each piece building on the last.
    asked = [" ".join(user_texts(body)) for body in summaries]
    order = [n for text in asked for n in sorted({int(q) for q in re.findall(r"\bQ(\d+)(?= )", text)})]
    assert sorted(set(order)) == [1, 2, 3, 4, 5, 6] and order == sorted(order)
    assert all(text.startswith("Summary so far") for text in asked[1:])
    assert user_texts(replay_server.requests[-1].body) == ["Q7 " + TURN]


async def test_a_summary_that_grows_too_big_is_summarised_itself(
    engine: Engine, replay_server: ReplayServer
) -> None:
    session_id = await local_chat(engine, replay_server, 6)
    model = SmallWindowModel(window=400, summary_padding=500)  # every summary adds ~125 tokens
    replay_server.responder = model
    events = await turn(engine, session_id, "Q7 " + TURN)

    assert failure(events) is None
    condensed = [r for r in replay_server.requests if r.body and "Shorten this summary" in str(r.body)]
    assert condensed  # a summary of the summary made room for the next piece
    assert replay_server.requests[-1].body["messages"][-1]["content"] == "Q7 " + TURN


async def test_a_known_small_window_keeps_what_fits_word_for_word_and_never_sends_too_much(
    engine: Engine, replay_server: ReplayServer
) -> None:
    """The window is known (512): the turn compacts before sending, so the server never
    refuses anything, and the newest turn that fits beside the summary stays verbatim."""
    session_id = await local_chat(engine, replay_server, 4, known_window=512)
    model = SmallWindowModel(window=512)
    replay_server.responder = model
    events = await turn(engine, session_id, "Q5 short")

    assert failure(events) is None
    assert model.refused == 0
    assert user_texts(replay_server.requests[-1].body)[-1] == "Q5 short"


async def test_a_single_message_that_cannot_fit_is_named(engine: Engine, replay_server: ReplayServer) -> None:
    session_id = await local_chat(engine, replay_server, 2)
    model = SmallWindowModel(window=450)
    replay_server.responder = model
    huge = "Q3 the whole log " + "line " * 500  # ~2,500 characters: over the window on its own
    failed = failure(await turn(engine, session_id, huge))

    assert failed is not None
    message = failed.error.message
    assert message.startswith("Your message “Q3 the whole log line line")
    assert "is what does not fit" in message
    assert "again, after the earlier messages were summarised" in message  # it was tried after compacting
    assert failed.error.actions == (ErrorAction.COMPACT, ErrorAction.SET_CONTEXT_WINDOW, ErrorAction.RETRY)
    assert model.refused == 2  # the turn, then the turn after compacting: no loop
    # The older turns were summarised and the summary stays; the message can be shortened.
    path = await stored_path(engine.data_dir, session_id)
    assert any(m.kind is MessageKind.SUMMARY for m in path)


async def test_a_window_too_small_for_any_summary_says_so(
    engine: Engine, replay_server: ReplayServer
) -> None:
    session_id = await local_chat(engine, replay_server, 2)
    model = SmallWindowModel(window=90)  # not even the summary instructions fit
    replay_server.responder = model
    failed = failure(await turn(engine, session_id, "Q3 short question"))

    assert failed is not None
    assert "too small to summarise" in failed.error.message
    assert failed.error.actions == (ErrorAction.NEW_SESSION, ErrorAction.PICK_MODEL)
