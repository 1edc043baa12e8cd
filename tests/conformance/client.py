"""The client command of the MCP conformance suite (``@modelcontextprotocol/conformance``).

Run by the suite as ``python tests/conformance/client.py URL``: the scenario's name is in
``MCP_CONFORMANCE_SCENARIO``, scenario data (a pre-registered client) in
``MCP_CONFORMANCE_CONTEXT``. It connects with Threadline's own connection code
(``McpConnection``, the OAuth sign in of ``mcp_oauth``, the elicitation routing of
``mcp_person``), as the app does, with a stand-in for the person: it accepts every
elicitation with the form's defaults, and follows the authorization page's redirect
with HTTP GETs where a person's browser would, which brings the code to Threadline's
loopback listener. Tokens go to an in-memory keychain: the real one is never touched.

``.ci/conformance`` installs the suite and runs every client scenario; docs/mcp.md has
the figures.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "desktop"), str(ROOT)]

import keyring  # noqa: E402
import mcp_types  # noqa: E402
from tests.support.mcp_people import FollowingPerson  # noqa: E402
from tests.support.memory_keyring import MemoryKeyring  # noqa: E402

from threadline.tools.mcp.client import McpConnection  # noqa: E402
from threadline.tools.mcp.config import McpServerConfig, Transport  # noqa: E402
from threadline.tools.mcp.oauth import preregister  # noqa: E402

CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
"""A client ID metadata document address (the suite's own servers do not fetch it)."""

TOOL_CALLS: dict[str, tuple[str, dict[str, object]]] = {
    "tools_call": ("add_numbers", {"a": 5, "b": 3}),
    "sse-retry": ("test_reconnection", {}),
    "elicitation-sep1034-client-defaults": ("test_client_elicitation_defaults", {}),
}


async def run(url: str, scenario: str) -> None:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if context.get("client_id"):
        preregister(url, str(context["client_id"]), str(context.get("client_secret") or ""))
    config = McpServerConfig(
        "conformance", transport=Transport.HTTP, url=url, startup_timeout=25, call_timeout=25
    )
    connection = McpConnection(config, person=FollowingPerson(), client_metadata_url=CLIENT_METADATA_URL)
    try:
        await connection.start()
        if scenario in TOOL_CALLS:
            name, arguments = TOOL_CALLS[scenario]
            output = await connection.call(name, dict(arguments))
            print(f"{name}: {output.text}")
            if output.is_error:
                raise SystemExit(f"{name} failed: {output.text}")
        elif scenario == "json-schema-2020-12-preservation":
            # Echo the input schema as Threadline keeps it (what providers are given).
            focal = next(t for t in connection.tools if t.name == "json_schema_2020_12_tool")
            output = await connection.call("json_schema_echo", {"schema": dict(focal.input_schema)})
            print(f"json_schema_echo: {output.text}")
        elif scenario.startswith("auth/"):
            for tool in connection.tools:  # each call goes through the OAuth provider (step-up…)
                output = await connection.call(tool.name, {})
                print(f"{tool.name}: {output.text}")
    finally:
        await connection.stop()


def main() -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    keyring.set_keyring(MemoryKeyring())
    if len(sys.argv) < 2:
        raise SystemExit("usage: client.py SERVER_URL  (with MCP_CONFORMANCE_SCENARIO set)")
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize")
    print(f"scenario {scenario}, protocol {mcp_types.LATEST_PROTOCOL_VERSION} known", file=sys.stderr)
    asyncio.run(run(sys.argv[-1], scenario))


if __name__ == "__main__":
    main()
