"""Env and header values of MCP server records live in the keychain, never in the stored JSON.

Every value is a secret unless the user marks it "not a secret" or writes it as ``${VAR}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import keyring
import pytest
from tests.integration.tools.conftest import faulty_server
from tests.support.memory_keyring import MemoryKeyring

from threadline.engine.engine import Engine
from threadline.tools.mcp.config import MCP_SERVERS_SETTING, InvalidServerConfig, McpServerConfig, Transport
from threadline.tools.mcp.manager import McpServerManager
from threadline.tools.mcp.secrets import SERVICE, STORED_IN_KEYCHAIN, resolve_secrets
from threadline.tools.mcp.state import ServerStatus
from threadline.tools.registry import ToolRegistry

pytestmark = pytest.mark.asyncio

TOKEN = "ghp_not-a-real-token-0123456789"
BEARER = "Bearer sk-not-a-real-key-abcdef"


def entries() -> dict[tuple[str, str], str]:
    backend = keyring.get_keyring()
    assert isinstance(backend, MemoryKeyring)
    return {k: v for k, v in backend.entries.items() if k[0] == SERVICE}


async def raw_records(engine: Engine) -> list[dict[str, Any]]:
    raw = await engine.store.get_setting(MCP_SERVERS_SETTING, [])
    assert isinstance(raw, list)
    return raw


def remote(name: str = "remote", **headers: str) -> McpServerConfig:
    return McpServerConfig(
        name, transport=Transport.HTTP, url="https://mcp.example.test/mcp", headers=headers
    )


async def test_secrets_go_to_the_keychain_and_the_rest_stays_in_json(engine: Engine) -> None:
    config = McpServerConfig(
        "gh",
        command="gh-mcp",
        env={
            "GITHUB_TOKEN": TOKEN,
            "LOG_LEVEL": "debug",
            "db_password": "hunter2",
            "API_KEY": "${MY_KEY}",
            "GH_PAT": "ghp_by-a-name-no-rule-knows",
        },
        public_env=("LOG_LEVEL",),
    )
    await engine.tool_servers.save_server(config)
    await engine.tool_servers.save_server(
        replace(
            remote(Authorization=BEARER, **{"Proxy-Authorization": "Basic eHg=", "Accept-Language": "en"}),
            public_headers=("Accept-Language",),
        )
    )

    dumped = json.dumps(await raw_records(engine))
    for secret in (TOKEN, BEARER, "hunter2", "Basic eHg=", "ghp_by-a-name-no-rule-knows"):
        assert secret not in dumped
    gh, web = await raw_records(engine)
    assert gh["env"] == {
        "GITHUB_TOKEN": STORED_IN_KEYCHAIN,
        "LOG_LEVEL": "debug",
        "db_password": STORED_IN_KEYCHAIN,
        "API_KEY": "${MY_KEY}",  # a reference to Threadline's environment is stored as written
        "GH_PAT": STORED_IN_KEYCHAIN,
    }
    assert web["headers"] == {
        "Authorization": STORED_IN_KEYCHAIN,
        "Proxy-Authorization": STORED_IN_KEYCHAIN,
        "Accept-Language": "en",
    }
    assert entries() == {
        (SERVICE, "gh/env/GITHUB_TOKEN"): TOKEN,
        (SERVICE, "gh/env/db_password"): "hunter2",
        (SERVICE, "gh/env/GH_PAT"): "ghp_by-a-name-no-rule-knows",
        (SERVICE, "remote/header/Authorization"): BEARER,
        (SERVICE, "remote/header/Proxy-Authorization"): "Basic eHg=",
    }


async def test_a_fresh_load_resolves_secrets_and_env_references(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    await engine.tool_servers.save_server(
        McpServerConfig(
            "gh",
            command="gh-mcp",
            env={"GITHUB_TOKEN": TOKEN, "API_KEY": "${MY_KEY}", "A": "1"},
            public_env=("A",),
        )
    )
    monkeypatch.setenv("MY_KEY", "from-the-environment")
    fresh = McpServerManager(engine.store, ToolRegistry())
    (loaded,) = await fresh.list_servers()
    assert loaded.env == {"GITHUB_TOKEN": STORED_IN_KEYCHAIN, "API_KEY": "${MY_KEY}", "A": "1"}
    assert resolve_secrets(loaded).env == {"GITHUB_TOKEN": TOKEN, "API_KEY": "from-the-environment", "A": "1"}


async def test_editing_keeps_unchanged_secrets_and_replaces_typed_ones(engine: Engine) -> None:
    await engine.tool_servers.save_server(remote(Authorization=BEARER, **{"X-Api-Key": "k1"}))
    (stored,) = await engine.tool_servers.list_servers()
    await engine.tool_servers.save_server(stored)  # the editor sends the markers back unchanged
    assert entries()[(SERVICE, "remote/header/Authorization")] == BEARER

    edited = remote(Authorization=STORED_IN_KEYCHAIN, **{"X-Api-Key": "k2"})
    await engine.tool_servers.save_server(edited, previous_name="remote")
    assert entries() == {
        (SERVICE, "remote/header/Authorization"): BEARER,
        (SERVICE, "remote/header/X-Api-Key"): "k2",
    }
    await engine.tool_servers.save_server(remote(Authorization=STORED_IN_KEYCHAIN), previous_name="remote")
    assert entries() == {(SERVICE, "remote/header/Authorization"): BEARER}  # a dropped header is forgotten


async def test_rename_moves_and_remove_deletes_keychain_entries(engine: Engine) -> None:
    await engine.tool_servers.save_server(remote(Authorization=BEARER))
    (stored,) = await engine.tool_servers.list_servers()
    renamed = McpServerConfig(
        "renamed", transport=Transport.HTTP, url=stored.url, headers=dict(stored.headers)
    )
    await engine.tool_servers.save_server(renamed, previous_name="remote")
    assert entries() == {(SERVICE, "renamed/header/Authorization"): BEARER}
    (loaded,) = await engine.tool_servers.list_servers()
    assert resolve_secrets(loaded).headers == {"Authorization": BEARER}

    await engine.tool_servers.remove_server("renamed")
    assert entries() == {}
    assert await raw_records(engine) == []


@pytest.mark.expected_log_warnings("could not start")
async def test_a_missing_keychain_entry_shows_as_the_server_error(engine: Engine) -> None:
    await engine.tool_servers.save_server(replace(faulty_server("gh"), env={"GITHUB_TOKEN": TOKEN}))
    backend = keyring.get_keyring()
    backend.delete_password(SERVICE, "gh/env/GITHUB_TOKEN")
    state = await engine.tool_servers.start("gh")
    assert state.status is ServerStatus.FAILED
    assert "GITHUB_TOKEN" in state.error and "keychain" in state.error
    assert TOKEN not in state.error


@pytest.mark.expected_log_warnings("could not start")
async def test_a_missing_env_reference_shows_as_the_server_error(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("THREADLINE_TEST_ABSENT", raising=False)
    await engine.tool_servers.save_server(remote(Authorization="${THREADLINE_TEST_ABSENT}"))
    state = await engine.tool_servers.start("remote")
    assert state.status is ServerStatus.FAILED and "THREADLINE_TEST_ABSENT" in state.error


@pytest.fixture
def headless(engine: Engine) -> Iterator[None]:
    """No usable keychain (keyring's fail backend), switched on after the engine stored its provider key."""
    from keyring.backends import fail

    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())  # type: ignore[no-untyped-call]
    yield
    keyring.set_keyring(previous)


