"""Slash commands run against a real engine, with the request that follows captured by the replay server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.integration.engine.helpers import turn
from tests.support.sse_server import ReplayServer, ScriptedResponse, openai_text_stream, sse_response

from threadline.core.config import AgentConfig
from threadline.core.messages import MessageKind
from threadline.core.slash_commands import SlashCommand, parse
from threadline.engine.commands import CommandOutcome, run_command
from threadline.engine.engine import Engine

pytestmark = pytest.mark.asyncio


def reply(text: str) -> ScriptedResponse:
    return sse_response(openai_text_stream([text]))


async def run(engine: Engine, session_id: str, text: str, base_dir: Path | None = None) -> CommandOutcome:
    command = parse(text)
    assert isinstance(command, SlashCommand), command
    return await run_command(engine, session_id, command, base_dir=base_dir)


async def chat(engine: Engine, server: ReplayServer, *turns: str) -> str:
    session = await engine.sessions.new_session()
    for prompt in turns:
        server.enqueue(reply(f"A{prompt[1:]}"))
        await turn(engine, session.id, prompt)
    return session.id


def sent_texts(server: ReplayServer) -> list[str]:
    return [m["content"] for m in server.requests[-1].body["messages"] if m["role"] != "system"]


async def test_compact_with_instructions_sends_only_the_summary_and_kept_turns_next(
    engine: Engine, replay_server: ReplayServer
) -> None:
    session_id = await chat(engine, replay_server, "Q1", "Q2", "Q3")
    replay_server.enqueue(reply("Q1 asked, A1 answered."))
    outcome = await run(engine, session_id, "/compact keep the numbers")
    assert outcome.ok and outcome.changed and "Q1 asked, A1 answered." in outcome.text
    assert "keep the numbers" in replay_server.requests[-1].body["messages"][-1]["content"]

    replay_server.enqueue(reply("A4"))
    await turn(engine, session_id, "Q4")
    messages = replay_server.requests[-1].body["messages"]
    assert "Q1 asked, A1 answered." in messages[0]["content"]
    assert sent_texts(replay_server) == ["Q2", "A2", "Q3", "A3", "Q4"]


async def test_compact_of_a_short_chat_is_an_error_outcome_and_sends_nothing(
    engine: Engine, replay_server: ReplayServer
) -> None:
    session_id = await chat(engine, replay_server, "Q1")
    outcome = await run(engine, session_id, "/compact")
    assert not outcome.ok and "nothing to compact" in outcome.error.lower()
    assert len(replay_server.requests) == 1


async def test_model_and_agent_switch_the_next_request(engine: Engine, replay_server: ReplayServer) -> None:
    session_id = await chat(engine, replay_server, "Q1")
    outcome = await run(engine, session_id, "/model replay/gpt-4o")
    assert outcome.ok and outcome.changed and "replay/gpt-4o" in outcome.text
    unknown = await run(engine, session_id, "/model nowhere/x")
    assert not unknown.ok and "(providers: replay)" in unknown.error
    assert (await run(engine, session_id, "/model replay/vendor/x")).ok  # an id with a slash
    assert (await run(engine, session_id, "/model gpt-4o")).ok  # the chat's own provider
    await engine.agents.create_agent(AgentConfig(id="", name="Reviewer", system_prompt="Review carefully."))
    listed = await run(engine, session_id, "/agent")
    current = (await engine.agents.session_agent(session_id)).agent.name
    assert f"* {current}" in listed.text.splitlines() and "  Reviewer" in listed.text.splitlines()
    switched = await run(engine, session_id, "/agent reviewer")
    assert switched.ok and switched.changed
    missing = await run(engine, session_id, "/agent Nobody")
    assert not missing.ok and "Reviewer" in missing.error

    replay_server.enqueue(reply("A2"))
    await turn(engine, session_id, "Q2")
    body = replay_server.requests[-1].body
    assert body["model"] == "gpt-4o"
    assert "Review carefully." in body["messages"][0]["content"]


async def test_reports_and_export(engine: Engine, replay_server: ReplayServer, tmp_path: Path) -> None:
    session_id = await chat(engine, replay_server, "Q1")
    requests = len(replay_server.requests)
    usage = await run(engine, session_id, "/usage")
    assert usage.ok and "1 reply" in usage.text
    context = await run(engine, session_id, "/context")
    assert context.ok and "Next request: about" in context.text
    assert "/compact" in (await run(engine, session_id, "/help")).text
    markdown = await run(engine, session_id, "/export")
    assert markdown.ok and "Q1" in markdown.text and "A1" in markdown.text

    nowhere = await run(engine, session_id, "/export json missing/chat", base_dir=tmp_path)
    assert not nowhere.ok and "Choose another place" in nowhere.error
    written = await run(engine, session_id, "/export json chat", base_dir=tmp_path)
    target = tmp_path / "chat.json"
    assert written.ok and str(target) in written.text
    assert "A1" in json.dumps(json.loads(target.read_text(encoding="utf-8")))
    no_path = await run(engine, session_id, "/export json")
    assert not no_path.ok and "PATH" in no_path.error
    assert len(replay_server.requests) == requests  # no command reached the model


async def test_clear_sends_nothing_before_the_marker(engine: Engine, replay_server: ReplayServer) -> None:
    session_id = await chat(engine, replay_server, "Q1", "Q2")
    outcome = await run(engine, session_id, "/clear")
    assert outcome.ok and outcome.changed
    replay_server.enqueue(reply("A3"))
    await turn(engine, session_id, "Q3")
    assert sent_texts(replay_server) == ["Q3"]
    live = engine.sessions.live(session_id)
    assert live is not None
    assert [m.text for m in live.conversation.path() if m.kind is MessageKind.PROMPT] == ["Q1", "Q2", "Q3"]


async def test_tangent_leaves_the_main_line_out_and_brings_it_back(
    engine: Engine, replay_server: ReplayServer
) -> None:
    session_id = await chat(engine, replay_server, "Q1")
    assert (await run(engine, session_id, "/tangent")).ok
    again = await run(engine, session_id, "/tangent")
    assert not again.ok and "already" in again.error
    replay_server.enqueue(reply("side answer"))
    await turn(engine, session_id, "side question")
    assert "side question" in sent_texts(replay_server)
    ended = await run(engine, session_id, "/tangent end")
    assert ended.ok and ended.changed
    assert not (await run(engine, session_id, "/tangent end")).ok
    replay_server.enqueue(reply("A2"))
    await turn(engine, session_id, "Q2")
    assert sent_texts(replay_server) == ["Q1", "A1", "Q2"]


async def test_checkpoint_list_and_restore_moves_the_next_request(
    engine: Engine, replay_server: ReplayServer
) -> None:
    session_id = await chat(engine, replay_server, "Q1")
    empty = await run(engine, session_id, "/restore")
    assert empty.ok and "No checkpoints" in empty.text
    assert (await run(engine, session_id, "/checkpoint after one")).ok
    replay_server.enqueue(reply("A2"))
    await turn(engine, session_id, "Q2")
    assert (await run(engine, session_id, "/checkpoint a later one")).ok
    listed = await run(engine, session_id, "/restore")
    assert "after one" in listed.text and "A1" in listed.text
    lines = listed.text.splitlines()[1:]  # in the order of the chat, not by name
    assert [line.split(" — ")[0] for line in lines] == ["after one", "a later one"]
    unknown = await run(engine, session_id, "/restore nope")
    assert not unknown.ok and "after one" in unknown.error
    restored = await run(engine, session_id, "/restore after one")
    assert restored.ok and restored.changed
    replay_server.enqueue(reply("A3"))
    await turn(engine, session_id, "Q3")
    assert sent_texts(replay_server) == ["Q1", "A1", "Q3"]


async def test_a_checkpoint_name_used_again_moves_here_and_says_from_where(
    engine: Engine, replay_server: ReplayServer
) -> None:
    """As the checkpoint dialog warns ("it will move here"), ``/checkpoint NAME`` with a name
    already in use moves it, like a tag set again; the note names the point it left."""
    session_id = await chat(engine, replay_server, "Q1")
    assert (await run(engine, session_id, "/checkpoint  draft ")).text.startswith("Checkpoint “draft” set.")
    replay_server.enqueue(reply("A2"))
    await turn(engine, session_id, "Q2")
    moved = await run(engine, session_id, "/checkpoint   draft")
    assert moved.ok and moved.changed
    assert moved.text.startswith("Checkpoint “draft” moved here (it named “A1”).")
    live = engine.sessions.live(session_id)
    assert live is not None
    assert live.conversation.tree.named_checkpoints == {"draft": live.conversation.path()[-1].id}
    same = await run(engine, session_id, "/checkpoint draft")
    assert same.ok and "already names this point" in same.text
    assert (await run(engine, session_id, "/restore  draft")).ok  # spaces count once, as when set
    replay_server.enqueue(reply("A3"))
    await turn(engine, session_id, "Q3")
    assert sent_texts(replay_server) == ["Q1", "A1", "Q2", "A2", "Q3"]  # the moved point, not A1
