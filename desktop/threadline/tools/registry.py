"""The tool registry: the tools a conversation may call, and running a call safely.

Built-in tools and tools from MCP servers register here; the engine asks it for
the specs to offer a model and hands it each approved call. A call never
raises into the turn: unknown tools, bad arguments, exceptions and timeouts all
become error results the model can read (docs/design.md §1, tools).

Two names per tool. The *wire name* (``ToolSpec.name``) is what providers see
and what stored tool calls carry; OpenAI and Anthropic both require
``^[a-zA-Z0-9_-]{1,64}$``, so an MCP tool ``status`` of server ``git`` goes out
as ``git__status``. The *policy name* is what agents' patterns and approval
rules match and what the approval prompt shows: ``git/status`` (so ``git/*``
covers a server). Built-ins have one name for both.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

from threadline.core.config import AgentConfig, Approval, ApprovalRule
from threadline.core.messages import ImageBlock, ResourceRef, ToolCall, ToolResult
from threadline.core.request import ToolSpec
from threadline.tools import policy
from threadline.tools.context import tool_context

log = logging.getLogger("threadline.tools")

DEFAULT_TOOL_TIMEOUT = 120.0
WIRE_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""Tool names both providers accept (OpenAI functions and Anthropic tools)."""


@dataclass(frozen=True, slots=True)
class ToolOutput:
    text: str = ""
    images: tuple[ImageBlock, ...] = ()
    is_error: bool = False
    resources: tuple[ResourceRef, ...] = ()


class Tool(Protocol):
    """What the registry runs. Optional attributes a tool may also have:

    * ``policy_name: str`` — the name approval rules match (default: ``spec.name``);
    * ``needs_trust: bool`` — writes files or runs commands: asks unless trusted by name;
    * ``timeout: float`` — its own limit instead of the registry's;
    * ``preview(arguments) -> str`` — what the call would change (a unified diff);
    * ``ends_with_threadline: bool`` — false when a call's work may go on after Threadline
      dies (default true: it runs in Threadline, or its processes end with it);
    * ``available: bool`` — false while the tool is switched off as a whole (memory off):
      not offered, whatever the agent enables;
    * ``asks_user: bool`` — every call asks the user, even where a rule allows it (a memory
      proposal: the user decides what is remembered); a deny rule still denies;
    * ``reads_only: bool`` — changes no file (the read-only built-ins, an MCP tool annotated
      ``readOnlyHint``): its calls are not recorded (docs/workspace.md, "Recording");
    * ``touched_paths(arguments) -> list[str]`` (``DeclaresPaths``) — the files a call may
      write, create or delete; its changes are recorded from those paths alone instead of a
      scan of the allowed folders.
    """

    @property
    def spec(self) -> ToolSpec: ...

    async def call(self, arguments: dict[str, Any]) -> ToolOutput: ...


@runtime_checkable
class Previewable(Protocol):
    def preview(self, arguments: dict[str, Any]) -> str: ...


@runtime_checkable
class DeclaresPaths(Protocol):
    def touched_paths(self, arguments: dict[str, Any]) -> list[str]:
        """Absolute paths the call may change (inside a tool context: relative paths resolve)."""
        ...


