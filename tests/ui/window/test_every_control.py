"""No dead controls: every menu action, banner button and context-menu entry is pressed and does something.

Each control is pressed as a person would: menus are opened from the menu bar and the
entry is chosen with the keyboard (Return on the highlighted entry), context menus are
opened with a context-menu event on the row and chosen the same way, banner buttons
are clicked with the mouse. Each check then looks at the effect a person would see (a
tab opened, a dialog shown, a file written, text changed, a setting stored).

The tables below are the registry of expectations. The walks fail when a control
appears that has no entry, so a new control cannot be added without a test that
presses it, and a control whose check finds no effect is a dead one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtGui import QAction, QContextMenuEvent, QGuiApplication
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractItemView, QApplication, QFileDialog, QLineEdit, QMenu, QMessageBox
from tests.support.interrupted_tools import seed_interrupted_round
from tests.support.sse_server import (
    ScriptedResponse,
    openai_auth_error,
    openai_context_length_error,
    openai_error,
    openai_error_body,
    openai_model_not_found,
    openai_server_error,
    openai_text_stream,
    split_text,
    sse_response,
)
from tests.support.ui_driving import new_tab_by_click, texts, type_and_send, wait_idle

from threadline.core.messages import INTERRUPTED_RESULT_TEXT, Message, MessageKind, MessageStatus
from threadline.core.session import SessionInfo
from threadline.engine.events import ErrorAction
from threadline.ui.common.error_banner import ACTION_TEXT
from threadline.ui.common.theme import ThemeChoice
from threadline.ui.sessions.session_list_model import SessionRole

TIMEOUT = 15000


def reply(text: str, **faults: Any) -> ScriptedResponse:
    return sse_response(openai_text_stream(split_text(text, 4)), **faults)


def plain(text: str) -> str:
    """A menu entry's text as read aloud: no mnemonic ampersand, no shortcut hint after a tab."""
    return text.split("\t")[0].replace("&&", "\0").replace("&", "").replace("\0", "&")


# -- pressing things ---------------------------------------------------------------------------


def menu_paths(window: Any) -> dict[str, list[QAction]]:
    """Every leaf action of the menu bar, by its plain text, with the menu actions leading to it."""
    found: dict[str, list[QAction]] = {}

    def walk(actions: list[QAction], trail: list[QAction]) -> None:
        for action in actions:
            if action.isSeparator():
                continue
            menu = action.menu()
            if isinstance(menu, QMenu):
                walk(menu.actions(), [*trail, action])
            else:
                assert plain(action.text()) not in found, f"two menu entries read {action.text()!r}"
                found[plain(action.text())] = [*trail, action]

    walk(window.menuBar().actions(), [])
    return found


def choose_from_menu_bar(harness: Any, text: str) -> None:
    """Open the entry's menu from the menu bar, walk into submenus with →, press Return on it."""
    qtbot = harness.qtbot
    window = harness.window
    trail = menu_paths(window)[text]
    top, *submenus, leaf = trail
    window.menuBar().setActiveAction(top)
    menu = top.menu()
    qtbot.waitUntil(menu.isVisible, timeout=TIMEOUT)
    for sub in submenus:
        menu.setActiveAction(sub)
        qtbot.keyClick(menu, Qt.Key.Key_Right)
        menu = sub.menu()
        qtbot.waitUntil(menu.isVisible, timeout=TIMEOUT)
    assert leaf.isEnabled(), f"{text} is disabled"
    menu.setActiveAction(leaf)
    qtbot.keyClick(menu, Qt.Key.Key_Return)


def choose_from_context_menu(widget: Any, pos: QPoint, text: str) -> list[str]:
    """Open the widget's context menu at ``pos`` and choose ``text`` with the keyboard.

    Returns the plain texts of every entry the menu offered (the walks check them all
    against the tables). The menu runs its own event loop, so the choice is made from
    a timer that waits for the popup.
    """
    offered: list[str] = []

    def choose() -> None:
        menu = QApplication.activePopupWidget()
        if not isinstance(menu, QMenu):
            QTimer.singleShot(10, choose)
            return
        entries = [a for a in menu.actions() if not a.isSeparator()]
        offered.extend(plain(a.text()) for a in entries)
        action = next((a for a in entries if plain(a.text()) == text), None)
        if action is None:
            menu.close()
            return
        menu.setActiveAction(action)
        QTest.keyClick(menu, Qt.Key.Key_Return)

    QTimer.singleShot(0, choose)
    event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, widget.mapToGlobal(pos))
    QApplication.sendEvent(widget, event)
    return offered


def when_modal(qtbot: Any, handle: Callable[[Any], None]) -> None:
    """Answer the next modal dialog (it blocks the action that opened it) with ``handle``."""

    def look() -> None:
        dialog = QApplication.activeModalWidget()
        if dialog is None or not dialog.isVisible():
            QTimer.singleShot(10, look)
            return
        handle(dialog)

    QTimer.singleShot(0, look)


# -- the main window's menus -------------------------------------------------------------------


def chat_with_reply(harness: Any, prompt: str = "Q1", answer: str = "A1") -> Any:
    harness.server.enqueue(reply(answer))
    tab = new_tab_by_click(harness)
    type_and_send(harness.qtbot, tab, prompt)
    wait_idle(harness, tab)
    return tab


def check_new_chat(harness: Any) -> None:
    before = harness.window.tabs.count()
    choose_from_menu_bar(harness, "New Chat")
    harness.qtbot.waitUntil(lambda: harness.window.tabs.count() == before + 1, timeout=TIMEOUT)


def check_close_tab(harness: Any) -> None:
    new_tab_by_click(harness)
    before = harness.window.tabs.count()
    choose_from_menu_bar(harness, "Close Tab")
    harness.qtbot.waitUntil(lambda: harness.window.tabs.count() == before - 1, timeout=TIMEOUT)


def check_quick_ask(harness: Any, about_selection: bool = False) -> None:
    """Quick ask opens above the window with its composer (tests/ui/quick_ask/ has the rest)."""
    if about_selection:
        QGuiApplication.clipboard().setText("Quoted words")
    choose_from_menu_bar(harness, "Ask About the Selection…" if about_selection else "Quick Ask…")
    qa = harness.window.quick_ask
    harness.qtbot.waitUntil(
        lambda: qa.window is not None and qa.window.isVisible() and qa.tab is not None, timeout=TIMEOUT
    )
    if about_selection:
        harness.qtbot.waitUntil(lambda: qa.tab.composer.text() == "> Quoted words\n\n", timeout=TIMEOUT)
    qa.hide()


