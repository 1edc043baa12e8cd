"""What the chat shows of the conversation controls: which rows are no longer sent, how a
summary, a cleared context or a tangent reads, and which messages carry checkpoints.

Pure functions of messages (and the theme's colour strings), so the chat view, the row
painter, the HTML of a summary and the accessible names all say the same thing.

Rows above the context's start stay in the chat — nothing is deleted — but are painted
dimmed: a later request carries a summary in their place, or nothing at all after a clear.
Only the latest clear and the latest summary after it count, as for the request itself.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from threadline.core.messages import Message, MessageKind
from threadline.core.tree import TANGENT_CHECKPOINT, ConversationTree
from threadline.ui.common.theme import ThemeColors, mix

SUMMARY_TITLE = "Earlier messages summarised"
CLEAR_LABEL = "Context cleared — earlier messages are not sent"
TANGENT_LABEL = "Tangent — a side conversation starts here"
SUMMARY_TOGGLE_ACTION = "toggle_summary"
"""The message command that opens or closes a summary (its footer link does the same)."""

CLEAR_TYPE = "clear"
TANGENT_TYPE = "tangent"
"""``MarkerType`` values of the dividers drawn here (compared by value: a marker read from
an older or newer file keeps its type's value)."""

_MARKUP = re.compile(r"[*_`#>]+")
"""Markdown emphasis, code, heading and quote marks: left out of a summary's one-line preview."""

NOT_SENT_OPACITY = 0.5
"""Rows that are no longer sent are painted at this opacity (still readable, clearly set back)."""


SUMMARY_NOTE = "sent in place of the set-back messages above"


def record_note(message: Message) -> str:
    """A quiet note for a summary's header: what it stands for ("" for other messages)."""
    return SUMMARY_NOTE if message.kind is MessageKind.SUMMARY else ""


def named_checkpoints(tree: ConversationTree) -> Mapping[str, str]:
    """The user's checkpoints (name → message id), without a tangent's own return point."""
    named: Mapping[str, str] | None = getattr(tree, "named_checkpoints", None)
    if named is not None:
        return named
    return {name: target for name, target in tree.checkpoints.items() if name != TANGENT_CHECKPOINT}


def tangent_origin(tree: ConversationTree) -> str | None:
    """Where the open tangent returns to on the main line; None when not in a tangent."""
    if hasattr(tree, "tangent_origin"):
        origin: str | None = tree.tangent_origin
        return origin
    return tree.checkpoints.get(TANGENT_CHECKPOINT)


def summary_key(message_id: str) -> str:
    """The view's expanded-set key of a summary (``<message id>:summary``), like a tool box's."""
    return f"{message_id}:summary"


def marker_type(message: Message) -> str:
    return message.marker.type.value if message.marker is not None else ""


def is_clear(message: Message) -> bool:
    return marker_type(message) == CLEAR_TYPE


def is_tangent(message: Message) -> bool:
    return marker_type(message) == TANGENT_TYPE


def marker_label(message: Message) -> str:
    """The divider's text: a sentence for a clear or a tangent, the marker's own label otherwise."""
    if is_clear(message):
        return CLEAR_LABEL
    if is_tangent(message):
        return TANGENT_LABEL
    return message.marker.label if message.marker is not None else message.text


def first_sent_row(
    count: int, message_at: Callable[[int], Message | None], row_of: Callable[[str], int]
) -> int:
    """The first row a request still carries; rows above it are summarised or cleared.

    Scans up from the last row to the latest clear (nothing before it counts) and takes
    the latest summary below it: the rows up to the summary's ``summarised_through`` are
    what the summary stands for. ``0`` when neither is on the path.
    """
    start = 0
    summary_start = 0
    for row in range(count - 1, -1, -1):
        message = message_at(row)
        if message is None:
            continue
        if message.kind is MessageKind.SUMMARY and not summary_start and message.summarised_through:
            covered = row_of(message.summarised_through)
            summary_start = covered + 1 if covered >= 0 else 0
        elif is_clear(message):
            start = row + 1
            break
    return max(start, summary_start)


def summarised_count(count: int, message_at: Callable[[int], Message | None], summary_row: int) -> int:
    """How many messages (not dividers) a summary at ``summary_row`` stands for."""
    summary = message_at(summary_row)
    if summary is None or not summary.summarised_through:
        return 0
    n = 0
    for row in range(summary_row - 1, -1, -1):
        message = message_at(row)
        if message is None:
            continue
        if n or message.id == summary.summarised_through:
            if is_clear(message):
                break
            if message.kind is not MessageKind.MARKER:
                n += 1
    return n


def checkpoints_by_message(named: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """Checkpoint names by the message they name (a message may carry several), sorted."""
    out: dict[str, list[str]] = {}
    for name, message_id in named.items():
        out.setdefault(message_id, []).append(name)
    return {mid: tuple(sorted(names, key=str.casefold)) for mid, names in out.items()}


def excerpt(message: Message, limit: int = 70) -> str:
    """One line of a message to recognise it by in a list (its text, else what it is)."""
    text = " ".join(message.text.split())
    if not text:
        if message.tool_calls:
            text = "Tool call: " + ", ".join(c.name for c in message.tool_calls)
        elif message.tool_results:
            text = "Tool results"
        elif message.marker is not None:
            text = marker_label(message)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@dataclass(frozen=True, slots=True)
class MarkColours:
    """The colours of the controls' marks in one theme."""

    tangent: str
    """The tangent's own hue (its banner and divider): apart from the accent, errors and warnings."""
    tangent_bg: str
    summary_bg: str
    summary_bar: str
    badge_bg: str
    badge_text: str


def mark_colours(c: ThemeColors) -> MarkColours:
    if c.high_contrast:
        tangent = c.text
    else:
        tangent = "#c4a7ff" if c.dark else "#7a4ccf"
    return MarkColours(
        tangent=tangent,
        tangent_bg=c.base if c.high_contrast else _mixed(tangent, c.base, 0.16 if c.dark else 0.09),
        summary_bg=c.surface if c.high_contrast else _mixed(c.accent, c.base, 0.10 if c.dark else 0.05),
        summary_bar=c.accent,
        badge_bg=c.base if c.high_contrast else _mixed(c.accent, c.base, 0.18 if c.dark else 0.12),
        badge_text=c.text if c.high_contrast else c.link,
    )


def _mixed(colour: str, base: str, amount: float) -> str:
    return str(mix(colour, base, amount).name())


def summary_html(message: Message, c: ThemeColors, expanded: bool, body_html: str) -> str:
    """A summary's body: one line that opens it (with the summary's first words), or the
    line that closes it and the summary itself (``body_html``, its Markdown rendered)."""
    link = (
        f'<a href="toggle:{html.escape(summary_key(message.id), quote=True)}" style="text-decoration:none;">'
    )
    if expanded:
        return f"<p>{link}▾ Hide the summary</a></p>{body_html}"
    first = " ".join(_MARKUP.sub("", message.text).split())
    first = first if len(first) <= 110 else first[:109].rstrip() + "…"
    return (
        f"<p>{link}▸ Show the summary</a>"
        f'&nbsp;&nbsp;<span style="color:{c.muted};">{html.escape(first)}</span></p>'
    )
