"""Converters alone: core -> row -> core is the identity for every message kind."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from store_samples import every_kind

from threadline.core.config import (
    STORED_IN_KEYCHAIN,
    AgentConfig,
    Approval,
    ApprovalRule,
    ProviderConfig,
    ProviderKind,
)
from threadline.core.messages import Message
from threadline.store.convert import (
    agent_from_row,
    agent_to_row,
    message_from_row,
    message_to_row,
    preview_of,
    provider_from_row,
    provider_to_row,
)


@pytest.mark.parametrize("message", every_kind(), ids=lambda m: m.kind.value)
def test_message_round_trip(message: Message) -> None:
    row = message_to_row(message, session_id="s", ordinal=3)
    assert row.ordinal == 3
    assert row.session_id == "s"
    assert message_from_row(row) == message


def test_empty_parts_are_left_out_of_content() -> None:
    row = message_to_row(Message.prompt("hi"), session_id="s", ordinal=0)
    assert row.content == {}
    assert row.meta is None


def test_other_time_zones_come_back_as_utc() -> None:
    local = datetime(2024, 1, 1, 14, 0, tzinfo=timezone(timedelta(hours=2)))
    row = message_to_row(Message.prompt("hi").copy(created_at=local), session_id="s", ordinal=0)
    back = message_from_row(row).created_at
    assert back == local
    assert back.tzinfo is UTC


def test_preview_is_first_nonblank_line_capped() -> None:
    assert preview_of("\n\n  hello world  \nsecond") == "hello world"
    assert preview_of("x" * 500) == "x" * 120
    assert preview_of("") == ""


def test_agent_round_trip() -> None:
    agent = AgentConfig(
        id="a1",
        name="Coder",
        system_prompt="Be terse.",
        provider="openai",
        model="gpt",
        temperature=0.2,
        max_tokens=1000,
        enabled_tools=("git/*", "shell"),
        approval_rules=(ApprovalRule("git/*", Approval.ALLOW), ApprovalRule("shell", Approval.ASK, "rm *")),
        allowed_folders=("/tmp",),
        default_approval=Approval.DENY,
    )
    assert agent_from_row(agent_to_row(agent)) == agent


def test_provider_round_trip_stores_no_header_value_whatever_its_name() -> None:
    config = ProviderConfig(
        name="local",
        kind=ProviderKind.OPENAI,
        base_url="http://127.0.0.1:11434/v1",
        api_key_env="OLLAMA_KEY",
        default_model="llama",
        headers=(("X-Title", "Threadline"), ("Authorization", "Bearer sk-secret"), ("GH_PAT", "ghp_x1")),
    )
    row = provider_to_row(config)
    assert row.headers == [["X-Title", ""], ["Authorization", ""], ["GH_PAT", ""]]
    assert provider_from_row(row) == ProviderConfig(
        name="local",
        kind=ProviderKind.OPENAI,
        base_url="http://127.0.0.1:11434/v1",
        api_key_env="OLLAMA_KEY",
        default_model="llama",
        headers=(
            ("X-Title", STORED_IN_KEYCHAIN),
            ("Authorization", STORED_IN_KEYCHAIN),
            ("GH_PAT", STORED_IN_KEYCHAIN),
        ),
    )
