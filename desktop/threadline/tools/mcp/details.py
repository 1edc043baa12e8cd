"""What Settings → MCP shows of one server beyond its status: transport, protocol, capabilities,
how many tools, prompts and resources it has, its instructions, and its sign in.

Read from the running connection (the initialize result kept on it) and, for the prompt
and resource counts, asked of the server once per session, when the page first shows it
(``prompts/list``, ``resources/list``): a stopped server shows what is known without
starting it.
"""

from __future__ import annotations

import asyncio
import logging
import warnings
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from threadline.tools.mcp.config import Transport
from threadline.tools.mcp.state import ServerStatus

if TYPE_CHECKING:
    import mcp_types

    from threadline.tools.mcp.client import McpConnection

log = logging.getLogger("threadline.tools.mcp")

CAPABILITIES = ("tools", "prompts", "resources", "logging", "completions", "tasks")


@dataclass(frozen=True, slots=True)
class ServerDetails:
    name: str
    transport: str
    """"stdio" or "streamable HTTP"."""
    status: ServerStatus
    protocol_version: str = ""
    capabilities: tuple[str, ...] = ()
    tools: int | None = None
    prompts: int | None = None
    resources: int | None = None
    """``None``: not known (not running, or the server has no such capability)."""
    instructions: str = ""
    remote: bool = False
    signed_in: bool = False
    log_level: str = ""


def capability_names(capabilities: Any) -> tuple[str, ...]:
    """The capabilities a server declared in its initialize result, by name."""
    if capabilities is None:
        return ()
    return tuple(name for name in CAPABILITIES if getattr(capabilities, name, None) is not None)


async def read_details(connection: McpConnection) -> ServerDetails:
    config = connection.config
    remote = config.transport is Transport.HTTP
    names = capability_names(connection.capabilities)
    session = connection.live_session
    prompts = resources = None
    if session is not None and connection.status is ServerStatus.READY:
        counting = _counted.get(session)
        if counting is None:  # once per session: the page asks again at each status change
            counting = asyncio.ensure_future(_counts(session, names))
            _counted[session] = counting
        prompts, resources = await asyncio.shield(counting)
    return ServerDetails(
        name=connection.name,
        transport="streamable HTTP" if remote else "stdio",
        status=connection.status,
        protocol_version=connection.protocol_version,
        capabilities=names,
        tools=len(connection.tools) if connection.status is ServerStatus.READY else None,
        prompts=prompts,
        resources=resources,
        instructions=connection.instructions,
        remote=remote,
        signed_in=remote and connection.signed_in(),
        log_level=connection.log.level,
    )


_counted: weakref.WeakKeyDictionary[Any, asyncio.Future[tuple[int | None, int | None]]] = (
    weakref.WeakKeyDictionary()
)


async def _counts(session: Any, capabilities: tuple[str, ...]) -> tuple[int | None, int | None]:
    return await _count(session, "prompts", capabilities), await _count(session, "resources", capabilities)


async def _count(session: Any, kind: str, capabilities: tuple[str, ...]) -> int | None:
    if kind not in capabilities:
        return None
    lister = session.list_prompts if kind == "prompts" else session.list_resources
    total, cursor = 0, None
    try:
        for _ in range(100):
            from mcp_types import PaginatedRequestParams

            page = await lister(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
            total += len(page.prompts if kind == "prompts" else page.resources)
            cursor = page.next_cursor
            if not cursor:
                break
    except Exception as err:  # a server that declares the capability and then fails: not counted
        log.info("MCP server: listing its %s failed: %s", kind, err)
        return None
    return total


async def set_log_level(connection: McpConnection, level: str) -> None:
    """Ask the server to send log messages from ``level`` on (``logging/setLevel``)."""
    session = connection.live_session
    if session is None:
        raise RuntimeError(f"MCP server {connection.name!r} is not running: start it first.")
    with warnings.catch_warnings():  # deprecated in 2026-07-28 only; Threadline speaks 2025-11-25
        warnings.simplefilter("ignore")
        await session.set_logging_level(cast("mcp_types.LoggingLevel", level))
    connection.log.level = level
