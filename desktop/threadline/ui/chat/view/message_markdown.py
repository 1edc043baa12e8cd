"""One message as the Markdown a person would paste elsewhere ("Copy as Markdown").

A reply's text already is Markdown and a prompt's is what was typed, so both are
copied as they are; what is added is a readable form of what the chat shows in
boxes: each tool call with its arguments, and each tool result, in fenced blocks
(JSON pretty-printed). A whole chat is copied with the transcript export instead
(``engine.library.export_markdown``), so there is one transcript format, not two.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from threadline.core.messages import Message, ToolResult, never_ran, stopped_after

_BACKTICKS = re.compile(r"`{3,}")


def message_markdown(message: Message, tool_name: Callable[[str], str] = str) -> str:
    """``message`` as Markdown; ``tool_name`` shows a stored tool name as the user knows it."""
    if message.marker is not None:
        return f"*{message.marker.label}*\n"
    parts = [message.text.strip()] if message.text.strip() else []
    parts += [f"*Attached: {c.name}*" for c in message.context]
    parts += [f"*Image: {i.name or i.media_type}*" for i in message.images]
    for call in message.tool_calls:
        parts.append(
            f"**Tool call** `{tool_name(call.name)}`\n\n{fenced(_pretty(call.arguments or '{}'), 'json')}"
        )
    for result in message.tool_results:
        parts.append(_result_markdown(result, tool_name))
    if message.sources:  # as the transcript export writes them, numbered as cited
        listed = (f"{n}. {s.label}: {s.locator.describe()}" for n, s in enumerate(message.sources, start=1))
        parts.append("*Sources:*\n" + "\n".join(listed))
    return "\n\n".join(parts) + "\n"


def _result_markdown(result: ToolResult, tool_name: Callable[[str], str]) -> str:
    name = tool_name(result.tool_name) if result.tool_name else result.call_id
    cancelled = never_ran(result)
    stopped = stopped_after(result)
    label = (
        f"Stopped after {stopped}"
        if stopped
        else "Not run"
        if cancelled
        else "Tool error"
        if result.is_error
        else "Tool result"
    )
    lines = [f"**{label}** `{name}`"]
    if result.text:
        parsed = result.json_value()
        is_json = isinstance(parsed, dict | list)
        lines.append(fenced(_pretty(result.text) if is_json else result.text, "json" if is_json else ""))
    lines += [f"*Image: {i.name or i.media_type}*" for i in result.images]
    return "\n\n".join(lines)


def fenced(text: str, language: str = "") -> str:
    """``text`` in a code fence longer than any run of backticks inside it."""
    longest = max((len(m.group()) for m in _BACKTICKS.finditer(text)), default=2)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def _pretty(text: str) -> str:
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except (ValueError, TypeError):
        return text
