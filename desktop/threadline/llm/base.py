"""The provider protocol the engine streams through (docs/design.md §4).

A provider turns a ``BuiltRequest`` (already well-formed, see
``threadline.core.request``) into one HTTP request in its API's format and the
streamed answer into ``StreamEvent``s. Implementations: ``OpenAIProvider``
(any OpenAI-compatible server) and ``AnthropicProvider``; ``make_provider`` in
``threadline.llm.factory`` picks one from a ``ProviderConfig``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from threadline.core.config import AgentConfig, ModelInfo
from threadline.core.request import BuiltRequest, ToolSpec
from threadline.llm.events import StreamEvent
from threadline.llm.timeouts import Timeouts

DEFAULT_ANTHROPIC_MAX_TOKENS = 4096


@dataclass(frozen=True)
class ChatParams:
    """Per-turn parameters from the session's agent (``None``: the provider's default)."""

    model: str
    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    reasoning_effort: str = ""
    """OpenAI-style ``reasoning_effort`` ("": not sent)."""
    thinking_budget: int | None = None
    """Anthropic's thinking ``budget_tokens`` (``None``: thinking off)."""

    @classmethod
    def for_agent(cls, model: str, agent: AgentConfig) -> ChatParams:
        """The parameters ``agent`` sets for a request to ``model``."""
        return cls(
            model=model,
            temperature=agent.temperature,
            max_tokens=agent.max_tokens,
            top_p=agent.top_p,
            reasoning_effort=agent.reasoning_effort,
            thinking_budget=agent.thinking_budget,
        )


class Provider(Protocol):
    """One configured provider: streams replies and lists models."""

    name: str
    timeouts: Timeouts
    """Its connect, first-byte and stall bounds; the retries' time budget follows the first-byte one."""

    def stream(
        self, request: BuiltRequest, params: ChatParams, tools: Sequence[ToolSpec] = ()
    ) -> AsyncIterator[StreamEvent]:
        """Stream one reply.

        An async generator: yields deltas as they arrive and ends with exactly one
        ``StreamFinished``, or raises a ``ProviderError``. The HTTP response is
        closed whenever the generator ends — finished, failed, closed early with
        ``aclose()`` (use ``contextlib.aclosing``) or cancelled.
        """
        ...

    async def list_models(self) -> list[ModelInfo]: ...

    async def aclose(self) -> None: ...
