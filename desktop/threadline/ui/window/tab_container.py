"""The tabs of open conversations; re-emits only the current tab's signals (``cur_*``).

As in qutebrowser's TabbedBrowser, the window connects to the container once and
hears about the tab in view; background tabs change only their own tab decoration:
a small spinner while a turn runs, an accent dot when a reply finished out of view,
and a warning-coloured mark while a turn out of view waits for the user's approval.

Many tabs scroll rather than shrink: Qt's tab bar squeezes every tab to its minimum
(three letters and an ellipsis, "Co…") before it shows its scroll arrows, which makes
thirty tabs thirty identical stubs. :class:`ReadableTabBar` keeps a tab at least
``READABLE_TAB_WIDTH`` wide (a title elides to a dozen or more letters), so the bar
scrolls instead, and the "list all tabs" button in the corner (``List All Tabs…``,
Ctrl+Shift+A, like browsers) opens a menu of every open tab by its full title.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, cast

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, QTimer, Signal, SignalInstance
from PySide6.QtGui import (
    QAction,
    QColor,
    QIcon,
    QPainter,
    QPen,
    QPixmap,
    QPixmapCache,
    QResizeEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import QMenu, QMessageBox, QTabBar, QTabWidget, QToolButton, QWidget

from threadline.ui.common.theme import LIGHT, ThemeColors

if TYPE_CHECKING:  # the chat tab (and its view, Markdown, Pygments) loads with the first tab
    from PySide6.QtGui import QResizeEvent, QWheelEvent

    from threadline.ui.chat.chat_tab import ChatTab

log = logging.getLogger("threadline.ui.window.tab_container")

ICON_SIZE = 12
SPIN_MS = 90
READABLE_TAB_WIDTH = 160
"""Pixels a tab keeps at least (icon, a dozen or more letters, close button) before the bar scrolls."""


class ReadableTabBar(QTabBar):
    """A tab bar whose tabs never shrink below a readable width: it scrolls instead.

    Scrolled, the bar cuts the tab at its left edge (and the one under its scroll buttons);
    Qt moves a cut tab's close button with it and leaves it showing, an "×" with no tab to
    name. A tab not wholly in view shows no close button here; it gets it back once it is
    scrolled in (Ctrl+W and the tab's menu close it meanwhile).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._clip = QTimer(self)
        self._clip.setSingleShot(True)
        self._clip.setInterval(0)  # after Qt has moved the buttons
        self._clip.timeout.connect(self._show_whole_tabs_buttons)
        self.currentChanged.connect(self._clip_soon)
        for arrow in self.findChildren(QToolButton):  # Qt's scroll buttons
            arrow.clicked.connect(self._clip_soon)

    def minimumTabSizeHint(self, index: int) -> QSize:
        full = self.tabSizeHint(index)
        return QSize(min(full.width(), READABLE_TAB_WIDTH), full.height())

    def _clip_soon(self, *_args: object) -> None:
        self._clip.start()  # not ``start(index)``: a signal's argument is no interval

    def tabLayoutChange(self) -> None:
        super().tabLayoutChange()
        self._clip_soon()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._clip_soon()

    def wheelEvent(self, event: QWheelEvent) -> None:
        super().wheelEvent(event)
        self._clip_soon()

    def _show_whole_tabs_buttons(self) -> None:
        arrows = [b for b in self.findChildren(QToolButton) if b.arrowType() != Qt.ArrowType.NoArrow]
        right = min([b.x() for b in arrows if b.isVisible()], default=self.width())
        for index in range(self.count()):
            button = self.tabButton(index, QTabBar.ButtonPosition.RightSide)
            if button is not None:
                rect = self.tabRect(index)
                whole = rect.left() >= 0 and rect.right() < right
                button.setVisible(whole and self.isTabVisible(index))


def menu_text(title: str) -> str:
    """A title as a menu entry: an ``&`` in it is a literal, not a mnemonic."""
    return title.replace("&", "&&")


class TabContainer(QTabWidget):
    cur_title_changed = Signal(str)
    cur_busy_changed = Signal(bool)
    cur_status_changed = Signal(str)
    cur_tab_changed = Signal(object)  # ChatTab | None
    tab_closed = Signal(str)  # session id
    tabs_changed = Signal()  # opened, closed or moved (the window saves the tab list)
    settings_requested = Signal(str)
    new_session_requested = Signal()
    export_requested = Signal(list)  # session ids: a tab's ``/export``

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("TabContainer")
        self.setTabBar(ReadableTabBar(self))
        self.tabBar().setAccessibleName("Open chats")
        self.setDocumentMode(True)
        # Each tab gets its own close button (``add_tab``). Qt's closable tabs would make
        # one more per tab, which ``setTabButton`` only hides and ``removeTab`` never
        # deletes: every closed tab left one behind in the tab bar for the rest of the run.
        self.setTabsClosable(False)
        self.setMovable(True)
        self.setElideMode(Qt.TextElideMode.ElideRight)
        self.setUsesScrollButtons(True)
        self.tabBar().setExpanding(False)
        self.tabBar().setIconSize(QSize(ICON_SIZE, ICON_SIZE))
        self.tabBar().setSelectionBehaviorOnRemove(QTabBar.SelectionBehavior.SelectPreviousTab)
        self.tabBar().setDrawBase(False)
        self._colors = LIGHT
        self._members: set[QWidget] = set()
        self._unread: set[str] = set()
        self._spin_phase = 0
        self._spinner = QTimer(self)
        self._spinner.setInterval(SPIN_MS)
        self._spinner.timeout.connect(self._spin)
        self.currentChanged.connect(self._current_changed)
        self.tabBar().tabMoved.connect(lambda _a, _b: self.tabs_changed.emit())
        self.confirm_close = self._ask_close
        """Asks whether to stop a running reply when its tab is closed (tests replace it)."""
        self.tab_list_menu = QMenu(self)
        self.tab_list_menu.setObjectName("TabListMenu")
        self.tab_list_menu.aboutToShow.connect(self._fill_tab_list)
        self.tab_list_button = QToolButton(self)
        self.tab_list_button.setObjectName("TabListButton")
        self.tab_list_button.setText("⌄")
        self.tab_list_button.setAccessibleName("List all tabs")
        self.tab_list_button.setToolTip("List all tabs (Ctrl+Shift+A)")
        self.tab_list_button.setAutoRaise(True)
        self.tab_list_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.tab_list_button.setMenu(self.tab_list_menu)
        self.setCornerWidget(self.tab_list_button, Qt.Corner.TopRightCorner)

    # -- tabs -------------------------------------------------------------------------------

    def _as_tab(self, widget: QWidget | None) -> ChatTab | None:
        return cast("ChatTab", widget) if widget is not None and widget in self._members else None

    def tabs(self) -> list[ChatTab]:
        return [t for i in range(self.count()) if (t := self._as_tab(self.widget(i))) is not None]

    def tab_for(self, session_id: str) -> ChatTab | None:
        return next((t for t in self.tabs() if t.session_id == session_id), None)

    def current_tab(self) -> ChatTab | None:
        return self._as_tab(self.currentWidget())

    def add_tab(self, tab: ChatTab, *, focus: bool = True, index: int | None = None) -> int:
        """Add a tab at the end, or at ``index`` (a reopened tab goes back to its place)."""
        self._members.add(tab)
        if index is None or not 0 <= index <= self.count():
            index = self.addTab(tab, tab.title)
        else:
            index = self.insertTab(index, tab, tab.title)
        self.setTabToolTip(index, tab.title)
        close = QToolButton()
        close.setObjectName("TabClose")
        close.setText("×")
        close.setToolTip("Close tab (Ctrl+W)")
        close.setAccessibleName(f"Close {tab.title}")
        # Out of the Tab chain (thirty tabs would be thirty stops); Ctrl+W closes from the keyboard.
        close.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        close.setAutoRaise(True)
        close.setCursor(Qt.CursorShape.PointingHandCursor)
        close.clicked.connect(lambda _=False, t=tab: self.request_close(self.indexOf(t)))
        self.tabBar().setTabButton(index, QTabBar.ButtonPosition.RightSide, close)
        tab.titleChanged.connect(lambda title, t=tab: self._tab_title(t, title))
        tab.busyChanged.connect(lambda busy, t=tab: self._tab_busy(t, busy))
        tab.statusChanged.connect(lambda text, t=tab: self._forward(t, self.cur_status_changed, text))
        tab.replyFinished.connect(lambda t=tab: self._reply_finished(t))
        tab.approvalChanged.connect(lambda _waiting, t=tab: self._decorate(t))
        tab.settingsRequested.connect(self.settings_requested)
        tab.newSessionRequested.connect(self.new_session_requested)
        tab.exportRequested.connect(self.export_requested)
        if tab.busy:
            self._tab_busy(tab, True)
        if focus:
            self.setCurrentIndex(index)
        self.tabs_changed.emit()
        return index

    def focus_tab(self, session_id: str) -> ChatTab | None:
        tab = self.tab_for(session_id)
        if tab is not None:
            self.setCurrentWidget(tab)
        return tab

    def request_close(self, index: int) -> bool:
        """Close a tab; a running reply is stopped (its text is kept) only if the user agrees."""
        tab = self._as_tab(self.widget(index))
        if tab is None:
            return False
        if tab.busy:
            if not self.confirm_close(tab):
                return False
            tab.stop()
        self.close_tab(tab)
        return True

    def close_tab(self, tab: ChatTab) -> None:
        index = self.indexOf(tab)
        if index < 0:
            return
        self._unread.discard(tab.session_id)
        tab.close_tab()
        self.removeTab(index)
        self._members.discard(tab)
        tab.deleteLater()
        # Fusion caches what it paints (combo boxes, frames) under a key that includes the
        # widget's palette, and every widget styled by the application's style sheet has a
        # palette of its own: a closed tab's entries can never be used again, yet stayed
        # until the cache's 10 MB limit pushed them out (docs/performance.md, memory after a
        # close). Emptying the cache costs the next paint of the visible widgets a few pixmaps.
        QPixmapCache.clear()
        self.tab_closed.emit(tab.session_id)
        self.tabs_changed.emit()
        self._update_spinner()

    def _ask_close(self, tab: ChatTab) -> bool:
        answer = QMessageBox.question(
            self,
            "Stop the reply?",
            f"“{tab.title}” is still receiving a reply. Close the tab and stop it? "
            "The text received so far is kept.",
            QMessageBox.StandardButton.Close | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        return answer == QMessageBox.StandardButton.Close

    def next_tab(self) -> None:
        if self.count() > 1:
            self.setCurrentIndex((self.currentIndex() + 1) % self.count())

    def previous_tab(self) -> None:
        if self.count() > 1:
            self.setCurrentIndex((self.currentIndex() - 1) % self.count())

    def show_tab_list(self) -> None:
        """Open the list of every tab under its corner button (the keyboard's way in)."""
        if self.count():
            self.tab_list_button.showMenu()

    def _fill_tab_list(self) -> None:
        self.tab_list_menu.clear()
        current = self.current_tab()
        for tab in self.tabs():
            action = QAction(menu_text(tab.title), self.tab_list_menu)
            action.setCheckable(True)
            action.setChecked(tab is current)
            action.triggered.connect(lambda _=False, t=tab: self._activate_listed(t))
            self.tab_list_menu.addAction(action)
            if tab is current:
                self.tab_list_menu.setActiveAction(action)

    def _activate_listed(self, tab: ChatTab) -> None:
        if tab in self._members:
            self.setCurrentWidget(tab)
            # Once the menu has closed: it hands the focus back to where it was when it opened.
            QTimer.singleShot(0, lambda: tab.focus_composer() if tab in self._members else None)

    def is_unread(self, session_id: str) -> bool:
        return session_id in self._unread

    def set_colors(self, colors: ThemeColors) -> None:
        self._colors = colors
        for tab in self.tabs():
            tab.set_colors(colors)
            self._decorate(tab)

    # -- signal forwarding -------------------------------------------------------------------------

    def _forward(self, tab: ChatTab, signal: SignalInstance, *args: object) -> None:
        if tab is self.currentWidget():
            signal.emit(*args)

    def _tab_title(self, tab: ChatTab, title: str) -> None:
        index = self.indexOf(tab)
        if index >= 0:
            self.setTabText(index, title)
            self.setTabToolTip(index, title)
            close = self.tabBar().tabButton(index, QTabBar.ButtonPosition.RightSide)
            if close is not None:
                close.setAccessibleName(f"Close {title}")
        self._forward(tab, self.cur_title_changed, title)

    def _tab_busy(self, tab: ChatTab, busy: bool) -> None:
        self._decorate(tab)
        self._update_spinner()
        self._forward(tab, self.cur_busy_changed, busy)

    def _reply_finished(self, tab: ChatTab) -> None:
        if tab is not self.currentWidget() or not self.isVisible():
            self._unread.add(tab.session_id)
            self._decorate(tab)

    def _current_changed(self, _index: int) -> None:
        tab = self.current_tab()
        for other in self.tabs():
            if other.awaiting_approval:
                self._decorate(other)
        if tab is not None:
            if tab.session_id in self._unread:
                self._unread.discard(tab.session_id)
                self._decorate(tab)
            self.cur_title_changed.emit(tab.title)
            self.cur_busy_changed.emit(tab.busy)
            self.cur_status_changed.emit(tab.status)
        self.cur_tab_changed.emit(tab)
        self.tabs_changed.emit()

    # -- decoration ----------------------------------------------------------------------------------

    def _update_spinner(self) -> None:
        if any(t.busy for t in self.tabs()):
            if not self._spinner.isActive():
                self._spinner.start()
        else:
            self._spinner.stop()

    def _spin(self) -> None:
        self._spin_phase = (self._spin_phase + 1) % 12
        for tab in self.tabs():
            if tab.busy and not tab.awaiting_approval:
                self._decorate(tab)

    def _decorate(self, tab: ChatTab) -> None:
        index = self.indexOf(tab)
        if index < 0:
            return
        if tab.awaiting_approval and tab is not self.currentWidget():
            icon = self._approval_icon()
        elif tab.awaiting_approval:
            icon = QIcon()
        elif tab.busy:
            icon = self._spinner_icon(self._spin_phase)
        elif tab.session_id in self._unread:
            icon = self._dot_icon()
        else:
            icon = QIcon()
        self.setTabIcon(index, icon)

    def _pixmap(self) -> tuple[QPixmap, QPainter]:
        ratio = self.devicePixelRatioF()
        pm = QPixmap(int(ICON_SIZE * ratio), int(ICON_SIZE * ratio))
        pm.setDevicePixelRatio(ratio)
        pm.fill(Qt.GlobalColor.transparent)
        p = QPainter(pm)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        return pm, p

    def _spinner_icon(self, phase: int) -> QIcon:
        pm, p = self._pixmap()
        pen = QPen(QColor(self._colors.accent), 1.8)
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        p.setPen(pen)
        rect = QRectF(1.5, 1.5, ICON_SIZE - 3, ICON_SIZE - 3)
        start = int(-phase * 30 * 16)
        p.drawArc(rect, start, 270 * 16)
        p.end()
        return QIcon(pm)

    def _approval_icon(self) -> QIcon:
        pm, p = self._pixmap()
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QColor(self._colors.warning))
        p.drawEllipse(QRectF(0.5, 0.5, ICON_SIZE - 1, ICON_SIZE - 1))
        pen = QPen(QColor("#ffffff"), 1.6)
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        p.setPen(pen)
        mid = ICON_SIZE / 2.0
        p.drawLine(QPointF(mid, 3.0), QPointF(mid, 6.8))
        p.drawPoint(QPointF(mid, 9.0))
        p.end()
        return QIcon(pm)

    def _dot_icon(self) -> QIcon:
        pm, p = self._pixmap()
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QColor(self._colors.accent))
        r = ICON_SIZE / 2.0
        p.drawEllipse(QRectF(r - 3.5, r - 3.5, 7, 7))
        p.end()
        return QIcon(pm)
