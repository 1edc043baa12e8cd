"""The built-in ``notes`` tool: a small key/value memory kept only in the conversation.

It is the reference for "history is the source of truth" (docs/design.md §1): it
keeps nothing in memory. ``set`` returns the whole notebook as JSON, derived
from the newest earlier ``notes`` result on the path plus the new entry;
``get`` and ``list`` read that newest notebook from the history handed to the
call (``current_tool_context().history``). So the notes survive a restart, and
two app instances on one database agree; editing or branching the conversation
changes what is remembered, as it should. A ``set`` and a ``get`` in the same
round both see the history before the round.
"""

from __future__ import annotations

import json
from typing import Any

from threadline.core.derived import latest_tool_value
from threadline.core.request import ToolSpec
from threadline.tools.context import current_tool_context
from threadline.tools.registry import ToolOutput

NOTES_TOOL_NAME = "notes"
NOTEBOOK_KEY = "notes"
MAX_NOTE_CHARS = 20_000


class NotesTool:
    spec = ToolSpec(
        NOTES_TOOL_NAME,
        "Remember short notes for this conversation. action 'set' stores value under key, "
        "'get' returns the value of key, 'list' returns every note.",
        {
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["set", "get", "list"]},
                "key": {"type": "string"},
                "value": {"type": "string"},
            },
            "required": ["action"],
        },
    )
    reads_only = True
    """Notes live in the conversation, not on disk: nothing to record (docs/workspace.md)."""

    async def call(self, arguments: dict[str, Any]) -> ToolOutput:
        notebook = current_notebook()
        action = arguments.get("action")
        key = arguments.get("key")
        if action == "list":
            return ToolOutput(json.dumps({"keys": sorted(notebook)}, ensure_ascii=False))
        if not isinstance(key, str) or not key:
            return ToolOutput("A non-empty 'key' is required.", is_error=True)
        if action == "get":
            if key not in notebook:
                return ToolOutput(f"There is no note {key!r}.", is_error=True)
            return ToolOutput(json.dumps({"key": key, "value": notebook[key]}, ensure_ascii=False))
        if action == "set":
            value = arguments.get("value")
            if not isinstance(value, str) or len(value) > MAX_NOTE_CHARS:
                return ToolOutput(
                    f"'value' must be a string of at most {MAX_NOTE_CHARS} characters.", is_error=True
                )
            notebook[key] = value
            payload = {"key": key, "value": value, NOTEBOOK_KEY: notebook}
            return ToolOutput(json.dumps(payload, ensure_ascii=False))
        return ToolOutput("'action' must be one of set, get, list.", is_error=True)


def current_notebook() -> dict[str, str]:
    """The notebook as the newest ``notes`` result on the running call's path left it."""
    value = latest_tool_value(current_tool_context().history, NOTES_TOOL_NAME, NOTEBOOK_KEY)
    if not isinstance(value, dict):
        return {}
    return {str(k): str(v) for k, v in value.items()}
