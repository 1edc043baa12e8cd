"""The list of slash commands that opens when ``/`` starts the composer's text.

It floats just above the message box (a child of the chat tab, drawn over the bottom of
the conversation) and never takes the keyboard: the box keeps the focus and the
list follows what is typed. While the text is a single ``/word`` with no space yet,
the list shows the commands whose name starts with that word; a space, a second
line, or text that is not ``/word`` closes it.

Keys while it shows: Up/Down move, Tab or Enter insert the chosen command (with a
space after it when the command takes an argument), Esc closes it. Enter on a command
already typed in full (``/clear``) lets Enter through, so the command runs at once.
Each entry's accessible text is its usage and description, and moving through the
list is announced, since the focus stays in the box.

The MCP servers' prompts are listed after the commands, as ``/server:prompt`` with their
description (``prompts``, set by the tab's ``ChatMcp``); picking one that takes arguments
emits ``promptPicked`` (its form opens) instead of waiting for them to be typed.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from threadline.core.mcp_catalog import PromptInfo
from threadline.core.slash_commands import CommandSpec, matching
from threadline.ui.common.announce import announce

_TYPING_COMMAND = re.compile(r"/([A-Za-z0-9_:-]*)")
GAP = 6
"""Pixels between the list and the message box."""
MAX_WIDTH = 560
SpecRole = Qt.ItemDataRole.UserRole + 1


def typed_prefix(text: str) -> str | None:
    """The command name being typed (``"co"`` for ``/co``), or ``None`` when the list should close."""
    match = _TYPING_COMMAND.fullmatch(text)
    return match.group(1) if match else None


Listed = CommandSpec | PromptInfo
"""An entry of the list: a slash command, or an MCP server's prompt."""


def word(spec: Listed) -> str:
    """The command word without its slash (``compact``, ``everything:args-prompt``)."""
    return spec.command if isinstance(spec, PromptInfo) else str(spec.name)


def completion(spec: Listed) -> str:
    """What picking ``spec`` puts in the box: the command, and a space when an argument may follow."""
    return f"/{word(spec)} " if spec.hint else f"/{word(spec)}"


def _description(spec: Listed) -> str:
    if isinstance(spec, PromptInfo):
        about = spec.description or spec.title or "A prompt"
        return f"{about} (MCP server {spec.server})"
    return spec.description


