"""Run one turn whose MCP tool (the test server's ``wait``) blocks, so a test can SIGKILL it mid-call.

Usage: python crash_during_mcp_tool.py DATA_DIR OPENAI_BASE_URL SERVER_SCRIPT
The provider key comes from THREADLINE_TEST_KEY. Prints the session id; the MCP server
writes the marker file named in the scripted tool call once the call runs.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from threadline.core.config import AgentConfig, Approval, ApprovalRule, ProviderConfig, ProviderKind
from threadline.engine.engine import Engine
from threadline.tools.mcp_config import McpServerConfig


async def main(data_dir: Path, base_url: str, server_script: Path) -> None:
    engine = await Engine.open(data_dir)
    await engine.store.save_provider(
        ProviderConfig(
            "replay",
            ProviderKind.OPENAI,
            base_url=base_url,
            api_key_env="THREADLINE_TEST_KEY",
            default_model="gpt-4o-mini",
        )
    )
    await engine.tool_servers.save_server(
        McpServerConfig("faulty", command=sys.executable, args=(str(server_script),), call_timeout=600)
    )
    await engine.save_agent(
        AgentConfig(
            "default",
            "Default",
            enabled_tools=("faulty/*",),
            approval_rules=(ApprovalRule("faulty/*", Approval.ALLOW),),
        )
    )
    session = await engine.new_session()
    print(session.id, flush=True)
    await engine.open_session(session.id)
    engine.send(session.id, "Wait for it")
    await engine.wait_idle(session.id)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])))
