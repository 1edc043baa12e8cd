"""LaTeX formulas as images for the chat's documents, without a browser engine.

``ziamath`` (pure Python, ships its own STIX Two Math font, needs no network and no TeX)
turns LaTeX into SVG; Qt's SVG renderer paints that into a ``QImage`` at twice the
screen's pixel density, and the document cache registers the image as a resource of the
message's document under a ``tex-math:`` URL. Nothing is fetched: the URL carries the
formula itself (``tex-math:i:<percent-encoded LaTeX>``, ``d`` for display math), so the
image can be made again from its URL, and copying a selection puts the LaTeX back
(:func:`replace_formulas`).

Importing ziamath takes about 0.2 s, more than ten frames, so it is never imported at
start-up: the first frame that meets a formula shows its source, asks its owner to call
:func:`prepare` after the frame, and is rendered again with images (the same way code is
highlighted once its lexer is built). Images are cached by formula, size, colour and pixel
density, so a streaming reply re-renders only formulas it has not shown yet.

A formula that does not parse — ziamath raises, or leaves an unknown command such as
``\\foo`` in its MathML — is shown as its source in monospace. Nothing is logged: a model
writing bad LaTeX is not an error of the application.
"""

from __future__ import annotations

import html
import importlib
import sys
import warnings
from collections import OrderedDict
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote

from PySide6.QtCore import QByteArray, QPointF, QRectF, Qt, QUrl
from PySide6.QtGui import QFont, QFontInfo, QFontMetricsF, QImage, QPainter, QTextCursor, QTextDocument

from threadline.ui.chat.view.markdown import UNSEARCHED

if TYPE_CHECKING:
    from PySide6.QtSvg import QSvgRenderer

MATH_SCHEME = "tex-math"
OBJECT_REPLACEMENT = "\ufffc"
"""The character a document holds where an image is (what a plain-text copy gets for it)."""
CACHE_SIZE = 512
"""Formula images kept (a few hundred KB at most; a long chat of maths stays smooth)."""
MATH_SCALE = 1.12
"""Math in STIX Two at the body's pixel size looks small beside the sans-serif body text."""
PIXEL_RATIO = 2.0
"""Images are drawn at twice their size, so they stay sharp on high-density screens."""
MAX_IMAGE_SIDE = 4096
"""A formula larger than this (in pixels) is shown as source rather than a giant image."""


@dataclass(frozen=True, slots=True)
class MathStyle:
    """What a formula's image depends on besides its source."""

    colour: str
    pixel_size: float
    x_height: float
    """The body font's x-height: inline math is padded so its baseline sits on the text's."""

    @classmethod
    def of(cls, colour: str, font: QFont) -> MathStyle:
        info = QFontInfo(font)
        size = float(info.pixelSize()) or font.pointSizeF() * 96 / 72
        return cls(colour, round(size * MATH_SCALE, 2), QFontMetricsF(font).xHeight())


def formula_url(latex: str, display: bool) -> str:
    """The resource URL of a formula (it carries the source: see the module docstring)."""
    return f"{MATH_SCHEME}:{'d' if display else 'i'}:{quote(latex, safe='')}"


def formula_of_url(url: str) -> tuple[str, bool] | None:
    """(LaTeX, display) of a ``tex-math:`` URL; None for any other URL."""
    scheme, _, rest = url.partition(":")
    kind, _, encoded = rest.partition(":")
    if scheme != MATH_SCHEME or kind not in ("i", "d"):
        return None
    return unquote(encoded), kind == "d"


def source_text(latex: str, display: bool) -> str:
    """A formula as it is written: what copying it gives, and what a broken one shows."""
    return f"$${latex}$$" if display else f"${latex}$"


_ziamath: ModuleType | None = sys.modules.get("ziamath")
_images: OrderedDict[tuple[str, bool, MathStyle], QImage | None] = OrderedDict()


def ready() -> bool:
    """Whether ziamath is imported (rendering a formula is cheap now)."""
    return _ziamath is not None


def prepare() -> None:
    """Import ziamath (the view calls this after a frame that showed formulas as source)."""
    global _ziamath
    if _ziamath is None:
        with warnings.catch_warnings():  # its font lookup uses a deprecated importlib API
            warnings.simplefilter("ignore", DeprecationWarning)
            module = importlib.import_module("ziamath")
        module.config.svg2 = False  # plain paths: Qt's SVG renderer has no <symbol>
        _ziamath = module


def formula_image(latex: str, display: bool, style: MathStyle) -> QImage | None:
    """The image of a formula, from the cache or rendered now; None if it does not parse.

    Call only when :func:`ready`.
    """
    key = (latex, display, style)
    if key in _images:
        _images.move_to_end(key)
        return _images[key]
    image = _render(latex, display, style)
    _images[key] = image
    while len(_images) > CACHE_SIZE:
        _images.popitem(last=False)
    return image


def _render(latex: str, display: bool, style: MathStyle) -> QImage | None:
    zm = _ziamath
    if zm is None:
        return None
    try:
        math = zm.Latex(latex, size=style.pixel_size, color=style.colour, inline=not display)
        if _has_unknown_command(math.mathml):
            return None
        svg = math.svg()
    except Exception:  # any failure of a third-party parser on model text means "show the source"
        return None
    # Qt's SVG module loads with the first formula, not with every chat (most have none).
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    box = renderer.viewBoxF()
    if not renderer.isValid() or box.width() <= 0 or box.height() <= 0:
        return None
    return _paint(renderer, box, display, style)


