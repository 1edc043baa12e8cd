"""The tool registry: the tools a conversation may call, and running a call safely.

Built-in tools and tools from MCP servers register here; the engine asks it for
the specs to offer a model and hands it each approved call. A call never
raises into the turn: unknown tools, bad arguments, exceptions and timeouts all
become error results the model can read (DESIGN.md §1, tools).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from threadline.core.messages import ImageBlock, ToolCall, ToolResult
from threadline.core.request import ToolSpec

log = logging.getLogger("threadline.tools")

DEFAULT_TOOL_TIMEOUT = 120.0


@dataclass(frozen=True, slots=True)
class ToolOutput:
    text: str = ""
    images: tuple[ImageBlock, ...] = ()
    is_error: bool = False


class Tool(Protocol):
    @property
    def spec(self) -> ToolSpec: ...

    async def call(self, arguments: dict[str, Any]) -> ToolOutput: ...


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool] = (), *, timeout: float = DEFAULT_TOOL_TIMEOUT) -> None:
        self._tools: dict[str, Tool] = {}
        self.timeout = timeout
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        self._tools[tool.spec.name] = tool

    def unregister(self, name: str) -> None:
        self._tools.pop(name, None)

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self, names: Iterable[str] | None = None) -> list[ToolSpec]:
        wanted = set(self._tools) if names is None else set(names)
        return [t.spec for n, t in self._tools.items() if n in wanted]

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    async def run(self, call: ToolCall) -> ToolResult:
        """Run one call; every failure is turned into an error result."""
        tool = self._tools.get(call.name)
        if tool is None:
            return _error(call, f"Tool {call.name!r} is not available.")
        try:
            arguments = json.loads(call.arguments or "{}")
        except json.JSONDecodeError as err:
            return _error(call, f"The arguments were not valid JSON: {err.msg}.")
        if not isinstance(arguments, dict):
            return _error(call, "The arguments must be a JSON object.")
        try:
            output = await asyncio.wait_for(tool.call(arguments), timeout=self.timeout)
        except TimeoutError:
            return _error(
                call, f"Tool {call.name!r} did not finish within {self.timeout:g} s and was stopped."
            )
        except Exception as err:
            log.warning("tool %s failed: %s", call.name, err, exc_info=True)
            return _error(call, f"Tool {call.name!r} failed: {err}")
        return ToolResult(
            call_id=call.id,
            text=output.text,
            images=output.images,
            is_error=output.is_error,
            tool_name=call.name,
        )


def _error(call: ToolCall, text: str) -> ToolResult:
    return ToolResult(call_id=call.id, text=text, is_error=True, tool_name=call.name)