def check_export(harness: Any) -> None:
    chat_with_reply(harness, "Export me", "Exported answer")
    target = harness.data_dir.parent / "exported.md"

    def save_as(dialog: Any) -> None:
        assert isinstance(dialog, QFileDialog)
        name = dialog.findChild(QLineEdit, "fileNameEdit")
        name.setText(str(target))
        QTest.keyClick(name, Qt.Key.Key_Return)

    when_modal(harness.qtbot, save_as)
    choose_from_menu_bar(harness, "Export as Markdown…")
    harness.qtbot.waitUntil(target.exists, timeout=TIMEOUT)
    harness.qtbot.waitUntil(lambda: "Exported answer" in target.read_text(encoding="utf-8"), timeout=TIMEOUT)


def check_import(harness: Any) -> None:
    from threadline.interchange.threadline_json import dumps
    from threadline.ui.window.import_dialog import ImportReportDialog

    source = harness.data_dir.parent / "to-import.json"
    prompt = Message.prompt("imported words", id="imported-prompt")
    chat = (SessionInfo(id="imported-chat", title="Imported"), [prompt])
    source.write_text(dumps([chat]), encoding="utf-8")

    def open_file(dialog: Any) -> None:
        assert isinstance(dialog, QFileDialog)
        name = dialog.findChild(QLineEdit, "fileNameEdit")
        name.setText(str(source))
        QTest.keyClick(name, Qt.Key.Key_Return)

    when_modal(harness.qtbot, open_file)
    choose_from_menu_bar(harness, "Import…")
    harness.qtbot.waitUntil(
        lambda: any(d.isVisible() for d in harness.window.findChildren(ImportReportDialog)), timeout=TIMEOUT
    )
    harness.qtbot.waitUntil(
        lambda: harness.window.sidebar.model.index_of("imported-chat").isValid(), timeout=TIMEOUT
    )


def check_install_extension(harness: Any) -> None:
    from tests.support.mcp_bundles import write_bundle

    from threadline.ui.settings.extension_install_dialog import ExtensionInstallDialog

    source = write_bundle(harness.data_dir.parent / "hello.mcpb")

    def open_file(dialog: Any) -> None:
        assert isinstance(dialog, QFileDialog)
        name = dialog.findChild(QLineEdit, "fileNameEdit")
        name.setText(str(source))
        QTest.keyClick(name, Qt.Key.Key_Return)

    def shown() -> Any:
        return next((d for d in harness.window.findChildren(ExtensionInstallDialog) if d.isVisible()), None)

    when_modal(harness.qtbot, open_file)
    choose_from_menu_bar(harness, "Install MCP Extension…")
    harness.qtbot.waitUntil(lambda: shown() is not None and shown().preview is not None, timeout=TIMEOUT)
    dialog = shown()
    assert dialog.title.text() == "Hello Tools 1.0.0" and dialog.install_button.isEnabled()
    dialog.reject()


def check_export_chats(harness: Any) -> None:
    from threadline.ui.window.export_dialog import ExportDialog

    chat_with_reply(harness, "Export me", "Exported answer")
    target = harness.data_dir.parent / "exported.json"

    def save_as(dialog: Any) -> None:
        assert isinstance(dialog, QFileDialog)
        name = dialog.findChild(QLineEdit, "fileNameEdit")
        name.setText(str(target))
        QTest.keyClick(name, Qt.Key.Key_Return)

    def choose(dialog: Any) -> None:
        assert isinstance(dialog, ExportDialog)
        next(b for b in dialog.formats.buttons() if b.text().startswith("Threadline JSON")).click()
        when_modal(harness.qtbot, save_as)
        dialog.export_button.click()

    when_modal(harness.qtbot, choose)
    choose_from_menu_bar(harness, "Export…")
    harness.qtbot.waitUntil(target.exists, timeout=TIMEOUT)
    harness.qtbot.waitUntil(lambda: "Exported answer" in target.read_text(encoding="utf-8"), timeout=TIMEOUT)


def settings_dialog_open(harness: Any) -> Any:
    from threadline.ui.settings.settings_dialog import SettingsDialog

    def shown() -> Any:
        return next(
            (w for w in QApplication.topLevelWidgets() if isinstance(w, SettingsDialog) and w.isVisible()),
            None,
        )

    harness.qtbot.waitUntil(lambda: shown() is not None, timeout=TIMEOUT)
    return shown()


def close_settings(harness: Any, dialog: Any) -> None:
    harness.qtbot.waitUntil(dialog.loaded.done, timeout=TIMEOUT)
    harness.qtbot.waitUntil(lambda: not [t for t in _tasks() if "open_page" in repr(t)], timeout=TIMEOUT)
    QTest.keyClick(dialog, Qt.Key.Key_Escape)
    harness.qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=TIMEOUT)


def _tasks() -> list[Any]:
    import asyncio

    return [t for t in asyncio.all_tasks() if not t.done()]


def check_settings(harness: Any) -> None:
    choose_from_menu_bar(harness, "Settings…")
    dialog = settings_dialog_open(harness)
    assert dialog.pages.currentWidget() is dialog.providers
    close_settings(harness, dialog)


def check_local_models(harness: Any) -> None:
    choose_from_menu_bar(harness, "Local Models…")
    page = harness.window.models_page
    harness.qtbot.waitUntil(lambda: page.isVisible() and page.installed.loaded >= 1, timeout=TIMEOUT)
    assert page.windowTitle() == "Local Models"
    page.close()


def check_quit(harness: Any) -> None:
    with harness.qtbot.waitSignal(harness.window.closed, timeout=TIMEOUT):
        choose_from_menu_bar(harness, "Quit")
    assert not harness.window.isVisible()
    harness.run(harness.engine.aclose())
    harness.window = None
    harness.engine = None


def focused() -> Any:
    return QApplication.focusWidget()


