"""Each MCP server's tool list as it last reported it, so a turn offers the tools before the server runs.

Starting an MCP server is the slow part of a turn that never calls one of its tools
(a process, the SDK's import, the handshake: ``ask`` took far longer with two
servers offered; figures in docs/performance.md). So a server is started only when one of its tools
is called, and the tools the model is offered come from here until then.

An entry belongs to one server *configuration*: it is kept with a hash of the
server's record (command, arguments, environment markers, URL, headers, …), and a
record that no longer hashes the same — edited, renamed, pointed elsewhere — finds
no entry, so its server is started to learn its tools, as on first use. Entries
are rewritten whenever a server reports its tools (on every start and on its
``notifications/tools/list_changed``), and only when they changed.

The cache is a setting of the store (``mcp_tool_cache``, JSON): no schema change,
and every process and window on one database shares it. It holds what the servers
published about their tools (names, descriptions, input schemas, annotations) and
the record hashes — no ``env``/``headers`` values, which are keychain markers in the
record anyway.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from threadline.tools.mcp.config import McpServerConfig, SettingsStore

log = logging.getLogger("threadline.tools.mcp")

TOOL_CACHE_SETTING = "mcp_tool_cache"


def config_hash(config: McpServerConfig) -> str:
    """A stable digest of everything in the record (a change to any of it invalidates the entry)."""
    canonical = json.dumps(config.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class ToolDescription:
    """One tool as a server describes it: the parts Threadline offers, shows and decides on.

    Built from the SDK's ``Tool`` (``from_mcp``) or read back from the cache
    (``from_json``); ``McpTool`` accepts either, so the SDK is not imported to offer
    cached tools.
    """

    name: str
    description: str | None = None
    title: str | None = None
    input_schema: dict[str, Any] = field(default_factory=dict)
    destructive_hint: bool | None = None
    read_only_hint: bool | None = None

    @classmethod
    def from_mcp(cls, tool: Any) -> ToolDescription:
        annotations = getattr(tool, "annotations", None)
        return cls(
            name=str(tool.name),
            description=tool.description,
            title=getattr(tool, "title", None),
            input_schema=dict(tool.input_schema),
            destructive_hint=getattr(annotations, "destructive_hint", None),
            read_only_hint=getattr(annotations, "read_only_hint", None),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "title": self.title,
            "input_schema": self.input_schema,
            "destructive_hint": self.destructive_hint,
            "read_only_hint": self.read_only_hint,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ToolDescription:
        def optional_bool(key: str) -> bool | None:
            value = data.get(key)
            return value if isinstance(value, bool) else None

        def optional_str(key: str) -> str | None:
            value = data.get(key)
            return value if isinstance(value, str) else None

        schema = data.get("input_schema")
        return cls(
            name=str(data["name"]),
            description=optional_str("description"),
            title=optional_str("title"),
            input_schema=dict(schema) if isinstance(schema, Mapping) else {"type": "object"},
            destructive_hint=optional_bool("destructive_hint"),
            read_only_hint=optional_bool("read_only_hint"),
        )

    @property
    def destructive(self) -> bool:
        """The server says the tool may destroy or overwrite something (and does not call it read-only).

        Only an explicit ``destructiveHint: true`` counts: the hints are the server's
        own claims, so they can make Threadline more careful, never less.
        """
        return self.destructive_hint is True and self.read_only_hint is not True


class ToolListCache:
    """The ``mcp_tool_cache`` setting: ``{server name: {"config": hash, "tools": [...]}}``."""

    def __init__(self, store: SettingsStore) -> None:
        self._store = store
        self._entries: dict[str, dict[str, Any]] = {}
        self._loaded = False

    async def load(self) -> None:
        if self._loaded:
            return
        raw = await self._store.get_setting(TOOL_CACHE_SETTING, {})
        self._entries = {k: v for k, v in raw.items() if isinstance(v, dict)} if isinstance(raw, dict) else {}
        self._loaded = True

    def tools_for(self, config: McpServerConfig) -> tuple[ToolDescription, ...] | None:
        """The cached tools of this exact record, or ``None`` (never seen, or the record changed since)."""
        entry = self._entries.get(config.name)
        if entry is None or entry.get("config") != config_hash(config):
            return None
        try:
            return tuple(ToolDescription.from_json(t) for t in entry.get("tools") or ())
        except (KeyError, TypeError, ValueError) as err:
            log.info("ignoring the cached tools of MCP server %s: %s", config.name, err)
            return None

    async def remember(self, config: McpServerConfig, tools: tuple[ToolDescription, ...]) -> None:
        """Store what the server reported now (a write only when it differs from the entry)."""
        entry = {"config": config_hash(config), "tools": [t.to_json() for t in tools]}
        if self._entries.get(config.name) == entry:
            return
        self._entries[config.name] = entry
        await self._store.set_setting(TOOL_CACHE_SETTING, dict(self._entries))

    async def forget(self, name: str) -> None:
        if self._entries.pop(name, None) is not None:
            await self._store.set_setting(TOOL_CACHE_SETTING, dict(self._entries))
