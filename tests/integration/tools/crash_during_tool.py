"""Run one turn whose tool blocks, in its own process, so a test can SIGKILL it mid-tool.

Usage: python crash_during_tool.py DATA_DIR OPENAI_BASE_URL MARKER_FILE [MCP_SERVER_SCRIPT [ARG...] | --shell]

Without MCP_SERVER_SCRIPT the tool is a built-in ``deploy`` that writes MARKER_FILE and
blocks; with it, the tools come from that MCP server over stdio (the test server's
``wait`` writes the marker named in the scripted call; ARGs go to the server). With
``--shell`` the tool is the real built-in ``shell``, allowed in MARKER_FILE's folder
(the scripted command writes the marker). The provider key comes from
THREADLINE_TEST_KEY. Prints the session id first.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from threadline.core.config import AgentConfig, Approval, ApprovalRule, ProviderConfig, ProviderKind
from threadline.core.request import ToolSpec
from threadline.engine.engine import Engine
from threadline.tools.mcp_config import McpServerConfig
from threadline.tools.registry import ToolOutput, ToolRegistry


class BlockingTool:
    spec = ToolSpec("deploy", "Deploy", {"type": "object", "properties": {}})

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    async def call(self, arguments: dict[str, Any]) -> ToolOutput:
        self.marker.write_text("running")
        await asyncio.sleep(3600)
        return ToolOutput("deployed")


async def main(data_dir: Path, base_url: str, marker: Path, mcp_server: list[str]) -> None:
    folders: tuple[str, ...] = ()
    if not mcp_server:
        engine = await Engine.open(data_dir, tools=ToolRegistry([BlockingTool(marker)]))
        tools = "deploy"
    elif mcp_server == ["--shell"]:
        engine = await Engine.open(data_dir)
        tools, folders = "shell", (str(marker.parent),)
    else:
        engine = await Engine.open(data_dir)
        await engine.tool_servers.save_server(
            McpServerConfig("faulty", command=sys.executable, args=tuple(mcp_server), call_timeout=600)
        )
        tools = "faulty/*"
    await engine.store.save_provider(
        ProviderConfig(
            "replay",
            ProviderKind.OPENAI,
            base_url=base_url,
            api_key_env="THREADLINE_TEST_KEY",
            default_model="gpt-4o-mini",
        )
    )
    await engine.settings.set_setting("default_provider", "replay")
    await engine.agents.save_agent(
        AgentConfig(
            "default",
            "Default",
            enabled_tools=(tools,),
            approval_rules=(ApprovalRule(tools, Approval.ALLOW),),
            allowed_folders=folders,
        )
    )
    session = await engine.sessions.new_session()
    print(session.id, flush=True)
    await engine.sessions.open_session(session.id)
    engine.turns.send(session.id, "Do it")
    await engine.turns.wait_idle(session.id)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), sys.argv[4:]))