def check_search_chats(harness: Any) -> None:
    tab = new_tab_by_click(harness)
    tab.focus_composer()
    harness.qtbot.waitUntil(lambda: focused() is tab.composer.edit, timeout=TIMEOUT)
    choose_from_menu_bar(harness, "Search Chats")
    harness.qtbot.waitUntil(lambda: focused() is harness.window.sidebar.filter, timeout=TIMEOUT)


def check_write_a_message(harness: Any) -> None:
    tab = new_tab_by_click(harness)
    harness.window.sidebar.filter.setFocus()
    harness.qtbot.waitUntil(lambda: focused() is harness.window.sidebar.filter, timeout=TIMEOUT)
    choose_from_menu_bar(harness, "Write a Message")
    harness.qtbot.waitUntil(lambda: focused() is tab.composer.edit, timeout=TIMEOUT)


def check_stop_reply(harness: Any) -> None:
    harness.server.enqueue(reply(" ".join(f"w{i}" for i in range(50)), stall_after=4))
    tab = new_tab_by_click(harness)
    type_and_send(harness.qtbot, tab, "Talk")
    harness.qtbot.waitUntil(lambda: len(texts(tab)) == 2 and texts(tab)[1] != "", timeout=TIMEOUT)
    choose_from_menu_bar(harness, "Stop Reply")
    wait_idle(harness, tab)
    assert tab.live.conversation.path()[-1].status is MessageStatus.CANCELLED


def two_tabs(harness: Any) -> tuple[Any, Any]:
    return new_tab_by_click(harness), new_tab_by_click(harness)


def check_next_tab(harness: Any) -> None:
    first, second = two_tabs(harness)
    harness.window.tabs.setCurrentWidget(first)
    choose_from_menu_bar(harness, "Next Tab")
    harness.qtbot.waitUntil(lambda: harness.window.tabs.current_tab() is second, timeout=TIMEOUT)


def check_previous_tab(harness: Any) -> None:
    first, second = two_tabs(harness)
    harness.window.tabs.setCurrentWidget(second)
    choose_from_menu_bar(harness, "Previous Tab")
    harness.qtbot.waitUntil(lambda: harness.window.tabs.current_tab() is first, timeout=TIMEOUT)


def check_show_sidebar(harness: Any) -> None:
    sidebar = harness.window.sidebar
    assert sidebar.isVisible()
    choose_from_menu_bar(harness, "Show Sidebar")
    harness.qtbot.waitUntil(lambda: not sidebar.isVisible(), timeout=TIMEOUT)
    choose_from_menu_bar(harness, "Show Sidebar")
    harness.qtbot.waitUntil(sidebar.isVisible, timeout=TIMEOUT)


def check_branch_map(harness: Any) -> None:
    tab = new_tab_by_click(harness)
    choose_from_menu_bar(harness, "Branch Map")
    harness.qtbot.waitUntil(tab.branch_map.isVisible, timeout=TIMEOUT)
    harness.qtbot.waitUntil(tab.branch_map.map.hasFocus, timeout=TIMEOUT)
    choose_from_menu_bar(harness, "Branch Map")
    harness.qtbot.waitUntil(lambda: not tab.branch_map.isVisible(), timeout=TIMEOUT)


def zoom_check(text: str, start: int, expected: int) -> Callable[[Any], None]:
    def check(harness: Any) -> None:
        zoom = harness.window.zoom
        zoom.set_level(start)
        choose_from_menu_bar(harness, text)
        harness.qtbot.waitUntil(lambda: zoom.level == expected, timeout=TIMEOUT)
        harness.qtbot.waitUntil(
            lambda: harness.run(harness.engine.settings.get_setting("ui.text_zoom", None)) == expected,
            timeout=TIMEOUT,
        )

    return check


def theme_check(text: str, choice: ThemeChoice) -> Callable[[Any], None]:
    def check(harness: Any) -> None:
        other = ThemeChoice.DARK if choice is not ThemeChoice.DARK else ThemeChoice.LIGHT
        harness.window.set_theme(other)
        choose_from_menu_bar(harness, text)
        harness.qtbot.waitUntil(lambda: harness.window.theme.choice is choice, timeout=TIMEOUT)
        harness.qtbot.waitUntil(
            lambda: harness.run(harness.engine.settings.get_setting("ui.theme", None)) == choice.value,
            timeout=TIMEOUT,
        )

    return check


def check_about(harness: Any) -> None:
    from threadline import __version__

    seen: list[str] = []

    def read_and_close(dialog: Any) -> None:
        assert isinstance(dialog, QMessageBox)
        seen.append(dialog.text())
        QTest.keyClick(dialog, Qt.Key.Key_Escape)

    when_modal(harness.qtbot, read_and_close)
    choose_from_menu_bar(harness, "About Threadline")
    harness.qtbot.waitUntil(lambda: bool(seen), timeout=TIMEOUT)
    assert __version__ in seen[0] and "Threadline" in seen[0]


def check_list_all_tabs(harness: Any) -> None:
    first, second = two_tabs(harness)
    offered: list[str] = []

    def choose_first() -> None:
        menu = QApplication.activePopupWidget()
        if not isinstance(menu, QMenu):
            QTimer.singleShot(10, choose_first)
            return
        entries = [a for a in menu.actions() if not a.isSeparator()]
        offered.extend(plain(a.text()) for a in entries)
        menu.setActiveAction(entries[0])
        QTest.keyClick(menu, Qt.Key.Key_Return)

    QTimer.singleShot(0, choose_first)
    choose_from_menu_bar(harness, "List All Tabs…")
    harness.qtbot.waitUntil(lambda: harness.window.tabs.current_tab() is first, timeout=TIMEOUT)
    assert offered == [first.title, second.title]


def check_next_pane(harness: Any) -> None:
    tab = new_tab_by_click(harness)
    tab.focus_composer()
    harness.qtbot.waitUntil(lambda: focused() is tab.composer.edit, timeout=TIMEOUT)
    choose_from_menu_bar(harness, "Next Pane")
    harness.qtbot.waitUntil(lambda: harness.window.sidebar.isAncestorOf(focused()), timeout=TIMEOUT)


