"""The keys of a chat tab's find bar: Ctrl+F opens it, F3 / Shift+F3 step through matches.

Kept apart from ``find_bar`` so a tab can have its keys from the start while the bar (its
module, widgets, style sheet and the searching it sets up) is built the first time a key
asks for it: most chats are opened and closed without a find.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QWidget

from threadline.ui.common.shortcuts import SECTION_PROPERTY, unique_sequences


class FindSteps(Protocol):
    """What the keys need of the find bar (``find_bar.FindBar``), which imports this module."""

    def isVisible(self) -> bool: ...
    def open(self) -> None: ...
    def next(self) -> None: ...
    def previous(self) -> None: ...


FIND_KEYS = (QKeySequence.StandardKey.Find, "Ctrl+F")


def install_find_keys(tab: QWidget, find_bar: Callable[[], FindSteps]) -> None:
    """Ctrl+F, F3 and Shift+F3 on ``tab``, acting on the bar ``find_bar`` returns (or builds)."""

    def open_bar() -> None:
        find_bar().open()

    def step(forward: bool) -> None:
        bar = find_bar()
        if not bar.isVisible():
            bar.open()
        elif forward:
            bar.next()
        else:
            bar.previous()

    keys: list[tuple[str, list[QKeySequence], Callable[[], None]]] = [
        ("Find in chat", unique_sequences(FIND_KEYS), open_bar),
        ("Next match", [QKeySequence("F3")], lambda: step(True)),
        ("Previous match", [QKeySequence("Shift+F3")], lambda: step(False)),
    ]
    for name, sequences, slot in keys:
        shortcut = QShortcut(tab)
        shortcut.setKeys(sequences)
        shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        shortcut.setWhatsThis(name)
        shortcut.setProperty(SECTION_PROPERTY, "Find in chat")
        shortcut.setObjectName("find-" + name.lower().replace(" ", "-"))
        shortcut.activated.connect(slot)
