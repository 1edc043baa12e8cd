"""The "Keyboard shortcuts" sheet (Ctrl+/, Help menu): every key the window answers to.

Built each time it opens from what is really bound: the window's actions and
``QShortcut`` objects (``registered_shortcuts``, grouped by the menu an action sits in)
plus the keys widgets handle themselves, declared as ``KeyHint`` values (``widget_keys``
below; the chat view's come from its command table). A key added to a menu shows up
here without anyone editing this file.

A plain two-column list a screen reader reads row by row ("Close Tab, Ctrl+W"), with
a filter field on top; Esc closes it.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QIcon, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QMenuBar,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from threadline.ui.chat.branch_map.branch_map import key_hints as branch_map_keys
from threadline.ui.chat.view.message_keys import COMMANDS
from threadline.ui.common.shortcuts import KeyHint, ShortcutEntry, plain_text, registered_shortcuts


def widget_keys() -> tuple[KeyHint, ...]:
    """Keys read in widgets' own key handlers (not actions); the chat view's come from its command table.

    Made when asked, not at import: a ``QKeySequence`` made before the application exists crashes Qt.
    """
    messages = "Messages (the conversation has the focus)"
    return (
        KeyHint.of(messages, "Previous / next message", "Up", "Down", "K", "J"),
        KeyHint.of(messages, "First / last message", "Home", "End"),
        *(KeyHint.of(messages, c.label, *c.key_texts) for c in COMMANDS.values()),
        KeyHint.of(messages, "Message menu", "Menu", "Shift+F10"),
        KeyHint.of(messages, "Scroll a wide table sideways", "Shift+Left", "Shift+Right"),
        *branch_map_keys(),
        KeyHint.of("Find in chat", "Next / previous match (in the find field)", "Return", "Shift+Return"),
        KeyHint.of("Find in chat", "Close the find bar", "Esc"),
        KeyHint.of("Composer", "Send the message", "Return"),
        KeyHint.of("Composer", "New line", "Shift+Return"),
        KeyHint.of("Composer", "Stop the reply", "Esc"),
        KeyHint.of("Composer", "Move to the next control", "Tab"),
        KeyHint.of("Chats in the sidebar", "Open the chat", "Return"),
        KeyHint.of("Chats in the sidebar", "Rename", "F2"),
        KeyHint.of("Chats in the sidebar", "Delete", "Del"),
        KeyHint.of("Chats in the sidebar", "Context menu", "Menu", "Shift+F10"),
        KeyHint.of("Tool approval", "Allow once", "Alt+A"),
        KeyHint.of("Tool approval", "Always allow", "Alt+W"),
        KeyHint.of("Tool approval", "Deny", "Alt+D"),
        KeyHint.of("Tool approval", "Allow all", "Alt+L"),
        KeyHint.of("Tool approval", "Deny all", "Alt+N"),
        KeyHint.of("Tool approval", "Stop the reply", "Esc"),
    )


def menu_keys(bar: QMenuBar) -> list[ShortcutEntry]:
    """ "Open the File menu: Alt+F" for each menu of the bar that has a letter (its ``&``): named,
    since whether the letter shows underlined depends on the platform and the style."""
    entries = []
    for top in bar.actions():
        text = top.text()
        at = text.replace("&&", "").find("&")
        if top.menu() is None or at < 0 or at + 1 >= len(text.replace("&&", "")):
            continue
        letter = text.replace("&&", "")[at + 1].upper()
        name = plain_text(text)
        entries.append(ShortcutEntry("Menus", f"Open the {name} menu", (QKeySequence(f"Alt+{letter}"),)))
    return entries


def menu_sections(bar: QMenuBar) -> dict[QAction, str]:
    """Each action of the menu bar's menus, mapped to its top-level menu's name ("File", "View")."""
    sections: dict[QAction, str] = {}

    def walk(menu: QMenu, title: str) -> None:
        for action in menu.actions():
            sub = action.menu()
            if isinstance(sub, QMenu):
                walk(sub, title)
            elif not action.isSeparator():
                sections.setdefault(action, title)

    for top in bar.actions():
        menu = top.menu()
        if isinstance(menu, QMenu):
            walk(menu, plain_text(top.text()))
    return sections


def sheet_entries(
    window: QWidget, menu_bar: QMenuBar | None, hints: Sequence[KeyHint]
) -> list[ShortcutEntry]:
    """The sheet's lines: the window's bound keys by menu, then the widgets' own keys by section."""
    sections = menu_sections(menu_bar) if menu_bar is not None else {}
    entries = registered_shortcuts(window, sections)
    order = [plain_text(a.text()) for a in menu_bar.actions()] if menu_bar is not None else []
    entries.sort(key=lambda e: order.index(e.section) if e.section in order else len(order))
    entries.extend(ShortcutEntry(h.section, h.description, h.keys) for h in hints)
    if menu_bar is not None:
        entries.extend(menu_keys(menu_bar))
    return entries


