"""The Quick ask window: a frameless, rounded card that floats above every window.

It holds one chat tab (the same ``ChatTab`` the main window shows, so the composer, the
agent and model pickers and the streaming view are the chat's own) under a slim header
with "New" and "Continue in window". Until the chat has a message only the composer shows,
so it opens as a small entry box and grows when the reply starts (docs/quick-ask.md).

The shadow is painted here around the card on a translucent window rather than with a
``QGraphicsDropShadowEffect``: an effect renders the whole card, streaming view included,
into a pixmap on every update. Without a compositor (plain X11) a translucent window's
see-through pixels show black, so there the window is opaque: the square card with its
border and no shadow (``compositing.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QPoint, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QCursor,
    QGuiApplication,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPaintEvent,
)
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from threadline.ui.common.theme_colors import ThemeColors
from threadline.ui.quick_ask.compositing import compositing

if TYPE_CHECKING:
    from threadline.ui.chat.chat_tab import ChatTab

TITLE = "Quick ask"
SHADOW = 18
"""The transparent margin around the card that the shadow is painted in."""
RADIUS = 14
WIDTH = 700
REPLY_HEIGHT = 560
"""The card's height once a reply shows (at most 80% of the screen's)."""


class _Header(QWidget):
    """The title row; dragging it moves the window (it has no frame to drag by)."""

    def mousePressEvent(self, event: QMouseEvent) -> None:
        handle = self.window().windowHandle()
        if event.button() == Qt.MouseButton.LeftButton and handle is not None and handle.startSystemMove():
            event.accept()
            return
        super().mousePressEvent(event)


class QuickAskWindow(QWidget):
    """The card and its header; the chat tab is put in by ``QuickAsk`` (``set_tab``)."""

    continueRequested = Signal()
    newRequested = Signal()
    hidden = Signal()

    def __init__(self, colors: ThemeColors, *, translucent: bool | None = None) -> None:
        """``translucent``: a shadow on a see-through window (default: where a compositor runs)."""
        flags = Qt.WindowType.Tool | Qt.WindowType.FramelessWindowHint | Qt.WindowType.WindowStaysOnTopHint
        super().__init__(None, flags)
        self.setObjectName("QuickAskWindow")
        self.setWindowTitle(TITLE)
        self.setAccessibleName(TITLE)
        self.translucent = compositing() if translucent is None else translucent
        self.shadow = SHADOW if self.translucent else 0
        """The see-through margin the shadow is painted in (none on an opaque window)."""
        self.radius = RADIUS if self.translucent else 0
        self.setAttribute(Qt.WidgetAttribute.WA_TranslucentBackground, self.translucent)
        self._colors = colors
        self.tab: ChatTab | None = None
        self._expanded = False

        outer = self._outer = QVBoxLayout(self)
        offset = 6 if self.translucent else 0  # the shadow falls a little below the card
        outer.setContentsMargins(self.shadow, self.shadow - offset, self.shadow, self.shadow + offset)
        self.card = QFrame()
        self.card.setObjectName("QuickAskCard")
        self.card.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        outer.addWidget(self.card)
        column = QVBoxLayout(self.card)
        column.setContentsMargins(1, 1, 1, 1)
        column.setSpacing(0)

        header = _Header()
        header.setObjectName("QuickAskHeader")
        row = QHBoxLayout(header)
        row.setContentsMargins(18, 10, 10, 4)
        row.setSpacing(6)
        self.title_label = QLabel(TITLE)
        self.title_label.setObjectName("QuickAskTitle")
        self.hint = QLabel("Esc to hide")
        self.hint.setObjectName("QuickAskHint")
        self.new_button = QPushButton("New")
        self.new_button.setObjectName("QuickAskNew")
        self.new_button.setToolTip("Start another question (Ctrl+N)")
        self.new_button.setShortcut("Ctrl+N")
        self.new_button.clicked.connect(self.newRequested.emit)
        self.continue_button = QPushButton("Continue in window")
        self.continue_button.setObjectName("QuickAskContinue")
        self.continue_button.setToolTip("Open this chat as a tab in the main window (Ctrl+Shift+O)")
        self.continue_button.setShortcut("Ctrl+Shift+O")
        self.continue_button.clicked.connect(self.continueRequested.emit)
        for button in (self.new_button, self.continue_button):
            button.setCursor(Qt.CursorShape.PointingHandCursor)
            button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        row.addWidget(self.title_label)
        row.addSpacing(6)
        row.addWidget(self.hint)
        row.addStretch(1)
        row.addWidget(self.new_button)
        row.addWidget(self.continue_button)
        column.addWidget(header)
        self._body = column
        self.set_colors(colors)
        self.resize(WIDTH + 2 * self.shadow, 180)

    # -- the chat in it -----------------------------------------------------------------------

    def set_tab(self, tab: ChatTab | None) -> None:
        """Show ``tab`` in the card (replacing the one before, which the caller has detached)."""
        if self.tab is not None:
            self._body.removeWidget(self.tab)
            self.tab.hide()
        self.tab = tab
        self._expanded = False
        self.continue_button.setEnabled(tab is not None)
        self.new_button.setEnabled(tab is not None)
        if tab is None:
            return
        # The card paints the background (rounded); the tab's own square one would show at its corners.
        tab.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, False)
        tab.context_strip.hide()  # sticky context is for the window's chats; here it is clutter
        self._body.addWidget(tab, 1)
        tab.show()
        tab.model.rowsInserted.connect(lambda *_: self.fit())
        self.fit()

    def fit(self) -> None:
        """Only the composer while the chat is empty; room for the reply once it has a message."""
        tab = self.tab
        if tab is None:
            return
        has_messages = tab.model.rowCount() > 0
        tab.chat_split.setVisible(has_messages)
        if has_messages and not self._expanded:
            self._expanded = True
            screen = self.screen().availableGeometry()
            height = min(REPLY_HEIGHT, int(screen.height() * 0.8)) + 2 * self.shadow
            top = self.geometry().top()
            self.resize(self.width(), height)
            if top + height > screen.bottom():  # grow upwards when the screen ends
                self.move(self.x(), max(screen.top(), screen.bottom() - height))
        elif not has_messages:
            # Once the layouts have heard that the conversation is hidden (next loop turn).
            QTimer.singleShot(0, self, self._shrink)

    def _shrink(self) -> None:
        if self._expanded or self.tab is None:
            return
        # The hints cached while the previous chat filled the card would keep it tall.
        self.tab.updateGeometry()
        self.card.updateGeometry()
        self._body.invalidate()
        margins = self._outer.contentsMargins()
        self.resize(self.width(), self._body.sizeHint().height() + margins.top() + margins.bottom())

    @property
    def expanded(self) -> bool:
        return self._expanded

    # -- placing and hiding -------------------------------------------------------------------

    def place_on_screen(self) -> None:
        """Centred horizontally on the screen with the mouse, a little above the middle."""
        screen = QGuiApplication.screenAt(QCursor.pos()) or QGuiApplication.primaryScreen()
        area = screen.availableGeometry()
        width = min(WIDTH + 2 * self.shadow, area.width())
        self.resize(width, self.height())
        x = area.left() + (area.width() - width) // 2
        y = area.top() + max(0, (area.height() - max(self.height(), 300)) // 3)
        self.move(QPoint(x, y))

    def showEvent(self, event: object) -> None:
        app = QApplication.instance()
        if app is not None:
            app.installEventFilter(self)
        super().showEvent(event)  # type: ignore[arg-type]

    def hideEvent(self, event: object) -> None:
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self)
        super().hideEvent(event)  # type: ignore[arg-type]
        self.hidden.emit()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Esc anywhere in the card hides it, before the composer or the view take it (they
        would stop the reply; here the reply goes on and is there when the window comes back)."""
        if (
            event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() == Qt.Key.Key_Escape
            and event.modifiers() == Qt.KeyboardModifier.NoModifier
            and isinstance(watched, QWidget)
            and watched.window() is self
        ):
            self.hide()
            return True
        return False

    # -- looks ----------------------------------------------------------------------------------

    def set_colors(self, colors: ThemeColors) -> None:
        self._colors = colors
        c = colors
        self.card.setStyleSheet(
            f"""
            QFrame#QuickAskCard {{
                background: {c.base}; border: 1px solid {c.border}; border-radius: {self.radius}px;
            }}
            QWidget#QuickAskHeader {{ background: transparent; }}
            QLabel#QuickAskTitle {{ font-weight: 600; color: {c.text}; }}
            QLabel#QuickAskHint {{ color: {c.muted}; }}
            QPushButton#QuickAskNew, QPushButton#QuickAskContinue {{
                background: transparent; color: {c.text}; border: 1px solid {c.border};
                border-radius: 8px; padding: 3px 10px;
            }}
            QPushButton#QuickAskNew:hover, QPushButton#QuickAskContinue:hover {{ background: {c.hover}; }}
            QPushButton#QuickAskNew:disabled, QPushButton#QuickAskContinue:disabled {{ color: {c.muted}; }}
            """
        )
        if self.tab is not None:
            self.tab.set_colors(colors)
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        """A soft shadow under the card: rounded rectangles, each a little wider and fainter."""
        if not self.translucent:
            super().paintEvent(event)
            return
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        card = QRectF(self.card.geometry())
        strength = 60 if self._colors.dark else 26
        painter.setPen(Qt.PenStyle.NoPen)
        for step in range(SHADOW, 0, -2):
            alpha = int(strength * (1 - step / SHADOW) ** 2 / 3) + 1
            painter.setBrush(QColor(0, 0, 0, alpha))
            path = QPainterPath()
            path.addRoundedRect(card.adjusted(-step, -step + 6, step, step + 6), RADIUS + step, RADIUS + step)
            painter.drawPath(path)
        painter.end()
