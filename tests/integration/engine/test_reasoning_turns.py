"""Thinking models end to end: byte-exact replays through the real engine, store and SDKs.

Reasoning is stored apart from the reply's text (read back by a fresh store, as after a
restart), is stored while it streams, is never sent back to an OpenAI-compatible server,
and Anthropic's signed thinking blocks go back unchanged in the next request of the tool
round — and not in a later turn's request.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from tests.integration.engine.helpers import failure, stored_path, turn
from tests.integration.engine.test_engine_turns import LookupTool, text_reply
from tests.support.engines import open_engine
from tests.support.sse_server import ReplayServer, load_sse_fixture, sse_response

from threadline.core.config import AgentConfig, Approval, ApprovalRule, ProviderKind
from threadline.core.messages import MessageStatus
from threadline.core.reasoning import SOURCE_ANTHROPIC, SOURCE_OPENAI, SOURCE_THINK_TAG
from threadline.engine.engine import DATABASE_FILENAME, Engine
from threadline.engine.events import ReasoningDelta, TextDelta

pytestmark = pytest.mark.asyncio

THOUGHT = "The user asks for 17 × 23. 17 × 20 = 340, 17 × 3 = 51, so 391."


async def test_reasoning_content_is_stored_apart_and_never_sent_back(
    engine: Engine, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(
        sse_response(load_sse_fixture("openai_reasoning_content.sse"), chunk_delay=0.02), text_reply("Sure.")
    )
    session = await engine.sessions.new_session()
    events = await turn(engine, session.id, "What is 17 × 23?")
    assert failure(events) is None
    assert "".join(e.delta for e in events if isinstance(e, ReasoningDelta)) == THOUGHT
    assert "".join(e.delta for e in events if isinstance(e, TextDelta)) == "17 × 23 = **391**."

    reply = (await stored_path(engine.data_dir, session.id))[-1]
    assert reply.text == "17 × 23 = **391**." and reply.status is MessageStatus.COMPLETE
    (block,) = reply.reasoning
    assert block.text == THOUGHT and block.source == SOURCE_OPENAI
    assert block.duration_ms is not None and block.duration_ms >= 60  # five pieces 20 ms apart

    await turn(engine, session.id, "And 17 × 24?")
    second = replay_server.requests[1].body
    assert "17 × 20 = 340" not in json.dumps(second, ensure_ascii=False)
    assert {"role": "assistant", "content": "17 × 23 = **391**."} in second["messages"]
    assert all(set(m) <= {"role", "content"} for m in second["messages"])


async def test_think_tags_split_across_chunks_become_reasoning(
    engine: Engine, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(sse_response(load_sse_fixture("ollama_think_tags.sse")), text_reply("Another."))
    session = await engine.sessions.new_session()
    await turn(engine, session.id, "A haiku about rain")
    reply = (await stored_path(engine.data_dir, session.id))[-1]
    assert reply.text == "Soft rain on the roof\nlistening, the kettle hums\nthe day slows to drops"
    assert reply.reasoning[0].source == SOURCE_THINK_TAG
    assert "Five, seven, five." in reply.reasoning[0].text

    await turn(engine, session.id, "Another one")
    sent = json.dumps(replay_server.requests[1].body, ensure_ascii=False)
    assert "think>" not in sent and "Five, seven, five." not in sent
    assert "Soft rain on the roof" in sent


async def test_reasoning_is_stored_while_it_streams(engine: Engine, replay_server: ReplayServer) -> None:
    """The reply's row holds the reasoning before any answer text arrives (a kill loses ≤ 250 ms)."""
    chunks = load_sse_fixture("openai_reasoning_content.sse")
    replay_server.enqueue(sse_response(chunks, stall_after=6, stall_for=30))  # role + 5 reasoning chunks
    session = await engine.sessions.new_session()
    live = await engine.sessions.open_session(session.id)
    engine.turns.send(session.id, "What is 17 × 23?")
    deadline = time.monotonic() + 20
    stored = None
    while time.monotonic() < deadline and stored is None:
        stored = reply_row(engine.data_dir)  # read-only: opening a Store would mark it interrupted
        if stored is not None and THOUGHT not in json.dumps(json.loads(stored[2]), ensure_ascii=False):
            stored = None
        await asyncio.sleep(0.05)
    assert stored is not None, "the reasoning was not stored while the reply streamed"
    assert stored[:2] == ("", "streaming")
    assert json.loads(stored[2])["reasoning"][0]["text"] == THOUGHT
    assert live.conversation.reply is not None and live.conversation.reply.reasoning[0].duration_ms is None
    engine.turns.cancel(session.id)
    await asyncio.wait_for(engine.turns.wait_idle(session.id), 20)
    reply = (await stored_path(engine.data_dir, session.id))[-1]
    assert reply.status is MessageStatus.CANCELLED and reply.reasoning[0].text == THOUGHT
    assert reply.reasoning[0].duration_ms is not None  # stopped mid-thought: timed up to the stop


