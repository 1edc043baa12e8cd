"""The context meter: what the next request will hold, part by part, against the model's window.

Counts are estimates (characters / 4, the same estimate the request builder uses to
fit history into the window), because the exact tokenizer of an arbitrary server is
unknown; the window shows them as such. The parts follow what a request is made of:
the agent's system prompt, the instructions of the MCP servers whose tools are offered,
the user's saved memories,
sticky context, the latest compaction summary, the
history after it, the tool definitions offered, and the prompt being typed.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from threadline.core.request import estimate_tokens_by_chars, path_history_tokens
from threadline.core.tree import ConversationTree

WARN_BEFORE_COMPACTION = 0.10
"""The meter warns this share of the window before the point where compaction starts."""


class MeterPart(StrEnum):
    SYSTEM = "System prompt and agent"
    INSTRUCTIONS = "MCP server instructions"
    MEMORY = "Memory"
    """The user's saved memories that apply to the chat (docs/memory.md)."""
    STICKY = "Sticky context"
    KNOWLEDGE = "Knowledge"
    SUMMARY = "Summary of earlier messages"
    HISTORY = "Conversation"
    TOOLS = "Tool definitions"
    PROMPT = "Your message"


class MeterLevel(StrEnum):
    OK = "ok"
    WARNING = "warning"
    """Close to the point where compaction starts."""
    FULL = "full"
    """At or past it: the next request compacts, or drops the oldest turns from what is sent."""


@dataclass(frozen=True, slots=True)
class ContextMeter:
    parts: tuple[tuple[MeterPart, int], ...]
    window: int | None
    """The model's context window, ``None`` when unknown."""
    compact_at: int | None
    """Tokens at which the next send compacts first (``None`` when the window is unknown)."""

    @property
    def total(self) -> int:
        return sum(tokens for _, tokens in self.parts)

    @property
    def share(self) -> float | None:
        return None if not self.window else self.total / self.window

    @property
    def level(self) -> MeterLevel:
        if not self.window or self.compact_at is None:
            return MeterLevel.OK
        if self.total >= self.compact_at:
            return MeterLevel.FULL
        if self.total >= self.compact_at - WARN_BEFORE_COMPACTION * self.window:
            return MeterLevel.WARNING
        return MeterLevel.OK

    def tokens(self, part: MeterPart) -> int:
        return next((tokens for p, tokens in self.parts if p is part), 0)


def measure(
    tree: ConversationTree,
    *,
    system_prompt: str,
    sticky_tokens: int,
    tool_tokens: int,
    prompt: str,
    window: int | None,
    compact_at: int | None,
    instructions: str = "",
    knowledge_tokens: int = 0,
    memory: str = "",
) -> ContextMeter:
    """Estimate each part of the request the next send would make from the active path."""
    summary, history = path_history_tokens(tree)
    parts = (
        (MeterPart.SYSTEM, estimate_tokens_by_chars(system_prompt) if system_prompt else 0),
        (MeterPart.INSTRUCTIONS, estimate_tokens_by_chars(instructions) if instructions else 0),
        (MeterPart.MEMORY, estimate_tokens_by_chars(memory) if memory else 0),
        (MeterPart.STICKY, sticky_tokens),
        (MeterPart.KNOWLEDGE, knowledge_tokens),
        (MeterPart.SUMMARY, estimate_tokens_by_chars(summary.text) if summary is not None else 0),
        (MeterPart.HISTORY, history),
        (MeterPart.TOOLS, tool_tokens),
        (MeterPart.PROMPT, estimate_tokens_by_chars(prompt) if prompt.strip() else 0),
    )
    return ContextMeter(parts, window, compact_at)
