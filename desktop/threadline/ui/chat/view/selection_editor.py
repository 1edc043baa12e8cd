"""Selecting text in a message: a read-only browser laid over it, with the same document.

The chat view paints documents itself, which gives no text selection. Rather than
reimplementing selection, double-click (or "Select text" in the context menu) opens a
QTextBrowser exactly over the message with a clone of its document, so native selection,
Ctrl+C and select-all work. It closes on Escape, when it loses focus, and whenever the
view scrolls, resizes or the message goes away (the view calls :meth:`close`).

A formula is an image in the document; copying a selection that holds one puts its LaTeX
source on the clipboard (``math_render.selected_text``), not an empty object character.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QMimeData, QObject, QRect, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QKeyEvent, QTextDocument
from PySide6.QtWidgets import QTextBrowser, QWidget

from threadline.ui.chat.view.math_render import selected_text


class _SourceCopyBrowser(QTextBrowser):
    """A browser whose copy gives plain text with formulas as their LaTeX source."""

    def createMimeDataFromSelection(self) -> QMimeData:
        data = QMimeData()
        data.setText(selected_text(self.textCursor()))
        return data


class SelectionEditor(QObject):
    """At most one selection browser over a message of ``host`` (the view's viewport)."""

    linkActivated = Signal(str, str)  # message id, href
    escaped = Signal()  # closed by Escape: the view takes the focus back

    def __init__(self, host: QWidget, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._host = host
        self._browser: QTextBrowser | None = None
        self._message_id: str | None = None

    @property
    def browser(self) -> QTextBrowser | None:
        return self._browser

    @property
    def message_id(self) -> str | None:
        """The message being selected in, or None when closed."""
        return self._message_id

    def open(self, message_id: str, doc: QTextDocument, rect: QRect) -> QTextBrowser:
        """Lay a browser showing a clone of ``doc`` over ``rect`` and focus it."""
        self.close()
        browser = _SourceCopyBrowser(self._host)
        browser.setObjectName("SelectionEditor")
        browser.setOpenLinks(False)
        browser.setOpenExternalLinks(False)
        browser.setFrameShape(QTextBrowser.Shape.NoFrame)
        browser.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        browser.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        browser.viewport().setAutoFillBackground(False)
        browser.setStyleSheet("QTextBrowser { background: transparent; }")
        browser.setDocument(doc.clone(browser))
        browser.setGeometry(rect)

        def link_clicked(url: QUrl) -> None:
            self.linkActivated.emit(message_id, url.toString())

        browser.anchorClicked.connect(link_clicked)
        browser.installEventFilter(self)
        browser.show()
        browser.setFocus(Qt.FocusReason.MouseFocusReason)
        self._browser, self._message_id = browser, message_id
        return browser

    def close(self) -> None:
        browser, self._browser, self._message_id = self._browser, None, None
        if browser is not None:
            browser.removeEventFilter(self)
            browser.hide()
            browser.deleteLater()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self._browser:
            if (
                event.type() == QEvent.Type.KeyPress
                and isinstance(event, QKeyEvent)
                and event.key() == Qt.Key.Key_Escape
            ):
                self.close()
                self.escaped.emit()
                return True
            if event.type() == QEvent.Type.FocusOut:
                QTimer.singleShot(0, self._close_if_unfocused)
        return super().eventFilter(obj, event)

    def _close_if_unfocused(self) -> None:
        if self._browser is not None and not self._browser.hasFocus():
            self.close()