def reply_row(data_dir: Path) -> tuple[str, str, str] | None:
    """The reply's stored (text, status, content JSON), read through a read-only connection."""
    with contextlib.closing(
        sqlite3.connect(f"file:{data_dir / DATABASE_FILENAME}?mode=ro", uri=True, timeout=10)
    ) as db:
        row = db.execute("SELECT text, status, content FROM messages WHERE role = 'assistant'").fetchone()
    return None if row is None else (row[0], row[1], row[2])


@pytest_asyncio.fixture
async def claude(tmp_path: Path, replay_server: ReplayServer) -> AsyncIterator[Engine]:
    engine = await open_engine(tmp_path / "data", replay_server, ProviderKind.ANTHROPIC)
    engine.tools.register(LookupTool())
    await engine.agents.save_agent(
        AgentConfig(
            "default",
            "Default",
            enabled_tools=("lookup", "get_weather"),
            approval_rules=(ApprovalRule("*", Approval.ALLOW),),
        )
    )
    yield engine
    await engine.aclose()


async def test_anthropic_thinking_goes_back_unchanged_within_the_tool_round(
    claude: Engine, replay_server: ReplayServer
) -> None:
    from threadline.core.request import ToolSpec
    from threadline.tools.registry import ToolOutput

    class Weather:
        spec = ToolSpec(
            "get_weather", "Weather", {"type": "object", "properties": {"city": {"type": "string"}}}
        )

        async def call(self, arguments: dict[str, object]) -> ToolOutput:
            return ToolOutput("4 °C, rain")

    claude.tools.register(Weather())
    replay_server.enqueue(
        sse_response(load_sse_fixture("anthropic_thinking_tool_use.sse")),
        sse_response(load_sse_fixture("anthropic_thinking_text.sse")),
        sse_response(load_sse_fixture("anthropic_text.sse")),
    )
    session = await claude.sessions.new_session()
    events = await turn(claude, session.id, "Weather in Oslo?")
    assert failure(events) is None

    path = await stored_path(claude.data_dir, session.id)
    calls, answer = path[1], path[3]
    thinking, redacted = calls.reasoning
    assert calls.text == "Let me check the weather in Oslo." and calls.tool_calls[0].name == "get_weather"
    assert thinking.source == SOURCE_ANTHROPIC and thinking.text.startswith("The user asks for the weather")
    assert answer.text == "It is 4 °C and raining in Oslo: take an umbrella."
    assert answer.reasoning[0].text == "The tool says 4 °C and rain."

    fixture = "".join(c.decode() for c in load_sse_fixture("anthropic_thinking_tool_use.sse"))
    signature = fixture.split('"signature_delta","signature":"')[1].split('"')[0]
    data = fixture.split('"redacted_thinking","data":"')[1].split('"')[0]
    assert thinking.signature == signature and redacted.redacted_data == data

    round_request = replay_server.requests[1].body["messages"]
    assistant = round_request[1]
    assert assistant["role"] == "assistant"
    assert assistant["content"][:2] == [
        {"type": "thinking", "thinking": thinking.text, "signature": signature},
        {"type": "redacted_thinking", "data": data},
    ]
    assert [b["type"] for b in assistant["content"][2:]] == ["text", "tool_use"]
    assert round_request[2]["content"][0]["type"] == "tool_result"

    await turn(claude, session.id, "Thanks!")
    later = json.dumps(replay_server.requests[2].body)
    assert '"thinking"' not in later and "redacted_thinking" not in later  # an earlier turn's: left out


async def test_agent_switches_reach_each_api(
    engine: Engine, tmp_path: Path, replay_server: ReplayServer
) -> None:
    """reasoning_effort goes to an OpenAI-compatible server; Anthropic gets thinking with room to
    answer and without the sampling settings the API refuses while thinking."""
    await engine.agents.save_agent(AgentConfig("default", "Default", reasoning_effort="low", temperature=0.3))
    replay_server.enqueue(text_reply("Fine."))
    session = await engine.sessions.new_session()
    await turn(engine, session.id, "Hi")
    assert replay_server.requests[-1].body["reasoning_effort"] == "low"

    claude = await open_engine(tmp_path / "claude", replay_server, ProviderKind.ANTHROPIC)
    try:
        await claude.agents.save_agent(
            AgentConfig("default", "Default", thinking_budget=2048, temperature=0.3, max_tokens=1000)
        )
        stored = await claude.agents.get_agent()
        assert (stored.thinking_budget, stored.reasoning_effort) == (2048, "")
        replay_server.enqueue(sse_response(load_sse_fixture("anthropic_thinking_text.sse")))
        session = await claude.sessions.new_session()
        await turn(claude, session.id, "Weather?")
        body = replay_server.requests[-1].body
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
        assert body["max_tokens"] > 2048 and "temperature" not in body and "reasoning_effort" not in body
    finally:
        await claude.aclose()
