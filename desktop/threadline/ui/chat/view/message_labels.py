"""The words around a message's body: who spoke, when, and a short status label.

Pure functions of the message (and the theme's colour strings), so the header a row
paints is decided — and tested — apart from the painting.
"""

from __future__ import annotations

from datetime import datetime

from threadline.core.messages import Message, MessageKind, MessageStatus
from threadline.core.usage import PriceLookup, describe, live_usage, reply_usage
from threadline.ui.chat.view.context_marks import SUMMARY_TITLE, marker_label
from threadline.ui.common.theme import ThemeColors


def speaker(message: Message) -> str:
    """Who a message is from: "You", the model that answered, or what kind of record it is."""
    if message.kind is MessageKind.SUMMARY:
        return SUMMARY_TITLE
    if message.marker is not None:
        return marker_label(message)
    if message.kind in (MessageKind.TOOL_RESULTS, MessageKind.CANCELLED_TOOL_USES):
        return "Tool results"
    if message.is_user:
        return "You"
    model = message.metadata.model if message.metadata else ""
    return model or (message.metadata.provider if message.metadata else "") or "Assistant"


def time_label(message: Message) -> str:
    """The local time a message was created (``14:05``)."""
    when: datetime = message.created_at
    try:
        local = when.astimezone()
    except (ValueError, OSError):
        local = when
    return local.strftime("%H:%M")


def status_text(message: Message) -> str:
    """A short word for a reply that is not simply complete ("" when complete).

    A failed reply says only "Failed" here: the reason is in its body (and the tab's banner).
    """
    s = message.status
    if s is MessageStatus.STREAMING:
        # A tool round's answer is "streaming" while its tools run (stored before they start).
        return "Running…" if message.kind is MessageKind.TOOL_RESULTS else "Streaming…"
    if s is MessageStatus.CANCELLED:
        return "Stopped"
    if s is MessageStatus.INTERRUPTED:
        return "Interrupted"
    if s is MessageStatus.FAILED:
        return "Failed"
    return ""


def status_label(message: Message, c: ThemeColors) -> tuple[str, str]:
    """The status word of ``message`` (see :func:`status_text`) and the colour it is painted in."""
    colours = {
        MessageStatus.STREAMING: c.accent,
        MessageStatus.CANCELLED: c.warning,
        MessageStatus.INTERRUPTED: c.warning,
        MessageStatus.FAILED: c.error_text,
    }
    text = status_text(message)
    return text, colours.get(message.status, c.muted) if text else c.muted


def usage_label(message: Message, price_of: PriceLookup | None, now: datetime) -> str:
    """A reply's tokens, speed and cost for its header ("" for other messages).

    While the reply streams the figures are live estimates (≈); once it ends they
    are the provider's report, or marked estimates when the server sent none.
    """
    if message.status is MessageStatus.STREAMING:
        usage = live_usage(message, now)
    else:
        usage = reply_usage(message, price_of or _no_price)
    return describe(usage) if usage is not None else ""


def _no_price(provider: str, model: str) -> None:
    return None
