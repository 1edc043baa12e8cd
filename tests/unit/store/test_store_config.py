"""Providers, agents, settings and UI state round trip through the repository."""

from __future__ import annotations

import pytest

from threadline.core.config import (
    STORED_IN_KEYCHAIN,
    AgentConfig,
    Approval,
    ApprovalRule,
    ProviderConfig,
    ProviderKind,
)
from threadline.store.repository import Store

pytestmark = pytest.mark.asyncio


async def test_providers_upsert_list_remove(store: Store) -> None:
    ollama = ProviderConfig("ollama", ProviderKind.OPENAI, base_url="http://127.0.0.1:11434/v1")
    claude = ProviderConfig("claude", ProviderKind.ANTHROPIC, api_key_env="ANTHROPIC_API_KEY")
    await store.save_provider(ollama)
    await store.save_provider(claude)
    assert await store.list_providers() == [claude, ollama]

    moved = ProviderConfig(
        "ollama", ProviderKind.OPENAI, base_url="http://127.0.0.1:9999/v1", default_model="m"
    )
    await store.save_provider(moved)
    assert await store.get_provider("ollama") == moved
    assert len(await store.list_providers()) == 2

    await store.remove_provider("ollama")
    assert await store.get_provider("ollama") is None
    await store.remove_provider("ollama")
    assert await store.list_providers() == [claude]


async def test_provider_secrets_never_reach_the_database(store: Store) -> None:
    """Only header names and ``${VAR}`` references are kept (the engine puts values in the keychain)."""
    await store.save_provider(
        ProviderConfig(
            "x",
            ProviderKind.OPENAI,
            headers=(("Authorization", "Bearer sk-123"), ("GH_PAT", "v"), ("X-Team", "${TEAM}")),
        )
    )
    assert await store.get_provider("x") == ProviderConfig(
        "x",
        ProviderKind.OPENAI,
        headers=(
            ("Authorization", STORED_IN_KEYCHAIN),
            ("GH_PAT", STORED_IN_KEYCHAIN),
            ("X-Team", "${TEAM}"),
        ),
    )


async def test_agents_round_trip_with_approval_rules(store: Store) -> None:
    agent = AgentConfig(
        id="coder",
        name="Coder",
        system_prompt="You write code.",
        temperature=0.0,
        max_tokens=4096,
        enabled_tools=("git/*",),
        approval_rules=(
            ApprovalRule("git/status", Approval.ALLOW),
            ApprovalRule("shell", Approval.ASK, argument_pattern="rm *"),
            ApprovalRule("*", Approval.DENY),
        ),
        allowed_folders=("/home/me/src",),
        default_approval=Approval.ASK,
    )
    plain = AgentConfig(id="default", name="Assistant")
    await store.save_agent(agent)
    await store.save_agent(plain)
    assert await store.get_agent("coder") == agent
    assert await store.list_agents() == [plain, agent]

    edited = AgentConfig(id="coder", name="Coder", system_prompt="Changed")
    await store.save_agent(edited)
    assert await store.get_agent("coder") == edited
    await store.remove_agent("coder")
    assert await store.get_agent("coder") is None


@pytest.mark.parametrize("kind", ["setting", "ui_state"])
async def test_json_values_round_trip(store: Store, kind: str) -> None:
    get = store.get_setting if kind == "setting" else store.get_ui_state
    put = store.set_setting if kind == "setting" else store.set_ui_state
    assert await get("missing") is None
    assert await get("missing", 42) == 42
    values = {
        "theme": "dark",
        "font_size": 13,
        "ratio": 0.5,
        "flag": True,
        "tabs": ["s1", "s2"],
        "geometry": {"x": 1, "y": [2, 3], "nested": {"ok": None}},
        "unicode": "héllo ✓",
    }
    for key, value in values.items():
        await put(key, value)
    for key, value in values.items():
        assert await get(key) == value
    await put("theme", "light")
    assert await get("theme") == "light"
