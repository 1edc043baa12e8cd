"""Delete, archive and fork go through the engine: tabs close, come back on undo, follow a fork."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from tests.support.sse_server import openai_text_stream, split_text, sse_response
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.ui_driving import texts, type_and_send, wait_idle
from tests.support.waiting import WAIT_MS

from threadline.core.messages import MessageStatus


def reply(text: str, **faults: Any) -> Any:
    return sse_response(openai_text_stream(split_text(text, 4)), **faults)


def press_delete_in_sidebar(harness: Any, session_id: str) -> None:
    sidebar = harness.window.sidebar
    sidebar.list.setFocus()
    sidebar.list.setCurrentIndex(sidebar.model.index_of(session_id))
    harness.qtbot.keyClick(sidebar.list, Qt.Key.Key_Delete)


def menu_action(sidebar: Any, session_id: str, label: str) -> None:
    info = sidebar.model.session(session_id) or sidebar.archived_model.session(session_id)
    menu = sidebar.chat_actions.build_menu(info)
    next(a for a in menu.actions() if a.text() == label).trigger()


def test_deleting_a_streaming_chat_closes_its_tab_keeps_the_partial_reply_and_undo_reopens_it(
    harness: Any,
) -> None:
    long = " ".join(f"word{i}" for i in range(400))
    harness.server.enqueue(reply(long, chunk_delay=0.01), reply("Back again."))
    window = harness.open()
    keep = new_tab(harness)
    tab = new_tab(harness)
    sid = tab.session_id
    type_and_send(harness.qtbot, tab, "Count for me")
    harness.qtbot.waitUntil(lambda: len(texts(tab)) == 2 and len(texts(tab)[1]) > 20, timeout=WAIT_MS)
    press_delete_in_sidebar(harness, sid)
    # the tab closes at once, the turn is stopped, the row goes, the undo bar offers it back
    harness.qtbot.waitUntil(lambda: window.tabs.tab_for(sid) is None, timeout=WAIT_MS)
    harness.qtbot.waitUntil(lambda: not harness.engine.turns.running(sid), timeout=WAIT_MS)
    assert window.sidebar.model.session(sid) is None
    assert window.sidebar.undo_bar.isVisible()
    assert window.tabs.tab_for(keep.session_id) is not None
    harness.qtbot.mouseClick(window.sidebar.undo_bar.button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: window.tabs.tab_for(sid) is not None, timeout=WAIT_MS)
    back = window.tabs.tab_for(sid)
    assert window.tabs.current_tab() is back and window.tabs.indexOf(back) == 1
    assert window.sidebar.model.session(sid) is not None
    partial = back.live.conversation.path()[-1]
    assert partial.status is MessageStatus.CANCELLED
    assert partial.text.startswith("word0 word1") and len(partial.text) < len(long)
    # the reopened chat works: no "session is not open"
    type_and_send(harness.qtbot, back, "Go on")
    wait_idle(harness, back)
    assert texts(back)[-1] == "Back again."
    assert back.banner.error is None


def test_a_deleted_chat_is_gone_for_good_after_the_undo_window(harness: Any) -> None:
    harness.server.enqueue(reply("An answer."))
    window = harness.open()
    tab = new_tab(harness)
    sid = tab.session_id
    type_and_send(harness.qtbot, tab, "Question")
    wait_idle(harness, tab)
    harness.engine.sessions.undo_seconds = 0.1
    press_delete_in_sidebar(harness, sid)
    harness.qtbot.waitUntil(lambda: window.tabs.tab_for(sid) is None, timeout=WAIT_MS)
    harness.qtbot.waitUntil(
        lambda: harness.run(harness.engine.store.get_session(sid)) is None, timeout=WAIT_MS
    )
    harness.qtbot.mouseClick(window.sidebar.undo_bar.button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: "already deleted" in window.statusBar().currentMessage(), timeout=WAIT_MS)
    assert window.tabs.tab_for(sid) is None


def test_archiving_closes_the_tab_and_undo_reopens_it(harness: Any) -> None:
    window = harness.open()
    first = new_tab(harness)
    second = new_tab(harness)
    sid = first.session_id
    menu_action(window.sidebar, sid, "Archive")
    harness.qtbot.waitUntil(lambda: window.tabs.tab_for(sid) is None, timeout=WAIT_MS)
    harness.qtbot.waitUntil(lambda: window.sidebar.model.session(sid) is None, timeout=WAIT_MS)
    assert window.tabs.tabs() == [second]
    assert window.sidebar.undo_bar.isVisible() and "Archived" in window.sidebar.undo_bar.label.text()
    harness.qtbot.mouseClick(window.sidebar.undo_bar.button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: window.tabs.tab_for(sid) is not None, timeout=WAIT_MS)
    assert [t.session_id for t in window.tabs.tabs()] == [sid, second.session_id]
    assert window.sidebar.model.session(sid) is not None
    assert not harness.run(harness.engine.sessions.list_sessions(archived=True))


def test_duplicating_a_chat_opens_the_copy_beside_it(harness: Any) -> None:
    harness.server.enqueue(reply("Original answer."))
    window = harness.open()
    tab = new_tab(harness)
    other = new_tab(harness)
    window.tabs.setCurrentWidget(tab)
    type_and_send(harness.qtbot, tab, "Original question")
    wait_idle(harness, tab)
    menu_action(window.sidebar, tab.session_id, "Duplicate")
    harness.qtbot.waitUntil(lambda: window.tabs.count() == 3, timeout=WAIT_MS)
    copy = window.tabs.current_tab()
    assert copy.session_id not in (tab.session_id, other.session_id)
    assert window.tabs.indexOf(copy) == window.tabs.indexOf(tab) + 1
    assert texts(copy) == ["Original question", "Original answer."]
    assert copy.title.endswith("(copy)")