def check_previous_pane(harness: Any) -> None:
    tab = new_tab_by_click(harness)
    tab.focus_composer()
    harness.qtbot.waitUntil(lambda: focused() is tab.composer.edit, timeout=TIMEOUT)
    choose_from_menu_bar(harness, "Previous Pane")
    harness.qtbot.waitUntil(lambda: focused() is tab.view, timeout=TIMEOUT)


def check_keyboard_shortcuts(harness: Any) -> None:
    seen: list[list[tuple[str, str, str]]] = []

    def read_and_close(dialog: Any) -> None:
        seen.append(dialog.rows())
        QTest.keyClick(dialog, Qt.Key.Key_Escape)

    when_modal(harness.qtbot, read_and_close)
    choose_from_menu_bar(harness, "Keyboard Shortcuts")
    harness.qtbot.waitUntil(lambda: bool(seen), timeout=TIMEOUT)
    assert any(row[:2] == ("File", "Close Tab") and "Ctrl+W" in row[2] for row in seen[0])


MENU_CHECKS: dict[str, Callable[[Any], None]] = {
    "New Chat": check_new_chat,
    "Close Tab": check_close_tab,
    "Quick Ask…": check_quick_ask,
    "Ask About the Selection…": lambda harness: check_quick_ask(harness, about_selection=True),
    "Export as Markdown…": check_export,
    "Import…": check_import,
    "Export…": check_export_chats,
    "Install MCP Extension…": check_install_extension,
    "Settings…": check_settings,
    "Local Models…": check_local_models,
    "Quit": check_quit,
    "Search Chats": check_search_chats,
    "Write a Message": check_write_a_message,
    "Stop Reply": check_stop_reply,
    "Next Tab": check_next_tab,
    "Previous Tab": check_previous_tab,
    "List All Tabs…": check_list_all_tabs,
    "Next Pane": check_next_pane,
    "Previous Pane": check_previous_pane,
    "Keyboard Shortcuts": check_keyboard_shortcuts,
    "Show Sidebar": check_show_sidebar,
    "Branch Map": check_branch_map,
    "Zoom In": zoom_check("Zoom In", 0, 1),
    "Zoom Out": zoom_check("Zoom Out", 0, -1),
    "Actual Size": zoom_check("Actual Size", 3, 0),
    "Follow System": theme_check("Follow System", ThemeChoice.SYSTEM),
    "Light": theme_check("Light", ThemeChoice.LIGHT),
    "Dark": theme_check("Dark", ThemeChoice.DARK),
    "High Contrast": theme_check("High Contrast", ThemeChoice.HIGH_CONTRAST),
    "About Threadline": check_about,
}
"""What each menu entry must do, by the text a person reads. A new entry needs a row here."""


def test_every_menu_entry_has_an_expectation(harness: Any) -> None:
    window = harness.open()
    entries = set(menu_paths(window))
    assert entries - set(MENU_CHECKS) == set(), "menu entries nobody checks: add them to MENU_CHECKS"
    assert set(MENU_CHECKS) - entries == set(), "MENU_CHECKS names entries the menus no longer have"


@pytest.mark.parametrize("text", sorted(MENU_CHECKS))
def test_menu_entry_does_what_it_says(harness: Any, text: str) -> None:
    harness.open()
    MENU_CHECKS[text](harness)


# -- the banner's buttons ------------------------------------------------------------------------


def banner_with(harness: Any, error: ScriptedResponse, action: ErrorAction) -> Any:
    """A chat whose last send failed with ``error``: the banner shows, offering ``action``."""
    harness.server.enqueue(error, error)  # the retry policy asks twice
    tab = new_tab_by_click(harness)
    type_and_send(harness.qtbot, tab, "Q1")
    harness.qtbot.waitUntil(lambda: tab.banner.error is not None, timeout=TIMEOUT)
    wait_idle(harness, tab)
    harness.server.clear()
    assert tab.banner.isVisible() and tab.banner.button(action) is not None, tab.banner.error
    return tab


def click_banner(harness: Any, tab: Any, action: ErrorAction) -> None:
    button = tab.banner.button(action)
    assert button is not None and button.text() == ACTION_TEXT[action]
    harness.qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def check_banner_retry(harness: Any) -> None:
    tab = banner_with(harness, openai_server_error(500), ErrorAction.RETRY)
    harness.server.enqueue(reply("Second time lucky"))
    click_banner(harness, tab, ErrorAction.RETRY)
    harness.qtbot.waitUntil(lambda: texts(tab)[-1] == "Second time lucky", timeout=TIMEOUT)
    wait_idle(harness, tab)
    assert not tab.banner.isVisible()


def check_banner_add_key(harness: Any) -> None:
    tab = banner_with(harness, openai_auth_error(), ErrorAction.ADD_KEY)
    click_banner(harness, tab, ErrorAction.ADD_KEY)
    dialog = settings_dialog_open(harness)
    assert dialog.pages.currentWidget() is dialog.providers
    # the provider that refused the key is selected, its key field ready for typing
    harness.qtbot.waitUntil(lambda: dialog.providers.name.text() == "replay", timeout=TIMEOUT)
    harness.qtbot.waitUntil(lambda: focused() is dialog.providers.api_key, timeout=TIMEOUT)
    close_settings(harness, dialog)


def check_banner_settings(harness: Any) -> None:
    denied = openai_error(403, openai_error_body("You may not use this model.", "permission_error"))
    tab = banner_with(harness, denied, ErrorAction.SETTINGS)
    click_banner(harness, tab, ErrorAction.SETTINGS)
    dialog = settings_dialog_open(harness)
    assert dialog.pages.currentWidget() is dialog.providers
    close_settings(harness, dialog)


def check_banner_set_context_window(harness: Any) -> None:
    # An empty 200 reply (a llama.cpp server over its window) while the model's window is unknown.
    tab = new_tab_by_click(harness)
    harness.run(harness.engine.sessions.set_session_model(tab.session_id, "replay", "tiny-local-model"))
    harness.qtbot.waitUntil(lambda: tab.live.info.model == "tiny-local-model", timeout=TIMEOUT)
    harness.server.enqueue(ScriptedResponse(status=200, headers={"Content-Type": "text/event-stream"}))
    type_and_send(harness.qtbot, tab, "Q1 " + "word " * 96)
    harness.qtbot.waitUntil(lambda: tab.banner.error is not None, timeout=TIMEOUT)
    wait_idle(harness, tab)
    click_banner(harness, tab, ErrorAction.SET_CONTEXT_WINDOW)
    dialog = settings_dialog_open(harness)
    assert dialog.pages.currentWidget() is dialog.models
    close_settings(harness, dialog)


