"""Message types of a conversation (docs/design.md §1).

One ``Message`` dataclass carries every kind of message, tagged by ``kind``. A
single shape keeps the tree, the store converters and the request builder
simple; the named constructors (``Message.prompt``, ``Message.tool_results``…)
are the only sanctioned way to make each kind, so a message never mixes fields
that do not belong together.

Messages are mutable only where the product needs it: a streaming reply grows
its ``text`` and changes ``status``. Everything else is set at creation.
"""

from __future__ import annotations

import json
from array import array
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Any, NamedTuple

from threadline.core.ids import new_id as new_id  # re-exported: many modules import them from here
from threadline.core.ids import utcnow as utcnow
from threadline.core.reasoning import Reasoning
from threadline.core.sources import Source


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"


class MessageKind(StrEnum):
    PROMPT = "prompt"
    """What the person typed, with optional images and attached context."""
    TOOL_RESULTS = "tool_results"
    """One result per tool call of the assistant message before it."""
    CANCELLED_TOOL_USES = "cancelled_tool_uses"
    """One error result per refused or interrupted call, plus the optional reason."""
    RESPONSE = "response"
    """A plain assistant reply."""
    TOOL_CALLS = "tool_calls"
    """An assistant reply that asks for tools (may also carry text)."""
    SUMMARY = "summary"
    """A compaction summary standing in for the path before ``summarised_through``."""
    MARKER = "marker"
    """A record of something that changed in the conversation (its ``marker``); never sent."""


USER_KINDS = frozenset({MessageKind.PROMPT, MessageKind.TOOL_RESULTS, MessageKind.CANCELLED_TOOL_USES})
ASSISTANT_KINDS = frozenset({MessageKind.RESPONSE, MessageKind.TOOL_CALLS})
RECORD_KINDS = frozenset({MessageKind.SUMMARY, MessageKind.MARKER})
"""Kinds stored with the user role that nobody said: neither a prompt nor a reply."""
TOOL_ANSWER_KINDS = frozenset({MessageKind.TOOL_RESULTS, MessageKind.CANCELLED_TOOL_USES})
"""Kinds of the user message that answers a round of tool calls."""


class MessageStatus(StrEnum):
    STREAMING = "streaming"
    COMPLETE = "complete"
    CANCELLED = "cancelled"
    FAILED = "failed"
    INTERRUPTED = "interrupted"
    """Found ``streaming`` when the store was opened: the process died mid-reply, or while
    the tools of a round ran (a round's answer is stored ``streaming`` before they start)."""


PARTIAL_STATUSES = frozenset({MessageStatus.CANCELLED, MessageStatus.INTERRUPTED})


@dataclass(frozen=True, slots=True)
class ImageBlock:
    """An image sent with a prompt or returned by a tool, base64 encoded."""

    media_type: str
    data: str
    name: str = ""


class MarkerType(StrEnum):
    """What a marker records. New kinds of record add a member here."""

    AGENT = "agent"
    """The session's agent from here on; ``settings`` holds the agent as it was then."""
    CLEAR = "clear"
    """A fresh context: later requests start after this marker (``/clear``); nothing is deleted."""
    TANGENT = "tangent"
    """The first message of a side conversation; leaving it returns to the main line."""


@dataclass(frozen=True, slots=True)
class Marker:
    """A line in the conversation that records a change ("Agent: Reviewer").

    ``value`` is what the divider names; ``detail`` says why when that is not obvious
    ("Reviewer was deleted"); ``settings`` is a JSON snapshot that the change carries
    (for ``AGENT``: the agent's settings at that moment, so later turns follow the
    history and not whatever the agent became since).
    """

    type: MarkerType
    value: str
    detail: str = ""
    settings: dict[str, Any] | None = None

    @property
    def label(self) -> str:
        """The divider's text."""
        head = f"{self.type.value.capitalize()}: {self.value}"
        return f"{head} — {self.detail}" if self.detail else head

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.type.value, "value": self.value}
        if self.detail:
            data["detail"] = self.detail
        if self.settings is not None:
            data["settings"] = self.settings
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Marker:
        settings = data.get("settings")
        return cls(
            type=MarkerType(data["type"]),
            value=str(data.get("value", "")),
            detail=str(data.get("detail", "")),
            settings=settings if isinstance(settings, dict) else None,
        )


