"""Quick ask, driven as a person would: open it, type, see the reply stream, Esc, Continue in window."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QKeySequence
from tests.support.sse_server import openai_text_stream, split_text, sse_response
from tests.support.ui_driving import texts, wait_idle
from tests.support.waiting import WAIT_MS

from threadline.ui.quick_ask.shortcuts.base import SHORTCUT_SETTING

REPLY = " ".join(f"word{i}" for i in range(120))


def reply(text: str, delay: float = 0.0) -> Any:
    return sse_response(openai_text_stream(split_text(text, 4)), chunk_delay=delay)


def open_quick_ask(harness: Any, *, about_selection: bool = False) -> Any:
    window = harness.window
    for action in window.menus.titles["file"].actions():
        wanted = "Ask About the &Selection…" if about_selection else "&Quick Ask…"
        if action.text() == wanted:
            action.trigger()
            break
    else:
        raise AssertionError("no Quick Ask item in the File menu")
    qa = window.quick_ask
    harness.qtbot.waitUntil(
        lambda: qa.window is not None and qa.window.isVisible() and qa.tab is not None, timeout=WAIT_MS
    )
    return qa


def test_ask_streams_in_quick_ask_esc_hides_and_continue_opens_the_tab(harness: Any) -> None:
    harness.server.enqueue(reply(REPLY, delay=0.01))
    window = harness.open()
    qa = open_quick_ask(harness)
    card = qa.window
    assert card.windowTitle().startswith("Quick ask")
    flags = card.windowFlags()
    assert flags & Qt.WindowType.FramelessWindowHint and flags & Qt.WindowType.WindowStaysOnTopHint
    assert not qa.tab.chat_split.isVisible()  # an empty ask is only the composer
    harness.qtbot.waitUntil(lambda: card.height() < 300, timeout=WAIT_MS)
    compact_height = card.height()
    assert window.tabs.count() == 0  # the ask is not a tab of the window

    tab = qa.tab
    harness.qtbot.waitUntil(lambda: tab.composer.edit.hasFocus(), timeout=WAIT_MS)
    harness.qtbot.keyClicks(tab.composer.edit, "Count for me")
    harness.qtbot.keyClick(tab.composer.edit, Qt.Key.Key_Return)
    # The reply streams in the Quick ask window, which grows to show it.
    harness.qtbot.waitUntil(
        lambda: len(texts(tab)) == 2 and 0 < len(texts(tab)[1]) < len(REPLY), timeout=WAIT_MS
    )
    assert tab.chat_split.isVisible() and card.height() > compact_height
    wait_idle(harness, tab)
    assert texts(tab) == ["Count for me", REPLY]

    # Esc hides it; the chat is an ordinary session in the store.
    harness.qtbot.keyClick(tab.composer.edit, Qt.Key.Key_Escape)
    assert not card.isVisible()
    sessions = harness.run(harness.engine.sessions.list_sessions(limit=100))
    assert tab.session_id in [s.id for s in sessions]

    # Opened again, it shows the same chat; Continue in window makes it a tab there.
    qa = open_quick_ask(harness)
    assert qa.tab is tab
    harness.qtbot.mouseClick(card.continue_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: window.tabs.tab_for(tab.session_id) is not None, timeout=WAIT_MS)
    moved = window.tabs.current_tab()
    assert moved.session_id == tab.session_id
    assert texts(moved) == ["Count for me", REPLY]
    assert not card.isVisible() and qa.tab is None


def test_esc_while_replying_hides_and_the_reply_goes_on(harness: Any) -> None:
    harness.server.enqueue(reply(REPLY, delay=0.02))
    harness.open()
    qa = open_quick_ask(harness)
    tab = qa.tab
    harness.qtbot.keyClicks(tab.composer.edit, "Keep going")
    harness.qtbot.keyClick(tab.composer.edit, Qt.Key.Key_Return)
    harness.qtbot.waitUntil(lambda: tab.busy, timeout=WAIT_MS)
    harness.qtbot.keyClick(tab.view, Qt.Key.Key_Escape)  # the view's Esc would stop the reply
    assert not qa.window.isVisible()
    wait_idle(harness, tab)
    assert texts(tab) == ["Keep going", REPLY]


def test_new_starts_another_chat_and_reuses_an_empty_one(harness: Any) -> None:
    harness.server.enqueue(reply("First answer."))
    harness.open()
    qa = open_quick_ask(harness)
    empty = qa.tab
    harness.qtbot.mouseClick(qa.window.new_button, Qt.MouseButton.LeftButton)
    assert qa.tab is empty  # still empty: no second empty chat
    harness.qtbot.keyClicks(empty.composer.edit, "Question one")
    harness.qtbot.keyClick(empty.composer.edit, Qt.Key.Key_Return)
    wait_idle(harness, empty)
    harness.qtbot.mouseClick(qa.window.new_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: qa.tab is not None and qa.tab is not empty, timeout=WAIT_MS)
    assert qa.tab.session_id != empty.session_id
    assert not qa.tab.chat_split.isVisible()


def test_ask_about_the_selection_quotes_it(harness: Any) -> None:
    harness.open()
    clipboard = QGuiApplication.clipboard()
    clipboard.setText("The first line\n\nand the third")
    qa = open_quick_ask(harness, about_selection=True)
    harness.qtbot.waitUntil(lambda: qa.tab.composer.text() != "", timeout=WAIT_MS)
    assert qa.tab.composer.text() == "> The first line\n>\n> and the third\n\n"


def test_settings_page_says_where_no_shortcut_works_and_keeps_the_choice(harness: Any) -> None:
    window = harness.open()
    window.open_settings("quick-ask")
    dialog = window._settings_dialog
    page = dialog.pages.currentWidget()
    assert dialog.pages.tabText(dialog.pages.currentIndex()) == "Quick ask"
    # Offscreen there is no desktop: the row says so and shows the command to bind instead.
    harness.qtbot.waitUntil(lambda: "not available" in page.state.text(), timeout=WAIT_MS)
    assert "threadline --quick-ask" in page.state.text()
    assert page.command.text() == "threadline --quick-ask"
    assert page.editor.keySequence() == QKeySequence("Ctrl+Alt+Space")
    page.editor.setFocus()
    harness.qtbot.keyClick(
        page.editor, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )
    page.editor.editingFinished.emit()
    harness.qtbot.waitUntil(
        lambda: harness.run(harness.engine.settings.get_setting(SHORTCUT_SETTING)) == "Ctrl+Shift+K",
        timeout=WAIT_MS,
    )
    assert window.quick_ask.shortcut.sequence == QKeySequence("Ctrl+Shift+K")
    dialog.close()


def test_new_after_a_reply_shrinks_back_to_the_composer(harness: Any) -> None:
    harness.server.enqueue(reply("An answer."))
    harness.open()
    qa = open_quick_ask(harness)
    first = qa.tab
    compact = qa.window.height()
    harness.qtbot.keyClicks(first.composer.edit, "A question")
    harness.qtbot.keyClick(first.composer.edit, Qt.Key.Key_Return)
    wait_idle(harness, first)
    assert qa.window.height() > compact
    harness.qtbot.keyClick(first.composer.edit, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    harness.qtbot.waitUntil(lambda: qa.tab is not None and qa.tab is not first, timeout=WAIT_MS)
    harness.qtbot.waitUntil(lambda: qa.window.height() < 300, timeout=WAIT_MS)
