"""Keyboard shortcuts of the main window: none claimed twice, the File menu's keys work, text zoom.

Qt ignores a key that two shortcuts claim in overlapping contexts ("Ambiguous shortcut
overload"), so Ctrl+W and Ctrl+Q listed in the File menu did nothing. The walk below
fails on any such duplicate; the key presses prove the keys do what the menu says.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut, QWheelEvent
from PySide6.QtWidgets import QApplication, QWidget
from tests.support.sse_server import openai_text_stream, split_text, sse_response
from tests.support.ui_driving import new_tab_by_shortcut, type_and_send, wait_idle
from tests.support.waiting import WAIT_MS

from threadline.ui.common.shortcuts import shortcut_conflicts, unique_sequences

CTRL = Qt.KeyboardModifier.ControlModifier


def test_no_key_is_claimed_twice_in_the_window_with_a_tab_open(harness: Any) -> None:
    window = harness.open()
    new_tab_by_shortcut(harness)
    assert shortcut_conflicts(window) == []
    claimed = {
        s.toString(QKeySequence.SequenceFormat.PortableText)
        for a in window.findChildren(QAction)
        for s in a.shortcuts()
    }
    assert {"Ctrl+W", "Ctrl+Q", "Ctrl+N", "Ctrl++", "Ctrl+-", "Ctrl+0"} <= claimed


def test_the_conflict_walk_finds_duplicates(qtbot: Any) -> None:
    root = QWidget()
    qtbot.addWidget(root)
    twice = QAction("Close Tab", root)
    twice.setShortcuts([QKeySequence("Ctrl+F4"), QKeySequence("Ctrl+W"), QKeySequence("Ctrl+W")])
    root.addAction(twice)
    other = QAction("Quit", root)
    other.setShortcut(QKeySequence("Ctrl+Q"))
    root.addAction(other)
    shortcut = QShortcut(QKeySequence("Ctrl+Q"), root)
    shortcut.setObjectName("quit-shortcut")
    problems = shortcut_conflicts(root)
    assert "Ctrl+W: listed twice by 'Close Tab'" in problems
    assert "Ctrl+Q: claimed by both 'Quit' and 'quit-shortcut'" in problems


def test_standard_keys_and_their_spelling_are_listed_once(qapp: Any) -> None:
    sequences = unique_sequences([QKeySequence.StandardKey.Close, "Ctrl+W", "Ctrl+W", ""])
    texts = [s.toString(QKeySequence.SequenceFormat.PortableText) for s in sequences]
    assert texts.count("Ctrl+W") == 1
    assert "" not in texts


def test_ctrl_w_closes_the_tab_and_ctrl_q_quits(harness: Any) -> None:
    window = harness.open()
    qtbot = harness.qtbot
    first = new_tab_by_shortcut(harness)
    new_tab_by_shortcut(harness)
    assert window.tabs.count() == 2

    qtbot.keyClick(window.tabs.current_tab().composer.edit, Qt.Key.Key_W, CTRL)
    qtbot.waitUntil(lambda: window.tabs.count() == 1, timeout=WAIT_MS)
    assert window.tabs.current_tab() is first

    with qtbot.waitSignal(window.closed, timeout=WAIT_MS):
        qtbot.keyClick(first.composer.edit, Qt.Key.Key_Q, CTRL)
    harness.run(harness.engine.aclose())
    harness.window = None
    harness.engine = None


def _sizes(tab: Any) -> tuple[float, float]:
    return tab.view.font().pointSizeF(), tab.composer.edit.font().pointSizeF()


def _ctrl_wheel(widget: QWidget, up: bool) -> None:
    pos = QPointF(widget.width() / 2, widget.height() / 2)
    event = QWheelEvent(
        pos,
        QPointF(widget.mapToGlobal(pos.toPoint())),
        QPoint(0, 0),
        QPoint(0, 120 if up else -120),
        Qt.MouseButton.NoButton,
        CTRL,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(widget, event)


def test_zoom_keys_and_ctrl_wheel_change_the_text_size_and_it_is_remembered(harness: Any) -> None:
    window = harness.open()
    qtbot = harness.qtbot
    tab = new_tab_by_shortcut(harness)
    base = QApplication.font().pointSizeF()
    assert _sizes(tab) == (base, base)
    edit = tab.composer.edit

    qtbot.keyClick(edit, Qt.Key.Key_Plus, CTRL)
    assert _sizes(tab) == (base + 1, base + 1)
    qtbot.keyClick(edit, Qt.Key.Key_Equal, CTRL)  # Ctrl+= : the same key without Shift
    assert _sizes(tab) == (base + 2, base + 2)
    qtbot.keyClick(edit, Qt.Key.Key_Minus, CTRL)
    assert _sizes(tab) == (base + 1, base + 1)
    qtbot.keyClick(edit, Qt.Key.Key_0, CTRL)
    assert _sizes(tab) == (base, base)

    scroll = tab.view.verticalScrollBar().value()
    _ctrl_wheel(tab.view.viewport(), up=True)
    _ctrl_wheel(tab.view.viewport(), up=True)
    assert _sizes(tab) == (base + 2, base + 2)
    assert tab.view.verticalScrollBar().value() == scroll  # the wheel zoomed, it did not scroll
    _ctrl_wheel(tab.view.viewport(), up=False)
    assert window.zoom.level == 1

    session = tab.session_id
    harness.close()  # the level is saved as a setting...
    window = harness.open()
    qtbot.waitUntil(lambda: window.tabs.tab_for(session) is not None, timeout=WAIT_MS)
    assert window.zoom.level == 1  # ...and comes back with the tabs
    assert _sizes(window.tabs.tab_for(session)) == (base + 1, base + 1)


def test_zooming_lays_the_messages_out_again(harness: Any) -> None:
    harness.server.enqueue(sse_response(openai_text_stream(split_text("A reply. " * 30, 8))))
    window = harness.open()
    tab = new_tab_by_shortcut(harness)
    type_and_send(harness.qtbot, tab, "A question")
    wait_idle(harness, tab)
    prompt, answer = tab.live.conversation.path()

    def gap() -> int:
        """Vertical distance between the two messages' Copy buttons: the reply's height."""
        top = tab.view.action_rect(prompt.id, "copy")
        bottom = tab.view.action_rect(answer.id, "copy")
        return -1 if top is None or bottom is None else bottom.top() - top.top()

    harness.qtbot.waitUntil(lambda: gap() > 0, timeout=WAIT_MS)
    before = gap()
    for _ in range(4):
        harness.qtbot.keyClick(tab.composer.edit, Qt.Key.Key_Plus, CTRL)
    harness.qtbot.waitUntil(lambda: gap() > before * 1.15, timeout=WAIT_MS)
    assert window.zoom.level == 4


def test_zooming_refits_the_composer_to_the_new_line_height(harness: Any) -> None:
    harness.open()
    tab = new_tab_by_shortcut(harness)
    edit = tab.composer.edit
    before = edit.height()
    for _ in range(6):
        harness.qtbot.keyClick(edit, Qt.Key.Key_Plus, CTRL)
    harness.qtbot.waitUntil(lambda: edit.height() > before, timeout=WAIT_MS)  # no typing needed
    grown = edit.height()
    harness.qtbot.keyClick(edit, Qt.Key.Key_0, CTRL)
    harness.qtbot.waitUntil(lambda: edit.height() < grown, timeout=WAIT_MS)
