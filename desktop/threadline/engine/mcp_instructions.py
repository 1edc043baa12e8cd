"""The ``instructions`` of the MCP servers whose tools a request offers, for its system prompt.

A server's initialize result may carry instructions: how its tools go together, what to
call first, its limits. MCP leaves it to the client to give them to the model; Threadline
adds them to the system prompt of each request that offers at least one tool of that
server (and only then: a server the agent does not use costs nothing), after the agent's
own prompt and before the sticky context, each in a block naming its server. The context
meter shows them as a part of their own. Instructions are known once the server ran in
this app's life (a server whose cached tools are offered before it started adds them
from the request after its start). docs/mcp.md, "Elicitation and server instructions".
"""

from __future__ import annotations

from collections.abc import Sequence

from threadline.core.request import ToolSpec
from threadline.tools.mcp.manager import McpServerManager
from threadline.tools.mcp.state import WIRE_SEPARATOR


class McpInstructions:
    """``block(offered)``: the instructions part of the system prompt for these offered tools."""

    def __init__(self, servers: McpServerManager) -> None:
        self._servers = servers

    def block(self, offered: Sequence[ToolSpec]) -> str:
        texts = self._servers.instructions()
        if not texts:
            return ""
        used = [
            name for name in texts if any(spec.name.startswith(f"{name}{WIRE_SEPARATOR}") for spec in offered)
        ]
        return "\n\n".join(
            f'<mcp_server_instructions server="{name}">\n{texts[name]}\n</mcp_server_instructions>'
            for name in sorted(used)
        )
