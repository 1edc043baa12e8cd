"""A closed tab's idle conversation leaves the engine's memory (a big one's given back to the
system at once); reopening reads it again."""

from __future__ import annotations

import gc
import weakref
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPixmap, QPixmapCache
from PySide6.QtWidgets import QAbstractButton, QTabBar, QWidget
from tests.support.sse_server import openai_text_stream, split_text, sse_response
from tests.support.ui_driving import new_tab_by_shortcut, type_and_send, wait_idle
from tests.support.waiting import WAIT_MS

from threadline.core.messages import Message
from threadline.ui.common.heap import BIG_CHAT
from threadline.ui.window import session_tabs


def test_closing_an_idle_tab_releases_its_conversation_and_it_reopens(harness: Any) -> None:
    window = harness.open()
    qtbot = harness.qtbot
    tab = new_tab_by_shortcut(harness)
    session_id = tab.session_id
    assert harness.engine.sessions.live(session_id) is not None
    window.tabs.close_tab(tab)
    qtbot.waitUntil(lambda: harness.engine.sessions.live(session_id) is None, timeout=WAIT_MS)
    reopened = harness.run(window.session_tabs.open(session_id, focus=True))
    assert reopened is not None
    assert harness.engine.sessions.live(session_id) is not None


def test_closing_a_big_chat_gives_its_memory_back_and_a_small_one_does_not(
    harness: Any, monkeypatch: Any
) -> None:
    released: list[bool] = []
    monkeypatch.setattr(session_tabs, "release_freed_memory", lambda: released.append(True) or True)
    window = harness.open()
    qtbot = harness.qtbot
    big = harness.run(harness.engine.sessions.new_session("Long chat")).id
    chain: list[Message] = []
    for i in range(BIG_CHAT):
        chain.append(Message.prompt(f"line {i}", parent_id=chain[-1].id if chain else None))
    harness.run(harness.engine.store.append_messages(big, chain))
    small = new_tab_by_shortcut(harness)
    small_id = small.session_id
    window.tabs.close_tab(small)
    qtbot.waitUntil(lambda: harness.engine.sessions.live(small_id) is None, timeout=WAIT_MS)
    assert released == []
    tab = harness.run(window.session_tabs.open(big, focus=True))
    assert tab is not None and tab.model.rowCount() == BIG_CHAT
    close = window.tabs.tabBar().tabButton(window.tabs.indexOf(tab), QTabBar.ButtonPosition.RightSide)
    qtbot.mouseClick(close, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: released == [True], timeout=WAIT_MS)
    assert harness.engine.sessions.live(big) is None


def test_a_tab_closed_after_a_reply_is_freed_with_its_conversation(harness: Any) -> None:
    """A finished reply is announced to assistive tools through an accessible interface for
    its message; that interface outlives the tab, and once held the view, and through it the
    tab, its model and the conversation, for the rest of the run."""
    harness.server.enqueue(sse_response(openai_text_stream(split_text("Rome has the Colosseum.", 4))))
    window = harness.open()
    qtbot = harness.qtbot
    tab = new_tab_by_shortcut(harness)
    type_and_send(qtbot, tab, "Tell me about Rome")
    wait_idle(harness, tab)
    session_id = tab.session_id
    tab_ref, tree_ref = weakref.ref(tab), weakref.ref(tab.live.conversation.tree)
    close = window.tabs.tabBar().tabButton(window.tabs.indexOf(tab), QTabBar.ButtonPosition.RightSide)
    del tab
    qtbot.mouseClick(close, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: harness.engine.sessions.live(session_id) is None, timeout=WAIT_MS)

    def freed() -> bool:
        gc.collect()
        return tab_ref() is None and tree_ref() is None

    qtbot.waitUntil(freed, timeout=WAIT_MS)


def test_closing_tabs_leaves_no_button_behind_in_the_tab_bar(harness: Any) -> None:
    """Qt made a close button for every tab of a closable tab bar; the tab's own button
    replaced it, which only hid it, and nothing ever deleted it: each closed tab left one
    widget in the tab bar for the rest of the run."""
    window = harness.open()
    qtbot = harness.qtbot
    bar = window.tabs.tabBar()

    def buttons() -> list[QWidget]:
        return list(bar.findChildren(QAbstractButton))  # close buttons and the scroll arrows

    first = new_tab_by_shortcut(harness)
    before = len(buttons())
    for _ in range(3):
        tab = new_tab_by_shortcut(harness)
        assert len(buttons()) == before + 1  # the tab's own close button, and only it
        close = bar.tabButton(window.tabs.indexOf(tab), QTabBar.ButtonPosition.RightSide)
        assert close is not None and close.isVisible()
        qtbot.mouseClick(close, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: len(buttons()) == before, timeout=WAIT_MS)
    assert window.tabs.indexOf(first) == 0


def test_closing_a_tab_drops_the_style_pixmaps_cached_for_its_widgets(harness: Any) -> None:
    """Fusion caches what it paints under keys that include each widget's own palette, so a
    closed tab's entries are never used again; they stayed until the 10 MB limit."""
    window = harness.open()
    qtbot = harness.qtbot
    tab = new_tab_by_shortcut(harness)
    pixmap = QPixmap(8, 8)
    pixmap.fill(QColor("red"))
    QPixmapCache.insert("threadline-test-entry", pixmap)
    assert QPixmapCache.find("threadline-test-entry") is not None
    close = window.tabs.tabBar().tabButton(window.tabs.indexOf(tab), QTabBar.ButtonPosition.RightSide)
    qtbot.mouseClick(close, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: QPixmapCache.find("threadline-test-entry") is None, timeout=WAIT_MS)
