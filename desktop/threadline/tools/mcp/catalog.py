"""A server's prompts and resources through the SDK's ``ClientSession``, as ``core.mcp_catalog`` types.

Apart from ``mcp_client`` (the connection, its lifecycle and tool calls): these requests
need only the live session (``McpConnection.started_session``), and convert what the server
says into what a conversation can hold: a prompt's messages into the user's turn (text,
images, embedded resources as context files), a resource into a context file or an image.
docs/mcp.md, "Prompts and resources".

A server that does not offer prompts or resources (its capabilities, from the handshake)
is not asked: it has none. Every request runs within the server's call time limit.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import warnings
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from threadline.core.mcp_catalog import (
    PromptArgument,
    PromptInfo,
    PromptTurn,
    ResourceInfo,
    ResourceTemplateInfo,
    resource_name,
)
from threadline.core.messages import ContextFile, ImageBlock
from threadline.tools.mcp.state import McpServerError

if TYPE_CHECKING:
    import mcp_types
    from mcp.client.session import ClientSession

    from threadline.tools.mcp.client import McpConnection

T = TypeVar("T")
MAX_PAGES = 100
MAX_COMPLETIONS = 100
"""The spec caps a completion answer at 100 values."""
TEXT_TYPES = ("application/json", "application/xml", "application/javascript", "application/yaml")


class CatalogError(McpServerError):
    """The server refused or failed a prompts/resources request; the message is for the user."""


async def _request(connection: McpConnection, what: str, make: Callable[[ClientSession], Awaitable[T]]) -> T:
    """``make(session)`` within the call time limit; the server's refusal as a ``CatalogError``."""
    from mcp.shared.exceptions import MCPError

    session = await connection.started_session()
    limit = connection.config.call_timeout
    try:
        return await asyncio.wait_for(make(session), limit)
    except TimeoutError as err:
        raise CatalogError(
            f"MCP server {connection.name!r} did not answer {what} within {limit:g} s."
        ) from err
    except MCPError as err:
        raise CatalogError(f"MCP server {connection.name!r} refused {what}: {err.message}") from err


def _offers(session: ClientSession, capability: str) -> bool:
    capabilities = session.server_capabilities
    return capabilities is not None and getattr(capabilities, capability, None) is not None


async def list_prompts(connection: McpConnection) -> list[PromptInfo]:
    from mcp_types import PaginatedRequestParams

    session = await connection.started_session()
    if not _offers(session, "prompts"):
        return []
    found: list[PromptInfo] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await _request(
            connection,
            "the prompt list",
            lambda s: s.list_prompts(params=params),  # noqa: B023 (awaited at once)
        )
        found += [_prompt(connection.name, p) for p in page.prompts]
        cursor = page.next_cursor
        if not cursor:
            break
    return found


def _prompt(server: str, prompt: mcp_types.Prompt) -> PromptInfo:
    arguments = tuple(
        PromptArgument(a.name, a.description or "", bool(a.required)) for a in prompt.arguments or ()
    )
    return PromptInfo(server, prompt.name, prompt.title or "", prompt.description or "", arguments)


async def get_prompt(connection: McpConnection, name: str, arguments: dict[str, str]) -> PromptTurn:
    """The prompt's messages as one user turn (``prompts/get``)."""
    result = await _request(
        connection, f"the prompt {name!r}", lambda s: s.get_prompt(name, dict(arguments) or None)
    )
    return prompt_turn(connection.name, result.messages)


def prompt_turn(server: str, messages: Sequence[mcp_types.PromptMessage]) -> PromptTurn:
    """Texts joined (an assistant message's marked as such), images kept, resources attached."""
    from mcp_types import AudioContent, EmbeddedResource, ImageContent, ResourceLink, TextContent

    texts: list[str] = []
    images: list[ImageBlock] = []
    context: list[ContextFile] = []
    notes: list[str] = []
    for message in messages:
        content = message.content
        prefix = "Assistant: " if message.role == "assistant" else ""
        if isinstance(content, TextContent):
            texts.append(prefix + content.text)
        elif isinstance(content, ImageContent):
            images.append(ImageBlock(content.mime_type, content.data))
        elif isinstance(content, EmbeddedResource):
            item = contents_item(server, content.resource)
            (images if isinstance(item, ImageBlock) else context).append(item)  # type: ignore[arg-type]
        elif isinstance(content, ResourceLink):
            texts.append(prefix + f"[resource: {content.uri}]")
        elif isinstance(content, AudioContent):
            notes.append(f"The prompt's audio ({content.mime_type}) was left out: it cannot be sent.")
    return PromptTurn("\n\n".join(texts), tuple(images), tuple(context), tuple(notes))


