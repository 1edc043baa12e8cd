"""Which buttons a message's footer offers, and their labels.

Decided from the message and whether a turn is running, so the footer the view paints
and the context menu it opens offer the same actions.
"""

from __future__ import annotations

from threadline.core.messages import Message, MessageKind, MessageStatus
from threadline.ui.chat.view.context_marks import SUMMARY_TOGGLE_ACTION
from threadline.ui.chat.view.source_list import SOURCES_ACTION
from threadline.ui.chat.view.thinking_block import TOGGLE_THINKING_ACTION

TANGENT_HERE = "tangent_here"
CHECKPOINT_HERE = "checkpoint_here"
CONTROL_ACTIONS = (TANGENT_HERE, CHECKPOINT_HERE)
"""Menu actions that start a tangent from a message or name it as a checkpoint (the tab does them)."""

ACTION_LABELS = {
    "copy": "Copy",
    "edit": "Edit",
    "regenerate": "Regenerate",
    "retry": "Retry",
    "continue": "Continue",
    "prev_version": "‹",
    "next_version": "›",
}

COMPARE_VERSIONS = "compare_versions"
"""Show a prompt's replies side by side (a reply with other versions offers it)."""

READ_ALOUD = "read_aloud"
"""Read a reply aloud, or stop when it is being read (the window's voice does it: ``ui/voice``)."""

VERSION = "version"
"""Not a button but the place of the ‹ n / m › version switcher."""


def actions_for(message: Message, *, busy: bool, version_count: int) -> list[str]:
    """The footer's actions for ``message``, in order; ``busy`` while a turn is running."""
    if message.is_marker:  # a divider: nothing to copy, edit or ask again
        return [VERSION] if version_count > 1 else []
    actions = ["copy"] if message.text else []
    if message.kind is MessageKind.PROMPT and not busy:
        actions.append("edit")
    if is_editable_reply(message) and not busy:
        actions.append("edit")  # a new version with the person's text; nothing is sent
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


MENU_ONLY = (
    "copy_markdown",
    "copy_chat_markdown",
    READ_ALOUD,
    "delete",
    COMPARE_VERSIONS,
    SUMMARY_TOGGLE_ACTION,
    TOGGLE_THINKING_ACTION,
    *CONTROL_ACTIONS,
)
"""Actions of a message's context menu (and keys) that its footer does not show."""


def is_editable_reply(message: Message) -> bool:
    """A finished reply with text and no tool calls can be rewritten as a new version."""
    return (
        message.is_assistant
        and bool(message.text)
        and not message.tool_calls
        and message.status is not MessageStatus.STREAMING
    )


def menu_actions_for(message: Message, *, busy: bool, versions: int = 1) -> list[str]:
    """The menu-only actions for ``message``: copy it or the chat as Markdown, delete it (not mid-turn);
    a reply with other versions (``versions``) can be compared with them side by side."""
    actions = ["copy_chat_markdown"] if message.is_marker else ["copy_markdown", "copy_chat_markdown"]
    if message.kind is MessageKind.SUMMARY:
        actions.insert(0, SUMMARY_TOGGLE_ACTION)
    if message.is_assistant and message.reasoning:
        actions.insert(0, TOGGLE_THINKING_ACTION)
    if message.is_assistant and message.text and message.status is not MessageStatus.STREAMING:
        actions.append(READ_ALOUD)
    if message.sources:
        actions.insert(0, SOURCES_ACTION)
    if not busy and message.is_assistant and versions > 1:
        actions.append(COMPARE_VERSIONS)
    if not busy and not message.is_marker:
        actions += CONTROL_ACTIONS  # a tangent or a checkpoint from this message
    if not busy:
        actions.append("delete")
    return actions
