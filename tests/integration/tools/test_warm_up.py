"""The background warm-up after the window is live: provider clients made, the default agent's
MCP servers started, so the first send finds them ready instead of doing that work itself."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from tests.integration.tools.conftest import git_server, time_server

from threadline.engine.engine import Engine
from threadline.engine.warm_up import warm_up
from threadline.tools.mcp.state import ServerStatus

pytestmark = pytest.mark.asyncio


async def test_warm_up_starts_only_the_servers_the_default_agent_uses(
    engine: Engine, git_repository: Path
) -> None:
    await engine.tool_servers.save_server(time_server())
    await engine.tool_servers.save_server(git_server(git_repository))
    agent = await engine.agents.get_agent()
    await engine.agents.save_agent(replace(agent, enabled_tools=("time/*",)))

    await warm_up(engine)

    states = {s.name: s for s in await engine.tool_servers.states()}
    assert states["time"].status is ServerStatus.READY, states["time"].error
    assert states["git"].status is ServerStatus.STOPPED  # not selected: not started
    assert engine.tools.get("time/get_current_time") is not None
    providers = await engine.providers.list_providers()
    assert providers
    assert all(engine.hub.has_client(p.name) for p in providers)


async def test_warm_up_with_no_mcp_server_makes_the_clients_and_returns(engine: Engine) -> None:
    providers = await engine.providers.list_providers()
    assert providers and not any(engine.hub.has_client(p.name) for p in providers)

    await warm_up(engine)

    assert all(engine.hub.has_client(p.name) for p in providers)
    assert await engine.tool_servers.states() == []
