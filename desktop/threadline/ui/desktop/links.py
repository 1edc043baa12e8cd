"""``threadline://`` links: what one asks for, read and checked before anything is shown.

Two kinds (docs/desktop.md, "Links"):

* ``threadline://new?prompt=TEXT`` — a new chat with TEXT in its message box, not sent;
* ``threadline://mcp/install?name=NAME&config=CONFIG`` — an MCP server to add, where CONFIG
  is the server's JSON (``{"command": …, "args": […], "env": {…}}`` or ``{"url": …}``), plain
  or base64, as Cursor's install links carry it.

A link only describes; ``open_requests`` asks the user before either happens, and the MCP
server goes through the same editor (and its Save) as one typed by hand.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from threadline.tools.mcp.config import InvalidServerConfig, McpServerConfig, Transport

SCHEME = "threadline"
MAX_PROMPT = 100_000


class BadLink(ValueError):
    """A link this version cannot follow; the message says what is wrong with it."""


@dataclass(frozen=True)
class NewChatLink:
    prompt: str


@dataclass(frozen=True)
class McpInstallLink:
    config: McpServerConfig


Link = NewChatLink | McpInstallLink


def parse_link(url: str) -> Link:
    parts = urlsplit(url)
    if parts.scheme.lower() != SCHEME:
        raise BadLink("it is not a threadline:// link")
    where = (parts.netloc + parts.path).strip("/").lower()
    query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
    if where == "new":
        prompt = query.get("prompt", "")
        if len(prompt) > MAX_PROMPT:
            raise BadLink("its prompt is too long")
        return NewChatLink(prompt)
    if where == "mcp/install":
        return McpInstallLink(_server(query))
    raise BadLink(f"Threadline does not know “{where or url}”")


def _server(query: dict[str, str]) -> McpServerConfig:
    name = query.get("name", "").strip()
    raw = _config_json(query.get("config", ""))
    command = raw.get("command", "")
    url = raw.get("url", "")
    args = raw.get("args", [])
    env = raw.get("env", {})
    headers = raw.get("headers", {})
    if not isinstance(command, str) or not isinstance(url, str):
        raise BadLink("its server's command or URL is not text")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise BadLink("its server's arguments are not a list of text")
    for pairs in (env, headers):
        if not isinstance(pairs, dict) or not all(isinstance(v, str) for v in pairs.values()):
            raise BadLink("its server's environment or headers are not text")
    transport = Transport.HTTP if url and not command else Transport.STDIO
    config = McpServerConfig(
        name=name,
        transport=transport,
        command=command,
        args=tuple(args),
        env={str(k): v for k, v in env.items()},
        url=url,
        headers={str(k): v for k, v in headers.items()},
    )
    try:
        return config.validate()
    except InvalidServerConfig as err:
        raise BadLink(str(err)) from err


def _config_json(text: str) -> dict[str, Any]:
    if not text:
        raise BadLink("it names no server (config is missing)")
    candidates = [text]
    try:
        padded = text + "=" * (-len(text) % 4)
        candidates.append(
            base64.urlsafe_b64decode(padded.replace("+", "-").replace("/", "_")).decode("utf-8")
        )
    except (binascii.Error, UnicodeDecodeError, ValueError):
        pass
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    raise BadLink("its server description is not JSON")
