"""The "Thinking…" block above a reply's text: a thinking model's reasoning, kept apart.

While the model thinks, the block is open and shows the end of the reasoning as it
streams under "Thinking… 4 s"; once the answer (or a tool call) begins it closes to one
line, "▸ Thought for 12 s". Its header is a ``toggle:`` link (a click opens or closes
it, like a tool box), and Space on the focused message does the same
(``TOGGLE_THINKING_ACTION`` in the message's menu). The key in the view's expanded set
flips the default: open while thinking, closed after.

Reasoning is model output, so it is escaped and shown as plain text (no Markdown, no
links). A redacted block (Anthropic encrypts some reasoning) has nothing to show and is
counted in a note. Pure HTML strings: tested without a widget.
"""

from __future__ import annotations

import html
from collections.abc import Collection
from datetime import datetime

from threadline.core.messages import Message, MessageStatus, utcnow
from threadline.core.reasoning import thought_label
from threadline.ui.chat.view.markdown import UNSEARCHED
from threadline.ui.common.theme import ThemeColors

TOGGLE_THINKING_ACTION = "toggle_thinking"
"""The message command (Space, and the menu) that opens or closes a reply's thinking."""

STREAM_TAIL_CHARS = 1_200
"""Characters of the reasoning shown while it streams: its end, as it is written."""

OPEN_TEXT_LIMIT = 60_000
"""Characters of the reasoning shown when the block is opened (the rest is in exports)."""


def thinking_key(message_id: str) -> str:
    """The view's expanded-set key of a reply's thinking block (``<message id>:thinking``)."""
    return f"{message_id}:thinking"


def is_thinking(message: Message) -> bool:
    """The reply is streaming and its last reasoning block is still being written."""
    return (
        message.status is MessageStatus.STREAMING
        and bool(message.reasoning)
        and message.reasoning[-1].duration_ms is None
    )


def thinking_open(message: Message, expanded: Collection[str]) -> bool:
    """Whether the block shows its text: open while thinking, closed after, unless toggled."""
    return is_thinking(message) != (thinking_key(message.id) in expanded)


def thinking_label(message: Message, now: datetime | None = None) -> str:
    """The header's words: "Thinking… 4 s" (from the request's start) or "Thought for 12 s"."""
    live = is_thinking(message)
    elapsed = None
    started = message.metadata.started_at if message.metadata else None
    if live and started is not None:
        elapsed = max(0.0, ((now or utcnow()) - started).total_seconds() * 1000)
    return thought_label(message.reasoning, thinking=live, elapsed_ms=elapsed)


def thinking_html(
    message: Message, c: ThemeColors, expanded: Collection[str], now: datetime | None = None
) -> str:
    """The block's HTML ("" for a reply without reasoning)."""
    if not message.reasoning:
        return ""
    live = is_thinking(message)
    open_ = thinking_open(message, expanded)
    key = html.escape(thinking_key(message.id), quote=True)
    arrow = "▾" if open_ else "▸"
    label = html.escape(thinking_label(message, now))
    head = f'<a href="toggle:{key}" style="color:{c.muted}; text-decoration:none;">{arrow} <b>{label}</b></a>'
    rows = f'<p style="margin: 0px;">{head}</p>'
    if open_:
        rows += _body(message, c, tail=live)
    bar = f'<td width="3" style="background-color:{c.code_border};"></td>'
    return (
        '<table width="100%" cellspacing="0" cellpadding="0" style="margin-bottom: 6px;">'
        f'<tr>{bar}<td style="padding: 1px 0px 1px 10px;">{rows}</td></tr></table>'
    )


def _body(message: Message, c: ThemeColors, *, tail: bool) -> str:
    text = "\n\n".join(b.text.strip("\n") for b in message.reasoning if b.text.strip())
    if tail and len(text) > STREAM_TAIL_CHARS:
        text = "…" + text[-STREAM_TAIL_CHARS:]
    elif len(text) > OPEN_TEXT_LIMIT:
        text = text[:OPEN_TEXT_LIMIT] + "\n… (shortened here; the whole of it is in the exports)"
    parts = []
    if text:
        escaped = html.escape(text).replace("\n", "<br/>")
        parts.append(f'<p style="color:{c.muted}; white-space: pre-wrap; margin-top: 4px;">{escaped}</p>')
    redacted = sum(1 for b in message.reasoning if b.redacted)
    if redacted:
        what = "one part" if redacted == 1 else f"{redacted} parts"
        parts.append(
            f'<p{UNSEARCHED} style="color:{c.muted}; margin-top: 4px;">'
            f"<i>The provider encrypted {what} of this "
            "reasoning: it is kept to send back, and cannot be shown.</i></p>"
        )
    return "".join(parts)
