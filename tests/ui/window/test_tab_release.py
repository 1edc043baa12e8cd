"""A closed tab's idle conversation leaves the engine's memory (a big one's given back to the
system at once); reopening reads it again."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTabBar
from tests.support.ui_driving import new_tab_by_shortcut

from threadline.core.messages import Message
from threadline.heap import BIG_CHAT
from threadline.ui.window import main_window


def test_closing_an_idle_tab_releases_its_conversation_and_it_reopens(harness: Any) -> None:
    window = harness.open()
    qtbot = harness.qtbot
    tab = new_tab_by_shortcut(harness)
    session_id = tab.session_id
    assert harness.engine.live(session_id) is not None
    window.tabs.close_tab(tab)
    qtbot.waitUntil(lambda: harness.engine.live(session_id) is None, timeout=15000)
    reopened = harness.run(window._open(session_id, focus=True))
    assert reopened is not None
    assert harness.engine.live(session_id) is not None


def test_closing_a_big_chat_gives_its_memory_back_and_a_small_one_does_not(
    harness: Any, monkeypatch: Any
) -> None:
    released: list[bool] = []
    monkeypatch.setattr(main_window, "release_freed_memory", lambda: released.append(True) or True)
    window = harness.open()
    qtbot = harness.qtbot
    big = harness.run(harness.engine.new_session("Long chat")).id
    chain: list[Message] = []
    for i in range(BIG_CHAT):
        chain.append(Message.prompt(f"line {i}", parent_id=chain[-1].id if chain else None))
    harness.run(harness.engine.store.append_messages(big, chain))
    small = new_tab_by_shortcut(harness)
    small_id = small.session_id
    window.tabs.close_tab(small)
    qtbot.waitUntil(lambda: harness.engine.live(small_id) is None, timeout=15000)
    assert released == []
    tab = harness.run(window._open(big, focus=True))
    assert tab is not None and tab.model.rowCount() == BIG_CHAT
    close = window.tabs.tabBar().tabButton(window.tabs.indexOf(tab), QTabBar.ButtonPosition.RightSide)
    qtbot.mouseClick(close, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: released == [True], timeout=15000)
    assert harness.engine.live(big) is None
