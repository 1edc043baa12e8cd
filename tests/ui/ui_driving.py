"""Helpers to drive the window as a user does: type, press keys, click painted buttons."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest


def type_and_send(qtbot: Any, tab: Any, text: str) -> None:
    edit = tab.composer.edit
    edit.setFocus()
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)


def click_action(qtbot: Any, tab: Any, message_id: str, action: str) -> None:
    """Click one of the painted per-message buttons (Copy, Edit, Regenerate, ‹, ›…)."""
    view = tab.view
    qtbot.waitUntil(lambda: view.action_rect(message_id, action) is not None, timeout=5000)
    rect = view.action_rect(message_id, action)
    QTest.mouseMove(view.viewport(), rect.center())
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def texts(tab: Any) -> list[str]:
    return [m.text for m in tab.live.conversation.path()]


def point(x: int, y: int) -> QPoint:
    return QPoint(x, y)
