"""The sidebar's undo bar after deleting a chat, as it shows: a long title ends in "…"
instead of being cut through a letter, and on the dark theme the bar is a dark surface,
not a glaring light-grey strip (issue 28)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtTest import QTest
from tests.support.ui_driving import open_with_stored_chats
from tests.ui.conftest import AppHarness

from threadline.ui.common.theme import ThemeChoice, contrast_ratio, relative_luminance

TIMEOUT = 15000
LONG_TITLE = "A rather long chat title about the migration of the billing service to the new cluster"


def delete_with_the_key(harness: AppHarness, session_id: str) -> None:
    sidebar = harness.window.sidebar
    view = sidebar.list
    index = sidebar.model.index_of(session_id)
    view.scrollTo(index)
    harness.qtbot.mouseClick(
        view.viewport(),
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.ControlModifier,
        view.visualRect(index).center(),
    )
    view.setFocus()
    QTest.keyClick(view, Qt.Key.Key_Delete)
    harness.qtbot.waitUntil(lambda: sidebar.undo_bar.isVisible(), timeout=TIMEOUT)


def test_a_long_title_in_the_undo_bar_ends_in_an_ellipsis(harness: AppHarness) -> None:
    open_with_stored_chats(harness, {"long": (LONG_TITLE, "hello"), "other": ("Other", "hi")})
    window = harness.window
    window.splitter.setSizes([220, max(400, window.width() - 220)])
    delete_with_the_key(harness, "long")
    label = harness.window.sidebar.undo_bar.label
    harness.qtbot.waitUntil(lambda: label.width() > 0, timeout=TIMEOUT)
    painted = label.shown_text() if hasattr(label, "shown_text") else label.text()
    assert painted.endswith("…")
    assert label.fontMetrics().horizontalAdvance(painted) <= label.contentsRect().width()
    assert label.text().startswith("Deleted “A rather long chat title")  # whole for screen readers


def test_the_undo_bar_is_dark_on_the_dark_theme(harness: AppHarness) -> None:
    open_with_stored_chats(harness, {"gone": ("Gone soon", "hello"), "other": ("Other", "hi")})
    harness.window.set_theme(ThemeChoice.DARK)
    delete_with_the_key(harness, "gone")
    bar = harness.window.sidebar.undo_bar
    image = bar.grab().toImage()
    background = QColor(image.pixel(image.width() // 2, 2))
    assert relative_luminance(background) < 0.1, background.name()
    label = bar.label.palette().color(bar.label.foregroundRole())
    assert contrast_ratio(label.name(), background.name()) >= 4.5
