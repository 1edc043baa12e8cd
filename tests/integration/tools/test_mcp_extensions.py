"""``engine.extensions`` on a real Engine: a secret list setting is kept (as JSON) in the keychain
and survives an update; a server name taken by a server not from an extension is not taken over;
a failed install leaves the installed version and its record as they were."""

from __future__ import annotations

from pathlib import Path

import keyring
import pytest
from tests.support.mcp_bundles import hello_manifest, write_bundle
from tests.support.memory_keyring import MemoryKeyring

from threadline.engine.engine import Engine
from threadline.engine.extensions import ExtensionError
from threadline.tools.mcp.config import McpServerConfig

pytestmark = pytest.mark.asyncio


def entries() -> dict[tuple[str, str], str]:
    backend = keyring.get_keyring()
    assert isinstance(backend, MemoryKeyring)
    return backend.entries


def with_tokens(version: str) -> dict[str, object]:
    manifest = hello_manifest(version=version)
    manifest["user_config"]["tokens"] = {
        "type": "string", "title": "Tokens", "description": "d", "sensitive": True, "multiple": True,
    }  # fmt: skip
    manifest["server"]["mcp_config"]["env"]["HELLO_TOKENS"] = "${user_config.tokens}"
    return manifest


async def test_a_secret_list_survives_an_update(engine: Engine, tmp_path: Path) -> None:
    first = write_bundle(tmp_path / "a.mcpb", with_tokens("1.0.0"))
    await engine.extensions.install(first, {"api_key": "k", "tokens": ["t1", "t2"]})
    assert entries()[("threadline-mcp-extension", "hello-tools/tokens")] == '["t1", "t2"]'
    assert entries()[("threadline-mcp", "hello-tools/env/HELLO_TOKENS")] == "t1:t2"
    newer = write_bundle(tmp_path / "b.mcpb", with_tokens("1.1.0"))
    record = await engine.extensions.install(newer, {"tokens": []})  # left empty in the form: kept
    assert (record.version, record.sensitive) == ("1.1.0", ("api_key", "tokens"))
    assert entries()[("threadline-mcp", "hello-tools/env/HELLO_TOKENS")] == "t1:t2"
    assert entries()[("threadline-mcp", "hello-tools/env/HELLO_API_KEY")] == "k"


async def test_a_server_not_from_an_extension_is_not_taken_over(engine: Engine, tmp_path: Path) -> None:
    await engine.tool_servers.save_server(McpServerConfig("hello-tools", command="true"))
    with pytest.raises(ExtensionError, match="already an MCP server named hello-tools"):
        await engine.extensions.install(write_bundle(tmp_path / "a.mcpb"), {"api_key": "k"})
    assert [c.command for c in await engine.tool_servers.list_servers()] == ["true"]
    assert not (tmp_path / "data" / "extensions").exists()


async def test_a_failed_update_leaves_the_installed_version(engine: Engine, tmp_path: Path) -> None:
    await engine.extensions.install(write_bundle(tmp_path / "a.mcpb"), {"api_key": "k"})
    broken = hello_manifest(version="2.0.0")
    broken["server"]["mcp_config"]["args"].append("--key=${user_config.api_key}")
    with pytest.raises(ExtensionError, match="secret setting on its command line"):
        await engine.extensions.install(write_bundle(tmp_path / "b.mcpb", broken))
    folder = tmp_path / "data" / "extensions" / "hello-tools"
    assert sorted(p.name for p in folder.iterdir()) == ["1.0.0"]
    assert [e.version for e in await engine.extensions.installed()] == ["1.0.0"]
    assert entries()[("threadline-mcp-extension", "hello-tools/api_key")] == "k"
