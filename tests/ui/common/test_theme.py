"""The application style: readable check boxes in both themes, mnemonics underlined only with Alt."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QCheckBox, QPushButton, QStyle, QStyleOptionButton, QWidget
from tests.support.waiting import WAIT_MS

from threadline.ui.common.theme import DARK, LIGHT, MnemonicState, ThemeChoice, ThemeColors, ThemeManager


def contrast(a: QColor, b: QColor) -> float:
    """WCAG contrast ratio of two colours."""

    def luminance(c: QColor) -> float:
        def channel(v: float) -> float:
            return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

        return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF())

    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.fixture
def theme(qapp: Any) -> Any:
    manager = ThemeManager(qapp, ThemeChoice.LIGHT)
    manager.apply()
    yield manager
    manager.set_choice(ThemeChoice.LIGHT)


@pytest.mark.parametrize("colors", [LIGHT, DARK], ids=["light", "dark"])
def test_unchecked_check_box_outline_is_visible(qtbot: Any, theme: Any, colors: ThemeColors) -> None:
    theme.set_choice(ThemeChoice.DARK if colors.dark else ThemeChoice.LIGHT)
    page = QWidget()
    qtbot.addWidget(page)
    box = QCheckBox("Search in files", page)
    box.adjustSize()
    page.resize(box.width() + 10, box.height() + 10)
    image = page.grab().toImage()
    option = QStyleOptionButton()
    box.initStyleOption(option)
    indicator = box.style().subElementRect(QStyle.SubElement.SE_CheckBoxIndicator, option, box)
    window = QColor(colors.window)
    # The strongest edge of the indicator against the window behind it.
    centre_y = indicator.center().y()
    best = max(
        contrast(image.pixelColor(QPoint(x, centre_y)), window)
        for x in range(indicator.left(), indicator.left() + 3)
    )
    assert best >= 1.8, f"indicator outline barely visible ({best:.2f}:1) in the {colors.name} theme"
    box.setChecked(True)
    image = page.grab().toImage()
    inside = image.pixelColor(QPoint(indicator.left() + 3, indicator.top() + 3))
    assert contrast(inside, window) >= 2.5  # a checked box reads as checked at a glance


def test_mnemonics_are_underlined_only_while_alt_is_held(qtbot: Any, theme: Any) -> None:
    button = QPushButton("&Allow once")
    qtbot.addWidget(button)
    button.show()
    button.activateWindow()
    qtbot.waitActive(button)
    style = QApplication.style()
    hint = QStyle.StyleHint.SH_UnderlineShortcut
    assert style.styleHint(hint, None, button) == 0
    # As a keyboard's keys come: to the focused window, then to its focus widget.
    QTest.keyPress(button.windowHandle(), Qt.Key.Key_Alt, Qt.KeyboardModifier.AltModifier)
    assert style.styleHint(hint, None, button) == 1
    QTest.keyRelease(button.windowHandle(), Qt.Key.Key_Alt, Qt.KeyboardModifier.NoModifier)
    assert style.styleHint(hint, None, button) == 0
    assert MnemonicState.of(QApplication.instance()) is MnemonicState.of(
        QApplication.instance()
    )  # one filter
    # The mnemonic still works without the underline.
    button.activateWindow()
    qtbot.waitActive(button)
    with qtbot.waitSignal(button.clicked, timeout=WAIT_MS):  # through the window, as shortcuts are
        QTest.keyClick(button.windowHandle(), Qt.Key.Key_A, Qt.KeyboardModifier.AltModifier)


def test_the_alt_watch_follows_the_focus_to_each_window(qtbot: Any, theme: Any) -> None:
    """Alt is watched on whichever window has the focus (a dialog opened later too), not on
    every widget; the underlines go when the application loses the focus."""
    state = MnemonicState.of(QApplication.instance())
    hint = QStyle.StyleHint.SH_UnderlineShortcut
    windows = []
    for text in ("&Allow once", "&Deny"):
        button = QPushButton(text)
        qtbot.addWidget(button)
        button.show()
        button.activateWindow()
        qtbot.waitActive(button)
        QTest.keyPress(button.windowHandle(), Qt.Key.Key_Alt, Qt.KeyboardModifier.AltModifier)
        assert QApplication.style().styleHint(hint, None, button) == 1
        QTest.keyRelease(button.windowHandle(), Qt.Key.Key_Alt, Qt.KeyboardModifier.NoModifier)
        assert QApplication.style().styleHint(hint, None, button) == 0
        windows.append(button)
    QTest.keyPress(windows[1].windowHandle(), Qt.Key.Key_Alt, Qt.KeyboardModifier.AltModifier)
    assert state.shown
    # Alt+Tab to another program: the platform reports the application inactive, the release
    # goes to the other program.
    QApplication.instance().applicationStateChanged.emit(Qt.ApplicationState.ApplicationInactive)
    assert not state.shown


@pytest.mark.parametrize("colors", [LIGHT, DARK], ids=["light", "dark"])
def test_the_stop_button_reads_as_stop_not_as_an_inverted_send(
    qtbot: Any, theme: Any, colors: ThemeColors
) -> None:
    """While a reply streams, the composer's Send button becomes Stop: a quiet red button in both
    themes (the error colours), never a white block on the dark theme."""
    from threadline.ui.common.theme import relative_luminance

    theme.set_choice(ThemeChoice.DARK if colors.dark else ThemeChoice.LIGHT)
    button = QPushButton("Stop")
    button.setObjectName("SendButton")
    button.setProperty("stop", "true")
    qtbot.addWidget(button)
    button.adjustSize()
    image = button.grab().toImage()
    fill = image.pixelColor(QPoint(5, button.height() // 2))  # inside the padding, left of the label
    assert fill.red() > fill.green() + 10 and fill.red() > fill.blue() + 10, fill.name()  # red: stop
    surface = QColor(colors.surface)
    if colors.dark:  # no lighter than the composer around it: a light block reads as inverted
        assert relative_luminance(fill) <= relative_luminance(surface) + 0.05, fill.name()
    label = max(
        contrast(image.pixelColor(QPoint(x, y)), fill)
        for x in range(8, button.width() - 8)
        for y in range(4, button.height() - 4)
    )
    assert label >= 4.5, f"Stop label {label:.2f}:1 in the {colors.name} theme"