def check_banner_pick_model(harness: Any) -> None:
    tab = banner_with(harness, openai_model_not_found("gpt-4o-mini"), ErrorAction.PICK_MODEL)
    click_banner(harness, tab, ErrorAction.PICK_MODEL)
    picker = tab.composer.model_picker
    harness.qtbot.waitUntil(lambda: picker.view().isVisible(), timeout=TIMEOUT)
    picker.hidePopup()


def check_banner_compact(harness: Any) -> None:
    # One turn too long for the model: nothing older to summarise automatically, so the
    # banner offers Compact, which summarises all of it.
    tab = banner_with(harness, openai_context_length_error(), ErrorAction.COMPACT)
    harness.server.enqueue(reply("The user asked Q1."))
    click_banner(harness, tab, ErrorAction.COMPACT)
    assert tab.banner.label.text() == "Summarising earlier messages…"
    harness.qtbot.waitUntil(
        lambda: tab.live.conversation.path()[-1].kind is MessageKind.SUMMARY, timeout=TIMEOUT
    )
    harness.qtbot.waitUntil(lambda: not tab.banner.isVisible(), timeout=TIMEOUT)


def check_banner_new_session(harness: Any) -> None:
    tab = banner_with(harness, openai_context_length_error(), ErrorAction.NEW_SESSION)
    click_banner(harness, tab, ErrorAction.NEW_SESSION)
    harness.qtbot.waitUntil(lambda: harness.window.tabs.current_tab() not in (None, tab), timeout=TIMEOUT)
    assert harness.window.tabs.current_tab().live.conversation.path() == []


def interrupted_tab(harness: Any) -> Any:
    """A chat a crash left with a tool round cut short: the banner offers Run again and Skip."""
    session_id = harness.run(seed_interrupted_round(harness.engine, harness.data_dir))
    tab = harness.run(harness.window.session_tabs.open(session_id, focus=True))
    harness.qtbot.waitUntil(lambda: tab.banner.button(ErrorAction.RERUN_TOOLS) is not None, timeout=TIMEOUT)
    return tab


def check_banner_rerun_tools(harness: Any) -> None:
    tab = interrupted_tab(harness)
    harness.server.enqueue(reply("Listed it again"))
    click_banner(harness, tab, ErrorAction.RERUN_TOOLS)
    harness.qtbot.waitUntil(lambda: texts(tab)[-1:] == ["Listed it again"], timeout=TIMEOUT)
    assert tab.live.conversation.path()[-2].tool_results  # the tool ran this time


def check_banner_skip_tools(harness: Any) -> None:
    tab = interrupted_tab(harness)
    click_banner(harness, tab, ErrorAction.SKIP_TOOLS)
    harness.qtbot.waitUntil(lambda: bool(tab.live.conversation.path()[-1].tool_results), timeout=TIMEOUT)
    assert tab.live.conversation.path()[-1].tool_results[0].text == INTERRUPTED_RESULT_TEXT


BANNER_CHECKS: dict[ErrorAction, Callable[[Any], None]] = {
    ErrorAction.RETRY: check_banner_retry,
    ErrorAction.ADD_KEY: check_banner_add_key,
    ErrorAction.PICK_MODEL: check_banner_pick_model,
    ErrorAction.COMPACT: check_banner_compact,
    ErrorAction.NEW_SESSION: check_banner_new_session,
    ErrorAction.SETTINGS: check_banner_settings,
    ErrorAction.SET_CONTEXT_WINDOW: check_banner_set_context_window,
    ErrorAction.RERUN_TOOLS: check_banner_rerun_tools,
    ErrorAction.SKIP_TOOLS: check_banner_skip_tools,
}
"""What each banner button must do. A new ``ErrorAction`` needs a row here (and a label)."""


def test_every_banner_action_has_a_label_and_an_expectation() -> None:
    assert set(BANNER_CHECKS) == set(ErrorAction)
    assert set(ACTION_TEXT) == set(ErrorAction)


@pytest.mark.parametrize("action", list(BANNER_CHECKS), ids=lambda a: a.value)
def test_banner_button_does_what_it_says(harness: Any, action: ErrorAction) -> None:
    harness.open()
    BANNER_CHECKS[action](harness)


def test_banner_close_button_dismisses_it(harness: Any) -> None:
    harness.open()
    tab = banner_with(harness, openai_server_error(500), ErrorAction.RETRY)
    harness.qtbot.mouseClick(tab.banner.close_button, Qt.MouseButton.LeftButton)
    assert not tab.banner.isVisible()


# -- the chat view's context menu -----------------------------------------------------------------


def wait_for(condition: Callable[[], bool], timeout: int) -> bool:
    """Wait on a condition while Qt runs (PySide's QTest has no qWaitFor)."""
    from PySide6.QtCore import QDeadlineTimer

    deadline = QDeadlineTimer(timeout)
    while not condition():
        if deadline.hasExpired():
            return False
        QTest.qWait(10)
    return True


def message_point(tab: Any, message_id: str) -> QPoint:
    view = tab.view
    assert wait_for(lambda: view.action_rect(message_id, "copy") is not None, TIMEOUT)
    rect = view.action_rect(message_id, "copy")
    return rect.center()


def choose_on_message(tab: Any, message_id: str, text: str) -> list[str]:
    return choose_from_context_menu(tab.view.viewport(), message_point(tab, message_id), text)


def check_message_copy(harness: Any) -> None:
    tab = chat_with_reply(harness, "Q1", "Copy this answer")
    QGuiApplication.clipboard().setText("")
    choose_on_message(tab, tab.live.conversation.path()[-1].id, "Copy")
    harness.qtbot.waitUntil(lambda: QGuiApplication.clipboard().text() == "Copy this answer", timeout=TIMEOUT)


