"""The window's panes for F6, in order (see ``pane_cycler``): each found afresh when asked.

Kept apart from ``main_window``: it knows where each pane's widget lives (the sidebar, the
start page, a tab's view, branch map, notice and composer), which the window itself need not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QPushButton, QWidget

from threadline.ui.window.pane_cycler import Pane

if TYPE_CHECKING:
    from threadline.ui.chat.chat_tab import ChatTab
    from threadline.ui.window.main_window import MainWindow


def window_panes(window: MainWindow) -> list[Pane]:
    """The stops of F6, in order; a pane whose widget is absent is skipped."""

    def tab() -> ChatTab | None:
        return window.tabs.current_tab() if window.right.currentWidget() is window.tabs else None

    def notice() -> QWidget | None:
        current = tab()
        if current is None:
            return None
        if current.approval.isVisible():
            row = current.approval.first_open_row()
            return row.allow_button if row is not None else current.approval
        return next((b for b in current.banner.findChildren(QPushButton) if b.isVisible()), None)

    def notice_area() -> QWidget | None:
        current = tab()
        if current is None:
            return None
        return current.approval if current.approval.isVisible() else current.banner

    def start_page() -> QWidget | None:
        return window.empty if window.right.currentWidget() is window.empty else None

    def start_entry() -> QWidget:
        shown = window.empty.new_button.isVisible()
        return window.empty.new_button if shown else window.empty.provider_button

    def view() -> QWidget | None:
        current = tab()
        return current.view if current is not None else None

    def branch_map() -> QWidget | None:
        current = tab()
        panel = current.shown_branch_map if current is not None else None
        return panel.map if panel is not None else None

    def composer() -> QWidget | None:
        current = tab()
        return current.composer if current is not None else None

    def composer_edit() -> QWidget | None:
        current = tab()
        return current.composer.edit if current is not None else None

    return [
        Pane("sidebar", lambda: window.sidebar, lambda: window.sidebar.stack.currentWidget()),
        Pane("start page", start_page, start_entry),
        Pane("tabs", lambda: window.tabs if tab() else None, window.tabs.tabBar),
        Pane("conversation", view, view),
        Pane("branch map", branch_map, branch_map),
        Pane("notice", notice_area, notice),
        Pane("composer", composer, composer_edit),
    ]
