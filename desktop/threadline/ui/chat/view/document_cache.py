"""The chat view's rendered documents: one QTextDocument per message, kept while useful.

A finished message is rendered once per width, theme and font (only a new width re-wraps
the same document, without parsing again); the cache holds the most recently painted
``DOC_CACHE_SIZE`` messages, so a long conversation costs memory for what was seen lately,
not for all of it. A streaming reply grows its document instead: paragraphs that can no
longer change (see ``stable_boundary``) are appended once and only the unfinished tail is
replaced, so a frame costs the size of the tail, not of the reply. A Markdown table too wide
for the column keeps its natural width (``wide_tables.fit_wide_tables``).

Documents load no resources at all (``SafeDocument``): a prompt's own images are decoded
here and registered on its document; nothing else is ever fetched.

Code in a language whose Pygments lexer is not built yet is left plain on first render
(building one can take longer than a frame); the cache collects those languages and asks
its owner, through ``on_highlight_wanted``, to call :meth:`DocumentCache.highlight_pending`
after the frame, which builds the lexers and drops the plain documents. LaTeX formulas
work the same way (``math_render``): until ziamath is imported they show as source, and
their images are registered on the document like a prompt's attachments.
"""

from __future__ import annotations

import base64
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from PySide6.QtCore import QSize, Qt, QUrl
from PySide6.QtGui import QFont, QImage, QTextCursor, QTextDocument

from threadline.core.messages import Message, MessageKind, MessageStatus
from threadline.ui.chat.view import math_render
from threadline.ui.chat.view.markdown import (
    document_css,
    prepare_highlighting,
    render_markdown,
    stable_boundary,
)
from threadline.ui.chat.view.math_render import FormulaImages, MathStyle
from threadline.ui.chat.view.message_html import MessageHtmlOptions, ToolNamer, message_html, shown_images
from threadline.ui.chat.view.thinking_block import thinking_html, thinking_open
from threadline.ui.chat.view.wide_tables import fit_wide_tables
from threadline.ui.common.theme import LIGHT, ThemeColors

DOC_CACHE_SIZE = 400
THUMBNAIL = QSize(240, 160)
"""The largest size a prompt's attached image is shown at."""
TOOL_IMAGE = QSize(480, 360)
"""The largest size an image a tool returned is shown at (narrower columns scale it down)."""

CacheKey = tuple[Hashable, ...]


class SafeDocument(QTextDocument):
    """A document that never loads a resource (no images, no stylesheets, nothing remote)."""

    def loadResource(self, type: int, name: QUrl | str) -> None:
        return None


@dataclass(slots=True)
class RenderedMessage:
    key: CacheKey
    doc: QTextDocument
    code_blocks: list[str]
    """Raw text of each code block, for the copy button of ``copy-code:N``."""
    stable_len: int = 0
    """Streaming only: characters of the text already rendered for good (see stable_boundary)."""
    tail_pos: int = 0
    """Streaming only: document position where the re-rendered tail starts."""
    stream_key: CacheKey = ()
    stable_code: int = 0
    unhighlighted: bool = False
    """Code was left plain because its lexer was not built yet; rendered again once it is."""


