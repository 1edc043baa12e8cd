"""A whole session without the mouse: new chat, send, copy a reply, switch versions,
approve a tool and open the settings, with the real Engine and the replay server.

Every key goes to the widget that has the keyboard focus (as a real keyboard's would),
and an application-wide event filter fails the test if a single mouse event reaches any
widget, so a step that only works with the mouse cannot pass here.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QWidget
from tests.support.sse_server import openai_text_stream, openai_tool_call_stream, sse_response
from tests.support.ui_driving import new_tab_by_shortcut, texts, wait_idle
from tests.support.waiting import WAIT_MS

from threadline.core.config import AgentConfig
from threadline.core.messages import MessageKind

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the shell tool runs POSIX commands here")

TIMEOUT = WAIT_MS

MOUSE_EVENTS = {
    QEvent.Type.MouseButtonPress,
    QEvent.Type.MouseButtonRelease,
    QEvent.Type.MouseButtonDblClick,
    QEvent.Type.MouseMove,
    QEvent.Type.Wheel,
    QEvent.Type.NonClientAreaMouseButtonPress,
}


class MouseWatch(QObject):
    """Counts the mouse events delivered to any object of the application."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in MOUSE_EVENTS:
            self.seen.append(f"{event.type().name} to {type(watched).__name__} {watched.objectName()!r}")
        return False


def focused() -> QWidget:
    widget = QApplication.focusWidget()
    assert widget is not None, "nothing has the keyboard focus"
    return widget


def press(harness: Any, key: Qt.Key, modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
    harness.qtbot.keyClick(focused(), key, modifiers)


def tab_until(harness: Any, target: QWidget, key: Qt.Key = Qt.Key.Key_Tab, limit: int = 30) -> None:
    """Press Tab (or Shift+Tab) until ``target`` has the focus; fails if the order never reaches it."""
    for _ in range(limit):
        if target.hasFocus():
            return
        press(harness, key)
    assert target.hasFocus(), (
        f"{key.name} never reached {type(target).__name__}; stuck on {type(focused()).__name__}"
    )


def test_a_session_from_the_keyboard_alone(harness: Any, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    harness.server.enqueue(
        sse_response(openai_text_stream(["The first ", "answer."])),
        sse_response(openai_text_stream(["The second answer."])),
        sse_response(
            openai_tool_call_stream(
                [("k1", "shell", {"command": "echo from keys"})], text_pieces=["Let me run it."]
            )
        ),
        sse_response(openai_text_stream(["It printed from keys."])),
    )
    window = harness.open()
    harness.run(
        harness.engine.agents.save_agent(
            AgentConfig("default", "Default", enabled_tools=("shell",), allowed_folders=(str(work),))
        )
    )
    watch = MouseWatch()
    app = QApplication.instance()
    app.installEventFilter(watch)
    try:
        window.activateWindow()
        harness.qtbot.waitUntil(window.isActiveWindow, timeout=TIMEOUT)

        # Create a chat (Ctrl+N) and send from the message box it focuses.
        tab = new_tab_by_shortcut(harness)
        harness.qtbot.waitUntil(tab.composer.edit.hasFocus, timeout=TIMEOUT)
        harness.qtbot.keyClicks(focused(), "Hello there")
        press(harness, Qt.Key.Key_Return)
        harness.qtbot.waitUntil(lambda: texts(tab) == ["Hello there", "The first answer."], timeout=TIMEOUT)
        wait_idle(harness, tab)

        # Into the conversation: the latest message is current; C copies it.
        tab_until(harness, tab.view, Qt.Key.Key_Backtab)
        reply = tab.live.conversation.path()[-1]
        assert tab.view.current_message_id() == reply.id
        QGuiApplication.clipboard().clear()
        press(harness, Qt.Key.Key_C)
        assert QGuiApplication.clipboard().text() == "The first answer."

        # R regenerates; Left goes back to the first version, Right forward again.
        press(harness, Qt.Key.Key_R)
        harness.qtbot.waitUntil(lambda: texts(tab)[-1] == "The second answer.", timeout=TIMEOUT)
        wait_idle(harness, tab)
        assert tab.view.hasFocus()
        second = tab.live.conversation.path()[-1]
        assert tab.view.current_message_id() == second.id
        press(harness, Qt.Key.Key_Left)
        harness.qtbot.waitUntil(lambda: texts(tab)[-1] == "The first answer.", timeout=TIMEOUT)
        harness.qtbot.waitUntil(lambda: tab.view.current_message_id() == reply.id, timeout=TIMEOUT)
        assert tab.view.version_text(reply.id) == "1 / 2"
        press(harness, Qt.Key.Key_Right)
        harness.qtbot.waitUntil(lambda: texts(tab)[-1] == "The second answer.", timeout=TIMEOUT)

        # Back to the message box; the tool call is approved from the keyboard.
        tab_until(harness, tab.composer.edit)
        harness.qtbot.keyClicks(focused(), "Run echo")
        press(harness, Qt.Key.Key_Return)
        harness.qtbot.waitUntil(
            lambda: tab.awaiting_approval and tab.approval.isVisibleTo(tab), timeout=TIMEOUT
        )
        (row,) = tab.approval.rows
        harness.qtbot.waitUntil(row.allow_button.hasFocus, timeout=TIMEOUT)  # the bar takes the focus
        press(harness, Qt.Key.Key_Space)
        harness.qtbot.waitUntil(lambda: texts(tab)[-1] == "It printed from keys.", timeout=TIMEOUT)
        wait_idle(harness, tab)
        results = [m for m in tab.live.conversation.path() if m.kind is MessageKind.TOOL_RESULTS]
        assert results and "from keys" in results[-1].tool_results[0].text
        assert tab.composer.edit.hasFocus(), f"after Allow the focus is on {focused().objectName()!r}"

        # Settings open from their shortcut and close with Esc.
        press(harness, Qt.Key.Key_Comma, Qt.KeyboardModifier.ControlModifier)
        harness.qtbot.waitUntil(lambda: QApplication.activeModalWidget() is not None, timeout=TIMEOUT)
        dialog = QApplication.activeModalWidget()
        assert type(dialog).__name__ == "SettingsDialog"
        harness.qtbot.waitUntil(
            lambda: dialog.isAncestorOf(focused()) or focused() is dialog, timeout=TIMEOUT
        )
        press(harness, Qt.Key.Key_Escape)
        harness.qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=TIMEOUT)
    finally:
        app.removeEventFilter(watch)
    assert watch.seen == [], f"mouse events reached the app: {watch.seen[:10]}"
