"""Screenshots of math and find in the real window, to be looked at (only when asked for:
``THREADLINE_SHOTS=build/screenshots``). A real engine streams a reply with inline and
display math from the replay server; the person types the prompt, waits for the formulas,
then opens the find bar with Ctrl+F, types a word and steps to "3 of N" with Enter. Light
and dark themes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from tests.support.sse_server import openai_text_stream, split_text, sse_response
from tests.support.ui_driving import new_tab_by_click, type_and_send, wait_idle

from threadline.ui.chat.view import math_render
from threadline.ui.common.theme import ThemeChoice

pytestmark = pytest.mark.skipif(
    not os.environ.get("THREADLINE_SHOTS"), reason="screenshots only when asked for"
)
TIMEOUT = 20000
REPLY = (
    "The **Gaussian integral** is a classic. For $a > 0$,\n\n"
    "$$\\int_{-\\infty}^{\\infty} e^{-a x^2}\\,dx = \\sqrt{\\frac{\\pi}{a}}$$\n\n"
    "so with $a = 1$ the integral is $\\sqrt{\\pi} \\approx 1.7725$. The integral also gives "
    "the normal distribution its constant \\(\\frac{1}{\\sqrt{2\\pi}}\\):\n\n"
    "\\[ \\varphi(x) = \\frac{1}{\\sqrt{2\\pi}} e^{-x^2/2} \\]\n\n"
    "A `scipy.integrate.quad` call checks the integral numerically."
)


def save(widget: Any, name: str) -> None:
    folder = Path(os.environ["THREADLINE_SHOTS"])
    folder.mkdir(parents=True, exist_ok=True)
    assert widget.grab().save(str(folder / name))


def formula_count(tab: Any, message_id: str) -> int:
    doc = tab.view.rendered_document(message_id)
    return 0 if doc is None else doc.toPlainText().count("\ufffc")


def test_screenshots_of_math_and_find(harness: Any) -> None:
    harness.server.enqueue(sse_response(openai_text_stream(split_text(REPLY, 12)), chunk_delay=0.02))
    window = harness.open()
    window.resize(980, 700)
    tab = new_tab_by_click(harness)
    type_and_send(harness.qtbot, tab, "What is the Gaussian integral?")
    wait_idle(harness, tab)
    reply = tab.model.message_at(1)
    assert reply is not None
    harness.qtbot.waitUntil(
        lambda: math_render.ready() and formula_count(tab, reply.id) == 6, timeout=TIMEOUT
    )
    harness.qtbot.wait(100)  # let the images' re-layout paint
    save(window, "math-light.png")

    qtbot = harness.qtbot
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=TIMEOUT)
    tab.composer.focus_input()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is not None, timeout=TIMEOUT)
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    bar = tab.find_bar
    qtbot.keyClicks(bar.edit, "integral")
    qtbot.waitUntil(lambda: bar.count.text().endswith("of 5"), timeout=TIMEOUT)
    while not bar.count.text().startswith("3 of"):
        qtbot.keyClick(bar.edit, Qt.Key.Key_Return)
    harness.qtbot.wait(100)
    save(window, "find-light.png")

    window.set_theme(ThemeChoice.DARK)
    harness.qtbot.wait(300)
    harness.qtbot.waitUntil(lambda: formula_count(tab, reply.id) == 6, timeout=TIMEOUT)
    save(window, "find-dark.png")
    qtbot.keyClick(bar.edit, Qt.Key.Key_Escape)
    harness.qtbot.wait(100)
    save(window, "math-dark.png")
    window.set_theme(ThemeChoice.LIGHT)