def check_message_select_text(harness: Any) -> None:
    tab = chat_with_reply(harness)
    choose_on_message(tab, tab.live.conversation.path()[-1].id, "Select text")
    harness.qtbot.waitUntil(lambda: tab.view.selection_editor() is not None, timeout=TIMEOUT)
    assert "A1" in tab.view.selection_editor().toPlainText()


def check_message_copy_link(harness: Any) -> None:
    tab = chat_with_reply(harness, "Q1", "[the docs](https://example.org/docs)")
    reply_id = tab.live.conversation.path()[-1].id
    view = tab.view
    wait_for(lambda: view.action_rect(reply_id, "copy") is not None, TIMEOUT)
    link = view.link_point(reply_id) if hasattr(view, "link_point") else None
    if link is None:  # find the link by hovering the row's text, as a pointer would
        link = next(
            (
                QPoint(x, y)
                for y in range(0, view.viewport().height(), 4)
                for x in range(0, view.viewport().width(), 8)
                if view.hit(QPoint(x, y).toPointF()).href
            ),
            None,
        )
    assert link is not None, "the link is not painted"
    QGuiApplication.clipboard().setText("")
    choose_from_context_menu(view.viewport(), link, "Copy link address")
    harness.qtbot.waitUntil(
        lambda: QGuiApplication.clipboard().text() == "https://example.org/docs", timeout=TIMEOUT
    )


def check_message_edit(harness: Any) -> None:
    tab = chat_with_reply(harness, "Original question")
    prompt = tab.live.conversation.path()[0]
    choose_on_message(tab, prompt.id, "Edit")
    harness.qtbot.waitUntil(lambda: tab.composer.editing == prompt.id, timeout=TIMEOUT)
    assert tab.composer.text() == "Original question"


def check_message_regenerate(harness: Any) -> None:
    tab = chat_with_reply(harness, "Q1", "First answer")
    harness.server.enqueue(reply("Second answer"))
    choose_on_message(tab, tab.live.conversation.path()[-1].id, "Regenerate")
    harness.qtbot.waitUntil(lambda: texts(tab)[-1] == "Second answer", timeout=TIMEOUT)
    wait_idle(harness, tab)
    assert tab.model.version(tab.live.conversation.path()[-1].id).count == 2


def check_message_retry(harness: Any) -> None:
    harness.server.enqueue(openai_server_error(500), openai_server_error(500))
    tab = new_tab_by_click(harness)
    type_and_send(harness.qtbot, tab, "Q1")
    harness.qtbot.waitUntil(lambda: tab.banner.error is not None, timeout=TIMEOUT)
    wait_idle(harness, tab)
    failed = tab.live.conversation.path()[-1]
    assert failed.status is MessageStatus.FAILED
    harness.server.enqueue(reply("Answer after retry"))
    choose_on_message(tab, failed.id, "Retry") if failed.text else retry_failed_without_text(harness, tab)
    harness.qtbot.waitUntil(lambda: texts(tab)[-1] == "Answer after retry", timeout=TIMEOUT)


def retry_failed_without_text(harness: Any, tab: Any) -> None:
    """A failed reply with no text has no Copy button to aim at: right-click its row instead."""
    failed = tab.live.conversation.path()[-1]
    view = tab.view
    wait_for(lambda: view.action_rect(failed.id, "retry") is not None, TIMEOUT)
    choose_from_context_menu(view.viewport(), view.action_rect(failed.id, "retry").center(), "Retry")


def check_message_continue(harness: Any) -> None:
    harness.server.enqueue(reply(" ".join(f"w{i}" for i in range(50)), stall_after=4))
    tab = new_tab_by_click(harness)
    type_and_send(harness.qtbot, tab, "Talk")
    harness.qtbot.waitUntil(lambda: len(texts(tab)) == 2 and texts(tab)[1] != "", timeout=TIMEOUT)
    harness.qtbot.keyClick(tab.composer.edit, Qt.Key.Key_Escape)
    wait_idle(harness, tab)
    stopped = tab.live.conversation.path()[-1]
    assert stopped.status is MessageStatus.CANCELLED
    harness.server.enqueue(reply(" and the end."))
    choose_on_message(tab, stopped.id, "Continue")
    harness.qtbot.waitUntil(lambda: texts(tab)[-1].endswith("and the end."), timeout=TIMEOUT)
    wait_idle(harness, tab)


def check_message_copy_markdown(harness: Any) -> None:
    tab = chat_with_reply(harness, "Q1", "**Bold** answer")
    QGuiApplication.clipboard().setText("")
    choose_on_message(tab, tab.live.conversation.path()[-1].id, "Copy as Markdown")
    harness.qtbot.waitUntil(lambda: "**Bold** answer" in QGuiApplication.clipboard().text(), timeout=TIMEOUT)


def check_message_copy_conversation(harness: Any) -> None:
    tab = chat_with_reply(harness, "The question", "The answer")
    QGuiApplication.clipboard().setText("")
    choose_on_message(tab, tab.live.conversation.path()[-1].id, "Copy conversation as Markdown")
    harness.qtbot.waitUntil(
        lambda: all(t in QGuiApplication.clipboard().text() for t in ("The question", "The answer")),
        timeout=TIMEOUT,
    )


def check_message_delete(harness: Any) -> None:
    tab = chat_with_reply(harness, "Q1", "Delete me")
    reply_id = tab.live.conversation.path()[-1].id
    choose_on_message(tab, reply_id, "Delete")
    harness.qtbot.waitUntil(lambda: reply_id not in tab.live.conversation.tree, timeout=TIMEOUT)
    harness.qtbot.waitUntil(lambda: texts(tab) == ["Q1"], timeout=TIMEOUT)


def check_message_start_tangent(harness: Any) -> None:
    tab = chat_with_reply(harness, "Q1", "A1")
    reply_id = tab.live.conversation.path()[-1].id
    choose_on_message(tab, reply_id, "Start tangent from here")
    harness.qtbot.waitUntil(lambda: tab.live.conversation.tree.tangent_origin == reply_id, timeout=TIMEOUT)


