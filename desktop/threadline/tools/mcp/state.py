"""What the rest of the app knows of an MCP server without talking to it: its status and
tools as the settings show them, the error a failed start raises, and the names its tools
go by (on the wire to providers, and in approval rules).

Apart from ``mcp_client`` (the connection through the ``mcp`` SDK) so that the server
manager, the settings page and the command line can name these without importing the
connection's code: a start with no MCP server configured never loads it (the SDK itself is
imported later still, on a worker thread; docs/performance.md, "Memory after start").
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from threadline.tools.tool_cache import ToolDescription

WIRE_SEPARATOR = "__"
POLICY_SEPARATOR = "/"
MAX_WIRE_NAME = 64


class ServerStatus(StrEnum):
    STOPPED = "stopped"
    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class McpToolInfo:
    """One tool of a server as the settings UI lists it."""

    name: str
    """The server's own name for it."""
    policy_name: str
    """``server/tool``: what approval rules and ``enabled_tools`` match."""
    wire_name: str
    """``server__tool``: what providers see and stored calls carry."""
    description: str
    input_schema: dict[str, object]


@dataclass(frozen=True, slots=True)
class ServerState:
    """A snapshot for the settings UI."""

    name: str
    status: ServerStatus
    error: str = ""
    tools: tuple[McpToolInfo, ...] = ()
    restarts: int = 0
    server_info: str = ""
    instructions: str = ""
    """The server's ``instructions`` (initialize result): how to use its tools, for the system prompt."""
    protocol_version: str = ""
    """The protocol revision the server and Threadline agreed on."""


class McpServerError(Exception):
    """The server could not be started or reached; the message is meant for the user and the model."""


def wire_name(server: str, tool: str, taken: set[str] | None = None) -> str:
    """A provider-safe name for ``tool`` of ``server`` (``^[a-zA-Z0-9_-]{1,64}$``), unique in ``taken``."""
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", tool) or "tool"
    name = f"{server}{WIRE_SEPARATOR}{safe}"
    if len(name) > MAX_WIRE_NAME or (taken is not None and name in taken):
        digest = hashlib.sha1(tool.encode("utf-8")).hexdigest()[:8]
        name = f"{name[: MAX_WIRE_NAME - 9]}_{digest}"
    return name


def wire_names(server: str, tools: Sequence[ToolDescription]) -> list[str]:
    """The wire names of a server's tools, in order, unique among them."""
    taken: set[str] = set()
    names = []
    for tool in tools:
        name = wire_name(server, tool.name, taken)
        taken.add(name)
        names.append(name)
    return names


def policy_name(server: str, tool: str) -> str:
    return f"{server}{POLICY_SEPARATOR}{tool}"
