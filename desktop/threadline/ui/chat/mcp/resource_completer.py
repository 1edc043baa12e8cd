"""``@`` in the composer: the MCP servers' resources and templates by name, to attach one.

A list floats above the message box (as the ``/`` list does, ``slash_completer``) while the
word at the cursor starts with ``@``; it shows the resources and templates whose name, title
or URI starts with what follows (or holds it), and never takes the keyboard: Up/Down move,
Tab or Enter pick, Esc closes. Picking removes the ``@word`` and hands the entry to the
tab's ``ChatMcp``: a resource is attached, a template opens the browser on its form.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QPoint, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QFrame, QListWidget, QListWidgetItem, QPlainTextEdit, QVBoxLayout, QWidget

from threadline.core.mcp_catalog import ResourceInfo, ResourceTemplateInfo
from threadline.ui.common.announce import announce

Entry = ResourceInfo | ResourceTemplateInfo
_AT_WORD = re.compile(r"(?:^|\s)@(\S*)$")
EntryRole = Qt.ItemDataRole.UserRole + 1
MAX_WIDTH = 560
MAX_SHOWN = 50


def at_prefix(text_before_cursor: str) -> str | None:
    """What follows the ``@`` of the word at the cursor, or ``None`` when it is not such a word."""
    match = _AT_WORD.search(text_before_cursor)
    return match.group(1) if match else None


def matching(entries: list[Entry], prefix: str) -> list[Entry]:
    """Entries whose name, title or URI starts with ``prefix`` first, then those that hold it."""
    wanted = prefix.lower()

    def keys(entry: Entry) -> list[str]:
        uri = entry.uri_template if isinstance(entry, ResourceTemplateInfo) else entry.uri
        return [entry.name.lower(), entry.title.lower(), uri.lower()]

    starts = [e for e in entries if any(k.startswith(wanted) for k in keys(e))]
    holds = [e for e in entries if e not in starts and any(wanted in k for k in keys(e))]
    return (starts + holds)[:MAX_SHOWN]


def entry_text(entry: Entry) -> str:
    if isinstance(entry, ResourceTemplateInfo):
        return f"@{entry.label}  ·  template  ·  {entry.server}"
    return f"@{entry.label}  ·  {entry.server}  ·  {entry.uri}"


class ResourceCompleter(QFrame):
    """The ``@`` list for ``edit``: ``entries()`` gives what can be attached, ``picked(entry)``
    is told the choice."""

    def __init__(
        self,
        edit: QPlainTextEdit,
        parent: QWidget,
        entries: Callable[[], list[Entry]],
        picked: Callable[[Entry], None],
    ) -> None:
        super().__init__(parent)
        self.setObjectName("SlashCompleter")  # the same look as the "/" list
        self.setAccessibleName("MCP resources")
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self._edit = edit
        self._entries = entries
        self._picked = picked
        self._dismissed_at: str | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.list = QListWidget()
        self.list.setObjectName("SlashCommandList")
        self.list.setAccessibleName("MCP resources")
        self.list.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.list.itemClicked.connect(lambda item: self.pick(item.data(EntryRole)))
        layout.addWidget(self.list)
        self.hide()
        edit.textChanged.connect(self.follow_text)
        edit.cursorPositionChanged.connect(self.follow_text)
        edit.installEventFilter(self)

    def shown(self) -> list[Entry]:
        return [self.list.item(i).data(EntryRole) for i in range(self.list.count())]

    def follow_text(self) -> None:
        """Open, fill or close the list for the word at the cursor."""
        text = self._edit.toPlainText()
        if text != self._dismissed_at:
            self._dismissed_at = None
        before = text[: self._edit.textCursor().position()]
        prefix = at_prefix(before)
        found = matching(self._entries(), prefix) if prefix is not None and self._dismissed_at is None else []
        if not found or not self._edit.isVisible():
            self.hide()
            return
        if found != self.shown():
            self.list.clear()
            for entry in found:
                item = QListWidgetItem(entry_text(entry))
                item.setData(EntryRole, entry)
                item.setToolTip(entry.description)
                self.list.addItem(item)
            self.list.setCurrentRow(0)
        self._place()
        if not self.isVisible():
            self.show()
            self.raise_()
            announce(self, f"{len(found)} MCP resources; Up and Down choose, Tab attaches")

    def _place(self) -> None:
        parent = self.parentWidget()
        assert parent is not None
        rows = sum(self.list.sizeHintForRow(i) for i in range(self.list.count()))
        height = rows + 2 * self.list.frameWidth() + 2
        width = min(self._edit.width(), MAX_WIDTH)
        corner = self._edit.mapTo(parent, QPoint(0, 0))
        room = corner.y() - 6
        if room > 0:
            height = min(height, room)
        self.setGeometry(corner.x(), max(0, room - height), width, height)

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
            self._dismissed_at = self._edit.toPlainText()
            self.hide()
            return True
        if key in (Qt.Key.Key_Tab, Qt.Key.Key_Return, Qt.Key.Key_Enter):
            item = self.list.currentItem()
            if item is None:
                return False
            self.pick(item.data(EntryRole))
            return True
        return False

    def pick(self, entry: Entry) -> None:
        """Remove the ``@word`` at the cursor, close, and hand ``entry`` on."""
        cursor = self._edit.textCursor()
        before = self._edit.toPlainText()[: cursor.position()]
        prefix = at_prefix(before)
        if prefix is not None:
            cursor.movePosition(cursor.MoveOperation.Left, cursor.MoveMode.KeepAnchor, len(prefix) + 1)
            cursor.removeSelectedText()
            self._edit.setTextCursor(cursor)
        self.hide()
        self._picked(entry)
