"""Agents end to end: what a request carries, switching mid-session, deleting, export and import.

Each request is captured by the replay server, so the assertions are on the JSON
that was really sent, not on what the engine meant to send.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from tests.integration.engine.helpers import stored_path, turn
from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response

from threadline.core.agent_json import AgentFormatError
from threadline.core.config import DEFAULT_AGENT_ID, AgentConfig, ProviderConfig, ProviderKind
from threadline.core.messages import MarkerType, MessageKind
from threadline.engine.agents import AgentError
from threadline.engine.engine import Engine
from threadline.engine.events import AgentChanged, ConversationEvent

pytestmark = pytest.mark.asyncio

REVIEWER = AgentConfig(
    id="",
    name="Reviewer",
    system_prompt="You review code harshly.",
    temperature=0.3,
    top_p=0.85,
    max_tokens=321,
)


def reply(text: str = "ok") -> object:
    return sse_response(openai_text_stream([text]))


def system_of(body: dict[str, object]) -> str:
    messages = body["messages"]
    assert isinstance(messages, list)
    first = messages[0]
    return str(first["content"]) if first["role"] == "system" else ""


async def test_request_carries_the_agents_prompt_and_parameters(
    engine: Engine, replay_server: ReplayServer
) -> None:
    agent = await engine.agents.create_agent(REVIEWER)
    session = await engine.sessions.new_session()
    await engine.sessions.open_session(session.id)
    await engine.agents.set_session_agent(session.id, agent.id)
    replay_server.enqueue(reply())
    await turn(engine, session.id, "Look at this")

    body = replay_server.requests[-1].body
    assert system_of(body) == "You review code harshly."
    assert body["temperature"] == 0.3
    assert body["top_p"] == 0.85
    assert body["max_tokens"] == 321
    # the marker is history for people, never a message to the model
    assert [m["role"] for m in body["messages"]] == ["system", "user"]


async def test_switching_mid_session_marks_history_and_the_next_request_uses_the_new_agent(
    engine: Engine, replay_server: ReplayServer
) -> None:
    agent = await engine.agents.create_agent(REVIEWER)
    session = await engine.sessions.new_session()
    live = await engine.sessions.open_session(session.id)
    replay_server.enqueue(reply("first"))
    await turn(engine, session.id, "Hello")
    assert system_of(replay_server.requests[-1].body) == ""

    events: list[ConversationEvent] = []
    live.subscribe(events.append)
    await engine.agents.set_session_agent(session.id, "reviewer")  # by name, any case
    assert any(isinstance(e, AgentChanged) and e.agent.name == "Reviewer" for e in events)
    replay_server.enqueue(reply("second"))
    await turn(engine, session.id, "And now?")

    body = replay_server.requests[-1].body
    assert system_of(body) == "You review code harshly."
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "user"]
    path = await stored_path(engine.data_dir, session.id)  # what a restart reads
    assert [m.kind for m in path] == [
        MessageKind.PROMPT,
        MessageKind.RESPONSE,
        MessageKind.MARKER,
        MessageKind.PROMPT,
        MessageKind.RESPONSE,
    ]
    marker = path[2].marker
    assert marker is not None and marker.type is MarkerType.AGENT and marker.label == "Agent: Reviewer"
    info = await engine.store.get_session(session.id)
    assert info is not None and info.agent_id == agent.id


async def test_marker_survives_a_restart_and_still_decides_the_agent(
    engine: Engine, replay_server: ReplayServer
) -> None:
    agent = await engine.agents.create_agent(REVIEWER)
    session = await engine.sessions.new_session()
    await engine.sessions.open_session(session.id)
    await engine.agents.set_session_agent(session.id, agent.id)
    data_dir = engine.data_dir
    await engine.aclose()

    from tests.support.engines import open_engine

    again = await open_engine(data_dir, replay_server)
    try:
        await again.sessions.open_session(session.id)
        state = await again.agents.session_agent(session.id)
        assert state.agent.name == "Reviewer" and not state.update_available
        replay_server.enqueue(reply())
        await turn(again, session.id, "Review this")
        assert system_of(replay_server.requests[-1].body) == "You review code harshly."
    finally:
        await again.aclose()


async def test_an_edited_agent_is_offered_not_taken_by_an_open_session(
    engine: Engine, replay_server: ReplayServer
) -> None:
    agent = await engine.agents.create_agent(REVIEWER)
    session = await engine.sessions.new_session()
    live = await engine.sessions.open_session(session.id)
    await engine.agents.set_session_agent(session.id, agent.id)
    events: list[ConversationEvent] = []
    live.subscribe(events.append)

    await engine.agents.save_agent(replace(agent, system_prompt="You praise everything."))
    assert any(isinstance(e, AgentChanged) and e.update_available for e in events)
    replay_server.enqueue(reply())
    await turn(engine, session.id, "Well?")
    assert system_of(replay_server.requests[-1].body) == "You review code harshly."  # no drift

    await engine.agents.use_agent_settings(session.id)
    assert not (await engine.agents.session_agent(session.id)).update_available
    replay_server.enqueue(reply())
    await turn(engine, session.id, "And now?")
    assert system_of(replay_server.requests[-1].body) == "You praise everything."


async def test_switching_to_an_agent_with_a_model_switches_the_sessions_model(engine: Engine) -> None:
    await engine.providers.save_provider(
        ProviderConfig("other", ProviderKind.OPENAI, base_url="http://127.0.0.1:9/v1")
    )
    agent = await engine.agents.create_agent(replace(REVIEWER, provider="other", model="big-model"))
    session = await engine.sessions.new_session()
    await engine.sessions.open_session(session.id)
    await engine.agents.set_session_agent(session.id, agent.name)
    info = await engine.store.get_session(session.id)
    assert info is not None and (info.provider, info.model) == ("other", "big-model")


async def test_deleting_an_agent_moves_its_sessions_to_the_default_and_says_so(
    engine: Engine, replay_server: ReplayServer
) -> None:
    agent = await engine.agents.create_agent(REVIEWER)
    open_one = await engine.sessions.new_session()
    closed_one = await engine.sessions.new_session()
    live = await engine.sessions.open_session(open_one.id)
    await engine.agents.set_session_agent(open_one.id, agent.id)
    await engine.sessions.open_session(closed_one.id)
    await engine.agents.set_session_agent(closed_one.id, agent.id)
    await engine.sessions.close_session(closed_one.id)
    events: list[ConversationEvent] = []
    live.subscribe(events.append)

    moved = await engine.agents.delete_agent(agent.id)
    assert moved == 2
    for session in (open_one, closed_one):
        path = await _settled_path(engine, session.id)
        assert path[-1].marker is not None
        assert path[-1].marker.label == "Agent: Default — the agent Reviewer was deleted"
        info = await engine.store.get_session(session.id)
        assert info is not None and info.agent_id == DEFAULT_AGENT_ID
    notices = [e.notice for e in events if isinstance(e, AgentChanged) and e.notice]
    assert notices == ["The agent Reviewer was deleted, so this chat now uses Default."]
    replay_server.enqueue(reply())
    await turn(engine, open_one.id, "Who are you now?")
    assert system_of(replay_server.requests[-1].body) == ""  # the default agent's (empty) prompt


async def _settled_path(engine: Engine, session_id: str) -> list:  # type: ignore[type-arg]
    import asyncio

    for _ in range(300):  # the open session's marker is added by a task, once it is idle
        path = await stored_path(engine.data_dir, session_id)
        if path and path[-1].marker is not None and "deleted" in path[-1].marker.detail:
            return path
        await asyncio.sleep(0.05)
    return await stored_path(engine.data_dir, session_id)


async def test_the_default_agent_cannot_be_deleted(engine: Engine) -> None:
    with pytest.raises(AgentError, match="default agent cannot be deleted"):
        await engine.agents.delete_agent(DEFAULT_AGENT_ID)


async def test_names_are_unique_and_duplicates_get_a_free_name(engine: Engine) -> None:
    agent = await engine.agents.create_agent(REVIEWER)
    with pytest.raises(AgentError, match="already an agent called 'Reviewer'"):
        await engine.agents.create_agent(replace(REVIEWER, name="reviewer"))
    copy = await engine.agents.duplicate_agent(agent.id)
    assert copy.name == "Reviewer (copy)" and copy.id != agent.id
    assert copy.system_prompt == agent.system_prompt
    names = [a.name for a in await engine.agents.list_agents()]
    assert names == ["Default", "Reviewer", "Reviewer (copy)"]


@pytest.mark.expected_log_warnings("not storing header X-Org")
async def test_export_and_import_round_trip_without_secrets(engine: Engine) -> None:
    await engine.providers.save_provider(
        ProviderConfig("cloud", ProviderKind.OPENAI, headers=(("X-Org", "org-secret"),)), "sk-very-secret"
    )
    await engine.agents.create_agent(replace(REVIEWER, provider="cloud", model="m"))
    text = await engine.agents.export_agents()
    assert "sk-very-secret" not in text and "org-secret" not in text
    document = json.loads(text)
    assert document["format"] == "threadline-agents"
    assert [a["name"] for a in document["agents"]] == ["Default", "Reviewer"]

    imported = await engine.agents.import_agents(text)
    assert [a.name for a in imported] == ["Default (2)", "Reviewer (2)"]
    assert imported[1].top_p == 0.85 and imported[1].system_prompt == REVIEWER.system_prompt


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "not valid JSON"),
        ("[]", "holds no agents"),
        ('{"agents": [{"name": ""}]}', "Agent 1 of the file has no name"),
        ('{"agents": [{"name": "A", "temperature": 9}]}', "temperature must be between 0 and 2"),
        ('{"agents": [{"name": "A", "max_tokens": "lots"}]}', "max_tokens must be a whole number"),
        ('{"format": "threadline-agents", "version": 99, "agents": [{"name": "A"}]}', "newer Threadline"),
        (
            '{"agents": [{"name": "A", "approval_rules": [{"pattern": "x", "approval": "maybe"}]}]}',
            "allow, ask",
        ),
    ],
)
async def test_import_refuses_bad_files_with_clear_words_and_adds_nothing(
    engine: Engine, text: str, message: str
) -> None:
    with pytest.raises(AgentFormatError, match=message):
        await engine.agents.import_agents(text)
    assert [a.name for a in await engine.agents.list_agents()] == ["Default"]
