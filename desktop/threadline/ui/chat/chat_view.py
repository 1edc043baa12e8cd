"""The chat view: a virtualized list of rendered messages over a ConversationModel.

Why not a QListView or a widget per message (DESIGN.md §9): a widget per message lays
out every message, and QListView asks the delegate for the size of every row on each
relayout, which a growing streaming row triggers every frame. This view is a
QAbstractScrollArea that keeps a height per row (an estimate from the text length
until the row has been seen, then the measured height) and an *anchor* (the top
visible row and how far it is scrolled). Painting lays out only the rows that
intersect the viewport, so the cost of a frame depends on what is visible, not on the
length of the conversation; corrections of estimated heights above the anchor never
move what the user is looking at.

Each message is painted from a cached QTextDocument rendered from Markdown. Finished
messages are rendered once per width/theme; the streaming row is re-rendered only when
its revision changed, which the model coalesces to at most one change per frame, and
only while it is visible. Documents load no resources at all (``_SafeDocument``).

Text selection: double-click (or "Select text" in the context menu) opens a read-only
QTextBrowser over the message with the same document, so native selection, Ctrl+C and
select-all work; it closes on Escape, focus loss or scroll.
"""

from __future__ import annotations

import base64
import bisect
import html
import itertools
import json
import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, QPointF, QRect, QRectF, QSize, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QContextMenuEvent,
    QDesktopServices,
    QFont,
    QFontMetrics,
    QGuiApplication,
    QImage,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPalette,
    QResizeEvent,
    QShowEvent,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import QAbstractScrollArea, QMenu, QTextBrowser, QWidget

from threadline.core.messages import CANCELLED_RESULT_TEXT, Message, MessageKind, MessageStatus
from threadline.ui.chat.conversation_model import ConversationModel
from threadline.ui.chat.markdown import (
    COPY_CODE_SCHEME,
    document_css,
    is_safe_link,
    plain_text_html,
    prepare_highlighting,
    render_markdown,
    stable_boundary,
)
from threadline.ui.common.theme import LIGHT, ThemeColors, mix

log = logging.getLogger("threadline.ui.chat.chat_view")

MAX_CONTENT_WIDTH = 780
SIDE_MARGIN = 24
ROW_TOP = 14
ROW_BOTTOM = 6
HEADER_GAP = 5
FOOTER_H = 24
BUBBLE_PAD_X = 14
BUBBLE_PAD_Y = 10
STATUS_PAD_X = 7
DOC_CACHE_SIZE = 400
TOOL_TEXT_LIMIT = 20_000
THUMBNAIL = QSize(240, 160)
IMAGE_SCHEME = "attached-image"
"""URL scheme of a prompt's own images, added to its document as resources (never loaded)."""

TOOL_SUMMARY_CHARS = 90
WIRE_SEPARATOR = "__"
"""How a provider-safe tool name joins an MCP server and its tool (``time__get_current_time``)."""

ToolNamer = Callable[[str], str]
"""Maps a stored (wire) tool name to the name the user knows (``time/get_current_time``)."""

ACTION_LABELS = {
    "copy": "Copy",
    "edit": "Edit",
    "regenerate": "Regenerate",
    "retry": "Retry",
    "continue": "Continue",
    "prev_version": "‹",
    "next_version": "›",
}


class _SafeDocument(QTextDocument):
    """A document that never loads a resource (no images, no stylesheets, nothing remote)."""

    def loadResource(self, type: int, name: QUrl | str) -> Any:
        return None


@dataclass(slots=True)
class _Rendered:
    key: tuple[Any, ...]
    doc: QTextDocument
    code_blocks: list[str]
    stable_len: int = 0
    """Streaming only: characters of the text already rendered for good (see stable_boundary)."""
    tail_pos: int = 0
    """Streaming only: document position where the re-rendered tail starts."""
    stream_key: tuple[Any, ...] = ()
    stable_code: int = 0
    unhighlighted: bool = False
    """Code was left plain because its lexer was not built yet; rendered again once it is."""


@dataclass(slots=True)
class _RowGeometry:
    row: int
    message_id: str
    top: int
    height: int
    doc_rect: QRectF
    bubble: QRectF | None
    actions: list[tuple[QRectF, str]] = field(default_factory=list)
    version_label: tuple[QRectF, str] | None = None


