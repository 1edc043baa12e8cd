"""A tab bar with more tabs than fit: it scrolls, and no close button is left over a tab scrolled out."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTabBar, QToolButton, QWidget

from threadline.ui.window.tab_container import ReadableTabBar

TIMEOUT = 15000


def thirty_tabs(qtbot: Any) -> tuple[QWidget, ReadableTabBar]:
    host = QWidget()
    qtbot.addWidget(host)
    bar = ReadableTabBar(host)
    bar.setUsesScrollButtons(True)
    bar.setElideMode(Qt.TextElideMode.ElideRight)
    bar.setExpanding(False)
    for i in range(30):
        index = bar.addTab(f"Garden plan number {i}")
        close = QToolButton()
        close.setText("×")
        bar.setTabButton(index, QTabBar.ButtonPosition.RightSide, close)
    bar.resize(900, bar.sizeHint().height())
    host.resize(900, bar.height())
    host.show()
    qtbot.waitExposed(host)
    return host, bar  # the caller keeps the host alive


def strays(bar: ReadableTabBar) -> list[int]:
    """Tabs not wholly in view whose close button still shows."""
    arrows = [b for b in bar.findChildren(QToolButton) if b.arrowType() != Qt.ArrowType.NoArrow]
    right = min([b.x() for b in arrows if b.isVisible()], default=bar.width())
    found = []
    for i in range(bar.count()):
        rect = bar.tabRect(i)
        button = bar.tabButton(i, QTabBar.ButtonPosition.RightSide)
        whole = rect.left() >= 0 and rect.right() < right
        if button is not None and button.isVisible() and not whole:
            found.append(i)
    return found


def test_a_tab_scrolled_partly_out_shows_no_close_button(qtbot: Any) -> None:
    _host, bar = thirty_tabs(qtbot)
    arrows = [b for b in bar.findChildren(QToolButton) if b.arrowType() != Qt.ArrowType.NoArrow]
    qtbot.waitUntil(lambda: any(b.isVisible() for b in arrows), timeout=TIMEOUT)  # it scrolls
    partly_out = 0
    for current in (29, 17, 5, 22, 11, 0, 29):
        bar.setCurrentIndex(current)
        for width in range(700, 1000, 37):
            bar.resize(width, bar.height())
            qtbot.waitUntil(lambda: not strays(bar), timeout=TIMEOUT)
            rect = bar.tabRect(current)
            assert bar.tabButton(current, QTabBar.ButtonPosition.RightSide).isVisible(), (current, rect)
            partly_out += any(bar.tabRect(i).left() < 0 < bar.tabRect(i).right() for i in range(bar.count()))
    assert partly_out, "some layout left a tab partly scrolled out (else this test checks nothing)"
    left = next(b for b in arrows if b.arrowType() == Qt.ArrowType.LeftArrow)
    for _ in range(5):  # the bar's own scroll buttons
        left.click()
        qtbot.waitUntil(lambda: not strays(bar), timeout=TIMEOUT)