def check_message_set_checkpoint(harness: Any) -> None:
    from threadline.ui.chat.controls.checkpoint_menu import CheckpointNameDialog

    tab = chat_with_reply(harness, "Q1", "A1")
    prompt_id = tab.live.conversation.path()[0].id
    choose_on_message(tab, prompt_id, "Set checkpoint here…")
    harness.qtbot.waitUntil(lambda: isinstance(tab.controls.dialog, CheckpointNameDialog), timeout=TIMEOUT)
    dialog = tab.controls.dialog
    harness.qtbot.keyClicks(dialog.name, "first question")
    harness.qtbot.keyClick(dialog.name, Qt.Key.Key_Return)
    harness.qtbot.waitUntil(
        lambda: tab.live.conversation.tree.named_checkpoints.get("first question") == prompt_id,
        timeout=TIMEOUT,
    )


def check_message_compare_versions(harness: Any) -> None:
    tab = chat_with_reply(harness, "Q1", "First answer")
    harness.server.enqueue(reply("Second answer"))
    choose_on_message(tab, tab.live.conversation.path()[-1].id, "Regenerate")
    harness.qtbot.waitUntil(lambda: texts(tab)[-1] == "Second answer", timeout=TIMEOUT)
    wait_idle(harness, tab)
    choose_on_message(tab, tab.live.conversation.path()[-1].id, "Compare versions side by side")
    harness.qtbot.waitUntil(lambda: tab.compare_view.isVisible(), timeout=TIMEOUT)
    assert len(tab.compare_view.columns) == 2


def check_message_read_aloud(harness: Any) -> None:
    """The voice starts on the reply: its bar shows, or (no speech service on this machine) the
    status bar says why it stopped; tests/ui/voice hears it for real."""
    tab = chat_with_reply(harness, "Q1", "Read this sentence. And this one.")
    bar, status = harness.window.voice.bar, harness.window.statusBar()
    choose_on_message(tab, tab.live.conversation.path()[-1].id, "Read aloud")
    harness.qtbot.waitUntil(
        lambda: bar.isVisible() or status.currentMessage().startswith("Reading aloud stopped."),
        timeout=TIMEOUT,
    )
    harness.run(harness.engine.voice.stop())


MESSAGE_MENU_CHECKS: dict[str, Callable[[Any], None]] = {
    "Read aloud": check_message_read_aloud,
    "Compare versions side by side": check_message_compare_versions,
    "Copy as Markdown": check_message_copy_markdown,
    "Copy conversation as Markdown": check_message_copy_conversation,
    "Delete": check_message_delete,
    "Start tangent from here": check_message_start_tangent,
    "Set checkpoint here…": check_message_set_checkpoint,
    "Copy": check_message_copy,
    "Select text": check_message_select_text,
    "Copy link address": check_message_copy_link,
    "Edit": check_message_edit,
    "Regenerate": check_message_regenerate,
    "Retry": check_message_retry,
    "Continue": check_message_continue,
}
"""What each entry of a message's context menu must do. A new entry needs a row here."""


def test_every_message_menu_entry_has_an_expectation(harness: Any) -> None:
    """Collect the entries offered on a prompt, a reply, a failed and a stopped reply and a link."""
    harness.open()
    harness.server.enqueue(reply("[a link](https://example.org)"))
    tab = new_tab_by_click(harness)
    type_and_send(harness.qtbot, tab, "Q1")
    wait_idle(harness, tab)
    offered: set[str] = set()
    for message in tab.live.conversation.path():
        offered.update(choose_on_message(tab, message.id, "(look only)"))
    from threadline.ui.chat.view.message_actions import ACTION_LABELS

    footer = {label for key, label in ACTION_LABELS.items() if key not in ("prev_version", "next_version")}
    everything = offered | footer | {"Copy link address"}
    assert everything - set(MESSAGE_MENU_CHECKS) == set(), "message menu entries nobody checks"


@pytest.mark.parametrize("text", sorted(MESSAGE_MENU_CHECKS))
def test_message_menu_entry_does_what_it_says(harness: Any, text: str) -> None:
    harness.open()
    MESSAGE_MENU_CHECKS[text](harness)


# -- the sidebar's context menu -------------------------------------------------------------------


def session_point(view: Any, session_id: str) -> QPoint:
    model = view.model()
    for row in range(model.rowCount()):
        index = model.index(row, 0)
        info = index.data(SessionRole)
        if isinstance(info, SessionInfo) and info.id == session_id:
            view.scrollTo(index)
            return view.visualRect(index).center()
    raise AssertionError(f"session {session_id} is not in the list")


def choose_on_session(harness: Any, session_id: str, text: str, *, archived: bool = False) -> list[str]:
    sidebar = harness.window.sidebar
    view = sidebar.archived_list if archived else sidebar.list
    harness.qtbot.waitUntil(lambda: _listed(view, session_id), timeout=TIMEOUT)
    return choose_from_context_menu(view.viewport(), session_point(view, session_id), text)


def _listed(view: Any, session_id: str) -> bool:
    model = view.model()
    return any(
        isinstance(model.index(r, 0).data(SessionRole), SessionInfo)
        and model.index(r, 0).data(SessionRole).id == session_id
        for r in range(model.rowCount())
    )


def stored(harness: Any, session_id: str) -> SessionInfo | None:
    sessions = harness.run(harness.engine.sessions.list_sessions()) + harness.run(
        harness.engine.sessions.list_sessions(archived=True)
    )
    return next((s for s in sessions if s.id == session_id), None)


def a_chat(harness: Any) -> str:
    tab = chat_with_reply(harness, "Plants", "About plants")
    session_id = tab.session_id
    return str(session_id)


def check_session_open(harness: Any) -> None:
    session_id = a_chat(harness)
    harness.window.close_current_tab()
    harness.qtbot.waitUntil(lambda: harness.window.tabs.tab_for(session_id) is None, timeout=TIMEOUT)
    choose_on_session(harness, session_id, "Open")
    harness.qtbot.waitUntil(lambda: harness.window.tabs.tab_for(session_id) is not None, timeout=TIMEOUT)


def check_session_rename(harness: Any) -> None:
    session_id = a_chat(harness)
    choose_on_session(harness, session_id, "Rename")
    view = harness.window.sidebar.list
    harness.qtbot.waitUntil(lambda: view.state() == QAbstractItemView.State.EditingState, timeout=TIMEOUT)
    editor = next(e for e in view.viewport().findChildren(QLineEdit) if e.isVisible())
    editor.selectAll()
    harness.qtbot.keyClicks(editor, "Botany notes")
    harness.qtbot.keyClick(editor, Qt.Key.Key_Return)
    harness.qtbot.waitUntil(
        lambda: stored(harness, session_id).display_title == "Botany notes", timeout=TIMEOUT
    )