class _Entry(QWidget):
    """One command: its name and argument hint on the first line, what it does under it."""

    def __init__(self, spec: Listed, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents, True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 4, 10, 4)
        layout.setSpacing(0)
        name = QLabel(f"<b>/{_escape(word(spec))}</b>&nbsp;&nbsp;<span>{_escape(spec.hint)}</span>")
        name.setObjectName("SlashCommandName")
        name.setTextFormat(Qt.TextFormat.RichText)
        description = QLabel(_description(spec))
        description.setObjectName("Hint")
        layout.addWidget(name)
        layout.addWidget(description)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class SlashCompleter(QFrame):
    """The completion list for ``edit``; ``picked(text)`` after a command was inserted."""

    picked = Signal(str)
    promptPicked = Signal(object)
    """An MCP prompt that takes arguments was picked (``PromptInfo``): its form opens."""

    def __init__(self, edit: QPlainTextEdit, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("SlashCompleter")
        self.setAccessibleName("Slash commands")
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self._edit = edit
        self._dismissed_at: str | None = None
        """The text Esc closed the list at: it stays closed until the text changes."""
        self.prompts: Callable[[], list[PromptInfo]] | None = None
        """The MCP prompts to list after the commands (the tab's ``ChatMcp`` sets it)."""
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.list = QListWidget()
        self.list.setObjectName("SlashCommandList")
        self.list.setAccessibleName("Slash commands")
        self.list.setAccessibleDescription("Up and Down choose, Tab or Enter inserts, Escape closes")
        self.list.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.itemClicked.connect(self._clicked)
        self.list.currentItemChanged.connect(self._moved)
        layout.addWidget(self.list)
        self.hide()
        edit.textChanged.connect(self.follow_text)
        edit.installEventFilter(self)

    # -- what is listed ------------------------------------------------------------------

    def specs(self) -> list[Listed]:
        """The commands (and MCP prompts) listed now, in order."""
        return [self.list.item(i).data(SpecRole) for i in range(self.list.count())]

    def current(self) -> Listed | None:
        item = self.list.currentItem()
        spec: Listed | None = None if item is None else item.data(SpecRole)
        return spec

    def _matching(self, prefix: str) -> list[Listed]:
        listed: list[Listed] = list(matching(prefix)) if ":" not in prefix else []
        if self.prompts is not None:
            wanted = prefix.lower()
            listed += [p for p in self.prompts() if p.command.lower().startswith(wanted)]
        return listed

    def follow_text(self) -> None:
        """Open, fill or close the list for the box's text (on every change of it)."""
        text = self._edit.toPlainText()
        if text != self._dismissed_at:
            self._dismissed_at = None
        prefix = typed_prefix(text)
        specs = self._matching(prefix) if prefix is not None and self._dismissed_at is None else []
        if not specs or not self._edit.isVisible():
            self.hide()
            return
        if specs != self.specs():
            self._fill(specs)
        self._place()
        if not self.isVisible():
            self.show()
            self.raise_()
            announce(self, f"{len(specs)} slash commands; Up and Down choose, Tab inserts")

    def _fill(self, specs: list[Listed]) -> None:
        self.list.blockSignals(True)
        self.list.clear()
        for spec in specs:
            item = QListWidgetItem()
            item.setData(SpecRole, spec)
            item.setData(Qt.ItemDataRole.AccessibleTextRole, f"{spec.usage}: {_description(spec)}")
            item.setToolTip(_description(spec))
            entry = _Entry(spec)
            item.setSizeHint(entry.sizeHint())
            self.list.addItem(item)
            self.list.setItemWidget(item, entry)
        self.list.setCurrentRow(0)
        self.list.blockSignals(False)

    def _place(self) -> None:
        """Just above the message box, as wide as it (up to ``MAX_WIDTH``), every entry visible."""
        parent = self.parentWidget()
        assert parent is not None
        rows = sum(self.list.sizeHintForRow(i) for i in range(self.list.count()))
        height = rows + 2 * self.list.frameWidth() + 2
        width = min(self._edit.width(), MAX_WIDTH)
        corner = self._edit.mapTo(parent, QPoint(0, 0))
        room = corner.y() - GAP
        if room > 0:
            height = min(height, room)  # a low window: the list scrolls
        self.setGeometry(corner.x(), max(0, room - height), width, height)

    # -- keys (the box keeps the focus) ------------------------------------------------------

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._edit and self.isVisible():
            if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
                return self._key(event)
            if event.type() == QEvent.Type.FocusOut:
                self.hide()
        return super().eventFilter(watched, event)

    def _key(self, event: QKeyEvent) -> bool:
        key = event.key()
        if event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
            return False
        if key in (Qt.Key.Key_Down, Qt.Key.Key_Up):
            step = 1 if key == Qt.Key.Key_Down else -1
            self.list.setCurrentRow((self.list.currentRow() + step) % self.list.count())
            return True
        if key == Qt.Key.Key_Escape:
            self.dismiss()
            return True
        if key in (Qt.Key.Key_Tab, Qt.Key.Key_Return, Qt.Key.Key_Enter):
            spec = self.current()
            if spec is None:
                return False
            typed = self._edit.toPlainText().strip().lower()
            if (
                key != Qt.Key.Key_Tab
                and typed == f"/{word(spec)}".lower()
                and not isinstance(spec, PromptInfo)
            ):
                self.hide()
                return False  # typed in full: Enter runs it
            self.pick(spec)
            return True
        return False

    def dismiss(self) -> None:
        """Close until the text changes (Esc)."""
        self._dismissed_at = self._edit.toPlainText()
        self.hide()

    def pick(self, spec: Listed) -> None:
        """Put ``spec`` in the box, cursor at the end, and close; a prompt with arguments opens its form."""
        text = completion(spec)
        self._dismissed_at = text  # the list stays closed on the inserted text
        self._edit.setPlainText(text)
        cursor = self._edit.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        self._edit.setTextCursor(cursor)
        self.hide()
        self.picked.emit(text)
        if isinstance(spec, PromptInfo) and spec.arguments:
            self.promptPicked.emit(spec)

    def _clicked(self, item: QListWidgetItem) -> None:
        self.pick(item.data(SpecRole))
        self._edit.setFocus()

    def _moved(self, current: QListWidgetItem | None, _previous: QListWidgetItem | None) -> None:
        if current is not None and self.isVisible():
            spec: Listed = current.data(SpecRole)
            announce(self.list, f"{spec.usage}: {_description(spec)}")