class DocumentCache:
    """Rendered documents by message id, least recently painted dropped first."""

    def __init__(self, on_highlight_wanted: Callable[[], None], capacity: int = DOC_CACHE_SIZE) -> None:
        self._docs: OrderedDict[str, RenderedMessage] = OrderedDict()
        self._capacity = capacity
        self._on_highlight_wanted = on_highlight_wanted
        self._languages_wanted: set[str] = set()
        self._colors: ThemeColors = LIGHT
        self._theme_generation = 0
        self._font = QFont()
        self._tool_namer: ToolNamer | None = None
        self._excluded: frozenset[str] = frozenset()
        self._math_wanted = False
        self._math_style = MathStyle.of(self._colors.text, self._font)
        self.render_count = 0
        """Number of documents rendered (tests and benchmarks read it)."""

    # -- what every document depends on ---------------------------------------------------

    @property
    def colors(self) -> ThemeColors:
        return self._colors

    def set_colors(self, colors: ThemeColors) -> None:
        self._colors = colors
        self._theme_generation += 1
        self._math_style = MathStyle.of(colors.text, self._font)
        self.clear()

    def set_font(self, font: QFont) -> None:
        self._font = QFont(font)
        self._math_style = MathStyle.of(self._colors.text, self._font)
        self.clear()

    def set_tool_namer(self, namer: ToolNamer | None) -> None:
        self._tool_namer = namer
        self.clear()

    def set_excluded_sources(self, keys: frozenset[str]) -> bool:
        """The chat's excluded passages (shown struck out in Sources); whether they changed."""
        if keys == self._excluded:
            return False
        self._excluded = keys
        self.clear()
        return True

    # -- lookup ---------------------------------------------------------------------------

    def get(self, message_id: str) -> RenderedMessage | None:
        """The document last rendered for a message, if still cached (does not count as use)."""
        return self._docs.get(message_id)

    def __getitem__(self, message_id: str) -> RenderedMessage:
        return self._docs[message_id]

    def __contains__(self, message_id: object) -> bool:
        return message_id in self._docs

    def clear(self) -> None:
        self._docs.clear()

    # -- rendering ------------------------------------------------------------------------

    def render(self, message: Message, revision: int, width: int, expanded: set[str]) -> RenderedMessage:
        """The document of ``message`` at ``width``, rendered again only if something changed.

        ``expanded`` holds the keys of the tool boxes the user opened (of any message).
        """
        streaming = message.status is MessageStatus.STREAMING
        mine = frozenset(key for key in expanded if key.startswith(message.id))
        key: CacheKey = (
            revision,
            len(message.text),
            message.status,
            width,
            self._theme_generation,
            tuple(sorted(mine)),
        )
        cached = self._docs.get(message.id)
        if cached is not None and cached.key == key:
            self._docs.move_to_end(message.id)
            return cached
        if cached is not None and cached.key[:3] == key[:3] and cached.key[4:] == key[4:]:
            cached.doc.setTextWidth(width)  # only the width changed: re-wrap, no re-parse
            fit_wide_tables(cached.doc, width)
            cached.key = key
            self._docs.move_to_end(message.id)
            return cached
        if streaming and message.text and not message.tool_calls and message.kind is not MessageKind.PROMPT:
            return self._render_streaming(message, key, cached, width, mine)
        thumbnails = _thumbnails(message, width)
        formulas = FormulaImages(self._math_style)
        options = MessageHtmlOptions(
            math=formulas,
            highlight=not streaming,
            expanded=mine,
            tool_namer=self._tool_namer,
            excluded_sources=self._excluded,
            image_sizes={i: (image.width(), image.height()) for i, image in thumbnails.items()},
        )
        out = message_html(message, self._colors, options)
        doc = self._new_document(width)
        for url, index in out.images:  # the message's own images, decoded here: nothing is loaded
            doc.addResource(QTextDocument.ResourceType.ImageResource, QUrl(url), thumbnails[index])
        formulas.add_to(doc)
        doc.setHtml(out.html)
        doc.setTextWidth(width)
        fit_wide_tables(doc, width)
        self.render_count += 1
        plain = bool(out.unhighlighted) or self._math_pending(formulas)
        rendered = RenderedMessage(key, doc, out.code_blocks, unhighlighted=plain)
        self._remember(message.id, rendered)
        if out.unhighlighted:
            self._languages_wanted |= out.unhighlighted
            self._on_highlight_wanted()
        return rendered

    def highlight_pending(self) -> bool:
        """Build the lexers the last frame lacked and drop the documents rendered without them.

        True if a document was dropped (the owner repaints to render them highlighted).
        """
        languages, self._languages_wanted = self._languages_wanted, set()
        if languages:
            prepare_highlighting(languages, self._colors.pygments_style)
        if self._math_wanted:
            self._math_wanted = False
            math_render.prepare()
        stale = [mid for mid, r in self._docs.items() if r.unhighlighted]
        for mid in stale:
            del self._docs[mid]
        return bool(stale)

    def _math_pending(self, formulas: FormulaImages) -> bool:
        """Formulas were shown as source because ziamath is not imported yet: import it after
        this frame and render the document again."""
        if formulas.pending:
            self._math_wanted = True
            self._on_highlight_wanted()
        return formulas.pending

    def _new_document(self, width: int) -> QTextDocument:
        doc = SafeDocument()
        doc.setUndoRedoEnabled(False)
        doc.setDocumentMargin(0)
        doc.setDefaultFont(self._font)
        doc.setDefaultStyleSheet(document_css(self._colors, base_pt=self._font.pointSizeF()))
        doc.setTextWidth(width)
        return doc

    def _remember(self, message_id: str, rendered: RenderedMessage) -> None:
        self._docs[message_id] = rendered
        self._docs.move_to_end(message_id)
        while len(self._docs) > self._capacity:
            self._docs.popitem(last=False)

    def _render_streaming(
        self,
        message: Message,
        key: CacheKey,
        cached: RenderedMessage | None,
        width: int,
        expanded: frozenset[str] = frozenset(),
    ) -> RenderedMessage:
        """Grow the streaming reply's document: finished paragraphs are appended once, only the
        unfinished tail is replaced, so a frame costs the size of the tail, not of the reply.
        A thinking block (finished once text streams) heads the document, drawn once."""
        text = message.text
        stream_key = (message.id, width, self._theme_generation, thinking_open(message, expanded))
        rendered = cached
        if rendered is None or rendered.stream_key != stream_key or rendered.stable_len > len(text):
            rendered = RenderedMessage(key, self._new_document(width), [], stream_key=stream_key)
            head = thinking_html(message, self._colors, expanded)
            if head:
                start = QTextCursor(rendered.doc)
                start.insertHtml(head)
                rendered.tail_pos = start.position()
        doc = rendered.doc
        cursor = QTextCursor(doc)
        cursor.setPosition(rendered.tail_pos)
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        boundary = stable_boundary(text, rendered.stable_len)
        formulas = FormulaImages(self._math_style)
        if boundary > rendered.stable_len:
            part = render_markdown(
                text[rendered.stable_len : boundary],
                self._colors,
                highlight=False,
                code_offset=len(rendered.code_blocks),
                math=formulas,
            )
            formulas.add_to(doc)
            if rendered.tail_pos > 0:
                cursor.insertBlock()
            cursor.insertHtml(part.html)
            del rendered.code_blocks[rendered.stable_code :]
            rendered.code_blocks.extend(part.code_blocks)
            rendered.stable_code = len(rendered.code_blocks)
            rendered.stable_len = boundary
            cursor.movePosition(QTextCursor.MoveOperation.End)
            rendered.tail_pos = cursor.position()
        del rendered.code_blocks[rendered.stable_code :]
        tail = text[rendered.stable_len :]
        if tail.strip():
            part = render_markdown(
                tail, self._colors, highlight=False, code_offset=len(rendered.code_blocks), math=formulas
            )
            formulas.add_to(doc)
            if rendered.tail_pos > 0:
                cursor.insertBlock()
            cursor.insertHtml(part.html)
            rendered.code_blocks.extend(part.code_blocks)
        fit_wide_tables(doc, width)
        rendered.key = key
        rendered.unhighlighted = rendered.unhighlighted or self._math_pending(formulas)
        self.render_count += 1
        self._remember(message.id, rendered)
        return rendered