def check_session_pin(harness: Any) -> None:
    session_id = a_chat(harness)
    choose_on_session(harness, session_id, "Pin")
    harness.qtbot.waitUntil(lambda: stored(harness, session_id).pinned, timeout=TIMEOUT)


def check_session_unpin(harness: Any) -> None:
    session_id = a_chat(harness)
    harness.run(harness.engine.sessions.pin_session(session_id, True))
    harness.qtbot.waitUntil(
        lambda: "Unpin" in choose_on_session(harness, session_id, "(look only)"), timeout=TIMEOUT
    )
    choose_on_session(harness, session_id, "Unpin")
    harness.qtbot.waitUntil(lambda: not stored(harness, session_id).pinned, timeout=TIMEOUT)


def check_session_duplicate(harness: Any) -> None:
    session_id = a_chat(harness)
    before = {s.id for s in harness.run(harness.engine.sessions.list_sessions())}
    choose_on_session(harness, session_id, "Duplicate")
    harness.qtbot.waitUntil(
        lambda: len({s.id for s in harness.run(harness.engine.sessions.list_sessions())} - before) == 1,
        timeout=TIMEOUT,
    )
    (copy_id,) = {s.id for s in harness.run(harness.engine.sessions.list_sessions())} - before
    harness.qtbot.waitUntil(lambda: harness.window.tabs.tab_for(copy_id) is not None, timeout=TIMEOUT)
    assert texts(harness.window.tabs.tab_for(copy_id)) == ["Plants", "About plants"]


def check_session_archive(harness: Any) -> None:
    session_id = a_chat(harness)
    choose_on_session(harness, session_id, "Archive")
    harness.qtbot.waitUntil(lambda: stored(harness, session_id).archived, timeout=TIMEOUT)
    harness.qtbot.waitUntil(lambda: harness.window.tabs.tab_for(session_id) is None, timeout=TIMEOUT)


def check_session_delete(harness: Any) -> None:
    session_id = a_chat(harness)
    choose_on_session(harness, session_id, "Delete")
    harness.qtbot.waitUntil(lambda: not _listed(harness.window.sidebar.list, session_id), timeout=TIMEOUT)
    harness.qtbot.waitUntil(lambda: stored(harness, session_id) is None, timeout=TIMEOUT)


def archived_chat(harness: Any) -> str:
    session_id = a_chat(harness)
    harness.run(harness.engine.sessions.archive_session(session_id, True))
    harness.qtbot.mouseClick(harness.window.sidebar.archive_toggle, Qt.MouseButton.LeftButton)
    return session_id


def check_archived_open(harness: Any) -> None:
    session_id = archived_chat(harness)
    choose_on_session(harness, session_id, "Open", archived=True)
    harness.qtbot.waitUntil(lambda: harness.window.tabs.tab_for(session_id) is not None, timeout=TIMEOUT)


def check_archived_unarchive(harness: Any) -> None:
    session_id = archived_chat(harness)
    choose_on_session(harness, session_id, "Unarchive", archived=True)
    harness.qtbot.waitUntil(lambda: not stored(harness, session_id).archived, timeout=TIMEOUT)


def check_archived_delete(harness: Any) -> None:
    session_id = archived_chat(harness)
    choose_on_session(harness, session_id, "Delete", archived=True)
    harness.qtbot.waitUntil(lambda: stored(harness, session_id) is None, timeout=TIMEOUT)


def check_session_move_to_project(harness: Any) -> None:
    session_id = a_chat(harness)
    project = harness.run(harness.engine.projects.create_project("Plants"))
    sidebar = harness.window.sidebar
    harness.qtbot.waitUntil(lambda: bool(sidebar.project_scope.view.projects), timeout=TIMEOUT)
    view = sidebar.list
    harness.qtbot.waitUntil(lambda: _listed(view, session_id), timeout=TIMEOUT)
    menu = sidebar.chat_actions.build_menu(stored(harness, session_id))
    move = next(a for a in menu.actions() if a.text() == "Move to project")
    target = next(a for a in move.menu().actions() if a.text() == "Plants")
    target.trigger()
    harness.qtbot.waitUntil(lambda: stored(harness, session_id).project_id == project.id, timeout=TIMEOUT)


SESSION_MENU_CHECKS: dict[str, Callable[[Any], None]] = {
    "Open": check_session_open,
    "Rename": check_session_rename,
    "Pin": check_session_pin,
    "Unpin": check_session_unpin,
    "Duplicate": check_session_duplicate,
    "Move to project": check_session_move_to_project,
    "Archive": check_session_archive,
    "Delete": check_session_delete,
    "archived: Open": check_archived_open,
    "archived: Unarchive": check_archived_unarchive,
    "archived: Delete": check_archived_delete,
}
"""What each entry of a chat's context menu in the sidebar must do (archived list prefixed)."""


def test_every_sidebar_menu_entry_has_an_expectation(harness: Any) -> None:
    harness.open()
    session_id = a_chat(harness)
    offered = set(choose_on_session(harness, session_id, "(look only)"))
    offered.add("Unpin" if "Pin" in offered else "Pin")  # the other state of the same entry
    harness.run(harness.engine.sessions.archive_session(session_id, True))
    harness.qtbot.mouseClick(harness.window.sidebar.archive_toggle, Qt.MouseButton.LeftButton)
    offered |= {
        f"archived: {t}" for t in choose_on_session(harness, session_id, "(look only)", archived=True)
    }
    assert offered - set(SESSION_MENU_CHECKS) == set(), "sidebar menu entries nobody checks"
    assert set(SESSION_MENU_CHECKS) - offered == set(), "SESSION_MENU_CHECKS names entries no menu offers"


@pytest.mark.parametrize("text", sorted(SESSION_MENU_CHECKS))
def test_sidebar_menu_entry_does_what_it_says(harness: Any, text: str) -> None:
    harness.open()
    SESSION_MENU_CHECKS[text](harness)
