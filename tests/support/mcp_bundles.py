"""MCP bundles (``.mcpb``) built in a test from a manifest: a real Python MCP server inside.

``hello_manifest`` describes a small server (``HELLO_SERVER``, on the installed ``mcp`` SDK)
run as ``server.type: python`` with ``python`` from ``PATH`` (``python_on_path`` puts this
interpreter's folder first). Its tool ``greet`` is always there; ``key_ok`` only when the
secret setting reached it (``HELLO_API_KEY`` is ``HELLO_KEY``, which the manifest holds
only reversed) and ``loud`` only when
``--loud`` was passed, so listing the tools shows which answers the server got.
``write_bundle`` zips a manifest and files; ``extra`` adds members as given (names with
``..``, absolute names, symbolic links) for the refused cases.
"""

from __future__ import annotations

import copy
import json
import stat
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

HELLO_KEY = "hk-live-0123456789abcdefNotARealKey"

HELLO_SERVER = '''
import os, sys
from mcp.server.mcpserver import MCPServer

server = MCPServer("hello")
greeting = sys.argv[sys.argv.index("--greeting") + 1] if "--greeting" in sys.argv else "Hello"


@server.tool()
def greet(name: str) -> str:
    """Greets someone."""
    return f"{greeting}, {name}"


if os.environ.get("HELLO_API_KEY", "")[::-1] == os.environ.get("HELLO_EXPECTED"):
    @server.tool()
    def key_ok() -> str:
        """Present when the key reached the server."""
        return "ok"

if "--loud" in sys.argv:
    @server.tool()
    def loud() -> str:
        """Present when loud is on."""
        return "LOUD"

server.run()
'''

HELLO_MANIFEST: dict[str, Any] = {
    "manifest_version": "0.3",
    "name": "hello-tools",
    "display_name": "Hello Tools",
    "version": "1.0.0",
    "description": "Greets people, to try bundles.",
    "author": {"name": "Ada Lovelace", "url": "https://example.test/ada"},
    "server": {
        "type": "python",
        "entry_point": "server/main.py",
        "mcp_config": {
            "command": "python",
            "args": [
                "${__dirname}/server/main.py",
                "--greeting",
                "${user_config.greeting}",
                "${user_config.flags}",
            ],
            "env": {"HELLO_API_KEY": "${user_config.api_key}", "HELLO_EXPECTED": HELLO_KEY[::-1]},
        },
    },
    "tools": [{"name": "greet", "description": "Greets someone"}, {"name": "key_ok"}],
    "user_config": {
        "api_key": {
            "type": "string",
            "title": "API key",
            "description": "Your Hello key",
            "sensitive": True,
            "required": True,
        },
        "greeting": {
            "type": "string",
            "title": "Greeting",
            "description": "How to greet",
            "default": "Hello",
        },
        "flags": {
            "type": "string",
            "title": "Extra flags",
            "description": "Extra words for the server",
            "multiple": True,
        },
        "notes": {"type": "directory", "title": "Notes folder", "description": "Where notes are"},
        "retries": {
            "type": "number",
            "title": "Retries",
            "description": "How often to retry",
            "default": 2,
            "min": 0,
            "max": 5,
        },
        "verbose": {"type": "boolean", "title": "Verbose", "description": "Say more", "default": False},
    },
}


def hello_manifest(**changes: Any) -> dict[str, Any]:
    manifest = copy.deepcopy(HELLO_MANIFEST)
    manifest.update(changes)
    return manifest


def write_bundle(
    path: Path,
    manifest: dict[str, Any] | None = None,
    files: dict[str, str] | None = None,
    extra: list[tuple[zipfile.ZipInfo, bytes]] | None = None,
) -> Path:
    """A ``.mcpb`` at ``path``: the manifest, the files (default: the hello server), ``extra`` members."""
    files = {"server/main.py": HELLO_SERVER} if files is None else files
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("manifest.json", json.dumps(manifest if manifest is not None else hello_manifest()))
        for name, text in files.items():
            archive.writestr(name, text)
        for info, data in extra or []:
            archive.writestr(info, data)
    return path


def symlink_member(name: str, target: str) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info, target.encode()


def python_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """``python`` on ``PATH`` is this interpreter (with the ``mcp`` SDK), as a user's would be."""
    import os

    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
