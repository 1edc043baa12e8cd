"""Switching tabs from the keyboard (Ctrl+Tab, Ctrl+PgDn) leaves the current chat the only
selected row of the sidebar, as a click on a tab does: with Ctrl held, the list took the move
as a Ctrl+click and added each chat to the selection, so Delete then removed chats the user
never picked (issue 28)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from tests.support.ui_driving import open_with_stored_chats
from tests.ui.conftest import AppHarness

TIMEOUT = 15000
IDS = ["chat0", "chat1", "chat2"]
CTRL = Qt.KeyboardModifier.ControlModifier


def open_three_tabs(harness: AppHarness) -> None:
    open_with_stored_chats(harness, {sid: (f"Topic {n}", f"about topic {n}") for n, sid in enumerate(IDS)})
    window = harness.window
    for sid in IDS:
        window.open_session(sid)
        harness.qtbot.waitUntil(lambda s=sid: window.tabs.tab_for(s) is not None, timeout=TIMEOUT)
    last = window.tabs.tab_for("chat2")
    harness.qtbot.waitUntil(lambda: window.tabs.current_tab() is last, timeout=TIMEOUT)


def test_ctrl_tab_twice_from_the_message_box_selects_only_the_current_chat(harness: AppHarness) -> None:
    open_three_tabs(harness)
    window, qtbot = harness.window, harness.qtbot
    for key in (Qt.Key.Key_Tab, Qt.Key.Key_Tab):
        edit = window.tabs.current_tab().composer.edit
        edit.setFocus()
        qtbot.waitUntil(edit.hasFocus, timeout=TIMEOUT)
        qtbot.keyClick(edit, key, CTRL)
        current = window.tabs.current_tab().session_id
        assert window.sidebar.selected_ids() == [current]
    assert window.tabs.current_tab().session_id == "chat1"


def test_ctrl_page_down_and_up_select_only_the_current_chat(harness: AppHarness) -> None:
    open_three_tabs(harness)
    window, qtbot = harness.window, harness.qtbot
    for key in (Qt.Key.Key_PageDown, Qt.Key.Key_PageDown, Qt.Key.Key_PageUp):
        edit = window.tabs.current_tab().composer.edit
        edit.setFocus()
        qtbot.waitUntil(edit.hasFocus, timeout=TIMEOUT)
        qtbot.keyClick(edit, key, CTRL)
        assert window.sidebar.selected_ids() == [window.tabs.current_tab().session_id]
