"""LaTeX math in the chat: found in Markdown, drawn as images, copied as source."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QGuiApplication, QTextDocument
from tests.support.ui_fakes import FakeLive
from tests.support.waiting import WAIT_MS

from threadline.ui.chat.view import math_render
from threadline.ui.chat.view.chat_view import ChatView
from threadline.ui.chat.view.conversation_model import ConversationModel
from threadline.ui.chat.view.markdown import UNSEARCHED, _parser, render_markdown
from threadline.ui.chat.view.math_markdown import MATH_DISPLAY, MATH_INLINE
from threadline.ui.chat.view.math_render import MathStyle, formula_image, formula_of_url, formula_url
from threadline.ui.common.theme import DARK, LIGHT


def formulas_in(text: str) -> list[tuple[str, str]]:
    """(kind, LaTeX) of every formula the Markdown parser finds in ``text``."""
    out = []
    for block in _parser().parse(text):
        for token in block.children or []:
            if token.type in (MATH_INLINE, MATH_DISPLAY):
                out.append((token.type, token.content))
    return out


def test_the_four_delimiters_are_math() -> None:
    text = "a $x^2$ b \\(y_1\\) c\n\n$$\\frac{1}{2}$$\n\nand \\[ z \\] end"
    assert formulas_in(text) == [
        (MATH_INLINE, "x^2"),
        (MATH_INLINE, "y_1"),
        (MATH_DISPLAY, "\\frac{1}{2}"),
        (MATH_DISPLAY, "z"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "It costs $5 and $10.",
        "Between $ 5 and 6 $ here",
        "Costs $5. Then $7 more",
        "an escaped \\$x\\$ pair",
        "code `$x$` stays code",
        "```\n$x$\n```",
        "    $x$ indented code",
        "a lone $ sign",
    ],
)
def test_money_and_code_are_not_math(text: str) -> None:
    assert formulas_in(text) == []


def test_without_a_renderer_formulas_show_their_source() -> None:
    html = render_markdown("see $a+b$", LIGHT).html
    assert f"<code{UNSEARCHED}>$a+b$</code>" in html  # shown, but left out of find like a picture


def make(qtbot: Any, live: FakeLive, colors: Any = LIGHT) -> tuple[ConversationModel, ChatView]:
    model = ConversationModel(live)
    view = ChatView()
    view.set_colors(colors)
    view.setModel(model)
    view.resize(760, 600)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitExposed(view)
    return model, view


def formula_images(doc: QTextDocument) -> list[str]:
    """The ``tex-math:`` URLs of the images in a document, in order."""
    urls = []
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.isImageFormat() and fmt.toImageFormat().name().startswith("tex-math:"):
                urls.append(fmt.toImageFormat().name())
            it += 1
        block = block.next()
    return urls


def rendered_reply(qtbot: Any, text: str, colors: Any = LIGHT) -> tuple[ChatView, str]:
    live = FakeLive()
    _prompt, reply = live.exchange("maths please", text)
    _model, view = make(qtbot, live, colors)
    assert reply.id in view.visible_message_ids()
    # The first frame may show source while ziamath is imported; the images follow.
    qtbot.waitUntil(lambda: math_render.ready() and view._docs.get(reply.id) is not None, timeout=WAIT_MS)
    view.viewport().repaint()
    return view, reply.id


def test_a_reply_with_inline_and_display_math_shows_images(qtbot: Any) -> None:
    text = "Inline $e^{i\\pi}+1=0$ and \\(\\sqrt{2}\\).\n\n$$\\int_0^1 x^2\\,dx = \\frac{1}{3}$$\n"
    view, reply_id = rendered_reply(qtbot, text)
    qtbot.waitUntil(lambda: len(formula_images(view._docs[reply_id].doc)) == 3, timeout=WAIT_MS)
    doc = view._docs[reply_id].doc
    urls = formula_images(doc)
    assert [formula_of_url(u) for u in urls] == [
        ("e^{i\\pi}+1=0", False),
        ("\\sqrt{2}", False),
        ("\\int_0^1 x^2\\,dx = \\frac{1}{3}", True),
    ]
    image = doc.resource(QTextDocument.ResourceType.ImageResource, urls[2])
    assert image is not None and not image.isNull()
    assert "$" not in doc.toPlainText()  # no source left over
    # the display formula is taller than a line of text: the row grew to hold it
    assert image.height() / image.devicePixelRatio() > view.fontMetrics().height() * 1.5


def test_a_broken_formula_shows_its_source_and_logs_nothing(qtbot: Any, caplog: Any) -> None:
    caplog.set_level(logging.DEBUG, logger="threadline")
    view, reply_id = rendered_reply(qtbot, "Broken $\\frac{a$ and $\\nosuchcommand{x}$ but fine $y$.")
    qtbot.waitUntil(lambda: len(formula_images(view._docs[reply_id].doc)) == 1, timeout=WAIT_MS)
    text = view._docs[reply_id].doc.toPlainText()
    assert "$\\frac{a$" in text and "$\\nosuchcommand{x}$" in text
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_currency_stays_text(qtbot: Any) -> None:
    view, reply_id = rendered_reply(qtbot, "Lunch was $5 and dinner $10, so $15 total.")
    doc = view._docs[reply_id].doc
    assert doc.toPlainText().strip() == "Lunch was $5 and dinner $10, so $15 total."
    assert formula_images(doc) == []


def test_copying_a_selection_gives_the_latex_source(qtbot: Any) -> None:
    view, reply_id = rendered_reply(qtbot, "Root $\\sqrt{2}$ is irrational, and so is \\(\\pi\\).")
    qtbot.waitUntil(lambda: len(formula_images(view._docs[reply_id].doc)) == 2, timeout=WAIT_MS)
    view.viewport().repaint()
    view.ensure_visible_geometry()
    geo = next(g for g in view._visible if g.message_id == reply_id)
    on_text = QPoint(int(geo.doc_rect.left()) + 10, int(geo.doc_rect.top()) + 8)
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=on_text)
    browser = view.selection_editor()
    assert browser is not None
    qtbot.keyClick(browser, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(browser, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    copied = QGuiApplication.clipboard().text().strip()
    assert copied == "Root $\\sqrt{2}$ is irrational, and so is $\\pi$."


def test_the_menu_on_a_formula_offers_copy_latex(qtbot: Any) -> None:
    view, reply_id = rendered_reply(qtbot, "$$\\sum_{n=1}^{\\infty} \\frac{1}{n^2} = \\frac{\\pi^2}{6}$$")
    qtbot.waitUntil(lambda: len(formula_images(view._docs[reply_id].doc)) == 1, timeout=WAIT_MS)
    view.viewport().repaint()
    view.ensure_visible_geometry()
    geo = next(g for g in view._visible if g.message_id == reply_id)
    centre = geo.doc_rect.center().toPoint()
    hit = view.hit(QPointF(centre))
    href = view.commands.formula_at(hit, centre)
    assert href is not None
    menu = view.commands.message_menu(reply_id, href)
    assert menu is not None
    action = next(a for a in menu.actions() if a.objectName() == "message-action-copy-latex")
    action.trigger()
    assert QGuiApplication.clipboard().text() == "\\sum_{n=1}^{\\infty} \\frac{1}{n^2} = \\frac{\\pi^2}{6}"
    menu.deleteLater()


def test_formula_colour_follows_the_theme(qtbot: Any) -> None:
    math_render.prepare()
    font = QGuiApplication.font()
    light = formula_image("x", False, MathStyle.of(LIGHT.text, font))
    dark = formula_image("x", False, MathStyle.of(DARK.text, font))
    assert light is not None and dark is not None

    def darkest(image: Any) -> int:
        return min(
            image.pixelColor(x, y).lightness()
            for x in range(image.width())
            for y in range(image.height())
            if image.pixelColor(x, y).alpha() > 200
        )

    assert darkest(light) < 80 < darkest(dark)
    assert formula_url("a&b", True).startswith("tex-math:d:")
    assert formula_of_url(formula_url("a&b \\\\ c", True)) == ("a&b \\\\ c", True)
