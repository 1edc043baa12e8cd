"""Typed events a provider stream yields (docs/design.md §4).

A stream is a sequence of ``ReasoningDelta``, ``TextDelta`` and ``ToolCallDelta``
as they arrive, ``Usage`` when the provider reports it, and exactly one
``StreamFinished`` at the end carrying the assembled tool calls. The engine never
sees SDK objects.
"""

from __future__ import annotations

from dataclasses import dataclass

from threadline.core.messages import ToolCall


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the reply's text, in order."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of the model's reasoning (never part of the reply's text).

    ``new_block`` starts a new reasoning block (each Anthropic thinking block is one);
    otherwise the piece extends the current block. ``signature`` and ``redacted_data``
    are Anthropic's, to be stored as given and sent back unchanged within a tool round.
    ``source`` is one of ``threadline.core.reasoning``'s ``SOURCE_*``.
    """

    text: str = ""
    signature: str = ""
    redacted_data: str = ""
    new_block: bool = False
    source: str = ""


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A piece of a tool call. ``id`` and ``name`` are set on the first delta of a call, else ``""``."""

    index: int
    id: str
    name: str
    arguments_delta: str


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts as the provider reported them (``None``: not reported)."""

    input_tokens: int | None
    output_tokens: int | None


@dataclass(frozen=True, slots=True)
class StreamFinished:
    """The reply ended normally.

    ``stop_reason`` is normalised: ``"end"``, ``"tool_calls"``, ``"max_tokens"``,
    ``"refused"``, or the provider's own word for anything else.
    """

    stop_reason: str
    tool_calls: tuple[ToolCall, ...]
    request_id: str
    model: str
    usage: Usage | None


StreamEvent = ReasoningDelta | TextDelta | ToolCallDelta | Usage | StreamFinished

STOP_END = "end"
STOP_TOOL_CALLS = "tool_calls"
STOP_MAX_TOKENS = "max_tokens"
STOP_REFUSED = "refused"

_STOP_REASONS = {
    "stop": STOP_END,
    "end_turn": STOP_END,
    "stop_sequence": STOP_END,
    "eos": STOP_END,
    "pause_turn": STOP_END,
    "tool_calls": STOP_TOOL_CALLS,
    "tool_use": STOP_TOOL_CALLS,
    "function_call": STOP_TOOL_CALLS,
    "length": STOP_MAX_TOKENS,
    "max_tokens": STOP_MAX_TOKENS,
    "model_context_window_exceeded": STOP_MAX_TOKENS,
    "content_filter": STOP_REFUSED,
    "refusal": STOP_REFUSED,
}


def normalise_stop_reason(reason: str | None, *, has_tool_calls: bool = False) -> str:
    """One vocabulary for both APIs; a reply with tool calls ends in ``tool_calls``.

    Some OpenAI-compatible servers report ``stop`` for a reply that asks for tools,
    so the presence of calls wins over an ``end`` reason.
    """
    normal = _STOP_REASONS.get(reason or "", reason or STOP_END)
    if has_tool_calls and normal == STOP_END:
        return STOP_TOOL_CALLS
    return normal