@dataclass(frozen=True, slots=True)
class ContextFile:
    """A text file attached to a prompt (its content is sent as context).

    A document (PDF, Word, spreadsheet, slides…) is attached as its extracted text;
    ``document_type`` and ``page_count`` keep what the chip and the prompt show about it.
    """

    name: str
    text: str
    document_type: str = ""
    """"pdf", "docx", "xlsx", "csv", "pptx", "markdown", "html", "text"; "" when not recorded."""
    page_count: int | None = None
    """Pages of a PDF, sheets of a workbook, slides of a presentation; ``None`` otherwise."""

    def to_json(self) -> dict[str, Any]:
        """As stored (message content, drafts); a document's type and page count only when known."""
        out: dict[str, Any] = {"name": self.name, "text": self.text}
        if self.document_type:
            out["document_type"] = self.document_type
        if self.page_count is not None:
            out["page_count"] = self.page_count
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ContextFile:
        count = data.get("page_count")
        return cls(
            data["name"],
            data["text"],
            document_type=str(data.get("document_type", "")),
            page_count=count if isinstance(count, int) and not isinstance(count, bool) else None,
        )


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call the model asked for. ``arguments`` is the JSON text as streamed."""

    id: str
    name: str
    arguments: str = "{}"

    def parsed_arguments(self) -> dict[str, Any]:
        """The arguments as a dict; malformed or non-object JSON yields ``{}``."""
        try:
            value = json.loads(self.arguments or "{}")
        except json.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}


@dataclass(frozen=True, slots=True)
class ResourceRef:
    """A resource an MCP tool result named (a ``resource_link``) or carried (an embedded
    resource): kept beside the result's text so the chat can open or attach it
    (docs/mcp.md, "Resources in tool results"). The model gets only the text."""

    server: str
    uri: str
    name: str = ""
    mime_type: str = ""
    embedded: bool = False
    text: str | None = None
    """An embedded text resource's text; ``None`` for a link or binary contents."""
    size: int | None = None
    """An embedded binary resource's size in bytes (its bytes are not kept)."""

    @property
    def label(self) -> str:
        return self.name or self.uri


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The answer to one tool call: text and/or images, and whether it failed."""

    call_id: str
    text: str = ""
    images: tuple[ImageBlock, ...] = ()
    is_error: bool = False
    tool_name: str = ""
    resources: tuple[ResourceRef, ...] = ()
    """The resources an MCP tool's result linked or embedded, to open or attach."""

    def json_value(self) -> Any:
        """The text parsed as JSON, or ``None`` when it is not JSON."""
        try:
            return json.loads(self.text)
        except (json.JSONDecodeError, TypeError):
            return None


CANCELLED_RESULT_TEXT = "Tool use was cancelled by the user."
NOT_ASKED_RESULT_TEXT = "This tool call was not run: it needs approval and none could be asked."
"""Why a call that needs approval did not run where nobody can give it (``threadline ask`` without
``--yes``): the model is told that, not that the user cancelled it."""
INTERRUPTED_RESULT_TEXT = "Interrupted — Threadline stopped while this tool ran."
"""The result of a call that was running when the process died (its round is ``interrupted``)."""
UNANSWERED_RESULT_TEXT = "Interrupted — Threadline stopped before this tool call was answered."
"""The result of a call no stored message answers at all: the process died before its round began."""
STOPPED_RESULT_TEXT = "Stopped by the user after "
"""The start of the result of a call the user stopped while it ran; the time it ran follows."""
_STOPPED_TAIL = ", while it ran; it may have done part of its work."


@dataclass(frozen=True, slots=True)
class RequestMetadata:
    """What is known about the request that produced an assistant message."""

    provider: str = ""
    model: str = ""
    request_id: str = ""
    started_at: datetime | None = None
    ended_at: datetime | None = None
    time_to_first_token_ms: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    stop_reason: str = ""
    error: str = ""
    edited: bool = False
    """The person rewrote this reply's text (a new version); the rest is the original's."""
    brought_from: str = ""
    """A copy of the tangent's message with this id, brought to the main line on leaving it."""


