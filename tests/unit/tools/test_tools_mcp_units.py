"""MCP pieces without a server: records, names, result conversion; the notes tool on a handmade path."""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
import pytest

from threadline.core.messages import Message, ToolCall, ToolResult
from threadline.tools.context import tool_context
from threadline.tools.mcp.config import (
    MCP_SERVERS_SETTING,
    InvalidServerConfig,
    McpServerConfig,
    Transport,
    load_configs,
    save_configs,
)
from threadline.tools.mcp.results import convert_result
from threadline.tools.mcp.secrets import MASK, STORED_IN_KEYCHAIN, env_reference, has_plain_secrets, masked
from threadline.tools.mcp.state import policy_name, wire_name
from threadline.tools.notes_tool import NotesTool
from threadline.tools.registry import WIRE_NAME_PATTERN


class MemorySettings:
    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    async def get_setting(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    async def set_setting(self, key: str, value: Any) -> None:
        self.values[key] = json.loads(json.dumps(value))  # what a JSON column keeps


@pytest.mark.asyncio
@pytest.mark.expected_log_warnings("A stored MCP server record is not valid")
async def test_server_records_round_trip_through_settings() -> None:
    settings = MemorySettings()
    records = [
        McpServerConfig("git", command="uvx", args=("mcp-server-git",), env={"A": "1"}, cwd="/tmp"),
        McpServerConfig("remote", transport=Transport.HTTP, url="https://x.test/mcp", headers={"Auth": "t"}),
    ]
    await save_configs(settings, records)
    assert await load_configs(settings) == records
    settings.values[MCP_SERVERS_SETTING].append({"name": "bad name!", "command": "x"})
    assert await load_configs(settings) == records  # a broken record is skipped, not fatal


@pytest.mark.parametrize("name", ["GH_PAT", "LOG_LEVEL", "X", "Authorization", "Accept"])
def test_every_value_is_secret_whatever_its_name(name: str) -> None:
    """The old rule went by name (``*TOKEN*``, ``*_KEY``): ``GH_PAT`` was stored in plain text."""
    assert has_plain_secrets(McpServerConfig("s", command="x", env={name: "v"}))
    assert has_plain_secrets(
        McpServerConfig("s", transport=Transport.HTTP, url="https://x", headers={name: "v"})
    )
    assert not has_plain_secrets(McpServerConfig("s", command="x", env={name: "v"}, public_env=(name,)))
    assert not has_plain_secrets(McpServerConfig("s", command="x", env={name: "${SOME_VAR}"}))
    assert not has_plain_secrets(McpServerConfig("s", command="x", env={name: STORED_IN_KEYCHAIN}))


def test_public_names_round_trip_and_only_present_names_are_kept() -> None:
    config = McpServerConfig("s", command="x", env={"B": "2", "A": "1"}, public_env=("B", "A", "GONE", "A"))
    assert config.public_env == ("A", "B")
    assert McpServerConfig.from_json(json.loads(json.dumps(config.to_json()))) == config


def test_masked_shows_only_what_is_not_secret() -> None:
    config = McpServerConfig(
        "s",
        command="x",
        env={"GH_PAT": STORED_IN_KEYCHAIN, "LEFT": "ghp_plain", "REF": "${GH}", "LOG": "debug"},
        public_env=("LOG",),
    )
    assert masked(config, "env") == {"GH_PAT": MASK, "LEFT": MASK, "REF": "${GH}", "LOG": "debug"}


def test_env_references() -> None:
    assert env_reference("${GITHUB_TOKEN}") == "GITHUB_TOKEN"
    assert env_reference(" ${_x1} ") == "_x1"
    assert env_reference("Bearer ${TOKEN}") is None
    assert env_reference("$TOKEN") is None


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (McpServerConfig("a__b", command="x"), "single '_'"),
        (McpServerConfig("a/b", command="x"), "letters"),
        (McpServerConfig("ok"), "needs a command"),
        (McpServerConfig("ok", transport=Transport.HTTP, url="ftp://x"), "http"),
        (McpServerConfig("ok", command="x", call_timeout=0), "positive"),
    ],
)
def test_invalid_records(config: McpServerConfig, message: str) -> None:
    with pytest.raises(InvalidServerConfig, match=message):
        config.validate()