@pytest.mark.usefixtures("headless")
async def test_without_a_keychain_secret_literals_are_refused_and_env_references_accepted(
    engine: Engine,
) -> None:
    with pytest.raises(InvalidServerConfig, match=r"no system keychain.*\$\{GITHUB_TOKEN\}"):
        await engine.tool_servers.save_server(McpServerConfig("gh", command="x", env={"GITHUB_TOKEN": TOKEN}))
    with pytest.raises(InvalidServerConfig, match=r"no system keychain.*--env-from GH_PAT=GH_PAT"):
        await engine.tool_servers.save_server(McpServerConfig("gh", command="x", env={"GH_PAT": TOKEN}))
    assert await raw_records(engine) == []

    await engine.tool_servers.save_server(
        McpServerConfig(
            "gh",
            command="x",
            env={"GITHUB_TOKEN": "${GITHUB_TOKEN}", "LOG_LEVEL": "debug"},
            public_env=("LOG_LEVEL",),
        )
    )
    (record,) = await raw_records(engine)
    assert record["env"] == {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "LOG_LEVEL": "debug"}


async def test_plaintext_secrets_saved_by_an_older_version_move_to_the_keychain(engine: Engine) -> None:
    await engine.store.set_setting(MCP_SERVERS_SETTING, [remote(Authorization=BEARER).to_json()])
    fresh = McpServerManager(engine.store, ToolRegistry())
    (loaded,) = await fresh.list_servers()
    assert loaded.headers == {"Authorization": STORED_IN_KEYCHAIN}
    assert BEARER not in json.dumps(await raw_records(engine))
    assert entries() == {(SERVICE, "remote/header/Authorization"): BEARER}


async def test_plain_values_of_any_name_saved_by_an_older_version_move_to_the_keychain(
    engine: Engine,
) -> None:
    old_record = McpServerConfig(
        "gh", command="gh-mcp", env={"GH_PAT": TOKEN, "LOG_LEVEL": "debug"}
    ).to_json()
    del old_record["public_env"], old_record["public_headers"]  # the shape an older version wrote
    await engine.store.set_setting(MCP_SERVERS_SETTING, [old_record])
    fresh = McpServerManager(engine.store, ToolRegistry())
    (loaded,) = await fresh.list_servers()
    assert loaded.env == {"GH_PAT": STORED_IN_KEYCHAIN, "LOG_LEVEL": STORED_IN_KEYCHAIN}
    assert TOKEN not in json.dumps(await raw_records(engine))
    assert entries() == {(SERVICE, "gh/env/GH_PAT"): TOKEN, (SERVICE, "gh/env/LOG_LEVEL"): "debug"}
    assert resolve_secrets(loaded).env == {"GH_PAT": TOKEN, "LOG_LEVEL": "debug"}


async def test_marking_a_stored_value_not_secret_moves_it_back_to_the_settings(engine: Engine) -> None:
    await engine.tool_servers.save_server(McpServerConfig("gh", command="x", env={"LOG_LEVEL": "debug"}))
    (stored,) = await engine.tool_servers.list_servers()
    assert stored.env == {"LOG_LEVEL": STORED_IN_KEYCHAIN}
    await engine.tool_servers.save_server(replace(stored, public_env=("LOG_LEVEL",)))
    (record,) = await raw_records(engine)
    assert record["env"] == {"LOG_LEVEL": "debug"} and record["public_env"] == ["LOG_LEVEL"]
    assert entries() == {}
