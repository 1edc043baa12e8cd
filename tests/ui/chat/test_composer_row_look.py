"""The composer's bottom row reads as one quiet row of flat controls, in both themes: the agent
picker is drawn like the model picker beside it (no framed combo box among flat buttons), and
Compare's menu arrow sits beside its text, level with it, like the pickers' ▾ (not tucked
below-right of the text). The agent picker still opens its list on a click and takes keys."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QWidget
from tests.support.waiting import WAIT_MS

from threadline.core.config import DEFAULT_AGENT_ID
from threadline.ui.chat.composer.composer import Composer
from threadline.ui.common.theme import DARK, LIGHT, ThemeChoice, ThemeColors, ThemeManager, contrast_ratio


@pytest.fixture
def theme(qapp: Any) -> Any:
    manager = ThemeManager(qapp, ThemeChoice.LIGHT)
    manager.apply()
    yield manager
    manager.set_choice(ThemeChoice.LIGHT)


def composer(qtbot: Any, theme: Any, colors: ThemeColors) -> Composer:
    theme.set_choice(ThemeChoice.DARK if colors.dark else ThemeChoice.LIGHT)
    widget = Composer()
    qtbot.addWidget(widget)
    widget.agent_picker.combo.addItem("Default", DEFAULT_AGENT_ID)
    widget.agent_picker.combo.addItem("Reviewer", "reviewer")
    widget.model_picker.addItem("tiny-llama.Q8_0.gguf  ·  On this computer")
    widget.resize(820, 120)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def rect_in(widget: QWidget, ancestor: QWidget) -> QRect:
    return QRect(widget.mapTo(ancestor, QPoint(0, 0)), widget.size())


def ink(image: QImage, rect: QRect, background: str) -> list[tuple[int, int]]:
    """The pixels in ``rect`` that stand out from ``background`` (text, arrows, frames)."""
    back = QColor(background)
    return [
        (x, y)
        for x in range(rect.left(), rect.right() + 1)
        for y in range(rect.top(), rect.bottom() + 1)
        if contrast_ratio(image.pixelColor(x, y), back) > 1.6
    ]


@pytest.mark.parametrize("colors", [LIGHT, DARK], ids=["light", "dark"])
def test_the_agent_picker_is_flat_like_the_model_picker(qtbot: Any, theme: Any, colors: ThemeColors) -> None:
    widget = composer(qtbot, theme, colors)
    agent, model = widget.agent_picker.combo, widget.model_picker
    image = widget.grab().toImage()
    box = rect_in(agent, widget)
    edges = [QPoint(x, box.top()) for x in range(box.left() + 4, box.right() - 4)]
    edges += [QPoint(box.left(), y) for y in range(box.top() + 4, box.bottom() - 4)]
    framed = [p for p in edges if contrast_ratio(image.pixelColor(p), colors.base) > 1.15]
    assert not framed, f"the agent picker draws a frame at rest in the {colors.name} theme: {framed[:3]}"
    assert agent.height() == model.height()
    assert agent.font() == model.font()
    # Its ▾ beside the name, as on the model picker: ink right of the name, level with it.
    name_right = box.left() + 8 + agent.fontMetrics().horizontalAdvance(agent.currentText())
    arrow = [p for p in ink(image, box, colors.base) if p[0] > name_right + 2]
    assert arrow, "no ▾ beside the agent's name"
    # While a reply runs it cannot be switched, and looks it: its name fades.
    name = QRect(box.left(), box.top(), name_right - box.left(), box.height())
    widget.agent_picker.set_busy(True)
    faded = widget.grab().toImage()

    def strongest(picture: QImage) -> float:
        return max(
            contrast_ratio(picture.pixelColor(x, y), colors.base) for x, y in ink(picture, name, colors.base)
        )

    assert strongest(faded) < strongest(image) - 0.5, (
        "a disabled agent picker looks the same as an enabled one"
    )


@pytest.mark.parametrize("colors", [LIGHT, DARK], ids=["light", "dark"])
def test_compares_menu_arrow_sits_beside_its_text(qtbot: Any, theme: Any, colors: ThemeColors) -> None:
    widget = composer(qtbot, theme, colors)
    button = widget.compare_button
    image = widget.grab().toImage()
    box = rect_in(button, widget)
    marks = ink(image, box, colors.base)
    text_left = min(x for x, _ in marks)
    text_right = text_left + button.fontMetrics().horizontalAdvance(button.text())
    text = [(x, y) for x, y in marks if x <= text_right]
    arrow = [(x, y) for x, y in marks if x > text_right + 1]
    assert arrow, "no menu arrow right of Compare's text"

    def middle(points: list[tuple[int, int]]) -> float:
        rows = [y for _, y in points]
        return (min(rows) + max(rows)) / 2

    # "Compare" has a descender (p), so its ink's middle sits a little below the x-height's.
    assert abs(middle(arrow) - middle(text)) <= 2.5, (
        f"Compare's arrow is {middle(arrow) - middle(text):+.1f} px off its text's middle ({colors.name})"
    )
    assert min(x for x, _ in arrow) - max(x for x, _ in text) >= 3, "the arrow touches the text"
    assert max(x for x, _ in arrow) < box.right() - 1, "the arrow is cut at the button's edge"


def test_the_flat_agent_picker_opens_on_a_click_and_picks_by_keyboard(qtbot: Any, theme: Any) -> None:
    widget = composer(qtbot, theme, LIGHT)
    combo = widget.agent_picker.combo
    assert combo.accessibleName() == "Agent"
    chosen: list[str] = []
    widget.agent_picker.agentChosen.connect(chosen.append)
    qtbot.mouseClick(combo, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: combo.view().isVisible(), timeout=WAIT_MS)
    qtbot.keyClick(combo.view(), Qt.Key.Key_Down)
    qtbot.keyClick(combo.view(), Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not combo.view().isVisible(), timeout=WAIT_MS)
    assert chosen == ["reviewer"]
    widget.agent_picker.set_current("reviewer")  # as the binding does once the engine switched
    combo.setFocus()
    qtbot.keyClick(combo, Qt.Key.Key_Up)  # keys step through the list without opening it, as before
    assert chosen == ["reviewer", DEFAULT_AGENT_ID]
