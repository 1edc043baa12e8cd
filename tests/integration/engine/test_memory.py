"""Memory end to end: a real engine, the request the replay server received (docs/memory.md).

A memory the model proposes is saved only when the user accepts it (possibly edited) and then
rides in the system prompt of the next chat's request; a declined one never does.
``search_past_chats`` reaches the chats of the same project only, never the chat asking.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from tests.integration.engine.helpers import failure, turn
from tests.integration.tools.tool_turns import (
    offered_tool_names,
    sent_tool_results,
    text_reply,
    tool_call_reply,
)
from tests.support.sse_server import ReplayServer
from tests.support.waiting import until

from threadline.core.compare import CompareTarget
from threadline.core.config import AgentConfig, Approval, ApprovalRule, ProviderKind
from threadline.core.memory import DECLINED_REASON, EDITED_FLAG, MEMORY_HEADING, MemoryScope, PastChatsScope
from threadline.core.messages import Message, MessageStatus, ToolCall
from threadline.core.meter import MeterPart
from threadline.engine.approval import Decision
from threadline.engine.engine import Engine
from threadline.engine.memory import MemorySettings

pytestmark = pytest.mark.asyncio
OPENAI = ProviderKind.OPENAI


def system_sent(server: ReplayServer, index: int = -1) -> str:
    first = server.requests[index].body["messages"][0]
    return str(first["content"]) if first["role"] == "system" else ""


async def memory_agent(engine: Engine, *, allow_all: bool = False) -> None:
    rules = (ApprovalRule("*", Approval.ALLOW),) if allow_all else ()
    await engine.agents.save_agent(
        AgentConfig(
            "default",
            "Default",
            enabled_tools=("propose_memory", "search_past_chats"),
            approval_rules=(ApprovalRule("search_past_chats", Approval.ALLOW), *rules),
        )
    )


def answering(decide: str, edited: str = "") -> object:
    asked: list[tuple[ToolCall, ...]] = []

    async def handler(_session_id: str, calls: tuple[ToolCall, ...]) -> Sequence[Decision]:
        asked.append(calls)
        call = calls[0]
        if decide == "accept":
            return [Decision(call.id, allow=True)]
        if decide == "edit":
            arguments = {**call.parsed_arguments(), "text": edited, EDITED_FLAG: True}
            return [Decision(call.id, allow=True, arguments=json.dumps(arguments))]
        return [Decision(call.id, allow=False, reason=DECLINED_REASON)]

    handler.asked = asked  # type: ignore[attr-defined]
    return handler


async def propose(engine: Engine, server: ReplayServer, text: str) -> str:
    """One chat in which the model proposes ``text``; returns what the tool result told it."""
    session = await engine.sessions.new_session()
    server.enqueue(
        tool_call_reply(OPENAI, [("m1", "propose_memory", {"text": text})]), text_reply(OPENAI, "Noted.")
    )
    assert failure(await turn(engine, session.id, "I use PostgreSQL 16 everywhere.")) is None
    return sent_tool_results(server, len(server.requests) - 1)["m1"][0]


async def next_chat_system(engine: Engine, server: ReplayServer) -> str:
    session = await engine.sessions.new_session()
    server.enqueue(text_reply(OPENAI, "Hello."))
    assert failure(await turn(engine, session.id, "Which database do I use?")) is None
    return system_sent(server)


async def test_an_accepted_proposal_reaches_the_next_chats_system_prompt(
    engine: Engine, replay_server: ReplayServer
) -> None:
    await memory_agent(engine, allow_all=True)  # even "allow everything" asks for a proposal
    handler = answering("accept")
    engine.turns.set_approval_handler(handler)  # type: ignore[arg-type]
    result = await propose(engine, replay_server, "Uses PostgreSQL 16")
    assert handler.asked, "a memory proposal always asks the user"  # type: ignore[attr-defined]
    assert "accepted" in result and "Uses PostgreSQL 16" in result
    system = await next_chat_system(engine, replay_server)
    assert MEMORY_HEADING in system and "- Uses PostgreSQL 16" in system
    assert [m.text for m in await engine.memory.memories()] == ["Uses PostgreSQL 16"]


async def test_a_declined_proposal_is_not_saved_and_the_model_is_told(
    engine: Engine, replay_server: ReplayServer
) -> None:
    await memory_agent(engine)
    engine.turns.set_approval_handler(answering("decline"))  # type: ignore[arg-type]
    result = await propose(engine, replay_server, "Uses PostgreSQL 16")
    assert DECLINED_REASON in result
    assert await engine.memory.memories() == []
    assert "PostgreSQL 16" not in await next_chat_system(engine, replay_server)


async def test_an_edited_proposal_saves_the_edited_text(engine: Engine, replay_server: ReplayServer) -> None:
    await memory_agent(engine)
    engine.turns.set_approval_handler(answering("edit", "Uses PostgreSQL 17 at work"))  # type: ignore[arg-type]
    result = await propose(engine, replay_server, "Uses PostgreSQL 16")
    assert "edited it and accepted" in result and "PostgreSQL 17 at work" in result
    system = await next_chat_system(engine, replay_server)
    assert "- Uses PostgreSQL 17 at work" in system and "PostgreSQL 16" not in system


async def test_nobody_to_ask_saves_nothing(engine: Engine, replay_server: ReplayServer) -> None:
    await memory_agent(engine, allow_all=True)
    await propose(engine, replay_server, "Uses PostgreSQL 16")
    assert await engine.memory.memories() == []


async def test_scoped_memories_reach_only_their_chats_and_the_switch_turns_them_off(
    engine: Engine, replay_server: ReplayServer
) -> None:
    work = await engine.projects.create_project("Work")
    await engine.memory.add("Likes short answers")
    await engine.memory.add("The service is called Heron", MemoryScope.PROJECT, work.id)
    in_work = await engine.sessions.new_session(project_id=work.id)
    replay_server.enqueue(text_reply(OPENAI, "ok"), text_reply(OPENAI, "ok"), text_reply(OPENAI, "ok"))
    assert failure(await turn(engine, in_work.id, "hi")) is None
    assert "Heron" in system_sent(replay_server) and "Likes short answers" in system_sent(replay_server)
    meter = await engine.turns.context_meter(in_work.id)
    assert meter.tokens(MeterPart.MEMORY) > 0
    outside = await engine.sessions.new_session()
    assert failure(await turn(engine, outside.id, "hi")) is None
    assert "Heron" not in system_sent(replay_server) and "Likes short answers" in system_sent(replay_server)
    await engine.memory.set_settings(MemorySettings(enabled=False))
    assert failure(await turn(engine, outside.id, "again")) is None
    assert MEMORY_HEADING not in system_sent(replay_server)
    assert (await engine.turns.context_meter(in_work.id)).tokens(MeterPart.MEMORY) == 0


async def test_search_past_chats_stays_in_the_project_and_leaves_out_the_asking_chat(
    engine: Engine, replay_server: ReplayServer
) -> None:
    await memory_agent(engine)
    work = await engine.projects.create_project("Work")
    home = await engine.projects.create_project("Home")
    same = await engine.sessions.new_session("Heron notes", project_id=work.id)
    other = await engine.sessions.new_session("Garden", project_id=home.id)
    loose = await engine.sessions.new_session("Loose")
    replay_server.enqueue(*(text_reply(OPENAI, "ok") for _ in range(3)))
    for session, text in (
        (same, "The heron service runs on port 8443"),
        (other, "The heron nest is in the oak"),
    ):
        assert failure(await turn(engine, session.id, text)) is None
    assert failure(await turn(engine, loose.id, "A heron outside any project")) is None

    asking = await engine.sessions.new_session(project_id=work.id)
    replay_server.enqueue(
        tool_call_reply(OPENAI, [("s1", "search_past_chats", {"query": "heron"})]),
        text_reply(OPENAI, "Found."),
    )
    assert failure(await turn(engine, asking.id, "Where does heron run? heron")) is None
    assert "search_past_chats" in offered_tool_names(replay_server, len(replay_server.requests) - 2)
    found = json.loads(sent_tool_results(replay_server, len(replay_server.requests) - 1)["s1"][0])
    snippets = " ".join(r["snippet"] for r in found["results"])
    assert "port 8443" in snippets and {r["chat"] for r in found["results"]} == {"Heron notes"}
    assert "oak" not in snippets and "outside any project" not in snippets
    assert "not instructions" in found["note"]
    assert all(r["date"] for r in found["results"])

    outside = await engine.memory.search_past_chats(loose.id, "heron", 10)
    assert outside == [], "a chat in no project sees only other chats in no project (none here)"
    await engine.memory.set_settings(MemorySettings(past_chats=PastChatsScope.ALL))
    everywhere = {hit.session_id for hit in await engine.memory.search_past_chats(asking.id, "heron", 10)}
    assert everywhere == {same.id, other.id, loose.id}


async def test_a_project_can_offer_search_past_chats_to_any_agent(
    engine: Engine, replay_server: ReplayServer
) -> None:
    work = await engine.projects.create_project("Work")
    session = await engine.sessions.new_session(project_id=work.id)
    replay_server.enqueue(text_reply(OPENAI, "ok"), text_reply(OPENAI, "ok"))
    assert failure(await turn(engine, session.id, "hi")) is None
    assert "search_past_chats" not in offered_tool_names(replay_server, 0)
    await engine.memory.set_settings(MemorySettings(past_chat_projects=(work.id,)))
    assert failure(await turn(engine, session.id, "again")) is None
    assert "search_past_chats" in offered_tool_names(replay_server, 1)
    assert "propose_memory" not in offered_tool_names(replay_server, 1)


async def test_an_interrupted_proposal_is_not_saved_by_run_again(
    engine: Engine, replay_server: ReplayServer
) -> None:
    """A crash between the user's answer and the save leaves the round interrupted; Run again must
    not save the model's text unasked (the answer, maybe an edit or a decline, is not stored)."""
    await memory_agent(engine)
    info = await engine.sessions.new_session()
    prompt = Message.prompt("I use PostgreSQL 16")
    calls = Message.reply(
        parent_id=prompt.id,
        text="Let me remember that.",
        tool_calls=(ToolCall("m1", "propose_memory", json.dumps({"text": "Uses PostgreSQL 16"})),),
        status=MessageStatus.COMPLETE,
    )
    answer = Message.tool_results_message((), parent_id=calls.id).copy(status=MessageStatus.INTERRUPTED)
    await engine.store.append_messages(info.id, [prompt, calls, answer])
    await engine.sessions.open_session(info.id)
    replay_server.enqueue(text_reply(OPENAI, "Understood."))
    engine.turns.rerun_interrupted_tools(info.id)
    await until(lambda: bool(replay_server.stream_requests()), "the request after the rerun")
    await engine.turns.wait_idle(info.id)
    assert await engine.memory.memories() == []
    assert "was not run again" in sent_tool_results(replay_server, 0)["m1"][0]


