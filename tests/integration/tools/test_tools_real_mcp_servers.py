"""Real MCP servers from PyPI (mcp-server-time, mcp-server-git) over stdio, through full turns.

Engine + store + the official SDK on both ends; the replay server plays the model,
asking for the tool in OpenAI's or Anthropic's streaming format, and records what
Threadline sends back.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.integration.engine.helpers import stored_path
from tests.integration.tools.conftest import git_server, time_server
from tests.integration.tools.tool_turns import (
    failure,
    offered_tool_names,
    offered_tool_schema,
    run_turn,
    sent_tool_results,
    text_reply,
    tool_call_reply,
)
from tests.support.engines import open_engine
from tests.support.sse_server import ReplayServer

from threadline.core.config import AgentConfig, Approval, ApprovalRule, ProviderKind
from threadline.core.messages import MessageKind, ToolCall
from threadline.engine.approval import Decision
from threadline.engine.engine import Engine
from threadline.tools.mcp_state import ServerStatus
from threadline.tools.registry import WIRE_NAME_PATTERN

pytestmark = pytest.mark.asyncio
KINDS = [ProviderKind.OPENAI, ProviderKind.ANTHROPIC]


async def test_list_tools_of_real_servers(engine: Engine, git_repository: Path) -> None:
    await engine.tool_servers.save_server(time_server())
    await engine.tool_servers.save_server(git_server(git_repository))
    time_state = await engine.tool_servers.start("time")
    git_state = await engine.tool_servers.start("git")
    assert time_state.status is ServerStatus.READY, time_state.error
    assert git_state.status is ServerStatus.READY, git_state.error
    assert "mcp-time" in time_state.server_info
    assert {"time/get_current_time", "time/convert_time"} <= {t.policy_name for t in time_state.tools}
    assert {"git/git_status", "git/git_log", "git/git_diff_unstaged"} <= {
        t.policy_name for t in git_state.tools
    }
    for tool in time_state.tools + git_state.tools:
        assert WIRE_NAME_PATTERN.match(tool.wire_name), tool.wire_name
        assert engine.tools.get(tool.wire_name) is engine.tools.get(tool.policy_name) is not None
        assert tool.input_schema.get("type") == "object"
    states = {s.name: s for s in await engine.tool_servers.states()}
    assert states["git"].status is ServerStatus.READY
    # the records are stored settings: a new manager on the same store lists them
    assert [c.name for c in await engine.tool_servers.list_servers()] == ["time", "git"]
    stored = await engine.settings.get_setting("mcp_servers")
    assert [r["name"] for r in stored] == ["time", "git"]


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.value)
async def test_time_tool_through_a_full_turn(
    tmp_path: Path, replay_server: ReplayServer, kind: ProviderKind
) -> None:
    engine = await open_engine(tmp_path / "data", replay_server, kind)
    try:
        await engine.tool_servers.save_server(time_server())
        await engine.agents.save_agent(
            AgentConfig(
                "default",
                "Default",
                enabled_tools=("time/*",),
                approval_rules=(ApprovalRule("time/*", Approval.ALLOW),),
            )
        )
        replay_server.enqueue(
            tool_call_reply(kind, [("call_t1", "time__get_current_time", {"timezone": "Europe/Oslo"})]),
            text_reply(kind, "It is evening in Oslo."),
        )
        session = await engine.sessions.new_session()
        events = await run_turn(engine, session.id, "What time is it in Oslo?")
        assert failure(events) is None

        # the server was started on demand and its tools offered under provider-safe names
        assert "time__get_current_time" in offered_tool_names(replay_server, 0)
        schema = offered_tool_schema(replay_server, 0, "time__get_current_time")
        assert "timezone" in schema["properties"]

        path = await stored_path(engine.data_dir, session.id)
        assert [m.kind for m in path] == [
            MessageKind.PROMPT,
            MessageKind.TOOL_CALLS,
            MessageKind.TOOL_RESULTS,
            MessageKind.RESPONSE,
        ]
        result = path[2].tool_results[0]
        assert result.call_id == "call_t1" and not result.is_error
        assert result.json_value()["timezone"] == "Europe/Oslo" and "datetime" in result.json_value()

        sent = sent_tool_results(replay_server, 1)
        text, is_error = sent["call_t1"]
        assert "Europe/Oslo" in text and "datetime" in text and not is_error
    finally:
        await engine.aclose()


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.value)
async def test_git_status_through_a_full_turn_with_approval(
    tmp_path: Path, replay_server: ReplayServer, git_repository: Path, kind: ProviderKind
) -> None:
    engine = await open_engine(tmp_path / "data", replay_server, kind)
    asked: list[ToolCall] = []

    async def allow_once(session_id: str, calls: tuple[ToolCall, ...]) -> list[Decision]:
        asked.extend(calls)
        return [Decision(c.id, allow=True) for c in calls]

    try:
        engine.turns.set_approval_handler(allow_once)
        await engine.tool_servers.save_server(git_server(git_repository))
        await engine.agents.save_agent(
            AgentConfig("default", "Default", enabled_tools=("git/git_status", "git/git_log"))
        )
        replay_server.enqueue(
            tool_call_reply(
                kind,
                [
                    ("call_g1", "git__git_status", {"repo_path": str(git_repository)}),
                    ("call_g2", "git__git_log", {"repo_path": str(git_repository), "max_count": 5}),
                ],
            ),
            text_reply(kind, "README.md was modified."),
        )
        session = await engine.sessions.new_session()
        events = await run_turn(engine, session.id, "What changed in the repository?")
        assert failure(events) is None
        assert sorted(offered_tool_names(replay_server, 0)) == ["git__git_log", "git__git_status"]
        assert [c.name for c in asked] == ["git/git_status", "git/git_log"]  # the prompt shows policy names

        path = await stored_path(engine.data_dir, session.id)
        results = {r.call_id: r for r in path[2].tool_results}
        assert "README.md" in results["call_g1"].text and not results["call_g1"].is_error
        assert "Initial commit for the MCP test" in results["call_g2"].text
        assert path[1].tool_calls[0].name == "git__git_status"  # stored calls keep the wire name

        sent = sent_tool_results(replay_server, 1)
        assert "README.md" in sent["call_g1"][0]
        assert "Initial commit for the MCP test" in sent["call_g2"][0]
    finally:
        await engine.aclose()
