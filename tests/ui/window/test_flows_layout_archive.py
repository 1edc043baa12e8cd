"""The layout is saved as it changes (a crash keeps it); the sidebar's archived chats."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from tests.support.sse_server import openai_text_stream, split_text, sse_response
from tests.support.ui_driving import new_tab_by_shortcut as new_tab
from tests.support.ui_driving import texts, type_and_send
from tests.support.waiting import WAIT_MS

from threadline.ui.window.main_window import WINDOW_STATE_KEY


def reply(text: str) -> Any:
    return sse_response(openai_text_stream(split_text(text, 4)))


def saved_layout(harness: Any) -> dict[str, Any]:
    state = harness.run(harness.engine.settings.get_setting(WINDOW_STATE_KEY, None))
    return state if isinstance(state, dict) else {}


def test_layout_is_saved_as_it_changes_and_survives_a_crash(harness: Any) -> None:
    harness.server.enqueue(reply("Reply one."), reply("Reply two."))
    window = harness.open()
    tab1 = new_tab(harness)
    type_and_send(harness.qtbot, tab1, "First chat")
    harness.qtbot.waitUntil(lambda: texts(tab1) == ["First chat", "Reply one."], timeout=WAIT_MS)
    tab2 = new_tab(harness)
    type_and_send(harness.qtbot, tab2, "Second chat")
    harness.qtbot.waitUntil(lambda: texts(tab2) == ["Second chat", "Reply two."], timeout=WAIT_MS)
    ids = [tab1.session_id, tab2.session_id]
    harness.qtbot.waitUntil(lambda: saved_layout(harness).get("tabs") == ids, timeout=WAIT_MS)
    # moving the current tab and the splitter are saved too, once, after they settle
    saves = window.saves
    window.tabs.setCurrentIndex(0)
    window.splitter.moveSplitter(240, 1)
    harness.qtbot.waitUntil(lambda: saved_layout(harness).get("current") == ids[0], timeout=WAIT_MS)
    assert saved_layout(harness)["splitter"][0] == window.splitter.sizes()[0]
    assert window.saves == saves + 1  # debounced: one write for both changes
    # closing a tab is saved without a clean shutdown
    window.tabs.close_tab(tab2)
    harness.qtbot.waitUntil(lambda: saved_layout(harness).get("tabs") == ids[:1], timeout=WAIT_MS)
    window.new_chat()
    harness.qtbot.waitUntil(lambda: window.tabs.count() == 2, timeout=WAIT_MS)
    third = window.tabs.current_tab().session_id
    harness.qtbot.waitUntil(lambda: saved_layout(harness).get("tabs") == [ids[0], third], timeout=WAIT_MS)
    harness.crash()

    window = harness.open()
    assert [t.session_id for t in window.tabs.tabs()] == [ids[0], third]
    assert window.tabs.current_tab().session_id == third
    assert texts(window.tabs.tabs()[0]) == ["First chat", "Reply one."]


def test_restoring_the_layout_does_not_save_it_half_done(harness: Any) -> None:
    harness.open()
    ids = [harness.run(harness.engine.sessions.new_session(f"Chat {i}")).id for i in range(3)]
    for sid in ids:
        harness.run(harness.window.session_tabs.open(sid, focus=True))
    harness.qtbot.waitUntil(lambda: saved_layout(harness).get("tabs") == ids, timeout=WAIT_MS)
    harness.close()
    window = harness.open()
    assert window.saves == 0  # reopening the saved tabs is not a change to save
    harness.qtbot.wait(900)
    assert [t.session_id for t in window.tabs.tabs()] == ids
    assert saved_layout(harness)["tabs"] == ids


def _row_rect(view: Any, model: Any, session_id: str) -> Any:
    return view.visualRect(model.index_of(session_id))


def test_archived_chats_can_be_shown_opened_unarchived_and_deleted(harness: Any) -> None:
    window = harness.open()
    run = harness.run
    keep = run(harness.engine.sessions.new_session("Keep me"))
    old = run(harness.engine.sessions.new_session("Old project"))
    sidebar = window.sidebar
    harness.qtbot.waitUntil(lambda: sidebar.model.session(old.id) is not None, timeout=WAIT_MS)
    # archive from the context menu: the chat leaves the list
    menu = sidebar.chat_actions.build_menu(sidebar.model.session(old.id))
    next(a for a in menu.actions() if a.text() == "Archive").trigger()
    harness.qtbot.waitUntil(lambda: sidebar.model.session(old.id) is None, timeout=WAIT_MS)
    assert sidebar.model.session(keep.id) is not None
    # the Archived button shows the archived chats only
    assert sidebar.archive_toggle.isVisible() and sidebar.archive_toggle.text() == "Archived"
    harness.qtbot.mouseClick(sidebar.archive_toggle, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: sidebar.archived_model.session(old.id) is not None, timeout=WAIT_MS)
    assert sidebar.stack.currentWidget() is sidebar.archived_list
    assert sidebar.archived_model.session(keep.id) is None
    assert sidebar.archive_toggle.text() == "Back to Chats"
    # an archived chat opens with a click
    lst = sidebar.archived_list
    harness.qtbot.mouseClick(
        lst.viewport(), Qt.MouseButton.LeftButton, pos=_row_rect(lst, sidebar.archived_model, old.id).center()
    )
    harness.qtbot.waitUntil(lambda: window.tabs.tab_for(old.id) is not None, timeout=WAIT_MS)
    # its menu offers unarchive and delete, not archive
    menu = sidebar.chat_actions.build_menu(sidebar.archived_model.session(old.id))
    labels = [a.text() for a in menu.actions() if a.text()]
    assert labels == ["Open", "Unarchive", "Delete"]
    next(a for a in menu.actions() if a.text() == "Unarchive").trigger()
    harness.qtbot.waitUntil(lambda: sidebar.archived_model.session(old.id) is None, timeout=WAIT_MS)
    assert sidebar.model.session(old.id) is not None
    assert sidebar.stack.currentWidget() is sidebar.archived_empty  # "No archived chats"
    assert not run(harness.engine.sessions.list_sessions(archived=True))
    # archive again (while the archived view is showing, it appears there at once)
    sidebar.chat_actions.archive(old.id)
    harness.qtbot.waitUntil(lambda: sidebar.archived_model.session(old.id) is not None, timeout=WAIT_MS)
    assert sidebar.stack.currentWidget() is sidebar.archived_list
    # delete from the archived view with the Delete key; undo brings it back there
    lst.setFocus()
    lst.setCurrentIndex(sidebar.archived_model.index_of(old.id))
    harness.qtbot.keyClick(lst, Qt.Key.Key_Delete)
    harness.qtbot.waitUntil(lambda: sidebar.archived_model.session(old.id) is None, timeout=WAIT_MS)
    assert sidebar.undo_bar.isVisible()
    harness.qtbot.mouseClick(sidebar.undo_bar.button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: sidebar.archived_model.session(old.id) is not None, timeout=WAIT_MS)
    harness.engine.sessions.undo_seconds = 0.05  # the undo window passes quickly: deleted from the store
    sidebar.chat_actions.delete(old.id)
    harness.qtbot.waitUntil(lambda: run(harness.engine.store.get_session(old.id)) is None, timeout=WAIT_MS)
    # back to the chats
    harness.qtbot.mouseClick(sidebar.archive_toggle, Qt.MouseButton.LeftButton)
    assert sidebar.stack.currentWidget() is sidebar.list
    assert sidebar.model.session(keep.id) is not None