class ChatView(QAbstractScrollArea):
    """Paints the messages of a ConversationModel; emits what the user asked for."""

    actionTriggered = Signal(str, str)  # action name, message id
    atBottomChanged = Signal(bool)
    escapePressed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ChatView")
        self.setFrameShape(QAbstractScrollArea.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.viewport().setMouseTracking(True)
        self.viewport().setAutoFillBackground(False)
        self._model: ConversationModel | None = None
        self._colors: ThemeColors = LIGHT
        self._theme_generation = 0
        self._heights: list[int] = []
        self._measured: list[int] = []  # content width a height was measured at (0 = estimate)
        self._offsets: list[int] | None = None
        self._anchor_row = 0
        self._anchor_off = 0
        self._stick = True
        self._docs: OrderedDict[str, _Rendered] = OrderedDict()
        self._expanded: set[str] = set()
        self._visible: list[_RowGeometry] = []
        self._hover: tuple[str, str] | None = None  # (message id, action)
        self._syncing_scrollbar = False
        self._flash_id: str | None = None
        self._flash_timer = QTimer(self)
        self._flash_timer.setSingleShot(True)
        self._flash_timer.timeout.connect(self._end_flash)
        self._languages_wanted: set[str] = set()
        self._highlight_timer = QTimer(self)
        self._highlight_timer.setSingleShot(True)
        self._highlight_timer.setInterval(0)  # right after the frame that showed plain code
        self._highlight_timer.timeout.connect(self._prepare_highlighting)
        self._editor: QTextBrowser | None = None
        self._editor_id: str | None = None
        self._tool_namer: ToolNamer | None = None
        self.render_count = 0
        """Number of documents rendered (tests and benchmarks read it)."""
        self.verticalScrollBar().valueChanged.connect(self._scrolled)
        self.verticalScrollBar().setSingleStep(40)
        self._update_fonts()

    # -- setup -----------------------------------------------------------------------------

    def setModel(self, model: ConversationModel) -> None:
        if self._model is not None:
            for signal, slot in self._connections():
                signal.disconnect(slot)
        self._model = model
        for signal, slot in self._connections():
            signal.connect(slot)
        self._reset_rows()

    def model(self) -> ConversationModel | None:
        return self._model

    def _connections(self) -> list[tuple[Any, Any]]:
        assert self._model is not None
        m = self._model
        return [
            (m.rowsInserted, self._rows_inserted),
            (m.rowsRemoved, self._rows_removed),
            (m.dataChanged, self._data_changed),
            (m.modelReset, self._reset_rows),
        ]

    def set_tool_namer(self, namer: ToolNamer | None) -> None:
        """How to show a stored tool name (the engine's registry maps wire to policy names)."""
        self._tool_namer = namer
        self._docs.clear()
        self.viewport().update()

    def tool_display_name(self, name: str) -> str:
        """The policy name of a registered tool; ``server/tool`` for an MCP tool no longer registered."""
        shown = name
        if self._tool_namer is not None:
            try:
                shown = self._tool_namer(name) or name
            except Exception:  # a view must paint whatever the registry does
                log.exception("tool name lookup failed for %r", name)
        if shown == name:
            shown = fallback_tool_name(name)
        return shown

    def set_colors(self, colors: ThemeColors) -> None:
        self._colors = colors
        self._theme_generation += 1
        self._docs.clear()
        self.viewport().update()

    def _update_fonts(self) -> None:
        base = self.font()
        self._body_font = QFont(base)
        self._small_font = QFont(base)
        self._small_font.setPointSizeF(max(7.5, base.pointSizeF() * 0.88))
        self._header_font = QFont(self._small_font)
        self._header_font.setWeight(QFont.Weight.DemiBold)
        self._fm_body = QFontMetrics(self._body_font)
        self._fm_small = QFontMetrics(self._small_font)
        self._fm_header = QFontMetrics(self._header_font)
        self._header_h = self._fm_header.height() + 2
        self._avg_char = max(5, self._fm_body.averageCharWidth())
        self._line_h = self._fm_body.lineSpacing()

    # -- geometry helpers ------------------------------------------------------------------

    def content_width(self) -> int:
        avail = self.viewport().width() - 2 * SIDE_MARGIN
        return max(200, min(MAX_CONTENT_WIDTH, avail))

    def _content_left(self) -> int:
        return max(SIDE_MARGIN, (self.viewport().width() - self.content_width()) // 2)

    def _doc_width(self, message: Message) -> int:
        w = self.content_width()
        return w - 2 * BUBBLE_PAD_X if self._has_bubble(message) else w

    @staticmethod
    def _has_bubble(message: Message) -> bool:
        return message.kind is MessageKind.PROMPT

    def _estimates(self, first: int, last: int) -> list[int]:
        """``_estimate`` for rows ``first..last``, with the per-view arithmetic done once: opening a
        10,000-message session estimates every row, so this loop is all the per-message work of
        an open (DESIGN.md §5: nothing is laid out or measured until it shows)."""
        m = self._model
        if m is None:
            return []
        width = self.content_width()
        line_h = self._line_h
        per_line_plain = max(20, width // self._avg_char)
        per_line_bubble = max(20, (width - 2 * BUBBLE_PAD_X) // self._avg_char)
        fixed = ROW_TOP + self._header_h + HEADER_GAP + FOOTER_H + ROW_BOTTOM
        prompt = MessageKind.PROMPT
        out: list[int] = []
        append = out.append
        message_at = m.message_at
        for row in range(first, last + 1):
            message = message_at(row)
            if message is None:
                append(60)
                continue
            text = message.text
            bubble = message.kind is prompt
            lines = len(text) // (per_line_bubble if bubble else per_line_plain) + text.count("\n") + 1
            if message.tool_calls or message.tool_results:
                lines += 2 * (len(message.tool_calls) + len(message.tool_results))
            append(fixed + lines * line_h + (2 * BUBBLE_PAD_Y if bubble else 0))
        return out

    def _offsets_list(self) -> list[int]:
        if self._offsets is None:
            self._offsets = [0, *itertools.accumulate(self._heights)]
        return self._offsets

    def total_height(self) -> int:
        return self._offsets_list()[-1]

    # -- model signals ---------------------------------------------------------------------

    def _reset_rows(self) -> None:
        self._close_editor()
        m = self._model
        n = m.rowCount() if m is not None else 0
        self._heights = self._estimates(0, n - 1)
        self._measured = [0] * n
        self._offsets = None
        self._anchor_row, self._anchor_off = 0, 0
        self._stick = True
        self._docs.clear()
        self._relayout()

    def _rows_inserted(self, _parent: QModelIndex, first: int, last: int) -> None:
        assert self._model is not None
        count = last - first + 1
        new = self._estimates(first, last)
        self._heights[first:first] = new
        self._measured[first:first] = [0] * count
        self._offsets = None
        if len(self._heights) > count and self._anchor_row >= first:
            self._anchor_row += count
        self._relayout()

    def _rows_removed(self, _parent: QModelIndex, first: int, last: int) -> None:
        count = last - first + 1
        del self._heights[first : last + 1]
        del self._measured[first : last + 1]
        self._offsets = None
        if self._anchor_row > last:
            self._anchor_row -= count
        elif self._anchor_row >= first:
            self._anchor_row = min(first, max(0, len(self._heights) - 1))
            self._anchor_off = 0
        editing = self._editor_id
        if editing is not None and self._model is not None and self._model.row_of(editing) < 0:
            self._close_editor()
        self._relayout()

    def _data_changed(self, top_left: QModelIndex, bottom_right: QModelIndex, _roles: Any = None) -> None:
        for row in range(top_left.row(), bottom_right.row() + 1):
            if 0 <= row < len(self._measured):
                self._measured[row] = -1  # stale: re-measure when next visible
        if self.isVisible():
            self._relayout()

    def _relayout(self) -> None:
        if self.isVisible():
            self.viewport().update()
        else:
            self._sync_scrollbar()

    # -- rendering ---------------------------------------------------------------------------

    def _render(self, message: Message, revision: int) -> _Rendered:
        """The cached document of ``message``, rendered again only if something changed."""
        width = self._doc_width(message)
        streaming = message.status is MessageStatus.STREAMING
        expanded = tuple(sorted(i for i in self._expanded if i.startswith(message.id)))
        key = (revision, len(message.text), message.status, width, self._theme_generation, expanded)
        cached = self._docs.get(message.id)
        if cached is not None and cached.key == key:
            self._docs.move_to_end(message.id)
            return cached
        if cached is not None and cached.key[:3] == key[:3] and cached.key[4:] == key[4:]:
            cached.doc.setTextWidth(width)  # only the width changed: re-wrap, no re-parse
            cached.key = key
            self._docs.move_to_end(message.id)
            return cached
        if streaming and message.text and not message.tool_calls and message.kind is not MessageKind.PROMPT:
            return self._render_streaming(message, key, cached, width)
        html_text, code_blocks, unhighlighted, images = self._message_html(message, highlight=not streaming)
        doc = self._new_document(width)
        for url, image in images:  # the prompt's own attachments, decoded here: nothing is loaded
            doc.addResource(QTextDocument.ResourceType.ImageResource, QUrl(url), image)
        doc.setHtml(html_text)
        doc.setTextWidth(width)
        self.render_count += 1
        rendered = _Rendered(key, doc, code_blocks, unhighlighted=bool(unhighlighted))
        self._remember(message.id, rendered)
        if unhighlighted:
            self._languages_wanted |= unhighlighted
            if not self._highlight_timer.isActive():
                self._highlight_timer.start()
        return rendered

    def _prepare_highlighting(self) -> None:
        """Build the lexers the last frame lacked, then render those messages again, highlighted."""
        languages, self._languages_wanted = self._languages_wanted, set()
        prepare_highlighting(languages, self._colors.pygments_style)
        stale = [mid for mid, r in self._docs.items() if r.unhighlighted]
        for mid in stale:
            del self._docs[mid]
        if stale:
            self.viewport().update()

    def _new_document(self, width: int) -> QTextDocument:
        doc = _SafeDocument()
        doc.setUndoRedoEnabled(False)
        doc.setDocumentMargin(0)
        doc.setDefaultFont(self._body_font)
        doc.setDefaultStyleSheet(document_css(self._colors, base_pt=self._body_font.pointSizeF()))
        doc.setTextWidth(width)
        return doc

    def _remember(self, message_id: str, rendered: _Rendered) -> None:
        self._docs[message_id] = rendered
        self._docs.move_to_end(message_id)
        while len(self._docs) > DOC_CACHE_SIZE:
            self._docs.popitem(last=False)

    def _render_streaming(
        self, message: Message, key: tuple[Any, ...], cached: _Rendered | None, width: int
    ) -> _Rendered:
        """Grow the streaming reply's document: finished paragraphs are appended once, only the
        unfinished tail is replaced, so a frame costs the size of the tail, not of the reply."""
        text = message.text
        stream_key = (message.id, width, self._theme_generation)
        rendered = cached
        if rendered is None or rendered.stream_key != stream_key or rendered.stable_len > len(text):
            rendered = _Rendered(key, self._new_document(width), [], stream_key=stream_key)
        doc = rendered.doc
        cursor = QTextCursor(doc)
        cursor.setPosition(rendered.tail_pos)
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        boundary = stable_boundary(text, rendered.stable_len)
        if boundary > rendered.stable_len:
            part = render_markdown(
                text[rendered.stable_len : boundary],
                self._colors,
                highlight=False,
                code_offset=len(rendered.code_blocks),
            )
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
            part = render_markdown(tail, self._colors, highlight=False, code_offset=len(rendered.code_blocks))
            if rendered.tail_pos > 0:
                cursor.insertBlock()
            cursor.insertHtml(part.html)
            rendered.code_blocks.extend(part.code_blocks)
        rendered.key = key
        self.render_count += 1
        self._remember(message.id, rendered)
        return rendered

    def _message_html(
        self, message: Message, *, highlight: bool
    ) -> tuple[str, list[str], set[str], list[tuple[str, QImage]]]:
        c = self._colors
        parts: list[str] = []
        code_blocks: list[str] = []
        unhighlighted: set[str] = set()
        images: list[tuple[str, QImage]] = []
        if message.kind is MessageKind.PROMPT:
            parts.append(plain_text_html(message.text, c))
            for ctx in message.context:
                parts.append(
                    f'<p><span class="muted">Attached: {_esc(ctx.name)} '
                    f"({len(ctx.text):,} characters)</span></p>"
                )
            for i, img in enumerate(message.images):
                label = f'<span class="muted">Image: {_esc(img.name or img.media_type)}</span>'
                thumbnail = _thumbnail(img.data)
                if thumbnail is None:
                    parts.append(f"<p>{label}</p>")
                    continue
                url = f"{IMAGE_SCHEME}:{message.id}:{i}"
                images.append((url, thumbnail))
                size = f'width="{thumbnail.width()}" height="{thumbnail.height()}"'
                parts.append(f'<p><img src="{url}" {size}/><br/>{label}</p>')
        elif message.kind in (MessageKind.TOOL_RESULTS, MessageKind.CANCELLED_TOOL_USES):
            if message.text:
                parts.append(f'<p class="muted">{_esc(message.text)}</p>')
            for result in message.tool_results:
                name = self.tool_display_name(result.tool_name) if result.tool_name else "tool"
                # A call the user refused or stopped is not a tool's error: said quietly.
                cancelled = result.is_error and result.text.startswith(CANCELLED_RESULT_TEXT)
                if cancelled:
                    title = "Not run: " + name
                elif result.is_error:
                    title = "Error from " + name
                else:
                    title = "Result of " + name
                parts.append(
                    self._tool_block(
                        f"{message.id}:{result.call_id}",
                        title,
                        result.text,
                        error=result.is_error and not cancelled,
                        quiet=cancelled,
                    )
                )
        else:
            if message.text:
                rendered = render_markdown(message.text, c, highlight=highlight, defer_lexers=True)
                parts.append(rendered.html)
                code_blocks = rendered.code_blocks
                unhighlighted = rendered.unhighlighted
            elif message.status is MessageStatus.STREAMING:
                parts.append('<p class="muted">Thinking…</p>')
            elif not message.tool_calls and message.status is not MessageStatus.FAILED:
                stopped = message.status in (MessageStatus.CANCELLED, MessageStatus.INTERRUPTED)
                parts.append(
                    '<p class="muted">'
                    + ("Stopped before any text arrived." if stopped else "No text was received.")
                    + "</p>"
                )
            if message.status is MessageStatus.FAILED:
                error = message.metadata.error if message.metadata else ""
                parts.append(
                    f'<p class="muted">{_esc(error or "The reply failed before any text arrived.")}</p>'
                )
            for call in message.tool_calls:
                parts.append(
                    self._tool_block(
                        f"{message.id}:{call.id}",
                        f"Tool call: {self.tool_display_name(call.name)}",
                        _pretty_json(call.arguments),
                        error=False,
                        summary=arguments_summary(call.arguments),
                    )
                )
        return "".join(parts), code_blocks, unhighlighted, images

    def _tool_block(
        self, key: str, title: str, body: str, *, error: bool, summary: str | None = None, quiet: bool = False
    ) -> str:
        c = self._colors
        open_ = key in self._expanded
        arrow = "▾" if open_ else "▸"
        if summary is None:
            summary = body.strip().splitlines()[0] if body.strip() else ""
        summary = "" if open_ else _esc(_elide(summary, TOOL_SUMMARY_CHARS))
        colour = c.error_text if error else c.muted if quiet else c.text
        head = (
            f'<a href="toggle:{_esc(key)}" style="color:{colour}; text-decoration:none;">{arrow} '
            f'<b>{_esc(title)}</b></a> <span style="color:{c.muted};">{summary}</span>'
        )
        rows = f'<tr><td style="padding: 4px 8px;">{head}</td></tr>'
        if open_:
            text = body if len(body) <= TOOL_TEXT_LIMIT else body[:TOOL_TEXT_LIMIT] + "\n… (truncated)"
            rows += (
                f'<tr><td style="padding: 4px 8px; border-top: 1px solid {c.code_border};">'
                f'<pre style="color:{c.text};">{_esc(text)}</pre></td></tr>'
            )
        return (
            f'<table width="100%" cellspacing="0" cellpadding="0" style="background-color:{c.code_bg}; '
            f'border: 1px solid {c.code_border}; margin-top: 4px; margin-bottom: 4px;">{rows}</table>'
        )

    # -- layout of visible rows ----------------------------------------------------------------

    def _measure(self, row: int) -> tuple[Message, _Rendered, int]:
        assert self._model is not None
        message = self._model.message_at(row)
        assert message is not None
        rendered = self._render(message, self._model.revision(message.id))
        doc_h = int(rendered.doc.size().height() + 0.999)
        body = doc_h + (2 * BUBBLE_PAD_Y if self._has_bubble(message) else 0)
        height = ROW_TOP + self._header_h + HEADER_GAP + body + FOOTER_H + ROW_BOTTOM
        if self._heights[row] != height:
            self._heights[row] = height
            self._offsets = None
        self._measured[row] = self.content_width()
        return message, rendered, height

    def _ensure_layout(self) -> None:
        """Fix the anchor so the viewport is filled, measuring only the rows that show."""
        n = len(self._heights)
        vh = self.viewport().height()
        if n == 0 or self._model is None:
            self._anchor_row, self._anchor_off = 0, 0
            self._visible = []
            self._sync_scrollbar()
            return
        if self._stick:
            self._anchor_to_bottom(n, vh)
        else:
            self._anchor_row = min(max(0, self._anchor_row), n - 1)
            # Walk down from the anchor; if the content ends above the viewport bottom,
            # the view is past the end: pin to the bottom instead.
            _, _, h = self._measure(self._anchor_row)
            self._anchor_off = min(max(0, self._anchor_off), max(0, h - 1))
            y = h - self._anchor_off
            row = self._anchor_row + 1
            while y < vh and row < n:
                y += self._measure(row)[2]
                row += 1
            if y < vh:
                self._anchor_to_bottom(n, vh)
        self._sync_scrollbar()

    def _anchor_to_bottom(self, n: int, vh: int) -> None:
        y = vh
        row = n - 1
        while row >= 0:
            _, _, h = self._measure(row)
            y -= h
            if y <= 0:
                break
            row -= 1
        if row < 0:
            self._anchor_row, self._anchor_off = 0, 0
        else:
            self._anchor_row, self._anchor_off = row, -y

    def _sync_scrollbar(self) -> None:
        bar = self.verticalScrollBar()
        offsets = self._offsets_list()
        total = offsets[-1]
        vh = self.viewport().height()
        value = offsets[min(self._anchor_row, len(offsets) - 1)] + self._anchor_off if self._heights else 0
        self._syncing_scrollbar = True
        try:
            bar.setRange(0, max(0, total - vh))
            bar.setPageStep(max(1, vh))
            bar.setValue(min(value, bar.maximum()))
        finally:
            self._syncing_scrollbar = False

    def _scrolled(self, value: int) -> None:
        self._close_editor()
        if self._syncing_scrollbar:
            return
        offsets = self._offsets_list()
        if len(offsets) <= 1:
            return
        row = max(0, min(bisect.bisect_right(offsets, value) - 1, len(self._heights) - 1))
        self._anchor_row, self._anchor_off = row, value - offsets[row]
        was = self._stick
        self._stick = value >= self.verticalScrollBar().maximum() - 2
        if was != self._stick:
            self.atBottomChanged.emit(self._stick)
        self.viewport().update()

    @property
    def following(self) -> bool:
        """Whether the view follows new content (the user is at the bottom)."""
        return self._stick

    def scroll_to_bottom(self) -> None:
        was = self._stick
        self._stick = True
        if not was:
            self.atBottomChanged.emit(True)
        self.viewport().update()

    def scroll_to_message(self, message_id: str, *, flash: bool = True) -> bool:
        """Bring a message to the top of the view (search hits), briefly highlighted."""
        if self._model is None:
            return False
        row = self._model.row_of(message_id)
        if row < 0:
            return False
        self._stick = False
        self._anchor_row, self._anchor_off = row, 0
        if flash:
            self._flash_id = message_id
            self._flash_timer.start(1800)
        self._ensure_layout()
        self.viewport().update()
        return True

    def _end_flash(self) -> None:
        self._flash_id = None
        self.viewport().update()

    # -- painting ----------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self.viewport())
        try:
            self._paint_all(painter)
        finally:
            painter.end()

    def _paint_all(self, painter: QPainter) -> None:
        self._ensure_layout()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        c = self._colors
        painter.fillRect(self.viewport().rect(), QColor(c.base))
        self._visible = []
        if self._model is None or not self._heights:
            return
        vh = self.viewport().height()
        y = -self._anchor_off
        row = self._anchor_row
        n = len(self._heights)
        busy = not self._model.live.conversation.ready_for_input
        while row < n and y < vh:
            message, rendered, h = self._measure(row)
            geo = self._paint_row(painter, row, y, h, message, rendered, busy)
            self._visible.append(geo)
            y += h
            row += 1

    def _paint_row(
        self, p: QPainter, row: int, top: int, height: int, message: Message, rendered: _Rendered, busy: bool
    ) -> _RowGeometry:
        c = self._colors
        left = self._content_left()
        width = self.content_width()
        if message.id == self._flash_id:
            p.fillRect(QRect(0, top, self.viewport().width(), height), QColor(c.selection))
        # Header: who, and quiet metadata.
        y = top + ROW_TOP
        p.setFont(self._header_font)
        p.setPen(QColor(c.text))
        who = _speaker(message)
        p.drawText(QRect(left, y, width, self._header_h), Qt.AlignmentFlag.AlignVCenter, who)
        x = left + self._fm_header.horizontalAdvance(who) + 10
        status_text, status_colour = self._status(message)
        p.setFont(self._small_font)
        meta = _meta(message)
        if meta:
            p.setPen(QColor(c.muted))
            p.drawText(QRect(x, y, width, self._header_h), Qt.AlignmentFlag.AlignVCenter, meta)
            x += self._fm_small.horizontalAdvance(meta) + 10
        if status_text:
            self._paint_status(p, x, y, status_text, status_colour)
        y += self._header_h + HEADER_GAP
        # Body.
        doc = rendered.doc
        doc_h = doc.size().height()
        bubble: QRectF | None = None
        if self._has_bubble(message):
            bubble = QRectF(left, y, width, doc_h + 2 * BUBBLE_PAD_Y)
            path = QPainterPath()
            path.addRoundedRect(bubble, 10, 10)
            p.fillPath(path, QColor(c.user_bubble))
            doc_rect = QRectF(left + BUBBLE_PAD_X, y + BUBBLE_PAD_Y, doc.textWidth(), doc_h)
        else:
            doc_rect = QRectF(left, y, doc.textWidth(), doc_h)
        p.save()
        p.translate(doc_rect.topLeft())
        ctx = QAbstractTextDocumentLayout.PaintContext()
        ctx.palette.setColor(QPalette.ColorRole.Text, QColor(c.text))
        ctx.clip = QRectF(
            0,
            max(0.0, -doc_rect.top()),
            doc_rect.width(),
            min(doc_h, self.viewport().height() - doc_rect.top()),
        )
        doc.documentLayout().draw(p, ctx)
        p.restore()
        # Footer: actions.
        geo = _RowGeometry(row, message.id, top, height, doc_rect, bubble)
        fy = int(doc_rect.bottom() + (BUBBLE_PAD_Y if bubble else 0)) + 4
        self._paint_actions(p, geo, message, left, fy, busy)
        return geo

    def _paint_status(self, p: QPainter, x: int, y: int, text: str, colour: str) -> None:
        """A small quiet label (Stopped, Interrupted, Failed): the status colour on a faint tint of it."""
        c = self._colors
        w = self._fm_small.horizontalAdvance(text) + 2 * STATUS_PAD_X
        h = self._fm_small.height() + 2
        rect = QRectF(x, y + (self._header_h - h) / 2, w, h)
        path = QPainterPath()
        path.addRoundedRect(rect, h / 2, h / 2)
        p.fillPath(path, mix(colour, c.base, 0.14 if c.dark else 0.10))
        p.setPen(QColor(colour))
        p.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)

    def _paint_actions(
        self, p: QPainter, geo: _RowGeometry, message: Message, left: int, fy: int, busy: bool
    ) -> None:
        c = self._colors
        p.setFont(self._small_font)
        x = left
        h = FOOTER_H - 4
        for action in self._actions_for(message, busy):
            if action == "version":
                ver = self._model.version(message.id) if self._model else None
                if ver is None:
                    continue
                for part in ("prev_version", "label", "next_version"):
                    text = f"{ver.index} / {ver.count}" if part == "label" else ACTION_LABELS[part]
                    w = self._fm_small.horizontalAdvance(text) + (8 if part != "label" else 6)
                    rect = QRectF(x, fy, w, h)
                    if part == "label":
                        p.setPen(QColor(c.muted))
                        geo.version_label = (rect, text)
                    else:
                        hovered = self._hover == (message.id, part)
                        if hovered:
                            p.fillRect(rect, QColor(c.hover))
                        p.setPen(QColor(c.text if hovered else c.muted))
                        geo.actions.append((rect, part))
                    p.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
                    x += int(w)
                x += 10
                continue
            text = ACTION_LABELS[action]
            w = self._fm_small.horizontalAdvance(text) + 12
            rect = QRectF(x, fy, w, h)
            hovered = self._hover == (message.id, action)
            if hovered:
                path = QPainterPath()
                path.addRoundedRect(rect, 4, 4)
                p.fillPath(path, QColor(c.hover))
            p.setPen(QColor(c.text if hovered else c.muted))
            p.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
            geo.actions.append((rect, action))
            x += int(w) + 2

    def _actions_for(self, message: Message, busy: bool) -> list[str]:
        actions = ["copy"] if message.text else []
        if message.kind is MessageKind.PROMPT and not busy:
            actions.append("edit")
        if message.is_assistant and not busy and message.status is not MessageStatus.STREAMING:
            # A failed reply is asked again ("Retry": a new version of it); a stopped one can also
            # be continued from the text it has.
            actions.append("retry" if message.status is MessageStatus.FAILED else "regenerate")
            stopped = message.status in (MessageStatus.CANCELLED, MessageStatus.INTERRUPTED)
            if stopped and not message.tool_calls and message.text:
                actions.insert(actions.index("regenerate"), "continue")
        if self._model is not None and self._model.version(message.id).count > 1:
            actions.append("version")
        return actions

    def _status(self, message: Message) -> tuple[str, str]:
        c = self._colors
        s = message.status
        if s is MessageStatus.STREAMING:
            return "Streaming…", c.accent
        if s is MessageStatus.CANCELLED:
            return "Stopped", c.warning
        if s is MessageStatus.INTERRUPTED:
            return "Interrupted", c.warning
        if s is MessageStatus.FAILED:  # the reason is in the body (and the tab's banner)
            return "Failed", c.error_text
        return "", c.muted

    # -- interaction ---------------------------------------------------------------------------

    def _geometry_at(self, pos: QPointF) -> _RowGeometry | None:
        for geo in self._visible:
            if geo.top <= pos.y() < geo.top + geo.height:
                return geo
        return None

    def _hit(self, pos: QPointF) -> tuple[_RowGeometry | None, str | None, str | None]:
        """(row, action under the pointer, anchor href under the pointer)."""
        geo = self._geometry_at(pos)
        if geo is None:
            return None, None, None
        for rect, action in geo.actions:
            if rect.contains(pos):
                return geo, action, None
        if geo.doc_rect.contains(pos):
            rendered = self._docs.get(geo.message_id)
            if rendered is not None:
                href = rendered.doc.documentLayout().anchorAt(pos - geo.doc_rect.topLeft())
                if href:
                    return geo, None, href
        return geo, None, None

    def action_rect(self, message_id: str, action: str) -> QRect | None:
        """Where an action button of a visible message is (for tests driving the mouse)."""
        self._ensure_visible_geometry()
        for geo in self._visible:
            if geo.message_id == message_id:
                for rect, name in geo.actions:
                    if name == action:
                        return rect.toRect()
        return None

    def version_text(self, message_id: str) -> str | None:
        self._ensure_visible_geometry()
        for geo in self._visible:
            if geo.message_id == message_id and geo.version_label:
                return geo.version_label[1]
        return None

    def anchor_rect(self, message_id: str, href: str) -> QRect | None:
        """Where a link with ``href`` of a visible message is painted (tests)."""
        self._ensure_visible_geometry()
        rendered = self._docs.get(message_id)
        geo = next((g for g in self._visible if g.message_id == message_id), None)
        if rendered is None or geo is None:
            return None
        layout = rendered.doc.documentLayout()
        step = 3
        h = int(geo.doc_rect.height())
        w = int(geo.doc_rect.width())
        for yy in range(0, h, step):
            for xx in range(0, w, step):
                if layout.anchorAt(QPointF(xx, yy)) == href:
                    return QRect(int(geo.doc_rect.left()) + xx, int(geo.doc_rect.top()) + yy, 2, 2)
        return None

    def visible_message_ids(self) -> list[str]:
        self._ensure_visible_geometry()
        return [g.message_id for g in self._visible]

    def _ensure_visible_geometry(self) -> None:
        """Lay out and paint the visible rows now (into an image), so hit rectangles are current."""
        size = self.viewport().size()
        image = QImage(max(1, size.width()), max(1, size.height()), QImage.Format.Format_ARGB32_Premultiplied)
        painter = QPainter(image)
        try:
            self._paint_all(painter)
        finally:
            painter.end()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        geo, action, href = self._hit(event.position())
        hover = (geo.message_id, action) if geo and action else None
        if hover != self._hover:
            self._hover = hover
            self.viewport().update()
        cursor = Qt.CursorShape.PointingHandCursor if (action or href) else Qt.CursorShape.ArrowCursor
        self.viewport().setCursor(cursor)
        if href and is_safe_link(href):
            self.viewport().setToolTip(href)
        else:
            self.viewport().setToolTip("")
        super().mouseMoveEvent(event)

    def leaveEvent(self, event: QEvent) -> None:
        if self._hover is not None:
            self._hover = None
            self.viewport().update()
        super().leaveEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        event.accept()  # clicks are handled on release (actions, links)
        self.setFocus(Qt.FocusReason.MouseFocusReason)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return super().mouseReleaseEvent(event)
        geo, action, href = self._hit(event.position())
        if geo is None:
            return None
        if action:
            self._trigger(action, geo.message_id)
        elif href:
            self._activate_link(geo.message_id, href)
        return None

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        geo, action, href = self._hit(event.position())
        if geo is not None and action is None and href is None and geo.doc_rect.contains(event.position()):
            self.open_selection_editor(geo.message_id)

    def _trigger(self, action: str, message_id: str) -> None:
        if action == "copy":
            self.copy_message(message_id)
        self.actionTriggered.emit(action, message_id)

    def _activate_link(self, message_id: str, href: str) -> None:
        if href.startswith(COPY_CODE_SCHEME + ":"):
            rendered = self._docs.get(message_id)
            try:
                code = rendered.code_blocks[int(href.split(":", 1)[1])] if rendered else None
            except (ValueError, IndexError):
                code = None
            if code is not None:
                QGuiApplication.clipboard().setText(code)
                self.actionTriggered.emit("copy_code", message_id)
        elif href.startswith("toggle:"):
            key = href.split(":", 1)[1]
            self._expanded.symmetric_difference_update({key})
            row = self._model.row_of(message_id) if self._model else -1
            if row >= 0:
                self._measured[row] = -1
            self.viewport().update()
        elif is_safe_link(href):
            QDesktopServices.openUrl(QUrl(href))
            self.actionTriggered.emit("open_link", message_id)
        else:
            log.info("refused to open link with unsupported scheme")

    def copy_message(self, message_id: str) -> None:
        message = self._model.message(message_id) if self._model else None
        if message is not None:
            QGuiApplication.clipboard().setText(message.text)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        geo, _action, href = self._hit(QPointF(event.pos()))
        if geo is None or self._model is None:
            return
        message = self._model.message(geo.message_id)
        if message is None:
            return
        menu = QMenu(self)
        menu.addAction("Copy", lambda: self._trigger("copy", geo.message_id))
        menu.addAction("Select text", lambda: self.open_selection_editor(geo.message_id))
        if href and is_safe_link(href):
            menu.addAction("Copy link address", lambda: QGuiApplication.clipboard().setText(href))
        busy = not self._model.live.conversation.ready_for_input
        others = [a for a in self._actions_for(message, busy) if a not in ("copy", "version")]
        if others:
            menu.addSeparator()
            for action in others:
                menu.addAction(ACTION_LABELS[action], lambda a=action: self._trigger(a, geo.message_id))  # type: ignore[misc]
        menu.exec(event.globalPos())

    def keyPressEvent(self, event: QKeyEvent) -> None:
        bar = self.verticalScrollBar()
        key = event.key()
        if key == Qt.Key.Key_Escape:
            self.escapePressed.emit()
        elif key == Qt.Key.Key_End and event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.scroll_to_bottom()
        elif key == Qt.Key.Key_Home and event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            bar.setValue(0)
        elif key == Qt.Key.Key_PageDown:
            bar.triggerAction(bar.SliderAction.SliderPageStepAdd)
        elif key == Qt.Key.Key_PageUp:
            bar.triggerAction(bar.SliderAction.SliderPageStepSub)
        else:
            super().keyPressEvent(event)

    # -- selection editor ------------------------------------------------------------------------

    def open_selection_editor(self, message_id: str) -> QTextBrowser | None:
        self._close_editor()
        geo = next((g for g in self._visible if g.message_id == message_id), None)
        rendered = self._docs.get(message_id)
        if geo is None or rendered is None:
            return None
        editor = QTextBrowser(self.viewport())
        editor.setObjectName("SelectionEditor")
        editor.setOpenLinks(False)
        editor.setOpenExternalLinks(False)
        editor.setFrameShape(QTextBrowser.Shape.NoFrame)
        editor.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        editor.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        editor.viewport().setAutoFillBackground(False)
        editor.setStyleSheet("QTextBrowser { background: transparent; }")
        doc = rendered.doc.clone(editor)
        editor.setDocument(doc)
        editor.setGeometry(geo.doc_rect.toAlignedRect())
        editor.anchorClicked.connect(lambda url: self._activate_link(message_id, url.toString()))
        editor.installEventFilter(self)
        editor.show()
        editor.setFocus(Qt.FocusReason.MouseFocusReason)
        self._editor, self._editor_id = editor, message_id
        return editor

    def selection_editor(self) -> QTextBrowser | None:
        return self._editor

    def _close_editor(self) -> None:
        editor, self._editor, self._editor_id = self._editor, None, None
        if editor is not None:
            editor.removeEventFilter(self)
            editor.hide()
            editor.deleteLater()

    def eventFilter(self, obj: Any, event: QEvent) -> bool:
        if obj is self._editor:
            if (
                event.type() == QEvent.Type.KeyPress
                and isinstance(event, QKeyEvent)
                and event.key() == Qt.Key.Key_Escape
            ):
                self._close_editor()
                self.setFocus()
                return True
            if event.type() == QEvent.Type.FocusOut:
                QTimer.singleShot(0, self._close_editor_if_unfocused)
        return super().eventFilter(obj, event)

    def _close_editor_if_unfocused(self) -> None:
        if self._editor is not None and not self._editor.hasFocus():
            self._close_editor()

    # -- Qt housekeeping -----------------------------------------------------------------------

    def resizeEvent(self, event: QResizeEvent) -> None:
        self._close_editor()
        super().resizeEvent(event)
        self.viewport().update()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.viewport().update()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.FontChange:
            self._update_fonts()
            self._docs.clear()
        super().changeEvent(event)

    def sizeHint(self) -> QSize:
        return QSize(640, 480)


def _thumbnail(data: str) -> QImage | None:
    """A prompt's attached image (base64), scaled to fit ``THUMBNAIL``; None if it does not decode."""
    try:
        raw = base64.b64decode(data, validate=False)
    except (ValueError, TypeError):
        return None
    image = QImage()
    if not image.loadFromData(raw):
        return None
    if image.width() > THUMBNAIL.width() or image.height() > THUMBNAIL.height():
        image = image.scaled(
            THUMBNAIL, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation
        )
    return image


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def fallback_tool_name(name: str) -> str:
    """``server/tool`` for an MCP wire name ``server__tool`` (a tool whose server is gone)."""
    server, sep, tool = name.partition(WIRE_SEPARATOR)
    return f"{server}/{tool}" if sep and server and tool else name


def arguments_summary(arguments: str) -> str:
    """One line for a collapsed tool call: ``city: "Oslo", days: 3`` (values as JSON, not elided)."""
    try:
        parsed = json.loads(arguments or "{}")
    except (ValueError, TypeError):
        return " ".join((arguments or "").split())
    if not isinstance(parsed, dict):
        return json.dumps(parsed, ensure_ascii=False)
    if not parsed:
        return "no arguments"
    return ", ".join(f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in parsed.items())


def _elide(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _pretty_json(text: str) -> str:
    try:
        return json.dumps(json.loads(text or "{}"), indent=2, ensure_ascii=False)
    except (ValueError, TypeError):
        return text


def _speaker(message: Message) -> str:
    if message.kind is MessageKind.SUMMARY:
        return "Summary of earlier messages"
    if message.kind in (MessageKind.TOOL_RESULTS, MessageKind.CANCELLED_TOOL_USES):
        return "Tool results"
    if message.is_user:
        return "You"
    model = message.metadata.model if message.metadata else ""
    return model or (message.metadata.provider if message.metadata else "") or "Assistant"


def _meta(message: Message) -> str:
    when: datetime = message.created_at
    try:
        local = when.astimezone()
    except (ValueError, OSError):
        local = when
    return local.strftime("%H:%M")
