"""A tool result from an MCP server as the model and the chat get it (``convert_result``).

Apart from the connection (``mcp_client``) so that it stays small. ``structuredContent`` is
validated against the tool's ``outputSchema`` by the SDK itself (``ClientSession.call_tool``
raises when it does not match: the call then reports that error); here it is shown as
indented JSON, in place of the same JSON on one line or when the server sent no text.

Resource links and embedded resources also become ``ResourceRef``s on the output, so the
chat can open or attach them (docs/mcp.md, "Resources in tool results"); the model still
gets them as text.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import TYPE_CHECKING

from threadline.core.messages import ImageBlock, ResourceRef
from threadline.tools.registry import ToolOutput

if TYPE_CHECKING:
    import mcp_types


def convert_result(result: mcp_types.CallToolResult, server: str = "") -> ToolOutput:
    """Text blocks joined; images kept as images; structured content as indented JSON when there
    is no text, or when the text is that same JSON on one line (the spec's backward-compatible
    text block)."""
    from mcp_types import (
        AudioContent,
        BlobResourceContents,
        EmbeddedResource,
        ImageContent,
        ResourceLink,
        TextContent,
    )

    texts: list[str] = []
    images: list[ImageBlock] = []
    resources: list[ResourceRef] = []
    for block in result.content:
        if isinstance(block, TextContent):
            texts.append(block.text)
        elif isinstance(block, ImageContent):
            images.append(ImageBlock(block.mime_type, block.data))
        elif isinstance(block, AudioContent):
            texts.append(f"[audio {block.mime_type}, not shown]")
        elif isinstance(block, EmbeddedResource):
            resource = block.resource
            mime_type = resource.mime_type or ""
            uri = str(resource.uri)
            if isinstance(resource, BlobResourceContents):
                size = _size(resource.blob)
                resources.append(ResourceRef(server, uri, "", mime_type, embedded=True, size=size))
                if mime_type.startswith("image/"):
                    images.append(ImageBlock(mime_type, resource.blob))
                else:
                    texts.append(f"[resource {resource.uri} ({mime_type or 'binary'}), not shown]")
            else:
                resources.append(ResourceRef(server, uri, "", mime_type, embedded=True, text=resource.text))
                texts.append(resource.text)
        elif isinstance(block, ResourceLink):
            name = block.title or block.name
            resources.append(ResourceRef(server, str(block.uri), name, block.mime_type or ""))
            texts.append(f"[resource link: {block.uri}]")
    structured = result.structured_content
    if structured is not None and (not texts or _same_json("\n".join(texts), structured)):
        texts = [json.dumps(structured, ensure_ascii=False, indent=2)]
    text = "\n".join(texts)
    if result.is_error and not text:
        text = "The tool reported an error without a message."
    return ToolOutput(
        text=text, images=tuple(images), is_error=bool(result.is_error), resources=tuple(resources)
    )


def _size(blob: str) -> int:
    try:
        return len(base64.b64decode(blob, validate=True))
    except (binascii.Error, ValueError):
        return 0


def _same_json(text: str, value: object) -> bool:
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False