@dataclass(slots=True)
class Message:
    """One node of the conversation tree."""

    id: str
    parent_id: str | None
    role: Role
    kind: MessageKind
    text: str = ""
    images: tuple[ImageBlock, ...] = ()
    context: tuple[ContextFile, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()
    status: MessageStatus = MessageStatus.COMPLETE
    metadata: RequestMetadata | None = None
    created_at: datetime = field(default_factory=utcnow)
    summarised_through: str | None = None
    """For SUMMARY messages: the id of the last path message the summary replaces."""
    marker: Marker | None = None
    """For MARKER messages: what changed."""
    reasoning: tuple[Reasoning, ...] = ()
    """For replies: what the model thought before answering (never part of ``text``)."""
    sources: tuple[Source, ...] = ()
    """For replies: the passages sent with the request that made it (docs/knowledge.md)."""

    # -- constructors -------------------------------------------------------------

    @classmethod
    def prompt(
        cls,
        text: str,
        *,
        parent_id: str | None = None,
        images: tuple[ImageBlock, ...] = (),
        context: tuple[ContextFile, ...] = (),
        id: str | None = None,
    ) -> Message:
        return cls(
            id=id or new_id(),
            parent_id=parent_id,
            role=Role.USER,
            kind=MessageKind.PROMPT,
            text=text,
            images=images,
            context=context,
        )

    @classmethod
    def tool_results_message(
        cls, results: tuple[ToolResult, ...], *, parent_id: str | None, id: str | None = None
    ) -> Message:
        return cls(
            id=id or new_id(),
            parent_id=parent_id,
            role=Role.USER,
            kind=MessageKind.TOOL_RESULTS,
            tool_results=results,
        )

    @classmethod
    def cancelled_tool_uses(
        cls,
        calls: tuple[ToolCall, ...],
        *,
        parent_id: str | None,
        reason: str = "",
        completed: tuple[ToolResult, ...] = (),
        id: str | None = None,
    ) -> Message:
        """Results for calls the user refused or interrupted.

        ``completed`` holds results of calls in the same round that did run, so one
        message still answers every call of the assistant message before it.
        """
        done = {r.call_id for r in completed}
        cancelled = tuple(cancelled_result(c, reason) for c in calls if c.id not in done)
        return cls(
            id=id or new_id(),
            parent_id=parent_id,
            role=Role.USER,
            kind=MessageKind.CANCELLED_TOOL_USES,
            text=reason,
            tool_results=completed + cancelled,
        )

    @classmethod
    def reply(
        cls,
        *,
        parent_id: str | None,
        text: str = "",
        tool_calls: tuple[ToolCall, ...] = (),
        status: MessageStatus = MessageStatus.STREAMING,
        metadata: RequestMetadata | None = None,
        id: str | None = None,
    ) -> Message:
        return cls(
            id=id or new_id(),
            parent_id=parent_id,
            role=Role.ASSISTANT,
            kind=MessageKind.TOOL_CALLS if tool_calls else MessageKind.RESPONSE,
            text=text,
            tool_calls=tool_calls,
            status=status,
            metadata=metadata,
        )

    @classmethod
    def summary(
        cls, text: str, *, parent_id: str | None, summarised_through: str, id: str | None = None
    ) -> Message:
        return cls(
            id=id or new_id(),
            parent_id=parent_id,
            role=Role.USER,
            kind=MessageKind.SUMMARY,
            text=text,
            summarised_through=summarised_through,
        )

    @classmethod
    def marker_message(cls, marker: Marker, *, parent_id: str | None, id: str | None = None) -> Message:
        """A marker: shown as a divider, kept in history, never sent to a model."""
        return cls(
            id=id or new_id(),
            parent_id=parent_id,
            role=Role.USER,
            kind=MessageKind.MARKER,
            text=marker.label,
            marker=marker,
        )

    # -- queries ------------------------------------------------------------------

    @property
    def is_user(self) -> bool:
        return self.role is Role.USER and self.kind not in RECORD_KINDS

    @property
    def is_marker(self) -> bool:
        return self.kind is MessageKind.MARKER

    @property
    def is_assistant(self) -> bool:
        return self.role is Role.ASSISTANT

    @property
    def is_prompt(self) -> bool:
        return self.kind is MessageKind.PROMPT

    @property
    def has_tool_results(self) -> bool:
        return bool(self.tool_results)

    def copy(self, **changes: Any) -> Message:
        return replace(self, **changes)


def interrupted_result(call: ToolCall) -> ToolResult:
    """The error result that stands for a call Threadline stopped while it ran (a crash, a kill)."""
    return ToolResult(call_id=call.id, text=INTERRUPTED_RESULT_TEXT, is_error=True, tool_name=call.name)


def unanswered_result(call: ToolCall) -> ToolResult:
    """The error result of a call nothing answers (the process stopped before its round was stored)."""
    return ToolResult(call_id=call.id, text=UNANSWERED_RESULT_TEXT, is_error=True, tool_name=call.name)


def stopped_result(call: ToolCall, seconds: float) -> ToolResult:
    """The error result of a call the user stopped while it ran, saying how long it had run.

    Not "cancelled": the tool did start (a command ran and was killed), so the person
    and the model are told it may have done part of its work (docs/message-actions.md).
    """
    text = STOPPED_RESULT_TEXT + duration_text(seconds) + _STOPPED_TAIL
    return ToolResult(call_id=call.id, text=text, is_error=True, tool_name=call.name)


def stopped_after(result: ToolResult) -> str | None:
    """How long a call the user stopped had run ("3 s"), or ``None`` for any other result."""
    if not (result.is_error and result.text.startswith(STOPPED_RESULT_TEXT)):
        return None
    rest = result.text[len(STOPPED_RESULT_TEXT) :]
    end = rest.find(",")
    return rest[:end] if end > 0 else None


def duration_text(seconds: float) -> str:
    """A short elapsed time: "less than 1 s", "3 s", "2 min 5 s"."""
    whole = round(seconds)
    if whole < 1:
        return "less than 1 s"
    if whole < 60:
        return f"{whole} s"
    minutes, rest = divmod(whole, 60)
    return f"{minutes} min {rest} s" if rest else f"{minutes} min"


def cancelled_result(call: ToolCall, reason: str = "") -> ToolResult:
    """The error result that stands for a call that never ran.

    "Cancelled by the user" only when someone could have been asked: a round refused
    because nobody could approve it says so instead (``NOT_ASKED_RESULT_TEXT``).
    """
    if NOT_ASKED_RESULT_TEXT in reason:
        text = reason
    else:
        text = CANCELLED_RESULT_TEXT + (f" Reason: {reason}" if reason else "")
    return ToolResult(call_id=call.id, text=text, is_error=True, tool_name=call.name)


def never_ran(result: ToolResult) -> bool:
    """A result standing for a call that was refused or stopped before it ran (not a tool's error)."""
    return result.is_error and (
        result.text.startswith(CANCELLED_RESULT_TEXT) or NOT_ASKED_RESULT_TEXT in result.text
    )


class TextShape(NamedTuple):
    """What a guessed row height needs of a message, which a packed one gives without being
    made (``ConversationTree.text_shape``)."""

    kind: MessageKind
    chars: int
    line_breaks: int
    parts: int
    """Tool calls and tool results."""


def written_length(message: Message) -> int:
    """Characters a reply wrote: its text and its tool calls' arguments (what estimates its
    output tokens when the provider did not count them)."""
    return len(message.text) + sum(len(c.arguments) for c in message.tool_calls)


def text_size(message: Message) -> tuple[int, int, int]:
    """The ``chars``, ``line_breaks`` and ``parts`` of ``message``'s ``TextShape``."""
    text = message.text
    return len(text), text.count("\n"), len(message.tool_calls) + len(message.tool_results)


def text_shape(message: Message) -> TextShape:
    return TextShape(message.kind, *text_size(message))


class TextShapes:
    """``TextShape``s of many messages in columns, kinds as the shared enum members and numbers
    in ``array``s: a whole long chat's shapes without an object per message (``None``: a row
    whose message is unknown)."""

    __slots__ = ("chars", "kinds", "line_breaks", "parts")

    def __init__(self) -> None:
        self.kinds: list[MessageKind | None] = []
        self.chars = array("q")
        self.line_breaks = array("q")
        self.parts = array("q")

    def __len__(self) -> int:
        return len(self.kinds)

    def add(self, kind: MessageKind | None, chars: int = 0, line_breaks: int = 0, parts: int = 0) -> None:
        self.kinds.append(kind)
        self.chars.append(chars)
        self.line_breaks.append(line_breaks)
        self.parts.append(parts)
