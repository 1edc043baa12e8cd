"""Sticky context: files and command output the model sees with every request.

An agent, and each session on top of it, may name context *sources* (a file, a
folder, or a glob pattern) and context *hooks* (a command whose output becomes
context). Both are re-read for every request, so an edit on disk shows up on the
next turn. These are the stored shapes only; reading the files, running the hooks
and fitting them into the context budget happen in the engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

DEFAULT_CONTEXT_SHARE = 0.75
"""Share of the model's context window sticky context may take unless the agent says otherwise."""
DEFAULT_HOOK_TIMEOUT = 10.0
"""Seconds a context hook may run before it is stopped and reported."""
DEFAULT_HOOK_OUTPUT_CAP = 32_000
"""Characters of a hook's output kept; the rest is cut and the cut is reported."""


class HookTiming(StrEnum):
    """When a context hook runs."""

    SESSION_START = "session_start"
    """Once, for the first request of a session (its output is kept for the session)."""
    EVERY_PROMPT = "every_prompt"
    """Before every request."""


@dataclass(frozen=True, slots=True)
class ContextSource:
    """A file, a folder, or a glob pattern (``src/**/*.py``); ``~`` and relative paths allowed.

    Relative paths are resolved against ``base`` when it is set, else the user's home.
    """

    pattern: str
    base: str = ""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"pattern": self.pattern}
        if self.base:
            data["base"] = self.base
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ContextSource:
        return cls(pattern=str(data["pattern"]), base=str(data.get("base", "")))


@dataclass(frozen=True, slots=True)
class ContextHook:
    """A command whose standard output is added as context (same trust rules as the shell tool)."""

    command: str
    timing: HookTiming = HookTiming.EVERY_PROMPT
    timeout: float = DEFAULT_HOOK_TIMEOUT
    output_cap: int = DEFAULT_HOOK_OUTPUT_CAP
    name: str = ""
    """A label shown in the tab and the meter; the command when empty."""

    @property
    def label(self) -> str:
        return self.name or self.command

    def to_json(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "timing": self.timing.value,
            "timeout": self.timeout,
            "output_cap": self.output_cap,
            "name": self.name,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ContextHook:
        return cls(
            command=str(data["command"]),
            timing=HookTiming(data.get("timing", HookTiming.EVERY_PROMPT.value)),
            timeout=float(data.get("timeout", DEFAULT_HOOK_TIMEOUT)),
            output_cap=int(data.get("output_cap", DEFAULT_HOOK_OUTPUT_CAP)),
            name=str(data.get("name", "")),
        )


@dataclass(frozen=True, slots=True)
class StickyContext:
    """The sticky context of an agent or of one session."""

    sources: tuple[ContextSource, ...] = ()
    hooks: tuple[ContextHook, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.sources or self.hooks)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.sources:
            data["sources"] = [s.to_json() for s in self.sources]
        if self.hooks:
            data["hooks"] = [h.to_json() for h in self.hooks]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> StickyContext:
        if not data:
            return cls()
        return cls(
            sources=tuple(ContextSource.from_json(s) for s in data.get("sources", ())),
            hooks=tuple(ContextHook.from_json(h) for h in data.get("hooks", ())),
        )
