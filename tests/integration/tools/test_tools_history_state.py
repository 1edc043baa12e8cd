"""History is the source of truth: tools derive state from stored history, across restarts and crashes."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.integration.engine.helpers import stored_path
from tests.integration.tools.tool_turns import (
    failure,
    kill_mid_tool,
    run_turn,
    sent_tool_results,
    text_reply,
    tool_call_reply,
)
from tests.support.engines import open_engine
from tests.support.sse_server import ReplayServer, openai_text_stream, openai_tool_call_stream, sse_response

from threadline.core.config import AgentConfig, Approval, ApprovalRule, ProviderKind
from threadline.core.messages import INTERRUPTED_RESULT_TEXT, MessageKind, MessageStatus
from threadline.engine.engine import Engine
from threadline.llm.convert import TOOL_ERROR_PREFIX

pytestmark = pytest.mark.asyncio
OPENAI = ProviderKind.OPENAI
NOTES_AGENT = AgentConfig(
    "default", "Default", enabled_tools=("notes",), approval_rules=(ApprovalRule("notes", Approval.ALLOW),)
)


async def test_a_tool_reads_a_value_an_earlier_tool_produced_after_a_restart(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    data_dir = tmp_path / "data"
    engine = await open_engine(data_dir, replay_server)
    await engine.agents.save_agent(NOTES_AGENT)
    replay_server.enqueue(
        tool_call_reply(
            OPENAI, [("n1", "notes", {"action": "set", "key": "plan", "value": "ship on Friday"})]
        ),
        tool_call_reply(OPENAI, [("n2", "notes", {"action": "set", "key": "owner", "value": "Ada"})]),
        text_reply(OPENAI, "Noted."),
    )
    session = await engine.sessions.new_session()
    assert failure(await run_turn(engine, session.id, "Remember the plan")) is None
    await engine.aclose()

    engine = await open_engine(data_dir, replay_server)  # a restart: nothing is kept in memory
    try:
        replay_server.enqueue(
            tool_call_reply(
                OPENAI,
                [("n3", "notes", {"action": "get", "key": "plan"}), ("n4", "notes", {"action": "list"})],
            ),
            text_reply(OPENAI, "The plan is to ship on Friday."),
        )
        assert failure(await run_turn(engine, session.id, "What was the plan?")) is None
        sent = sent_tool_results(replay_server, 4)
        assert '"value": "ship on Friday"' in sent["n3"][0]
        assert '"keys": ["owner", "plan"]' in sent["n4"][0]
    finally:
        await engine.aclose()


async def test_branching_changes_what_is_remembered(engine: Engine, replay_server: ReplayServer) -> None:
    """Edit the prompt that produced a note: on the new branch the note does not exist."""
    await engine.agents.save_agent(NOTES_AGENT)
    replay_server.enqueue(
        tool_call_reply(OPENAI, [("n1", "notes", {"action": "set", "key": "k", "value": "v1"})]),
        text_reply(OPENAI, "ok"),
        tool_call_reply(OPENAI, [("n2", "notes", {"action": "get", "key": "k"})]),
        text_reply(OPENAI, "found"),
    )
    session = await engine.sessions.new_session()
    await run_turn(engine, session.id, "set k")
    await run_turn(engine, session.id, "get k")
    assert '"value": "v1"' in sent_tool_results(replay_server, 3)["n2"][0]

    live = engine.sessions.live(session.id)
    assert live is not None
    first_prompt = live.conversation.path()[0]
    replay_server.enqueue(
        tool_call_reply(OPENAI, [("n3", "notes", {"action": "get", "key": "k"})]), text_reply(OPENAI, "none")
    )
    engine.turns.edit_and_resend(session.id, first_prompt.id, "do not set anything")
    await engine.turns.wait_idle(session.id)
    text, _ = sent_tool_results(replay_server, 5)["n3"]
    assert "There is no note 'k'" in text


async def test_tool_round_cut_by_a_crash_is_answered_as_interrupted(
    tmp_path: Path, replay_server: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGKILL while a tool runs: its round is stored interrupted; the next request says so."""
    data_dir, marker = tmp_path / "data", tmp_path / "tool-started"
    replay_server.enqueue(sse_response(openai_tool_call_stream([("call_d1", "deploy", {})])))
    session_id = await kill_mid_tool(data_dir, replay_server.openai_base_url, marker)

    path = await stored_path(data_dir, session_id)
    assert [m.kind for m in path] == [MessageKind.PROMPT, MessageKind.TOOL_CALLS, MessageKind.TOOL_RESULTS]
    assert path[1].status is MessageStatus.COMPLETE
    assert path[2].status is MessageStatus.INTERRUPTED and not path[2].tool_results

    monkeypatch.setenv("THREADLINE_TEST_KEY", "sk-test")
    engine = await Engine.open(data_dir)  # the restart
    try:
        replay_server.enqueue(sse_response(openai_text_stream(["Deployment was interrupted."])))
        events = await run_turn(engine, session_id, "What happened?")
        assert failure(events) is None
        messages = replay_server.requests[-1].body["messages"]
        roles = [m["role"] for m in messages]
        assert roles == ["user", "assistant", "tool", "user"]
        assert messages[1]["tool_calls"][0]["id"] == "call_d1"
        assert messages[2]["tool_call_id"] == "call_d1"
        assert messages[2]["content"] == TOOL_ERROR_PREFIX + INTERRUPTED_RESULT_TEXT  # not "cancelled"
        assert messages[3]["content"] == "What happened?"
        path = await stored_path(data_dir, session_id)
        assert [m.kind for m in path][-2:] == [MessageKind.PROMPT, MessageKind.RESPONSE]
    finally:
        await engine.aclose()
