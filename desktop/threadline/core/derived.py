"""State derived from history alone (docs/design.md §1, "history is the source of truth").

A tool that needs something an earlier tool produced (an id it created, a plan
it wrote) reads it from the path handed to it, never from memory that would be
lost on restart or differ between two app instances on one database.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from threadline.core.messages import Message, ToolCall, ToolResult


def tool_calls_by_id(path: Sequence[Message]) -> dict[str, ToolCall]:
    return {call.id: call for message in path for call in message.tool_calls}


def latest_tool_result(
    path: Sequence[Message], tool_name: str, *, include_errors: bool = False
) -> ToolResult | None:
    """The newest result of a call to ``tool_name`` on the path, or ``None``."""
    calls = tool_calls_by_id(path)
    for message in reversed(path):
        for result in reversed(message.tool_results):
            call = calls.get(result.call_id)
            name = call.name if call else result.tool_name
            if name == tool_name and (include_errors or not result.is_error):
                return result
    return None


def latest_tool_value(path: Sequence[Message], tool_name: str, key: str) -> Any:
    """The value under ``key`` in the newest JSON object ``tool_name`` returned that has it."""
    calls = tool_calls_by_id(path)
    for message in reversed(path):
        for result in reversed(message.tool_results):
            call = calls.get(result.call_id)
            name = call.name if call else result.tool_name
            if name != tool_name or result.is_error:
                continue
            value = result.json_value()
            if isinstance(value, dict) and key in value:
                return value[key]
    return None


def latest_tool_arguments(path: Sequence[Message], tool_name: str) -> dict[str, Any] | None:
    """The arguments of the newest call to ``tool_name`` (what a tool was asked to record).

    A call answered with an error (refused by the user, cancelled, failed) recorded
    nothing, so it is skipped; a call without a result yet (the one running now) counts.
    """
    errors = {r.call_id for message in path for r in message.tool_results if r.is_error}
    for message in reversed(path):
        for call in reversed(message.tool_calls):
            if call.name == tool_name and call.id not in errors:
                return call.parsed_arguments()
    return None
