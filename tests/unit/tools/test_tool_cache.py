"""The MCP tool-list cache: keyed by the record's hash, round-trips through JSON, hints only tighten."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from threadline.tools.mcp.config import McpServerConfig
from threadline.tools.tool_cache import ToolDescription, ToolListCache, config_hash

RECORD = McpServerConfig("git", command="mcp-server-git", args=("--repository", "/tmp/r"), env={"A": "1"})
ECHO = ToolDescription(
    "echo", "Say it back.", None, {"type": "object", "properties": {"t": {"type": "string"}}}
)


class JsonSettings:
    """Settings kept as JSON text, as the store keeps them."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}
        self.writes = 0

    async def get_setting(self, key: str, default: Any = None) -> Any:
        return json.loads(self.values[key]) if key in self.values else default

    async def set_setting(self, key: str, value: Any) -> None:
        self.values[key] = json.dumps(value)
        self.writes += 1


def test_any_change_to_the_record_changes_its_hash() -> None:
    assert config_hash(RECORD) == config_hash(replace(RECORD))
    for changed in (
        replace(RECORD, args=("--repository", "/tmp/other")),
        replace(RECORD, env={"A": "2"}),
        replace(RECORD, command="other"),
        replace(RECORD, name="git2"),
    ):
        assert config_hash(changed) != config_hash(RECORD)


@pytest.mark.asyncio
async def test_tools_come_back_for_the_same_record_only_and_unchanged_lists_are_not_rewritten() -> None:
    settings = JsonSettings()
    cache = ToolListCache(settings)
    await cache.load()
    wipe = ToolDescription(
        "wipe", None, "Wipe", {"type": "object"}, destructive_hint=True, read_only_hint=False
    )
    await cache.remember(RECORD, (ECHO, wipe))
    await cache.remember(RECORD, (ECHO, wipe))
    assert settings.writes == 1

    again = ToolListCache(settings)  # another process on the same database
    await again.load()
    assert again.tools_for(RECORD) == (ECHO, wipe)
    assert again.tools_for(replace(RECORD, args=())) is None
    await again.forget("git")
    assert again.tools_for(RECORD) is None


def test_only_an_explicit_destructive_hint_makes_a_tool_destructive() -> None:
    assert not ToolDescription("t").destructive  # no hints: the agent's rules decide, as before
    assert ToolDescription("t", destructive_hint=True).destructive
    assert not ToolDescription("t", destructive_hint=True, read_only_hint=True).destructive
    assert not ToolDescription("t", destructive_hint=False).destructive