async def test_the_switch_set_in_another_process_reaches_the_next_turn(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    await engine.memory.add("Likes short answers")
    other = await Engine.open(tmp_path / "data")  # another window on the same database
    try:
        await other.memory.set_settings(MemorySettings(enabled=False))
    finally:
        await other.aclose()
    assert MEMORY_HEADING not in await next_chat_system(engine, replay_server)


async def test_both_compare_columns_search_past_chats_in_the_chats_project(
    engine: Engine, replay_server: ReplayServer
) -> None:
    """A project that offers past-chat search offers it in a compare too: the column of the
    chat's own agent and the column of another agent both list ``search_past_chats``, and each
    search stays in the chat's project, as a single reply's would."""
    allow = (ApprovalRule("search_past_chats", Approval.ALLOW),)
    await engine.agents.save_agent(AgentConfig("default", "Default", approval_rules=allow))
    reviewer = await engine.agents.create_agent(
        AgentConfig("", "Reviewer", provider="replay", model="reviewer-model", approval_rules=allow)
    )
    work = await engine.projects.create_project("Work")
    home = await engine.projects.create_project("Home")
    await engine.memory.set_settings(MemorySettings(past_chat_projects=(work.id,)))
    replay_server.enqueue(text_reply(OPENAI, "ok"), text_reply(OPENAI, "ok"))
    same = await engine.sessions.new_session("Heron notes", project_id=work.id)
    assert failure(await turn(engine, same.id, "The heron service runs on port 8443")) is None
    other = await engine.sessions.new_session("Garden", project_id=home.id)
    assert failure(await turn(engine, other.id, "The heron nest is in the oak")) is None
    first = len(replay_server.requests)

    def answer(request: Any) -> Any:
        if any(m.get("role") == "tool" for m in request.body["messages"]):
            return text_reply(OPENAI, "Found.")
        return tool_call_reply(OPENAI, [("s1", "search_past_chats", {"query": "heron"})])

    replay_server.responder = answer
    asking = await engine.sessions.new_session(project_id=work.id)
    await engine.sessions.open_session(asking.id)
    targets = (CompareTarget("replay", "plain"), CompareTarget(agent_id=reviewer.id, label="Reviewer"))
    engine.turns.send_compare(asking.id, "Where does heron run?", targets)
    await asyncio.wait_for(engine.turns.wait_idle(asking.id), 60)

    sent = [
        i for i in range(first, len(replay_server.requests)) if replay_server.requests[i].method == "POST"
    ]
    by_model: dict[str, list[int]] = {}
    for index in sent:
        by_model.setdefault(replay_server.requests[index].body["model"], []).append(index)
    assert sorted(by_model) == ["plain", "reviewer-model"]
    for model, (asked, answered) in by_model.items():
        assert "search_past_chats" in offered_tool_names(replay_server, asked), model
        found = json.loads(sent_tool_results(replay_server, answered)["s1"][0])
        snippets = " ".join(r["snippet"] for r in found["results"])
        assert "port 8443" in snippets and "oak" not in snippets, (model, snippets)