def contents_item(
    server: str, contents: mcp_types.TextResourceContents | mcp_types.BlobResourceContents
) -> ContextFile | ImageBlock:
    """A resource's contents as an attachment: text as a context file, an image as an image,
    other binary as text when it decodes as such, else a line saying what it is."""
    from mcp_types import BlobResourceContents

    mime_type = contents.mime_type or ""
    name = resource_name(server, str(contents.uri))
    if not isinstance(contents, BlobResourceContents):
        return ContextFile(name, contents.text, document_type="text")
    if mime_type.startswith("image/"):
        return ImageBlock(mime_type, contents.blob)
    try:
        data = base64.b64decode(contents.blob, validate=True)
    except (binascii.Error, ValueError):
        data = b""
    if mime_type.startswith("text/") or mime_type in TEXT_TYPES or _is_text(data):
        return ContextFile(name, data.decode("utf-8", errors="replace"), document_type="text")
    kind = mime_type or "binary data"
    return ContextFile(name, f"[{kind}, {len(data):,} bytes: not text, not sent]", document_type="text")


def _is_text(data: bytes) -> bool:
    if not data or b"\x00" in data[:4096]:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


async def complete(
    connection: McpConnection,
    ref: tuple[str, str],
    argument: str,
    value: str,
    context: dict[str, str] | None = None,
) -> list[str]:
    """``completion/complete`` for a prompt's argument (``("prompt", name)``) or a template's
    variable (``("template", uri_template)``); [] when the server offers no completions."""
    from mcp_types import PromptReference, ResourceTemplateReference

    session = await connection.started_session()
    if not _offers(session, "completions"):
        return []
    kind, name = ref
    reference: Any = (
        PromptReference(type="ref/prompt", name=name)
        if kind == "prompt"
        else ResourceTemplateReference(type="ref/resource", uri=name)
    )
    result = await _request(
        connection,
        "a completion",
        lambda s: s.complete(reference, {"name": argument, "value": value}, dict(context or {}) or None),
    )
    return list(result.completion.values)[:MAX_COMPLETIONS]


async def list_resources(connection: McpConnection) -> list[ResourceInfo]:
    from mcp_types import PaginatedRequestParams

    session = await connection.started_session()
    if not _offers(session, "resources"):
        return []
    found: list[ResourceInfo] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await _request(
            connection,
            "the resource list",
            lambda s: s.list_resources(params=params),  # noqa: B023 (awaited at once)
        )
        found += [
            ResourceInfo(
                connection.name,
                str(r.uri),
                r.name,
                r.title or "",
                r.description or "",
                r.mime_type or "",
            )
            for r in page.resources
        ]
        cursor = page.next_cursor
        if not cursor:
            break
    return found


async def list_templates(connection: McpConnection) -> list[ResourceTemplateInfo]:
    from mcp_types import PaginatedRequestParams

    session = await connection.started_session()
    if not _offers(session, "resources"):
        return []
    found: list[ResourceTemplateInfo] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await _request(
            connection,
            "the resource templates",
            lambda s: s.list_resource_templates(params=params),  # noqa: B023 (awaited at once)
        )
        found += [
            ResourceTemplateInfo(
                connection.name,
                t.uri_template,
                t.name,
                t.title or "",
                t.description or "",
                t.mime_type or "",
            )
            for t in page.resource_templates
        ]
        cursor = page.next_cursor
        if not cursor:
            break
    return found


async def read_resource(connection: McpConnection, uri: str) -> list[ContextFile | ImageBlock]:
    """``resources/read``: each of its contents as an attachment (most resources have one)."""
    result = await _request(connection, f"the resource {uri}", lambda s: s.read_resource(uri))
    if not result.contents:
        raise CatalogError(f"MCP server {connection.name!r} sent nothing for {uri}.")
    return [contents_item(connection.name, c) for c in result.contents]


async def read_resource_bytes(connection: McpConnection, uri: str) -> bytes:
    """``resources/read`` as bytes, for Save as…: text as UTF-8, binary decoded, contents joined."""
    result = await _request(connection, f"the resource {uri}", lambda s: s.read_resource(uri))
    if not result.contents:
        raise CatalogError(f"MCP server {connection.name!r} sent nothing for {uri}.")
    from mcp_types import BlobResourceContents

    parts: list[bytes] = []
    for contents in result.contents:
        if isinstance(contents, BlobResourceContents):
            try:
                parts.append(base64.b64decode(contents.blob, validate=True))
            except (binascii.Error, ValueError) as err:
                raise CatalogError(f"MCP server {connection.name!r} sent {uri} garbled.") from err
        else:
            parts.append(contents.text.encode("utf-8"))
    return b"".join(parts)


async def subscribe(connection: McpConnection, uri: str, *, on: bool = True) -> bool:
    """Ask to be told when ``uri`` changes (or no longer); False when the server cannot tell."""
    session = await connection.started_session()
    capabilities = session.server_capabilities
    resources = capabilities.resources if capabilities is not None else None
    if resources is None or not resources.subscribe:
        return False
    with warnings.catch_warnings():  # deprecated for 2026-07-28 only; Threadline speaks 2025-11-25
        warnings.simplefilter("ignore")
        if on:
            await _request(connection, f"a subscription to {uri}", lambda s: s.subscribe_resource(uri))
        else:
            await _request(
                connection, f"the end of a subscription to {uri}", lambda s: s.unsubscribe_resource(uri)
            )
    return True
