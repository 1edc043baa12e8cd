"""A server's ``instructions`` reach the model with its tools, and the context meter counts them;
its structured content reaches the model readably.

The real ``@modelcontextprotocol/server-everything`` (npm, stdio) gives instructions in its
initialize result; the replay server records what each request carried.
"""

from __future__ import annotations

import asyncio

import pytest
from tests.integration.tools.tool_turns import run_turn, sent_tool_results, text_reply, tool_call_reply
from tests.support.everything_server import everything_config
from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response
from tests.support.waiting import WAIT

from threadline.core.compare import CompareTarget
from threadline.core.config import AgentConfig, Approval, ApprovalRule, ProviderKind
from threadline.core.meter import MeterPart
from threadline.engine.engine import Engine

pytestmark = pytest.mark.asyncio
OPENAI = ProviderKind.OPENAI
HEADING = "Everything Server – Server Instructions"


def system_text(server: ReplayServer, index: int) -> str:
    messages = server.requests[index].body["messages"]
    return "\n".join(str(m["content"]) for m in messages if m["role"] == "system")


async def use(engine: Engine, *tools: str) -> None:
    await engine.agents.save_agent(
        AgentConfig("default", "Default", system_prompt="Be brief.", enabled_tools=tools)
    )


async def test_instructions_go_with_the_servers_tools_only(
    engine: Engine, replay_server: ReplayServer
) -> None:
    await engine.tool_servers.save_server(everything_config())
    await use(engine, "everything/echo")
    session = await engine.sessions.new_session()
    replay_server.enqueue(text_reply(OPENAI, "Hello."), text_reply(OPENAI, "Hi again."))
    await run_turn(engine, session.id, "Hello")  # the server starts to list its tools
    await run_turn(engine, session.id, "Again")
    system = system_text(replay_server, 1)
    assert system.startswith('Be brief.\n\n<mcp_server_instructions server="everything">\n')
    assert HEADING in system and system.rstrip().endswith("</mcp_server_instructions>")
    meter = await engine.turns.context_meter(session.id)
    instructions = meter.tokens(MeterPart.INSTRUCTIONS)
    assert instructions > 100 and meter.tokens(MeterPart.SYSTEM) < 10

    await use(engine)  # no tool of the server offered: no instructions either
    replay_server.enqueue(text_reply(OPENAI, "Plain."))
    await run_turn(engine, session.id, "Without tools")
    assert system_text(replay_server, 2) == "Be brief."
    assert (await engine.turns.context_meter(session.id)).tokens(MeterPart.INSTRUCTIONS) == 0


async def test_structured_content_reaches_the_model_as_indented_json(
    engine: Engine, replay_server: ReplayServer
) -> None:
    """The reference server's ``get-structured-content`` answers with an ``outputSchema`` the SDK
    validates and a one-line JSON text; the result is the same JSON, indented."""
    await engine.tool_servers.save_server(everything_config())
    await engine.agents.save_agent(
        AgentConfig(
            "default",
            "Default",
            enabled_tools=("everything/get-structured-content",),
            approval_rules=(ApprovalRule("everything/*", Approval.ALLOW),),
        )
    )
    session = await engine.sessions.new_session()
    replay_server.enqueue(
        tool_call_reply(OPENAI, [("s1", "everything__get-structured-content", {"location": "Chicago"})]),
        text_reply(OPENAI, "Drizzle."),
    )
    await run_turn(engine, session.id, "Weather?")
    text, is_error = sent_tool_results(replay_server, 1)["s1"]
    assert not is_error
    assert text == '{\n  "temperature": 36,\n  "conditions": "Light rain / drizzle",\n  "humidity": 82\n}'


async def test_every_compare_worker_gets_the_instructions(
    engine: Engine, replay_server: ReplayServer
) -> None:
    """A compare's columns are requests of the same chat: each carries the server's
    instructions with its tools, as a single reply would."""
    await engine.tool_servers.save_server(everything_config())
    await use(engine, "everything/echo")
    session = await engine.sessions.new_session()
    replay_server.enqueue(text_reply(OPENAI, "Hello."))
    await run_turn(engine, session.id, "Hello")  # the server starts to list its tools
    replay_server.responder = lambda request: sse_response(
        openai_text_stream([f"{request.body['model']} answers."], model=request.body["model"])
    )
    await engine.sessions.open_session(session.id)
    engine.turns.send_compare(
        session.id, "Both", (CompareTarget("replay", "a"), CompareTarget("replay", "b"))
    )
    await asyncio.wait_for(engine.turns.wait_idle(session.id), WAIT)
    workers = [r for r in replay_server.requests[1:] if r.method == "POST"]
    assert sorted(r.body["model"] for r in workers) == ["a", "b"]
    for request in workers:
        system = "\n".join(str(m["content"]) for m in request.body["messages"] if m["role"] == "system")
        assert '<mcp_server_instructions server="everything">' in system and HEADING in system