def test_wire_names_are_provider_safe_and_unique() -> None:
    assert wire_name("git", "git_status") == "git__git_status"
    assert policy_name("git", "git_status") == "git/git_status"
    odd = wire_name("srv", "files.read/v2")
    assert odd == "srv__files_read_v2" and WIRE_NAME_PATTERN.match(odd)
    long = wire_name("server", "x" * 100)
    assert len(long) == 64 and WIRE_NAME_PATTERN.match(long)
    taken = {"srv__a_b"}
    assert wire_name("srv", "a.b", taken) != "srv__a_b"


def test_convert_text_images_structured_and_errors() -> None:
    result = types.CallToolResult(
        content=[
            types.TextContent(type="text", text="one"),
            types.ImageContent(type="image", data="AAAA", mime_type="image/png"),
            types.EmbeddedResource(
                type="resource",
                resource=types.TextResourceContents(uri="file:///a.txt", text="two", mime_type="text/plain"),
            ),
        ]
    )
    output = convert_result(result)
    assert output.text == "one\ntwo" and output.images[0].media_type == "image/png" and not output.is_error
    structured = convert_result(types.CallToolResult(content=[], structured_content={"temp": 21}))
    assert json.loads(structured.text) == {"temp": 21}
    failed = convert_result(types.CallToolResult(content=[], is_error=True))
    assert failed.is_error and "error" in failed.text


def test_convert_keeps_resource_links_and_embedded_resources() -> None:
    result = types.CallToolResult(
        content=[
            types.ResourceLink(
                type="resource_link", uri="demo://a", name="a.md", title="Note A", mime_type="text/markdown"
            ),
            types.EmbeddedResource(
                type="resource", resource=types.TextResourceContents(uri="demo://b", text="bee")
            ),
            types.EmbeddedResource(
                type="resource",
                resource=types.BlobResourceContents(uri="demo://c", blob="AAEC", mime_type="application/x"),
            ),
        ]
    )
    output = convert_result(result, "everything")
    assert output.text == "[resource link: demo://a]\nbee\n[resource demo://c (application/x), not shown]"
    link, text, blob = output.resources
    assert (link.server, link.uri, link.name, link.mime_type, link.embedded) == (
        "everything",
        "demo://a",
        "Note A",
        "text/markdown",
        False,
    )
    assert text.embedded and text.text == "bee" and text.uri == "demo://b"
    assert blob.embedded and blob.size == 3 and blob.text is None and blob.mime_type == "application/x"


@pytest.mark.asyncio
async def test_notes_derive_from_the_path_only() -> None:
    prompt = Message.prompt("p")
    first = ToolCall("n1", "notes", json.dumps({"action": "set", "key": "a", "value": "1"}))
    with tool_context("s", (prompt,)):
        stored = await NotesTool().call({"action": "set", "key": "a", "value": "1"})
    assert json.loads(stored.text)["notes"] == {"a": "1"}
    reply = Message.reply(parent_id=prompt.id)
    reply.tool_calls = (first,)
    results = Message.tool_results_message(
        (ToolResult("n1", stored.text, tool_name="notes"),), parent_id=reply.id
    )
    path = (prompt, reply, results)
    with tool_context("s", path):
        second = await NotesTool().call({"action": "set", "key": "b", "value": "2"})
        got = await NotesTool().call({"action": "get", "key": "a"})
        missing = await NotesTool().call({"action": "get", "key": "zz"})
    assert json.loads(second.text)["notes"] == {"a": "1", "b": "2"}
    assert json.loads(got.text) == {"key": "a", "value": "1"}
    assert missing.is_error
    with tool_context("s", (prompt,)):  # another branch: nothing remembered
        assert (await NotesTool().call({"action": "get", "key": "a"})).is_error
