"""Compaction policy: what to summarise, what stays word for word, and how to ask for the
summary in requests that each fit the model's window (docs/design.md, "Compaction").

Compaction replaces the older part of the path, in what is *sent*, by a summary message; the
originals stay in storage and in search. What stays verbatim is the newest turns, as many as
the caller asks for and the window leaves room for (never fewer than the latest). The rest is
read as excerpts — old tool output pruned, very long messages clipped — and summarised in
pieces: each piece's request carries the summary so far and as many excerpts as fit, a message
too long for one piece is split across several, and a summary that grows too big for the next
piece to fit beside it is first summarised itself. So a small window (a local server started
with 512 tokens) compacts a long chat instead of failing on one request too big for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from threadline.core.messages import Message, MessageKind, MessageStatus, Role
from threadline.core.request import BuiltRequest, SentMessage, split_at_summary, tokens_for_chars

SUMMARY_SYSTEM = (
    "You write faithful, compact summaries of conversations so they can continue without the "
    "original messages. Keep decisions, facts, names, numbers, file paths, code identifiers, open "
    "questions and the user's preferences. Do not invent anything. Write in the conversation's language."
)

MESSAGE_CHARS = 6000
"""Characters of one message a summary is given; the rest is named as left out."""
TOOL_OUTPUT_CHARS = 400
"""Characters of one old tool result a summary is given (old tool output is pruned first)."""
TOOL_ARGUMENT_CHARS = 200
"""Characters of one tool call's arguments a summary is given."""
CHARS_PER_TOKEN = 4
"""The estimate's rule (``tokens_for_chars``), used the other way: the characters a number of
tokens leaves room for."""
SUMMARY_SHARE = 3
"""A summary is asked to be at most a third of what one request may hold, so the next piece
has room beside it and the summary's own output fits the window."""
MIN_PIECE_CHARS = 400
"""Fewer characters of new conversation than this beside the summary so far, and the summary
is condensed first: a piece must move the summary forward by more than a line."""


class NothingToCompactError(Exception):
    """The path is too short: everything is already among the turns kept verbatim."""

    user_message = "There is nothing to compact yet: the conversation only has its latest turns."


@dataclass(frozen=True, slots=True)
class CompactionPlan:
    summarised_through: str
    """The last message the summary stands for."""
    messages: tuple[Message, ...]
    """What the summary is written from, oldest first."""
    previous_summary: str
    kept: tuple[Message, ...] = ()
    """The newest turns, sent word for word after the summary."""

    def excerpts(self) -> list[str]:
        """The planned messages as the summary requests quote them, oldest first."""
        return [text for m in self.messages if (text := excerpt(m))]


def plan_compaction(
    path: Sequence[Message], *, keep_turns: int = 2, keep_tokens: int | None = None
) -> CompactionPlan:
    """Summarise everything before the newest turns kept verbatim (and after the last summary).

    ``keep_turns`` is the most turns kept; with ``keep_tokens`` (what the window leaves for
    them), fewer are kept when those do not fit, but never fewer than one: the latest turn is
    the one being answered.
    """
    previous, body = split_at_summary(path)
    starts = [i for i, m in enumerate(body) if m.kind is MessageKind.PROMPT]
    keep = min(keep_turns, len(starts)) if keep_turns > 0 else 0
    if keep_tokens is not None:
        while keep > 1 and sum(message_tokens(m) for m in body[starts[-keep] :]) > keep_tokens:
            keep -= 1
    cut = starts[-keep] if keep else len(body)
    older = [m for m in body[:cut] if m.status is not MessageStatus.STREAMING]
    if not older:
        raise NothingToCompactError(NothingToCompactError.user_message)
    return CompactionPlan(
        summarised_through=older[-1].id,
        messages=tuple(older),
        previous_summary=previous.text if previous else "",
        kept=tuple(body[cut:]),
    )


def message_tokens(message: Message) -> int:
    """The estimated tokens ``message`` takes when sent: its text, tool calls and results, files."""
    chars = len(message.text) + sum(len(c.arguments) + len(c.name) for c in message.tool_calls)
    chars += sum(len(r.text) for r in message.tool_results)
    chars += sum(len(c.text) for c in message.context)
    return tokens_for_chars(chars)