class ShortcutsSheet(QDialog):
    """A list of every shortcut, grouped by where it applies, with a filter."""

    def __init__(self, entries: Sequence[ShortcutEntry], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ShortcutsSheet")
        self.setWindowTitle("Keyboard Shortcuts")
        self.resize(560, 620)
        self.entries = list(entries)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(14, 12, 14, 12)
        layout.setSpacing(8)
        self.filter = QLineEdit()
        self.filter.setObjectName("ShortcutsFilter")
        self.filter.setAccessibleName("Filter shortcuts")
        self.filter.setPlaceholderText("Type to filter, e.g. tab or Ctrl+W")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._apply_filter)
        label = QLabel("&Find:")
        label.setBuddy(self.filter)
        layout.addWidget(label)
        layout.addWidget(self.filter)
        self.tree = QTreeWidget()
        self.tree.setObjectName("ShortcutsList")
        self.tree.setAccessibleName("Keyboard shortcuts")
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels(["Action", "Keys"])
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        header = self.tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(False)
        layout.addWidget(self.tree, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        for button in buttons.buttons():
            button.setIcon(QIcon())  # as in Settings: a word, no stock icon
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self._fill()
        self.filter.setFocus(Qt.FocusReason.OtherFocusReason)

    def _fill(self) -> None:
        groups: dict[str, QTreeWidgetItem] = {}
        for entry in self.entries:
            group = groups.get(entry.section)
            if group is None:
                group = QTreeWidgetItem(self.tree, [entry.section, ""])
                font = group.font(0)
                font.setBold(True)
                group.setFont(0, font)
                group.setFlags(Qt.ItemFlag.ItemIsEnabled)
                group.setFirstColumnSpanned(True)
                groups[entry.section] = group
            item = QTreeWidgetItem(group, [entry.description, entry.key_text()])
            item.setData(0, Qt.ItemDataRole.AccessibleTextRole, f"{entry.description}: {entry.key_text()}")
        self.tree.expandAll()

    def rows(self) -> list[tuple[str, str, str]]:
        """The lines shown now: (section, action, keys), in order (tests and the filter read it)."""
        shown: list[tuple[str, str, str]] = []
        for i in range(self.tree.topLevelItemCount()):
            group = self.tree.topLevelItem(i)
            if group is None or group.isHidden():
                continue
            for j in range(group.childCount()):
                item = group.child(j)
                if item is not None and not item.isHidden():
                    shown.append((group.text(0), item.text(0), item.text(1)))
        return shown

    def _apply_filter(self, text: str) -> None:
        needle = text.strip().casefold()
        for i in range(self.tree.topLevelItemCount()):
            group = self.tree.topLevelItem(i)
            if group is None:
                continue
            visible = 0
            for j in range(group.childCount()):
                item = group.child(j)
                if item is None:
                    continue
                haystack = f"{group.text(0)} {item.text(0)} {item.text(1)}".casefold()
                item.setHidden(bool(needle) and needle not in haystack)
                visible += not item.isHidden()
            group.setHidden(visible == 0)
