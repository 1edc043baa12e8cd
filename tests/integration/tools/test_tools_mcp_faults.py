"""MCP servers that crash mid-call, hang past the timeout, report errors or fail to start.

The server is a tiny MCPServer (``servers/faulty_server.py``) started over stdio
(and once over streamable HTTP). Each fault must become a clear error result the
model reads, the turn must go on, everything must be stored, and a crashed server
must come back on the next call.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from tests.integration.engine.helpers import stored_path
from tests.integration.tools.conftest import faulty_server
from tests.integration.tools.tool_turns import failure, run_turn, sent_tool_results
from tests.support.sse_server import ReplayServer, openai_text_stream, openai_tool_call_stream, sse_response
from tests.support.waiting import until

from threadline.core.config import AgentConfig, Approval, ApprovalRule
from threadline.core.messages import MessageKind, ToolCall
from threadline.engine.engine import Engine
from threadline.tools.mcp.client import MAX_RESTARTS, McpConnection, _session_closed
from threadline.tools.mcp.config import McpServerConfig, Transport
from threadline.tools.mcp.state import ServerStatus

pytestmark = pytest.mark.asyncio

TRUSTING_AGENT = AgentConfig(
    "default",
    "Default",
    enabled_tools=("faulty/*",),
    approval_rules=(ApprovalRule("faulty/*", Approval.ALLOW),),
)


def calls_reply(*calls: tuple[str, str, dict[str, object]]) -> object:
    return sse_response(openai_tool_call_stream(list(calls)))


def text(reply: str) -> object:
    return sse_response(openai_text_stream([reply]))


async def call(engine: Engine, name: str, arguments: str = "{}") -> tuple[str, bool]:
    result = await engine.tools.run(ToolCall(f"c-{name}-{time.monotonic_ns()}", name, arguments))
    return result.text, result.is_error


def connection_noticed_the_end(connection: McpConnection) -> bool:
    """The SDK saw the server's pipe close (its session is closed, or the connection's task ended)."""
    session, task = connection._session, connection._task
    return session is None or _session_closed(session) or task is None or task.done()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_crash_mid_call_is_a_clear_error_and_the_server_restarts(
    engine: Engine, replay_server: ReplayServer
) -> None:
    await engine.tool_servers.save_server(faulty_server())
    await engine.agents.save_agent(TRUSTING_AGENT)
    replay_server.enqueue(
        calls_reply(("c1", "faulty__pid", {})),
        calls_reply(("c2", "faulty__crash", {}), ("c3", "faulty__pid", {})),
        text("The server crashed and came back."),
    )
    session = await engine.sessions.new_session()
    events = await run_turn(engine, session.id, "Crash it")
    assert failure(events) is None

    path = await stored_path(engine.data_dir, session.id)
    assert [m.kind for m in path] == [
        MessageKind.PROMPT,
        MessageKind.TOOL_CALLS,
        MessageKind.TOOL_RESULTS,
        MessageKind.TOOL_CALLS,
        MessageKind.TOOL_RESULTS,
        MessageKind.RESPONSE,
    ]
    first_pid = int(path[2].tool_results[0].text)
    crashed, second = path[4].tool_results
    assert crashed.is_error and "stopped during the call to 'crash'" in crashed.text
    assert "crashing on purpose" in crashed.text  # the tail of its stderr explains why
    assert not second.is_error and int(second.text) != first_pid  # restarted on the next call
    assert not alive(first_pid)
    sent = sent_tool_results(replay_server, 2)
    assert "stopped during the call" in sent["c2"][0] and sent["c3"][0] == second.text
    state = await engine.tool_servers.state("faulty")
    assert state.status is ServerStatus.READY and state.restarts == 0


async def test_call_past_the_timeout_is_abandoned_and_the_turn_goes_on(
    engine: Engine, replay_server: ReplayServer
) -> None:
    await engine.tool_servers.save_server(faulty_server(call_timeout=1.0))
    await engine.agents.save_agent(TRUSTING_AGENT)
    replay_server.enqueue(
        calls_reply(("h1", "faulty__hang", {})),
        calls_reply(("e1", "faulty__echo", {"text": "still there"})),
        text("Done."),
    )
    session = await engine.sessions.new_session()
    started = time.monotonic()
    events = await run_turn(engine, session.id, "Hang")
    assert failure(events) is None and time.monotonic() - started < 15
    path = await stored_path(engine.data_dir, session.id)
    hung = path[2].tool_results[0]
    assert hung.is_error and "did not answer 'hang' within 1 s" in hung.text
    assert path[4].tool_results[0].text == "echo: still there"  # the same server still serves
    assert path[-1].text == "Done."
    assert "did not answer" in sent_tool_results(replay_server, 1)["h1"][0]


async def test_tool_error_reaches_the_model(engine: Engine, replay_server: ReplayServer) -> None:
    await engine.tool_servers.save_server(faulty_server())
    await engine.agents.save_agent(TRUSTING_AGENT)
    replay_server.enqueue(calls_reply(("f1", "faulty__fail", {"reason": "no paper"})), text("Sorry."))
    session = await engine.sessions.new_session()
    events = await run_turn(engine, session.id, "Fail")
    assert failure(events) is None
    result = (await stored_path(engine.data_dir, session.id))[2].tool_results[0]
    assert result.is_error and "cannot do that: no paper" in result.text
    assert "cannot do that: no paper" in sent_tool_results(replay_server, 1)["f1"][0]


async def test_images_and_structured_output(engine: Engine, replay_server: ReplayServer) -> None:
    await engine.tool_servers.save_server(faulty_server())
    await engine.agents.save_agent(TRUSTING_AGENT)
    replay_server.enqueue(
        calls_reply(("p1", "faulty__picture", {}), ("w1", "faulty__weather", {"city": "Oslo"})),
        text("A pixel and mild weather."),
    )
    session = await engine.sessions.new_session()
    assert failure(await run_turn(engine, session.id, "Show me")) is None
    picture, weather = (await stored_path(engine.data_dir, session.id))[2].tool_results
    assert picture.images and picture.images[0].media_type == "image/png" and not picture.is_error
    assert weather.json_value() == {"city": "Oslo", "celsius": 21.5}
    body = str(replay_server.requests[1].body["messages"])
    assert "data:image/png;base64," in body  # the image went to the model


async def test_restarts_stop_after_the_limit_until_restarted_by_hand(engine: Engine) -> None:
    await engine.tool_servers.save_server(faulty_server())
    await engine.tool_servers.start("faulty")
    for attempt in range(MAX_RESTARTS + 1):
        message, is_error = await call(engine, "faulty__crash")
        assert is_error and "stopped during the call" in message, (attempt, message)
    message, is_error = await call(engine, "faulty/echo", '{"text": "x"}')
    assert is_error and "not restarted again" in message and "Restart it in Settings" in message
    state = await engine.tool_servers.restart("faulty")
    assert state.status is ServerStatus.READY and state.restarts == 0
    assert await call(engine, "faulty__echo", '{"text": "back"}') == ("echo: back", False)


@pytest.mark.expected_log_warnings("could not start")
async def test_server_that_cannot_start_shows_why_and_the_turn_still_runs(
    engine: Engine, replay_server: ReplayServer
) -> None:
    await engine.tool_servers.save_server(faulty_server("broken", "--fail-start"))
    await engine.tool_servers.save_server(McpServerConfig("missing", command="/nonexistent/mcp-server"))
    await engine.agents.save_agent(AgentConfig("default", "Default", enabled_tools=("broken/*", "missing/*")))
    replay_server.enqueue(text("No tools today."))
    session = await engine.sessions.new_session()
    events = await run_turn(engine, session.id, "Hello")
    assert failure(events) is None
    assert "tools" not in replay_server.requests[0].body
    states = {s.name: s for s in await engine.tool_servers.states()}
    assert states["broken"].status is ServerStatus.FAILED
    assert "could not start" in states["broken"].error and "giving up" in states["broken"].error
    assert states["missing"].status is ServerStatus.FAILED and "not found" in states["missing"].error


async def test_servers_are_stopped_when_the_engine_closes(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    from tests.support.engines import open_engine

    engine = await open_engine(tmp_path / "data", replay_server)
    await engine.tool_servers.save_server(faulty_server())
    await engine.tool_servers.start("faulty")
    pid = int((await call(engine, "faulty__pid"))[0])
    assert alive(pid)
    await engine.aclose()
    await until(lambda: not alive(pid), "the server process ending")


async def test_removing_a_server_removes_its_tools(engine: Engine) -> None:
    await engine.tool_servers.save_server(faulty_server())
    await engine.tool_servers.start("faulty")
    assert engine.tools.get("faulty/echo") is not None
    await engine.tool_servers.remove_server("faulty")
    assert engine.tools.get("faulty/echo") is None and await engine.tool_servers.list_servers() == []
    assert await engine.settings.get_setting("mcp_servers") == []


# -- streamable HTTP ----------------------------------------------------------------------------------


@pytest.mark.expected_log_warnings("'nokey' could not start")
async def test_streamable_http_server_with_headers(engine: Engine, http_server: str) -> None:
    config = McpServerConfig(
        "remote", transport=Transport.HTTP, url=http_server, headers={"X-Test-Token": "secret"}
    )
    await engine.tool_servers.save_server(config)
    state = await engine.tool_servers.start("remote")
    assert state.status is ServerStatus.READY, state.error
    assert "remote/echo" in {t.policy_name for t in state.tools}
    assert await call(engine, "remote__echo", '{"text": "over http"}') == ("echo: over http", False)

    await engine.tool_servers.save_server(
        McpServerConfig("nokey", transport=Transport.HTTP, url=http_server, startup_timeout=10)
    )
    refused = await engine.tool_servers.start("nokey")
    assert refused.status is ServerStatus.FAILED and "401" in refused.error


async def test_server_that_died_while_idle_is_restarted_transparently(engine: Engine) -> None:
    await engine.tool_servers.save_server(faulty_server())
    await engine.tool_servers.start("faulty")
    pid = int((await call(engine, "faulty__pid"))[0])
    os.kill(pid, 9)
    connection = engine.tool_servers._get("faulty")
    await until(lambda: connection_noticed_the_end(connection), "the SDK noticing the closed pipe")
    text, is_error = await call(engine, "faulty__pid")
    assert not is_error and int(text) != pid
