"""``@modelcontextprotocol/server-everything``, the MCP reference server, run for real over stdio.

``.ci/mcp-servers`` installs it (with Node 22) into ``.ci/node/``; ``everything_config()``
is a server record that starts it. Without the install a test using it is skipped, except in
CI (``CI=true``), where a missing server fails the test: CI installs it first (``.ci/test``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from threadline.tools.mcp.config import McpServerConfig

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("CONFORMANCE_CACHE", ROOT / ".ci" / "node"))
SCRIPT = CACHE / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
NODE = CACHE / "node_modules" / ".bin" / "node"

STATIC_TEXT = "demo://resource/static/document/architecture.md"
"""One of the server's listed text resources."""
TEXT_TEMPLATE = "demo://resource/dynamic/text/{resourceId}"


def everything_config(name: str = "everything", **extra: object) -> McpServerConfig:
    """A stdio record for the installed server (skips the test when it is not installed)."""
    if not SCRIPT.exists() or not NODE.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"server-everything is not installed at {SCRIPT}: run .ci/mcp-servers")
        pytest.skip("server-everything is not installed: run .ci/mcp-servers")
    return McpServerConfig(name, command=str(NODE), args=(str(SCRIPT), "stdio"), **extra)  # type: ignore[arg-type]
