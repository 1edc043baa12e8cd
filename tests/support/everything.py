"""``@modelcontextprotocol/server-everything``, the MCP reference server, run for real over stdio.

Installed once into the npm cache (``.ci/node``) by ``npm_servers`` and run on its Node 22;
``everything_config()`` is a server record that starts it (a test that needs it is skipped,
naming why, when npm cannot install it). It has prompts (simple, with arguments, with
completions, with an embedded resource), resources and templates, subscriptions and
resource links.
"""

from __future__ import annotations

from tests.support.npm_servers import node_binary, npm_package

from threadline.tools.mcp.config import McpServerConfig

EVERYTHING_PACKAGE = "@modelcontextprotocol/server-everything"
EVERYTHING_VERSION = "2026.8.31"

STATIC_TEXT = "demo://resource/static/document/architecture.md"
"""One of the server's listed text resources."""
TEXT_TEMPLATE = "demo://resource/dynamic/text/{resourceId}"


def everything_script() -> tuple[str, str]:
    """(node, script) that run the server."""
    folder = npm_package(EVERYTHING_PACKAGE, EVERYTHING_VERSION)
    return node_binary(), str(folder / "dist" / "index.js")


def everything_config(name: str = "everything", **extra: object) -> McpServerConfig:
    """A stdio record for the server (installing it first if needed)."""
    node, script = everything_script()
    return McpServerConfig(name, command=node, args=(script, "stdio"), **extra)  # type: ignore[arg-type]
