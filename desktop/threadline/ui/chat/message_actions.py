"""Which buttons a message's footer offers, and their labels.

Decided from the message and whether a turn is running, so the footer the view paints
and the context menu it opens offer the same actions.
"""

from __future__ import annotations

from threadline.core.messages import Message, MessageKind, MessageStatus

ACTION_LABELS = {
    "copy": "Copy",
    "edit": "Edit",
    "regenerate": "Regenerate",
    "retry": "Retry",
    "continue": "Continue",
    "prev_version": "‹",
    "next_version": "›",
}

VERSION = "version"
"""Not a button but the place of the ‹ n / m › version switcher."""


def actions_for(message: Message, *, busy: bool, version_count: int) -> list[str]:
    """The footer's actions for ``message``, in order; ``busy`` while a turn is running."""
    if message.is_marker:  # a divider: nothing to copy, edit or ask again
        return [VERSION] if version_count > 1 else []
    actions = ["copy"] if message.text else []
    if message.kind is MessageKind.PROMPT and not busy:
        actions.append("edit")
    if message.is_assistant and not busy and message.status is not MessageStatus.STREAMING:
        # A failed reply is asked again ("Retry": a new version of it); a stopped one can also
        # be continued from the text it has.
        actions.append("retry" if message.status is MessageStatus.FAILED else "regenerate")
        stopped = message.status in (MessageStatus.CANCELLED, MessageStatus.INTERRUPTED)
        if stopped and not message.tool_calls and message.text:
            actions.insert(actions.index("regenerate"), "continue")
    if version_count > 1:
        actions.append(VERSION)
    return actions
