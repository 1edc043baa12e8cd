"""The keys that act on the chat view's current message, and the menu entries that show them.

One table serves both the keyboard handler and the message's context menu, so the key a
menu entry shows is the key that does it (a key never does something its entry does not
say). Which entries a message offers still comes from ``message_actions.actions_for``;
this module only adds how each is reached from the keyboard.

The keys are single letters or arrows without modifiers because they only act while the
chat view itself has the focus (a list, not a text field): typing in the composer never
reaches them. Even then the letters (and Del) act only on a message the keyboard chose;
after a click in the conversation, typed text goes to the message box (``ChatView``).
Ctrl+C copies as everywhere else.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QKeyCombination, Qt
from PySide6.QtGui import QKeyEvent, QKeySequence

from threadline.ui.chat.changes.header_counts import CHANGES_ACTION, UNDO_CHANGES_ACTION

SELECT_TEXT = "select_text"
"""Not a footer button: open the message's text for reading and selecting with the caret."""


@dataclass(frozen=True, slots=True)
class MessageCommand:
    """One thing the user can do to a message: its menu label and its keys (the first is shown).

    Keys are kept as text and made into ``QKeySequence`` when asked: a key sequence made
    before the application exists crashes Qt, and this table is built at import.
    """

    action: str
    label: str
    key_texts: tuple[str, ...]

    @property
    def keys(self) -> tuple[QKeySequence, ...]:
        return tuple(QKeySequence(k) for k in self.key_texts)

    @property
    def shortcut(self) -> QKeySequence:
        return QKeySequence(self.key_texts[0])


COMMANDS: dict[str, MessageCommand] = {
    c.action: c
    for c in (
        MessageCommand("copy", "Copy", ("Ctrl+C", "C")),
        MessageCommand(SELECT_TEXT, "Select text", ("Return", "Enter")),
        MessageCommand("edit", "Edit", ("E",)),
        MessageCommand("regenerate", "Regenerate", ("R",)),
        MessageCommand("retry", "Retry", ("R",)),
        MessageCommand("continue", "Continue", ("Shift+R",)),
        MessageCommand("prev_version", "Previous version", ("Left", "[")),
        MessageCommand("next_version", "Next version", ("Right", "]")),
        MessageCommand("copy_markdown", "Copy as Markdown", ("M",)),
        MessageCommand("copy_chat_markdown", "Copy conversation as Markdown", ("Shift+M",)),
        MessageCommand("read_aloud", "Read aloud", ("A",)),
        MessageCommand("delete", "Delete", ("Del",)),
        MessageCommand("compare_versions", "Compare versions side by side", ("V",)),
        MessageCommand("toggle_summary", "Show or hide the summary", ("Space",)),
        MessageCommand("toggle_thinking", "Show or hide the thinking", ("Space",)),
        MessageCommand("tangent_here", "Start tangent from here", ("T",)),
        MessageCommand("checkpoint_here", "Set checkpoint here…", ("P",)),
        MessageCommand("sources", "Sources…", ("S",)),
        MessageCommand(CHANGES_ACTION, "Show file changes", ("F",)),
        MessageCommand(UNDO_CHANGES_ACTION, "Undo this turn's file changes…", ("U",)),
    )
}
"""Every command, by action name; labels are the menu's (the footer keeps its short ones)."""


def command_for_key(event: QKeyEvent, offered: list[str]) -> str | None:
    """The action among ``offered`` that the key of ``event`` performs, if any.

    ``regenerate`` and ``retry`` share R: a message offers only one of them.
    """
    pressed = QKeySequence(
        QKeyCombination(event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier, Qt.Key(event.key()))
    )
    for action in offered:
        command = COMMANDS.get(action)
        if command is not None and any(
            pressed.matches(k) == QKeySequence.SequenceMatch.ExactMatch for k in command.keys
        ):
            return action
    return None
