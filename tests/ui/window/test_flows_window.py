"""Window-level flows: tabs while streaming, restart restore, search, sidebar actions, settings."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from tests.support.sse_server import openai_text_stream, split_text, sse_response
from tests.support.ui_driving import new_tab_by_shortcut as new_tab
from tests.support.ui_driving import texts, type_and_send, wait_idle
from tests.support.waiting import WAIT_MS

from threadline.ui.sessions.session_list_model import SessionIdRole


def reply(text: str, **faults: Any) -> Any:
    return sse_response(openai_text_stream(split_text(text, 4)), **faults)


def test_switch_tabs_while_two_tabs_stream(harness: Any) -> None:
    long_a = " ".join(f"alpha{i}" for i in range(150))
    long_b = " ".join(f"beta{i}" for i in range(150))
    harness.server.enqueue(reply(long_a, chunk_delay=0.004), reply(long_b, chunk_delay=0.004))
    window = harness.open()
    tab_a = new_tab(harness)
    type_and_send(harness.qtbot, tab_a, "Tell me about alpha")
    tab_b = new_tab(harness)
    type_and_send(harness.qtbot, tab_b, "Tell me about beta")
    harness.qtbot.waitUntil(lambda: tab_a.busy and tab_b.busy, timeout=WAIT_MS)
    statuses: list[str] = []
    window.tabs.cur_status_changed.connect(statuses.append)
    # Ctrl+PgUp / Ctrl+Tab through the tabs while both stream
    for _ in range(4):
        harness.qtbot.keyClick(window, Qt.Key.Key_PageUp, Qt.KeyboardModifier.ControlModifier)
        assert window.tabs.current_tab() is tab_a
        harness.qtbot.wait(30)
        harness.qtbot.keyClick(window, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
        assert window.tabs.current_tab() is tab_b
        harness.qtbot.wait(30)
    harness.qtbot.keyClick(window, Qt.Key.Key_PageUp, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.current_tab() is tab_a
    wait_idle(harness, tab_a)
    wait_idle(harness, tab_b)
    assert texts(tab_a) == ["Tell me about alpha", long_a]
    assert texts(tab_b) == ["Tell me about beta", long_b]
    # b finished while hidden: it carries the unread mark until shown
    assert window.tabs.is_unread(tab_b.session_id)
    assert not window.tabs.is_unread(tab_a.session_id)
    harness.qtbot.keyClick(window, Qt.Key.Key_PageDown, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.current_tab() is tab_b
    assert not window.tabs.is_unread(tab_b.session_id)
    assert statuses  # the window heard the current tab's status
    assert window.windowTitle().endswith("— Threadline")


def test_close_and_reopen_restores_tabs_order_active_and_text(harness: Any) -> None:
    harness.server.enqueue(reply("Reply one."), reply("Reply two."))
    window = harness.open()
    tab1 = new_tab(harness)
    type_and_send(harness.qtbot, tab1, "First chat")
    wait_idle(harness, tab1)
    tab2 = new_tab(harness)
    type_and_send(harness.qtbot, tab2, "Second chat")
    wait_idle(harness, tab2)
    ids = [tab1.session_id, tab2.session_id]
    window.tabs.setCurrentIndex(0)  # the first tab is the active one
    window.resize(780, 560)  # the offscreen screen is 800×600; a restored window is kept on it
    window.splitter.setSizes([250, 529])
    harness.close()

    window = harness.open()
    assert [t.session_id for t in window.tabs.tabs()] == ids
    assert window.tabs.current_tab().session_id == ids[0]
    assert texts(window.tabs.tabs()[0]) == ["First chat", "Reply one."]
    assert texts(window.tabs.tabs()[1]) == ["Second chat", "Reply two."]
    harness.qtbot.waitUntil(lambda: window.splitter.sizes()[0] == 250, timeout=WAIT_MS)
    assert window.width() == 780


def test_search_and_jump_to_message(harness: Any) -> None:
    filler = [f"Filler reply number {i}. " * 8 for i in range(12)]
    harness.server.enqueue(*(reply(t) for t in filler), reply("The answer mentions zanzibar explicitly."))
    window = harness.open()
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Where is the spice island?")
    wait_idle(harness, tab)
    for i in range(12):
        type_and_send(harness.qtbot, tab, f"More filler {i}")
        wait_idle(harness, tab)
    target = tab.live.conversation.path()[1]
    assert "zanzibar" not in target.text  # the hit is the last reply; the first reply is filler
    assert any("zanzibar" in m.text for m in tab.live.conversation.path()), texts(tab)
    hit_message = next(m for m in tab.live.conversation.path() if "zanzibar" in m.text)
    tab.view.verticalScrollBar().setValue(0)  # scrolled away from the hit
    harness.qtbot.waitUntil(lambda: hit_message.id not in tab.view.visible_message_ids(), timeout=WAIT_MS)
    # close the tab, then find it again through the sidebar search
    window.tabs.close_tab(tab)
    harness.qtbot.keyClick(window, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    assert window.sidebar.filter.hasFocus()
    harness.qtbot.keyClicks(window.sidebar.filter, "zanzibar")
    harness.qtbot.waitUntil(lambda: window.sidebar.results.rowCount() > 0, timeout=WAIT_MS)
    result = window.sidebar.results.result(0)
    assert result is not None and result.message_id == hit_message.id
    assert "\u0002" in result.snippet  # the hit is marked for highlighting
    view = window.sidebar.hits
    rect = view.visualRect(window.sidebar.results.index(0, 0))
    harness.qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    harness.qtbot.waitUntil(lambda: window.tabs.current_tab() is not None, timeout=WAIT_MS)
    reopened = window.tabs.current_tab()
    assert reopened.session_id == result.session_id
    harness.qtbot.waitUntil(lambda: hit_message.id in reopened.view.visible_message_ids(), timeout=WAIT_MS)


def _sidebar_rect(window: Any, session_id: str) -> Any:
    idx = window.sidebar.model.index_of(session_id)
    return window.sidebar.list.visualRect(idx)


def test_rename_pin_delete_and_undo_in_sidebar(harness: Any) -> None:
    window = harness.open()
    run = harness.run
    a = run(harness.engine.sessions.new_session("Alpha notes"))
    b = run(harness.engine.sessions.new_session("Beta notes"))
    harness.qtbot.waitUntil(lambda: window.sidebar.model.session(b.id) is not None, timeout=WAIT_MS)
    sidebar = window.sidebar
    lst = sidebar.list
    # inline rename with F2
    harness.qtbot.mouseClick(
        lst.viewport(), Qt.MouseButton.LeftButton, pos=_sidebar_rect(window, a.id).center()
    )
    harness.qtbot.waitUntil(
        lambda: window.tabs.tab_for(a.id) is not None, timeout=WAIT_MS
    )  # a click opens it
    lst.setFocus()
    lst.setCurrentIndex(sidebar.model.index_of(a.id))
    harness.qtbot.keyClick(lst, Qt.Key.Key_F2)
    editor = QApplication.focusWidget()
    assert editor is not None and editor.objectName() == "RenameEditor"
    editor.selectAll()
    harness.qtbot.keyClicks(editor, "Alpha, renamed")
    harness.qtbot.keyClick(editor, Qt.Key.Key_Return)
    harness.qtbot.waitUntil(
        lambda: (
            run(harness.engine.sessions.list_sessions())
            and any(s.title == "Alpha, renamed" for s in run(harness.engine.sessions.list_sessions()))
        ),
        timeout=WAIT_MS,
    )
    harness.qtbot.waitUntil(
        lambda: window.tabs.tabText(window.tabs.indexOf(window.tabs.tab_for(a.id))) == "Alpha, renamed",
        timeout=WAIT_MS,
    )
    # pin through the context menu's action
    menu = sidebar.chat_actions.build_menu(sidebar.model.session(b.id))
    pin = next(act for act in menu.actions() if act.text() == "Pin")
    pin.trigger()
    harness.qtbot.waitUntil(
        lambda: (info := sidebar.model.session(b.id)) is not None and info.pinned, timeout=WAIT_MS
    )
    assert sidebar.model.data(sidebar.model.index(0, 0)) == "Pinned"
    assert sidebar.model.data(sidebar.model.index(1, 0), SessionIdRole) == b.id
    # delete with the Delete key, then undo from the bar
    lst.setFocus()
    lst.setCurrentIndex(sidebar.model.index_of(b.id))
    harness.qtbot.keyClick(lst, Qt.Key.Key_Delete)
    harness.qtbot.waitUntil(lambda: sidebar.model.session(b.id) is None, timeout=WAIT_MS)
    assert sidebar.undo_bar.isVisible()
    harness.qtbot.mouseClick(sidebar.undo_bar.button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: sidebar.model.session(b.id) is not None, timeout=WAIT_MS)
    assert not sidebar.undo_bar.isVisible()
    # delete again and let the undo window pass: gone from the store
    harness.engine.sessions.undo_seconds = 0.05
    sidebar.chat_actions.delete(b.id)
    harness.qtbot.waitUntil(lambda: run(harness.engine.store.get_session(b.id)) is None, timeout=WAIT_MS)
    assert sidebar.model.session(b.id) is None


def test_provider_setup_in_settings(harness: Any) -> None:
    window = harness.open(provider=False)
    assert window.empty.isVisible()
    assert window.empty.provider_button.isVisible()
    harness.qtbot.mouseClick(window.empty.provider_button, Qt.MouseButton.LeftButton)
    dialog = window._settings_dialog
    harness.qtbot.waitUntil(lambda: dialog.isVisible() and dialog.loaded.done(), timeout=WAIT_MS)
    page = dialog.providers
    harness.qtbot.keyClicks(page.name, "local")
    harness.qtbot.keyClicks(page.base_url, harness.server.openai_base_url)
    harness.qtbot.keyClicks(page.api_key, "sk-secret-123")
    harness.qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: page.message.text().startswith("Connected"), timeout=WAIT_MS)
    assert page.model.count() == 2
    page.model.setCurrentIndex(page.model.findText("gpt-4o-mini"))
    harness.qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: page.message.text().startswith("Saved"), timeout=WAIT_MS)
    providers = harness.run(harness.engine.providers.list_providers())
    assert [(p.name, p.default_model) for p in providers] == [("local", "gpt-4o-mini")]
    assert harness.engine.providers.has_api_key("local")
    assert page.api_key.text() == ""  # never shown back
    assert "keychain" in page.api_key.placeholderText()
    dialog.close_and_save()
    harness.qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=WAIT_MS)
    harness.qtbot.waitUntil(lambda: window.empty.new_button.isVisible(), timeout=WAIT_MS)
    # and the app can chat through it
    harness.server.enqueue(reply("Hi from local."))
    harness.qtbot.mouseClick(window.empty.new_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: window.tabs.current_tab() is not None, timeout=WAIT_MS)
    tab = window.tabs.current_tab()
    type_and_send(harness.qtbot, tab, "hello")
    wait_idle(harness, tab)
    assert texts(tab) == ["hello", "Hi from local."]