def summary_request(
    previous_summary: str,
    piece: Sequence[str],
    instructions: str = "",
    *,
    words: int | None = None,
) -> BuiltRequest:
    """The one-message request that adds ``piece`` (excerpts) to the summary so far."""
    parts: list[str] = []
    if previous_summary:
        parts.append(f"Summary so far:\n{previous_summary}")
    parts.append("Conversation to add to the summary:")
    parts.extend(piece)
    ask = "Write the updated summary of the whole conversation so far."
    if words:
        ask += f" Keep it under {words} words."
    if instructions:
        ask += f" Follow these instructions from the user: {instructions}"
    parts.append(ask)
    return _request("\n\n".join(p for p in parts if p))


def condense_request(summary: str, words: int, instructions: str = "") -> BuiltRequest:
    """A summary of the summary: asked when the summary so far leaves no room for the next piece."""
    ask = f"Shorten this summary of a conversation to under {words} words, keeping what matters most."
    if instructions:
        ask += f" Follow these instructions from the user: {instructions}"
    return _request(f"Summary so far:\n{summary}\n\n{ask}")


def _request(text: str) -> BuiltRequest:
    return BuiltRequest(
        system=SUMMARY_SYSTEM,
        messages=(SentMessage(Role.USER, text=text),),
        estimated_tokens=tokens_for_chars(len(SUMMARY_SYSTEM) + len(text)),
    )


def request_overhead_tokens(instructions: str = "") -> int:
    """What a summary request takes before any summary or excerpt: the system text, the
    framing and the ask (with the longest word limit and the user's instructions)."""
    return summary_request("", (), instructions, words=10**9).estimated_tokens


def smallest_workable_limit(instructions: str = "") -> int:
    """The fewest tokens a summary request (with its summary's output) can work in: the
    overhead, a minimal piece, and the share kept for the summary written."""
    least = request_overhead_tokens(instructions) + tokens_for_chars(MIN_PIECE_CHARS)
    return least * SUMMARY_SHARE // (SUMMARY_SHARE - 1) + 1


def words_for(tokens: int) -> int:
    """The word limit to ask a summary for, so that it takes about ``tokens``."""
    return max(20, tokens * 3 // 4)


def take_piece(excerpts: Sequence[str], room_chars: int) -> tuple[list[str], list[str]]:
    """The next piece of at most ``room_chars`` characters, and the excerpts after it.

    Whole excerpts while they fit; an excerpt longer than the room on its own is split at a
    space (the rest goes on, marked as continued, in the next piece), so no single message
    is ever too long to be summarised.
    """
    piece: list[str] = []
    used = 0
    for index, text in enumerate(excerpts):
        joint = 2 if piece else 0  # the blank line between excerpts
        if used + joint + len(text) <= room_chars:
            piece.append(text)
            used += joint + len(text)
            continue
        if piece:
            return piece, list(excerpts[index:])
        head, tail = _split(text, room_chars)
        return [head], [f"{CONTINUED}{tail}", *excerpts[index + 1 :]]
    return piece, []


def _split(text: str, limit: int) -> tuple[str, str]:
    """``text`` cut at the last space within ``limit - len(" …")`` characters (anywhere if none),
    never inside the "(continued) " a split put in front, so that each cut moves forward."""
    room = max(limit - 2, 1)
    start = len(CONTINUED) if text.startswith(CONTINUED) else 0
    cut = text.rfind(" ", max(room // 2, start + 1), room)
    cut = cut if cut > start else max(room, start + 1)
    return text[:cut].rstrip() + " …", text[cut:].lstrip()


CONTINUED = "(continued) "
"""What starts the rest of an excerpt too long for one piece."""


def excerpt(message: Message) -> str:
    """How a message reads inside a summary request ("" for summaries and markers)."""
    if message.kind is MessageKind.SUMMARY or message.kind is MessageKind.MARKER:
        return ""
    if message.tool_results:
        lines = [
            f"[tool result {r.tool_name or r.call_id}{' (error)' if r.is_error else ''}]: "
            + _clip(r.text, TOOL_OUTPUT_CHARS)
            for r in message.tool_results
        ]
        return "\n".join(lines)
    who = "User" if message.role is Role.USER else "Assistant"
    text = _clip(message.text, MESSAGE_CHARS)
    calls = "".join(
        f"\n[called tool {c.name} with {_clip(c.arguments, TOOL_ARGUMENT_CHARS)}]" for c in message.tool_calls
    )
    files = "".join(f"\n[attached file {c.name}]" for c in message.context)
    return f"{who}: {text}{calls}{files}".rstrip()


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + f" […{len(text) - limit} characters left out]"
