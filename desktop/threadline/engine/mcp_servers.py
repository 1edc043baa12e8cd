"""``engine.mcp_servers``: what Settings → MCP shows of a server and does to it beyond start and stop.

Its details (transport, protocol, capabilities, counts, instructions, sign in), its log
(``notifications/message``) and the level the server logs from (``logging/setLevel``),
and signing in and out. Starting, stopping and editing servers stay on
``engine.tool_servers``. docs/mcp.md, "Settings → MCP".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from threadline.engine.errors import EngineError
from threadline.tools.mcp.details import ServerDetails, read_details, set_log_level
from threadline.tools.mcp.manager import McpServerManager
from threadline.tools.mcp.server_log import LEVELS, LogEntry
from threadline.tools.mcp.state import ServerState

if TYPE_CHECKING:
    from threadline.tools.mcp.client import McpConnection

__all__ = ["LEVELS", "LogEntry", "McpServers", "ServerDetails"]


class McpServers:
    def __init__(self, servers: McpServerManager) -> None:
        self._servers = servers

    async def details(self, name: str) -> ServerDetails | None:
        """``None`` when there is no such server (removed meanwhile)."""
        connection = await self._connection(name)
        return None if connection is None else await read_details(connection)

    async def log(self, name: str) -> list[LogEntry]:
        """The server's log messages of this run of the app, oldest first."""
        connection = await self._connection(name)
        return [] if connection is None else list(connection.log.entries)

    async def subscribe_log(self, name: str, callback: Callable[[LogEntry], None]) -> Callable[[], None]:
        """``callback(entry)`` for each new log message of the server (until its record changes)."""
        connection = await self._connection(name)
        return (lambda: None) if connection is None else connection.log.subscribe(callback)

    async def _connection(self, name: str) -> McpConnection | None:
        try:
            return await self._servers.connection(name)
        except KeyError:
            return None

    async def set_log_level(self, name: str, level: str) -> None:
        """Ask the running server to log from ``level`` on; raises ``EngineError`` when it cannot."""
        if level not in LEVELS:
            raise EngineError(f"{level!r} is not a log level.")
        connection = await self._servers.connection(name)
        try:
            await set_log_level(connection, level)
        except Exception as err:
            raise EngineError(f"MCP server {name!r} did not take the log level: {err}") from err

    async def sign_in(self, name: str) -> ServerState:
        """Sign in through the browser; ``SignInError`` (with a ``user_message``) when it fails."""
        return await self._servers.sign_in(name)

    async def sign_out(self, name: str) -> ServerState:
        return await self._servers.sign_out(name)
