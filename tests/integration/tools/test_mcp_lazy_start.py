"""MCP servers start when a tool is first needed, not when a turn starts; their tools are known early.

Real engines on one data dir (closed and reopened, as two ``threadline ask`` runs
are), the replay server and the real ``faulty_server.py`` MCP server, which appends
its pid to a file each time it starts: that file counts process creations.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest
from tests.integration.tools.conftest import faulty_server
from tests.integration.tools.tool_turns import (
    failure,
    offered_tool_names,
    run_turn,
    text_reply,
    tool_call_reply,
)
from tests.support.engines import open_engine
from tests.support.sse_server import ReplayServer

from threadline.core.config import Approval, ApprovalRule, ProviderKind
from threadline.core.messages import ToolCall
from threadline.engine.engine import Engine
from threadline.engine.warm_up import warm_up
from threadline.tools.mcp.config import McpServerConfig
from threadline.tools.tool_cache import TOOL_CACHE_SETTING

pytestmark = pytest.mark.asyncio

OPENAI = ProviderKind.OPENAI


def starts(started_file: Path) -> int:
    return len(started_file.read_text().split()) if started_file.exists() else 0


def counted_server(started_file: Path, *extra: str) -> McpServerConfig:
    return faulty_server("faulty", "--started-file", str(started_file), *extra)


@contextlib.asynccontextmanager
async def running(data_dir: Path, replay_server: ReplayServer) -> AsyncIterator[Engine]:
    """An engine on ``data_dir`` for one block, closed after it (each block is one app start)."""
    engine = await open_engine(data_dir, replay_server, provider_timeout=5.0)
    try:
        yield engine
    finally:
        await engine.aclose()


async def ask(engine: Engine, replay_server: ReplayServer, text: str = "hello") -> None:
    session = await engine.sessions.new_session()
    replay_server.enqueue(text_reply(OPENAI, "Hi."))
    events = await run_turn(engine, session.id, text)
    assert failure(events) is None


async def configure(data_dir: Path, replay_server: ReplayServer, config: McpServerConfig) -> None:
    """A data dir whose default agent offers the server's tools and allows them."""
    async with running(data_dir, replay_server) as engine:
        await engine.tool_servers.save_server(config)
        agent = await engine.agents.get_agent()
        allowed = (ApprovalRule("faulty/*", Approval.ALLOW),)
        await engine.agents.save_agent(replace(agent, enabled_tools=("faulty/*",), approval_rules=allowed))


async def test_a_cold_cache_starts_the_server_a_warm_one_offers_its_tools_and_a_call_starts_it(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    data_dir, started = tmp_path / "data", tmp_path / "started"
    await configure(data_dir, replay_server, counted_server(started))

    async with running(data_dir, replay_server) as first:
        await ask(first, replay_server)  # nothing cached yet: the server starts to say what it offers
        assert starts(started) == 1
        assert "faulty__echo" in offered_tool_names(replay_server, -1)

    async with running(data_dir, replay_server) as second:
        await ask(second, replay_server)  # no tool used: no server process
        assert starts(started) == 1
        assert second.tool_servers.running() == []
        assert "faulty__echo" in offered_tool_names(replay_server, -1)  # offered from the cache

        session = await second.sessions.new_session()
        replay_server.enqueue(
            tool_call_reply(OPENAI, [("c1", "faulty__echo", {"text": "ping"})]), text_reply(OPENAI, "Done.")
        )
        events = await run_turn(second, session.id, "echo ping")
        assert failure(events) is None
        assert starts(started) == 2  # the call started it
        assert second.tool_servers.running() == ["faulty"]
        tool_message = next(m for m in replay_server.requests[-1].body["messages"] if m["role"] == "tool")
        assert tool_message["content"] == "echo: ping"


async def test_a_changed_record_invalidates_its_cached_tools(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    data_dir, started = tmp_path / "data", tmp_path / "started"
    await configure(data_dir, replay_server, counted_server(started))
    async with running(data_dir, replay_server) as engine:
        await ask(engine, replay_server)
        assert starts(started) == 1
        await engine.tool_servers.save_server(replace(counted_server(started), call_timeout=20.0))

    async with running(data_dir, replay_server) as engine:
        await ask(engine, replay_server)  # the cached list belonged to the old record
        assert starts(started) == 2
        assert "faulty__echo" in offered_tool_names(replay_server, -1)

    async with running(data_dir, replay_server) as engine:
        await ask(engine, replay_server)  # cached again, for the new record
        assert starts(started) == 2


async def test_tools_list_changed_refreshes_the_cache(tmp_path: Path, replay_server: ReplayServer) -> None:
    data_dir, started = tmp_path / "data", tmp_path / "started"
    await configure(data_dir, replay_server, counted_server(started))
    async with running(data_dir, replay_server) as engine:
        session = await engine.sessions.new_session()
        replay_server.enqueue(
            tool_call_reply(OPENAI, [("c1", "faulty__grow", {"name": "sprout"})]),
            text_reply(OPENAI, "Grown."),
        )
        assert failure(await run_turn(engine, session.id, "grow")) is None

        async def cached_names() -> list[str]:
            cache = await engine.settings.get_setting(TOOL_CACHE_SETTING, {})
            return [t["name"] for t in cache.get("faulty", {}).get("tools", [])]

        for _ in range(1500):  # up to 30 s for the notification, the new listing and the write
            if "sprout" in await cached_names():
                break
            await asyncio.sleep(0.02)
        assert "sprout" in await cached_names()
        assert engine.tools.get("faulty/sprout") is not None

    async with running(data_dir, replay_server) as engine:
        before = starts(started)
        await ask(engine, replay_server)
        assert "faulty__sprout" in offered_tool_names(replay_server, -1)
        assert starts(started) == before


async def test_a_destructive_tool_asks_unless_allowed_by_name(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    data_dir, started = tmp_path / "data", tmp_path / "started"
    await configure(data_dir, replay_server, counted_server(started))
    async with running(data_dir, replay_server) as engine:
        await ask(engine, replay_server)  # learns the tools and their annotations

    async with running(data_dir, replay_server) as engine:
        agent = await engine.agents.get_agent()
        await engine.tools.prepare(agent.enabled_tools)  # cached tools, annotations included
        assert engine.tool_servers.running() == []
        wipe = ToolCall("c1", "faulty__wipe", "{}")
        echo = ToolCall("c2", "faulty__echo", '{"text": "x"}')
        assert engine.tools.approval(agent, echo) is Approval.ALLOW  # "faulty/*" allows the others
        assert engine.tools.approval(agent, wipe) is Approval.ASK  # but not a destructive one
        by_name = replace(agent, approval_rules=(ApprovalRule("faulty/wipe", Approval.ALLOW),))
        assert engine.tools.approval(by_name, wipe) is Approval.ALLOW
        everything = replace(agent, approval_rules=(), default_approval=Approval.ALLOW)
        assert engine.tools.approval(everything, wipe) is Approval.ASK


async def test_the_windows_warm_up_starts_cached_servers_in_the_background(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    data_dir, started = tmp_path / "data", tmp_path / "started"
    await configure(data_dir, replay_server, counted_server(started))
    async with running(data_dir, replay_server) as engine:
        await ask(engine, replay_server)

    async with running(data_dir, replay_server) as engine:
        await warm_up(engine)  # what the window runs after its first paint
        assert engine.tool_servers.running() == ["faulty"]
        assert starts(started) == 2
