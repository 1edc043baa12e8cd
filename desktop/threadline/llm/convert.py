"""``BuiltRequest`` → each API's request body (pure functions, plain dicts).

What both share: the system text is ``request.system``; attached context files go
first in the prompt as ``<file name="…">…</file>`` text blocks; images are base64
blocks in each API's shape; the placeholder tool is offered when the builder had
to map a vanished tool to it.

Differences that matter:

* OpenAI has no tool results inside a user message: each result is a ``tool``
  role message, placed before the user text of the same ``SentMessage``. Tool
  messages carry text only, so images a tool returned follow in a user message.
* Anthropic puts ``tool_result`` blocks first in the user content (with
  ``is_error``), and rejects empty text blocks, so none are sent.

Reasoning goes back only where an API requires it. OpenAI-compatible servers never
get it (DeepSeek refuses a request that carries earlier reasoning; the others ignore
it). Anthropic gets the signed ``thinking`` / ``redacted_thinking`` blocks of the
current turn's assistant messages, unchanged and first in their content: with
thinking enabled, the assistant message that called tools in the turn being
continued must begin with its thinking blocks, or the API refuses the round.
Earlier turns' thinking is left out (the API ignores it anyway), as is reasoning
without a signature (from another provider, or a ``<think>`` tag).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from threadline.core.messages import ContextFile, ImageBlock, Role, ToolCall, ToolResult
from threadline.core.reasoning import Reasoning
from threadline.core.request import PLACEHOLDER_TOOL, BuiltRequest, SentMessage, ToolSpec

JsonDict = dict[str, Any]

TOOL_ERROR_PREFIX = "Error: "
TOOL_IMAGES_NOTE = "Images returned by tool call {call_id}:"


def context_file_text(file: ContextFile) -> str:
    name = file.name.replace('"', "'")
    return f'<file name="{name}">\n{file.text}\n</file>'


def tools_to_send(request: BuiltRequest, tools: Sequence[ToolSpec]) -> list[ToolSpec]:
    out = list(tools)
    if request.needs_placeholder_tool and all(t.name != PLACEHOLDER_TOOL.name for t in out):
        out.append(PLACEHOLDER_TOOL)
    return out


def _arguments_text(call: ToolCall) -> str:
    return call.arguments if call.arguments.strip() else "{}"


# -- OpenAI chat completions ------------------------------------------------------------------


def openai_image(image: ImageBlock) -> JsonDict:
    return {"type": "image_url", "image_url": {"url": f"data:{image.media_type};base64,{image.data}"}}


def openai_messages(request: BuiltRequest) -> list[JsonDict]:
    out: list[JsonDict] = []
    if request.system:
        out.append({"role": "system", "content": request.system})
    for message in request.messages:
        if message.role is Role.ASSISTANT:
            out.append(_openai_assistant(message))
        else:
            out.extend(_openai_user(message))
    return out


def _openai_assistant(message: SentMessage) -> JsonDict:
    entry: JsonDict = {"role": "assistant", "content": message.text or None}
    if message.tool_calls:
        entry["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": _arguments_text(c)}}
            for c in message.tool_calls
        ]
    elif not message.text:
        entry["content"] = ""
    return entry


def _openai_tool_text(result: ToolResult) -> str:
    text = result.text or ("(no output)" if not result.images else f"({len(result.images)} image(s), below)")
    return TOOL_ERROR_PREFIX + text if result.is_error else text


def _openai_user(message: SentMessage) -> list[JsonDict]:
    out: list[JsonDict] = [
        {"role": "tool", "tool_call_id": r.call_id, "content": _openai_tool_text(r)}
        for r in message.tool_results
    ]
    parts: list[JsonDict] = []
    for result in message.tool_results:
        if result.images:
            parts.append({"type": "text", "text": TOOL_IMAGES_NOTE.format(call_id=result.call_id)})
            parts.extend(openai_image(i) for i in result.images)
    parts.extend({"type": "text", "text": context_file_text(f)} for f in message.context)
    parts.extend(openai_image(i) for i in message.images)
    if message.text:
        parts.append({"type": "text", "text": message.text})
    if not parts:
        return out
    if len(parts) == 1 and parts[0]["type"] == "text":
        out.append({"role": "user", "content": parts[0]["text"]})
    else:
        out.append({"role": "user", "content": parts})
    return out


def openai_tools(specs: Sequence[ToolSpec]) -> list[JsonDict]:
    return [
        {
            "type": "function",
            "function": {"name": s.name, "description": s.description, "parameters": s.input_schema},
        }
        for s in specs
    ]


# -- Anthropic messages ----------------------------------------------------------------------


def anthropic_image(image: ImageBlock) -> JsonDict:
    return {"type": "image", "source": {"type": "base64", "media_type": image.media_type, "data": image.data}}


def anthropic_messages(request: BuiltRequest) -> list[JsonDict]:
    out: list[JsonDict] = []
    turn_start = current_turn_start(request.messages)
    for position, message in enumerate(request.messages):
        if message.role is Role.ASSISTANT:
            content = _anthropic_assistant(message, with_thinking=position > turn_start)
            role = "assistant"
        else:
            content = _anthropic_user(message)
            role = "user"
        if content:
            out.append({"role": role, "content": content})
    return out


def current_turn_start(messages: Sequence[SentMessage]) -> int:
    """Index of the last user prompt: the messages after it are the turn being continued."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].is_prompt:
            return index
    return -1


def anthropic_thinking(block: Reasoning) -> JsonDict:
    """A stored thinking block as the API gave it (it checks the signature byte for byte)."""
    if block.redacted_data:
        return {"type": "redacted_thinking", "data": block.redacted_data}
    return {"type": "thinking", "thinking": block.text, "signature": block.signature}


def _anthropic_assistant(message: SentMessage, *, with_thinking: bool = False) -> list[JsonDict]:
    blocks: list[JsonDict] = []
    if with_thinking:
        blocks.extend(anthropic_thinking(b) for b in message.reasoning if b.signed)
    if message.text.strip():
        blocks.append({"type": "text", "text": message.text})
    for call in message.tool_calls:
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": _anthropic_input(call)})
    return blocks


def _anthropic_input(call: ToolCall) -> JsonDict:
    try:
        value = json.loads(_arguments_text(call))
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {"value": value}


def _anthropic_tool_result(result: ToolResult) -> JsonDict:
    content: list[JsonDict] = []
    if result.text:
        content.append({"type": "text", "text": result.text})
    content.extend(anthropic_image(i) for i in result.images)
    block: JsonDict = {"type": "tool_result", "tool_use_id": result.call_id, "content": content}
    if result.is_error:
        block["is_error"] = True
    return block


def _anthropic_user(message: SentMessage) -> list[JsonDict]:
    blocks = [_anthropic_tool_result(r) for r in message.tool_results]
    blocks.extend({"type": "text", "text": context_file_text(f)} for f in message.context)
    blocks.extend(anthropic_image(i) for i in message.images)
    if message.text.strip():
        blocks.append({"type": "text", "text": message.text})
    return blocks


def anthropic_tools(specs: Sequence[ToolSpec]) -> list[JsonDict]:
    return [{"name": s.name, "description": s.description, "input_schema": s.input_schema} for s in specs]