class ToolSource(Protocol):
    """Something that adds tools on demand (the MCP server manager)."""

    async def prepare(self, patterns: Sequence[str]) -> None:
        """Make the tools ``patterns`` (an agent's ``enabled_tools``) may select available."""


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool] = (), *, timeout: float = DEFAULT_TOOL_TIMEOUT) -> None:
        self._tools: dict[str, Tool] = {}
        self._by_policy_name: dict[str, str] = {}
        self._sources: list[ToolSource] = []
        self.timeout = timeout
        for tool in tools:
            self.register(tool)

    # -- membership -------------------------------------------------------------------

    def register(self, tool: Tool) -> None:
        name = tool.spec.name
        if not WIRE_NAME_PATTERN.match(name):
            raise ValueError(f"tool name {name!r} is not accepted by providers (letters, digits, _ and -)")
        self.unregister(name)
        self._tools[name] = tool
        self._by_policy_name[_policy_name(tool)] = name

    def unregister(self, name: str) -> None:
        tool = self._tools.pop(self._wire(name), None)
        if tool is not None:
            self._by_policy_name.pop(_policy_name(tool), None)

    def names(self) -> list[str]:
        """Wire names of every registered tool (what stored calls may name)."""
        return list(self._tools)

    def specs(self, names: Iterable[str] | None = None) -> list[ToolSpec]:
        wanted = set(self._tools) if names is None else {self._wire(n) for n in names}
        return [t.spec for n, t in self._tools.items() if n in wanted]

    def get(self, name: str) -> Tool | None:
        """The tool by wire name or policy name."""
        return self._tools.get(self._wire(name))

    def ends_with_threadline(self, name: str) -> bool:
        """Whether a call of ``name`` that Threadline's death cut short surely stopped with it.

        True for a tool that runs inside Threadline or whose processes end with it
        (``process_guard``); false for one whose work goes on elsewhere (a remote MCP
        server) and for a tool not known now (docs/tools.md).
        """
        tool = self.get(name)
        return tool is not None and bool(getattr(tool, "ends_with_threadline", True))

    def policy_name(self, name: str) -> str:
        """The name rules match (``server/tool`` for MCP tools); unknown names map to themselves."""
        tool = self.get(name)
        return _policy_name(tool) if tool is not None else name

    def needs_trust(self, name: str) -> bool:
        tool = self.get(name)
        return bool(getattr(tool, "needs_trust", False))

    def _wire(self, name: str) -> str:
        return name if name in self._tools else self._by_policy_name.get(name, name)

    # -- on-demand sources (MCP servers) -------------------------------------------------------

    def add_source(self, source: ToolSource) -> None:
        self._sources.append(source)

    async def prepare(self, patterns: Sequence[str]) -> None:
        """Start whatever tool sources ``patterns`` select; never raises (failures show as status)."""
        if not patterns:
            return
        for source in list(self._sources):
            try:
                await source.prepare(patterns)
            except Exception:
                log.exception("preparing tools for %s failed", patterns)

    # -- approval ----------------------------------------------------------------------------------

    def offered(self, agent: AgentConfig) -> list[ToolSpec]:
        """The specs the agent's ``enabled_tools`` patterns select, matched on policy names."""
        return [
            t.spec
            for t in self._tools.values()
            if agent.offers(_policy_name(t)) and getattr(t, "available", True) is not False
        ]

    def for_policy(self, calls: Sequence[ToolCall]) -> tuple[ToolCall, ...]:
        """The calls renamed to policy names (what the approval prompt shows and rules match)."""
        return tuple(replace(c, name=self.policy_name(c.name)) for c in calls)

    def approval(self, agent: AgentConfig, call: ToolCall) -> Approval:
        """The agent's policy for ``call`` (by wire or policy name), with trust rules applied."""
        decided = policy.approval_for(agent, call, self.policy_name(call.name), self.needs_trust(call.name))
        if getattr(self.get(call.name), "asks_user", False) and decided is not Approval.DENY:
            return Approval.ASK  # the user's own decision, never a rule's (a memory proposal)
        return decided

    def always_allow_rule(self, call: ToolCall) -> ApprovalRule:
        """The rule "Always allow" stores for ``call`` (shell: this exact command line only)."""
        return policy.always_allow_rule(call, self.policy_name(call.name), self.needs_trust(call.name))

    def preview(self, call: ToolCall, allowed_folders: Sequence[str] | None = None) -> str | None:
        """What the call would change, for the approval prompt (a unified diff), if the tool says.

        The engine asks for approval inside the call's tool context, so a handler running in the
        turn's task needs no folders; a UI callback outside it passes the agent's ``allowed_folders``.
        """
        tool = self.get(call.name)
        if not isinstance(tool, Previewable):
            return None
        try:
            if allowed_folders is None:
                return tool.preview(call.parsed_arguments())
            with tool_context("", (), allowed_folders):
                return tool.preview(call.parsed_arguments())
        except Exception as err:
            return f"(no preview: {err})"

    # -- running -----------------------------------------------------------------------------------

    async def run(self, call: ToolCall) -> ToolResult:
        """Run one call; every failure is turned into an error result."""
        tool = self.get(call.name)
        if tool is None:
            return _error(call, f"Tool {call.name!r} is not available.")
        try:
            arguments = json.loads(call.arguments or "{}")
        except json.JSONDecodeError as err:
            return _error(call, f"The arguments were not valid JSON: {err.msg}.")
        if not isinstance(arguments, dict):
            return _error(call, "The arguments must be a JSON object.")
        timeout = getattr(tool, "timeout", None) or self.timeout
        try:
            output = await asyncio.wait_for(tool.call(arguments), timeout=timeout)
        except TimeoutError:
            return _error(call, f"Tool {call.name!r} did not finish within {timeout:g} s and was stopped.")
        except Exception as err:
            log.warning("tool %s failed: %s", call.name, err, exc_info=True)
            return _error(call, f"Tool {call.name!r} failed: {err}")
        return ToolResult(
            call_id=call.id,
            text=output.text,
            images=output.images,
            is_error=output.is_error,
            tool_name=call.name,
            resources=output.resources,
        )


def _policy_name(tool: Tool) -> str:
    name = getattr(tool, "policy_name", None)
    return name if isinstance(name, str) and name else tool.spec.name


def _error(call: ToolCall, text: str) -> ToolResult:
    return ToolResult(call_id=call.id, text=text, is_error=True, tool_name=call.name)