def _has_unknown_command(mathml: object) -> bool:
    """latex2mathml keeps a command it does not know as text (``<mi>\\foo</mi>``): not a formula."""
    for element in getattr(mathml, "iter", lambda: [])():
        text = getattr(element, "text", None) or ""
        if text.startswith("\\") and len(text) > 1 and text[1].isalpha():
            return True
    return False


def _paint(renderer: QSvgRenderer, box: QRectF, display: bool, style: MathStyle) -> QImage | None:
    """Paint the SVG, padded so that, laid out with ``vertical-align: middle``, the formula's
    baseline lands on the text's.

    Qt centres a "middle" object so that its ascent exceeds its descent by half the font's
    x-height; the SVG's own baseline is y = 0 of its view box.
    """
    ascent, descent = -box.top(), box.bottom()
    pad_top = pad_bottom = 0.0
    if not display:
        want = style.x_height / 2
        if ascent - descent > want:
            pad_bottom = ascent - descent - want
        else:
            pad_top = want - (ascent - descent)
    width, height = box.width(), box.height() + pad_top + pad_bottom
    if max(width, height) * PIXEL_RATIO > MAX_IMAGE_SIDE:
        return None
    image = QImage(
        max(1, round(width * PIXEL_RATIO)),
        max(1, round(height * PIXEL_RATIO)),
        QImage.Format.Format_ARGB32_Premultiplied,
    )
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.scale(PIXEL_RATIO, PIXEL_RATIO)
        renderer.render(painter, QRectF(QPointF(0, pad_top), box.size()))
    finally:
        painter.end()
    image.setDevicePixelRatio(PIXEL_RATIO)
    return image


class FormulaImages:
    """The formulas of one document style: what the Markdown renderer asks while it writes HTML.

    ``html`` gives an ``<img>`` for a formula that renders, else its source in monospace;
    ``urls`` collects the images used, for the document cache to register on the document.
    While ziamath is not imported yet, every formula shows as source and ``pending`` is set.
    """

    def __init__(self, style: MathStyle) -> None:
        self.style = style
        self.urls: dict[str, QImage] = {}
        self.pending = False

    def html(self, latex: str, display: bool) -> str:
        # Shown as source, a formula is still left out of find (a picture cannot be highlighted).
        source = f"<code{UNSEARCHED}>{html.escape(source_text(latex, display))}</code>"
        if not ready():
            self.pending = True
            return source
        image = formula_image(latex, display, self.style)
        if image is None:
            return source
        url = formula_url(latex, display)
        self.urls[url] = image
        quoted = html.escape(url, quote=True)
        align = "" if display else ' style="vertical-align: middle"'
        return f'<img src="{quoted}"{align}/>'

    def add_to(self, doc: QTextDocument) -> None:
        """Register the images used so far on ``doc`` (its HTML refers to them by URL)."""
        for url, image in self.urls.items():
            doc.addResource(QTextDocument.ResourceType.ImageResource, QUrl(url), image)


def replace_formulas(text: str, urls: list[str]) -> str:
    """``text`` copied from a document with each image character replaced by its formula's
    source; ``urls`` are the image names in document order (other images become nothing)."""
    if OBJECT_REPLACEMENT not in text:
        return text
    parts = text.split(OBJECT_REPLACEMENT)
    out = [parts[0]]
    for i, part in enumerate(parts[1:]):
        formula = formula_of_url(urls[i]) if i < len(urls) else None
        out.append(source_text(*formula) if formula else "")
        out.append(part)
    return "".join(out)


def selected_text(cursor: QTextCursor) -> str:
    """The plain text of ``cursor``'s selection with each formula as its LaTeX source."""
    text = cursor.selection().toPlainText()
    if OBJECT_REPLACEMENT not in text:
        return text
    doc, start, end = cursor.document(), cursor.selectionStart(), cursor.selectionEnd()
    urls: list[str] = []
    block = doc.findBlock(start)
    while block.isValid() and block.position() < end:
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            if fragment.position() + fragment.length() > start and fragment.position() < end:
                char_format = fragment.charFormat()
                if char_format.isImageFormat():
                    # one entry per image character in the selected part of the fragment
                    first = max(start, fragment.position())
                    last = min(end, fragment.position() + fragment.length())
                    urls.extend([char_format.toImageFormat().name()] * (last - first))
            it += 1
        block = block.next()
    return replace_formulas(text, urls)


def formula_url_at(doc: QTextDocument, point: QPointF) -> str | None:
    """The ``tex-math:`` URL of the formula image at ``point`` of ``doc`` (document coordinates)."""
    position = doc.documentLayout().hitTest(point, Qt.HitTestAccuracy.FuzzyHit)
    if position < 0:
        return None
    cursor = QTextCursor(doc)
    for after in (position + 1, position):  # the image may be the character after or before
        if not 0 < after <= doc.characterCount() - 1:
            continue
        cursor.setPosition(after)
        char_format = cursor.charFormat()  # the format of the character before the cursor
        if char_format.isImageFormat():
            name = char_format.toImageFormat().name()
            if formula_of_url(name) is not None:
                return name
    return None
