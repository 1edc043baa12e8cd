"""``engine.mcp``: the prompts and resources of a real MCP server (``server-everything`` over stdio).

Its four prompts (simple, with arguments, with completions, with an embedded resource), its
resources and templates, a subscription and a list change the server itself announces.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from tests.support.everything import STATIC_TEXT, TEXT_TEMPLATE, everything_config
from tests.support.waiting import until

from threadline.core.mcp_catalog import CatalogChange, expand_template
from threadline.core.messages import ContextFile
from threadline.engine.engine import Engine
from threadline.engine.mcp_catalog import McpCatalogError
from threadline.tools.mcp.config import McpServerConfig

pytestmark = pytest.mark.asyncio


async def test_prompts_are_listed_with_their_arguments(engine: Engine) -> None:
    await engine.tool_servers.save_server(everything_config())
    prompts = await engine.mcp.refresh_prompts()
    by_name = {p.name: p for p in prompts}
    assert {"simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"} <= set(by_name)
    args = by_name["args-prompt"]
    assert args.command == "everything:args-prompt"
    assert [(a.name, a.required) for a in args.arguments] == [("city", True), ("state", False)]
    assert args.hint == "city=… [state=…]"
    assert engine.mcp.known_prompt("everything", "simple-prompt") is not None


async def test_a_prompt_becomes_the_users_turn_with_its_embedded_resource(engine: Engine) -> None:
    await engine.tool_servers.save_server(everything_config())
    turn = await engine.mcp.get_prompt("everything", "args-prompt", {"city": "Lyon"})
    assert "Lyon" in turn.text
    turn = await engine.mcp.get_prompt(
        "everything", "resource-prompt", {"resourceType": "Text", "resourceId": "3"}
    )
    assert "Text resource with id: 3" in turn.text
    [attached] = turn.context
    assert attached.name == "everything: demo://resource/dynamic/text/3"
    assert attached.text.startswith("Resource 3: This is a plaintext resource")
    blob = await engine.mcp.get_prompt(
        "everything", "resource-prompt", {"resourceType": "Blob", "resourceId": "4"}
    )
    assert blob.context[0].text.startswith("Resource 4: This is a base64 blob")  # decoded, sent as text


async def test_argument_completions_follow_what_is_typed_and_the_other_arguments(engine: Engine) -> None:
    await engine.tool_servers.save_server(everything_config())
    assert await engine.mcp.complete_prompt("everything", "completable-prompt", "department", "S") == [
        "Sales",
        "Support",
    ]
    names = await engine.mcp.complete_prompt(
        "everything", "completable-prompt", "name", "", {"department": "Engineering"}
    )
    assert names == ["Alice", "Bob", "Charlie"]


async def test_a_refused_prompt_says_why(engine: Engine) -> None:
    await engine.tool_servers.save_server(everything_config())
    with pytest.raises(McpCatalogError, match="refused the prompt 'resource-prompt'"):
        await engine.mcp.get_prompt(
            "everything", "resource-prompt", {"resourceType": "Video", "resourceId": "1"}
        )
    with pytest.raises(McpCatalogError, match="no MCP server named 'nowhere'"):
        await engine.mcp.get_prompt("nowhere", "x", {})


async def test_resources_and_templates_are_listed_and_read(engine: Engine) -> None:
    await engine.tool_servers.save_server(everything_config())
    resources = await engine.mcp.resources("everything")
    static = next(r for r in resources if r.uri == STATIC_TEXT)
    assert static.mime_type == "text/markdown"
    [item] = await engine.mcp.read("everything", STATIC_TEXT)
    assert isinstance(item, ContextFile)
    assert item.name == f"everything: {STATIC_TEXT}"
    assert "Architecture" in item.text
    templates = await engine.mcp.templates("everything")
    text = next(t for t in templates if t.uri_template == TEXT_TEMPLATE)
    assert text.variables() == ["resourceId"]
    assert await engine.mcp.complete_template("everything", TEXT_TEMPLATE, "resourceId", "7") == ["7"]
    [made] = await engine.mcp.read("everything", expand_template(TEXT_TEMPLATE, {"resourceId": "7"}))
    assert isinstance(made, ContextFile) and made.text.startswith("Resource 7:")


async def test_a_resource_is_read_as_bytes_to_save(engine: Engine) -> None:
    await engine.tool_servers.save_server(everything_config())
    blob = await engine.mcp.read_bytes("everything", "demo://resource/dynamic/blob/1")  # base64 on the wire
    assert blob.startswith(b"Resource 1: This is a base64 blob created at")
    text = await engine.mcp.read_bytes("everything", "demo://resource/dynamic/text/2")
    assert text.startswith(b"Resource 2: This is a plaintext resource")


async def test_a_subscribed_resource_that_changes_is_told(engine: Engine) -> None:
    config = everything_config()
    await engine.tool_servers.save_server(config)
    changes: list[CatalogChange] = []
    engine.mcp.watch(changes.append)
    assert await engine.mcp.subscribe("everything", STATIC_TEXT)
    # The server sends updates for its subscriptions once asked to (every 5 s after the first).
    output = await (await engine.tool_servers.connection("everything")).call("toggle-subscriber-updates", {})
    assert not output.is_error, output.text
    await until(lambda: CatalogChange("everything", "resource", STATIC_TEXT) in changes, "the update")


async def test_a_new_resource_refreshes_the_list(engine: Engine) -> None:
    await engine.tool_servers.save_server(everything_config())
    before = {r.uri for r in await engine.mcp.resources("everything")}
    changes: list[CatalogChange] = []
    engine.mcp.watch(changes.append)
    connection = await engine.tool_servers.connection("everything")
    output = await connection.call(
        "gzip-file-as-resource",
        {"name": "notes.gz", "data": "data:text/plain;base64,aGVsbG8=", "outputType": "resourceLink"},
    )
    assert not output.is_error, output.text
    await until(lambda: CatalogChange("everything", "resources") in changes, "the list change")
    after = {r.uri for r in await engine.mcp.resources("everything")}
    assert after - before
    await asyncio.sleep(0)


PROMPTING_SERVER = Path(__file__).parent / "servers" / "prompting_server.py"


async def test_a_servers_new_prompt_is_listed_when_it_says_its_prompts_changed(engine: Engine) -> None:
    await engine.tool_servers.save_server(
        McpServerConfig("prompting", command=sys.executable, args=(str(PROMPTING_SERVER),))
    )
    assert [p.name for p in await engine.mcp.refresh_prompts()] == ["greet"]
    changes: list[CatalogChange] = []
    engine.mcp.watch(changes.append)
    output = await (await engine.tool_servers.connection("prompting")).call("add_farewell", {})
    assert output.text == "added", output.text
    await until(lambda: CatalogChange("prompting", "prompts") in changes, "the prompt list change")
    assert [p.name for p in engine.mcp.known_prompts()] == ["greet", "farewell"]  # listed again first
    turn = await engine.mcp.get_prompt("prompting", "farewell", {})
    assert turn.text == "Goodbye!"
