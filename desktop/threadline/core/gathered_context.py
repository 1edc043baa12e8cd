"""Sticky context as gathered for one request: what goes in, what was left out, what went wrong.

Pure parts only: the result types, fitting the candidates into the budget, and the text
block that goes into the system prompt. Reading files and running hooks is
``engine/sticky_context.py``.

**The budget.** Sticky context may take at most a share of the model's context window
(``AgentConfig.context_share``, 75 % by default). Candidates are kept whole, in a stable
order (the agent's sources, the agent's hooks, the session's sources, the session's hooks,
each in the order listed; a folder's or a pattern's files sorted by path): a candidate that
does not fit what is left is left out and named with the reason, and a smaller one after it
may still fit. Nothing is cut in the middle of a file; a hook's output beyond its cap is
cut and the cut is marked in the text itself.

The share is a ceiling: the budget never takes the room the reply, the tool definitions,
the system prompt and the newest turn need (``room``), so on a small window sticky context
shrinks before the conversation stops fitting at all.

**Why in the system prompt.** The block is appended to the agent's system prompt rather
than sent as a leading message: both APIs take a system text apart from the turns, so the
block never disturbs the history's invariants (first message a prompt, roles alternating,
tool results after their calls), it is not dropped when the oldest turns are cut to fit,
and Anthropic can cache it as a prefix. It is derived for each request and never stored as
a history message, so an edit on disk reaches the next request and the stored history
stays what was said.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from threadline.core.messages import Message, MessageKind

CONTEXT_HEADER = (
    "Sticky context: files and command output the user attached to this conversation, read for this request."
)


class ContextOrigin(StrEnum):
    """Whose sticky context a piece comes from."""

    AGENT = "agent"
    SESSION = "session"
    HOOK = "hook"


@dataclass(frozen=True, slots=True)
class ContextCandidate:
    """A file's text or a hook's output, read and accepted, before the budget is applied."""

    label: str
    """What the user sees: the path (``~`` for home) or the hook's label."""
    text: str
    origin: ContextOrigin
    kind: str = "file"
    """``file`` or ``hook``: the element name in the block."""
    source: str = ""
    """The absolute path, or the command, written in the block's header."""


@dataclass(frozen=True, slots=True)
class ContextPiece:
    """A piece of sticky context that is in the request, with its estimated tokens."""

    label: str
    text: str
    tokens: int
    origin: ContextOrigin
    kind: str = "file"
    source: str = ""


@dataclass(frozen=True, slots=True)
class LeftOut:
    """A readable piece that was not sent because the budget was spent."""

    label: str
    reason: str


@dataclass(frozen=True, slots=True)
class ContextProblem:
    """A file that is missing, unreadable or refused, or a hook that failed: not sent."""

    label: str
    reason: str


@dataclass(frozen=True, slots=True)
class GatheredContext:
    """The sticky context of one request; the tab and the meter read it, the request carries ``block``."""

    pieces: tuple[ContextPiece, ...] = ()
    left_out: tuple[LeftOut, ...] = ()
    problems: tuple[ContextProblem, ...] = ()
    budget_tokens: int = 0
    """What sticky context could take: the share of the window."""
    window_tokens: int = 0
    window_known: bool = True
    """``False`` when the model's window is not known and the assumed default was used."""
    block: str = field(default="", repr=False)
    """The text appended to the system prompt (empty when there are no pieces)."""

    @property
    def tokens(self) -> int:
        """Estimated tokens of the whole block as sent."""
        return sum(p.tokens for p in self.pieces) + (estimate(CONTEXT_HEADER) if self.pieces else 0)

    @property
    def has_news(self) -> bool:
        """Whether the tab has something to say (problems or pieces left out)."""
        return bool(self.left_out or self.problems)


Estimator = Callable[[str], int]


def estimate(text: str) -> int:
    """About four characters a token (as ``core.request`` estimates)."""
    return math.ceil(len(text) / 4)


def piece_text(candidate: ContextCandidate | ContextPiece) -> str:
    """One clearly delimited element: ``<file path="…">`` or ``<hook command="…">``."""
    attribute = "path" if candidate.kind == "file" else "command"
    value = (candidate.source or candidate.label).replace('"', "'")
    return f'<{candidate.kind} {attribute}="{value}">\n{candidate.text}\n</{candidate.kind}>'


def fit(
    candidates: Sequence[ContextCandidate],
    budget_tokens: int,
    estimator: Estimator = estimate,
) -> tuple[tuple[ContextPiece, ...], tuple[LeftOut, ...]]:
    """Keep whole candidates in order while they fit ``budget_tokens``; name the others and why."""
    pieces: list[ContextPiece] = []
    left_out: list[LeftOut] = []
    remaining = budget_tokens - estimator(CONTEXT_HEADER)
    for candidate in candidates:
        tokens = estimator(piece_text(candidate))
        if tokens <= remaining:
            pieces.append(
                ContextPiece(
                    candidate.label,
                    candidate.text,
                    tokens,
                    candidate.origin,
                    candidate.kind,
                    candidate.source,
                )
            )
            remaining -= tokens
        else:
            left_out.append(
                LeftOut(
                    candidate.label,
                    f"over budget: needs ≈{tokens:,} tokens, ≈{max(remaining, 0):,} of the "
                    f"{budget_tokens:,} for sticky context were left",
                )
            )
    return tuple(pieces), tuple(left_out)


def render_block(pieces: Sequence[ContextPiece]) -> str:
    """The text appended to the system prompt: a header and one element per piece."""
    if not pieces:
        return ""
    return "\n\n".join([CONTEXT_HEADER, *(piece_text(p) for p in pieces)])


def with_context(system: str, block: str) -> str:
    """The agent's system prompt followed by the sticky context block."""
    if not block:
        return system
    return f"{system}\n\n{block}" if system else block


def budget_for(window_tokens: int, share: float, room: int | None = None) -> int:
    """Tokens sticky context may take: ``share`` (clamped to 0–1) of the window, at most ``room``."""
    budget = int(window_tokens * min(max(share, 0.0), 1.0))
    return max(0, budget if room is None else min(budget, room))


def newest_turn_tokens(path: Sequence[Message], estimator: Estimator = estimate) -> int:
    """Estimated tokens of the path from its last prompt on: what must fit beside sticky context."""
    tokens = 0
    for message in reversed(path):
        tokens += estimator(message.text) + sum(estimator(c.text) for c in message.context)
        tokens += sum(estimator(r.text) for r in message.tool_results)
        if message.kind is MessageKind.PROMPT:
            break
    return tokens