def _thumbnails(message: Message, width: int) -> dict[int, QImage]:
    """The decoded thumbnails of a message's images (``shown_images``), by index (those that decode).

    A prompt's attachments are small previews; a tool's images are what it answered, so
    they get the column's width (up to ``TOOL_IMAGE``).
    """
    if message.kind is MessageKind.PROMPT:
        limit = THUMBNAIL
    else:
        limit = QSize(max(1, min(width - 20, TOOL_IMAGE.width())), TOOL_IMAGE.height())
    out: dict[int, QImage] = {}
    for i, img in enumerate(shown_images(message)):
        image = _thumbnail(img.data, limit)
        if image is not None:
            out[i] = image
    return out


def decode_image(data: str) -> QImage | None:
    """An image's base64 data decoded; None if it does not decode."""
    try:
        raw = base64.b64decode(data, validate=False)
    except (ValueError, TypeError):
        return None
    image = QImage()
    return image if image.loadFromData(raw) else None


def _thumbnail(data: str, limit: QSize) -> QImage | None:
    """An image (base64) scaled down to fit ``limit``; None if it does not decode."""
    image = decode_image(data)
    if image is None:
        return None
    if image.width() > limit.width() or image.height() > limit.height():
        image = image.scaled(
            limit, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation
        )
    return image
