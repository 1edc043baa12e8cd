"""The reply header's "+12 −3 in 2 files": its words and colours, where the painter puts it
(the rectangle the view hit-tests), and the same counts as a clickable button."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QImage, QPainter
from tests.support.file_change_samples import ODD_NAME, ROOT, sample_turn

from threadline.ui.chat.changes.header_counts import (
    ChangeCountsButton,
    counts_parts,
    counts_tooltip,
    counts_width,
    header_counts,
    paint_counts,
)
from threadline.ui.common.theme import DARK, HIGH_CONTRAST_DARK, LIGHT, ThemeColors, contrast_ratio


@pytest.mark.parametrize("colors", [LIGHT, DARK, HIGH_CONTRAST_DARK], ids=lambda c: c.name)
def test_the_plus_is_green_the_minus_red_and_both_read_on_the_header(qtbot: Any, colors: ThemeColors) -> None:
    counts = header_counts(sample_turn(), ROOT)
    parts = counts_parts(counts, colors)
    assert [text for text, _ in parts] == [f"+{counts.added}", f"\u2212{counts.removed}", "in 7 files"]
    green, red = QColor(parts[0][1]), QColor(parts[1][1])
    assert green.green() > green.red() and green.green() > green.blue()
    assert red.red() > red.green() and red.red() > red.blue()
    least = 7.0 if colors.high_contrast else 4.5
    assert contrast_ratio(parts[0][1], colors.base) >= least
    assert contrast_ratio(parts[1][1], colors.base) >= least
    assert parts[2][1] == colors.muted


def test_the_painter_draws_the_counts_inside_the_rectangle_it_returns(qtbot: Any) -> None:
    counts = header_counts(sample_turn(), ROOT)
    image = QImage(400, 40, QImage.Format.Format_RGB32)
    image.fill(QColor(LIGHT.base))
    font = QFont()
    font.setPointSizeF(10)
    fm = QFontMetrics(font)
    p = QPainter(image)
    p.setFont(font)
    rect = paint_counts(p, fm, LIGHT, 100, 5, 30, counts)
    p.end()
    assert rect.left() == 100 and rect.width() == counts_width(fm, counts)
    assert rect.top() >= 5 and rect.bottom() <= 35
    green = QColor(counts_parts(counts, LIGHT)[0][1])
    red = QColor(counts_parts(counts, LIGHT)[1][1])

    def near(colour: QColor, target: QColor) -> bool:
        return (
            abs(colour.red() - target.red())
            + abs(colour.green() - target.green())
            + abs(colour.blue() - target.blue())
            < 60
        )

    inside = rect.toAlignedRect()
    found_green = found_red = False
    for x in range(image.width()):
        for y in range(image.height()):
            colour = image.pixelColor(x, y)
            if near(colour, green) or near(colour, red):
                assert inside.contains(QPoint(x, y)), (x, y)
                found_green |= near(colour, green)
                found_red |= near(colour, red)
    assert found_green and found_red
    # The green "+19" is left of the red "−19".
    greens = [x for x in range(400) for y in range(40) if near(image.pixelColor(x, y), green)]
    reds = [x for x in range(400) for y in range(40) if near(image.pixelColor(x, y), red)]
    assert max(greens) < min(reds)


def test_the_tooltip_lists_the_files_printably(qtbot: Any) -> None:
    tip = counts_tooltip(header_counts(sample_turn(), ROOT))
    lines = tip.splitlines()
    assert lines[0].startswith("Files changed in this turn: +")
    assert any(line.strip().startswith("src/fetcher/cache.py  +12 \u22126") for line in lines)
    assert any("notes/r\ufffdsum\ufffd\ufffd.txt" in line for line in lines)
    assert ODD_NAME not in tip
    tip.encode("utf-8")
    assert lines[-1] == "Click to see the changes."


def test_the_button_shows_the_counts_and_a_click_says_so(qtbot: Any) -> None:
    button = ChangeCountsButton(LIGHT)
    qtbot.addWidget(button)
    assert button.isHidden()
    counts = header_counts(sample_turn(), ROOT)
    button.set_counts(counts)
    button.resize(button.sizeHint())
    assert not button.isHidden()
    assert button.text() == counts.summary
    assert "src/fetcher/cache.py" in button.toolTip()
    button.show()
    qtbot.waitExposed(button)
    with qtbot.waitSignal(button.clicked):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton, pos=QRect(QPoint(0, 0), button.size()).center())
    button.set_counts(None)
    assert button.isHidden()
