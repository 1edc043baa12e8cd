"""Painting one chat row: header, body document, status label and footer buttons.

The row painter owns the fonts derived from the view's font (body, small, header) and
their metrics, so the layout's estimates and the painting use the same numbers. It
returns the :class:`RowGeometry` of what it drew, which hit-testing reads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from PySide6.QtCore import QRect, QRectF, Qt
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QFont,
    QFontMetrics,
    QPainter,
    QPainterPath,
    QPalette,
    QPen,
    QTextDocument,
)

from threadline.core.messages import Message, MessageKind, utcnow
from threadline.core.tree import Version
from threadline.core.usage import PriceLookup
from threadline.ui.chat.changes.header_counts import CHANGES_ACTION, HeaderCounts, counts_width, paint_counts
from threadline.ui.chat.view.context_marks import marker_label, record_note
from threadline.ui.chat.view.hit_testing import RowGeometry
from threadline.ui.chat.view.mark_painting import divider_colours, paint_badges, paint_summary_card
from threadline.ui.chat.view.message_actions import ACTION_LABELS, VERSION
from threadline.ui.chat.view.message_labels import speaker, status_label, time_label, usage_label
from threadline.ui.chat.view.table_scroll import ScrolledTable, TableOffsets, paint_document
from threadline.ui.chat.view.view_layout import (
    BUBBLE_PAD_X,
    BUBBLE_PAD_Y,
    FOOTER_H,
    HEADER_GAP,
    ROW_TOP,
    TextMetrics,
)
from threadline.ui.common.theme import ThemeColors, mix

STATUS_PAD_X = 7
FOCUS_RING_OUTSET = 8
"""How far the focus ring stands outside the message column (clear of a bubble's edge)."""


TextHighlights = Callable[[str, QTextDocument], list[QAbstractTextDocumentLayout.Selection]]
"""The highlighted ranges of a message's document, by message id (painted under the text)."""


@dataclass(frozen=True, slots=True)
class FrameState:
    """What every row of one frame is painted with."""

    colors: ThemeColors
    left: int
    """Left edge of the message column."""
    width: int
    """Width of the message column."""
    viewport_width: int
    viewport_height: int
    hover: tuple[str, str] | None = None
    """(message id, action) of the button under the pointer."""
    flash_id: str | None = None
    """A message briefly highlighted (a search hit brought into view)."""
    focus_id: str | None = None
    """The current message while the view has the keyboard focus: drawn with a focus ring."""
    price_of: PriceLookup | None = None
    """Prices for the cost in each reply's header; ``None`` shows no cost."""
    now: datetime = field(default_factory=utcnow)
    """When this frame is painted: a streaming reply's speed so far is measured to it."""
    text_highlights: TextHighlights | None = None
    """Extra highlights over a message's text (the find bar's matches)."""
    checkpoints: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Checkpoint names by message id: flags in those messages' headers."""
    table_offsets: TableOffsets | None = None
    """How far each wide table is scrolled sideways; ``None``: wide tables are only clipped."""
    change_counts: Mapping[str, HeaderCounts] = field(default_factory=dict)
    """A turn's file changes by the id of its last reply: "+12 −3 in 2 files" in that header."""


class RowPainter:
    """Fonts and metrics of the rows, and the painting of one row."""

    def __init__(self, base: QFont) -> None:
        self.set_font(base)

    def set_font(self, base: QFont) -> None:
        self.body_font = QFont(base)
        self.small_font = QFont(base)
        self.small_font.setPointSizeF(max(7.5, base.pointSizeF() * 0.88))
        self.header_font = QFont(self.small_font)
        self.header_font.setWeight(QFont.Weight.DemiBold)
        self._fm_body = QFontMetrics(self.body_font)
        self._fm_small = QFontMetrics(self.small_font)
        self._fm_header = QFontMetrics(self.header_font)
        self.header_height = self._fm_header.height() + 2
        self.metrics = TextMetrics(
            average_char_width=max(5, self._fm_body.averageCharWidth()),
            line_height=self._fm_body.lineSpacing(),
            header_height=self.header_height,
        )

    def paint_row(
        self,
        p: QPainter,
        frame: FrameState,
        row: int,
        top: int,
        height: int,
        message: Message,
        doc: QTextDocument,
        *,
        bubble: bool,
        actions: list[str],
        version: Version | None,
    ) -> RowGeometry:
        c = frame.colors
        left, width = frame.left, frame.width
        if message.id == frame.flash_id:
            p.fillRect(QRect(0, top, frame.viewport_width, height), QColor(c.selection))
        if message.marker is not None:
            return self._paint_marker(p, frame, row, top, height, message)
        # Header: who, and quiet metadata.
        y = top + ROW_TOP
        p.setFont(self.header_font)
        p.setPen(QColor(c.text))
        who = speaker(message)
        p.drawText(QRect(left, y, width, self.header_height), Qt.AlignmentFlag.AlignVCenter, who)
        x = left + self._fm_header.horizontalAdvance(who) + 10
        status_text, status_colour = status_label(message, c)
        p.setFont(self.small_font)
        meta = time_label(message)
        if meta:
            p.setPen(QColor(c.muted))
            p.drawText(QRect(x, y, width, self.header_height), Qt.AlignmentFlag.AlignVCenter, meta)
            x += self._fm_small.horizontalAdvance(meta) + 10
        if status_text:
            x += self._paint_status(p, c, x, y, status_text, status_colour) + 10
        flags = frame.checkpoints.get(message.id, ())
        right = left + width
        if flags:
            right = paint_badges(p, self._fm_small, c, right, y, self.header_height, flags) - 10
        counts = frame.change_counts.get(message.id)
        counts_rect: QRectF | None = None
        if counts is not None and x + counts_width(self._fm_small, counts) <= right:
            hovered = frame.hover == (message.id, CHANGES_ACTION)
            counts_rect = paint_counts(
                p, self._fm_small, c, x, y, self.header_height, counts, hovered=hovered
            )
            x += int(counts_rect.width()) + 10
        figures = usage_label(message, frame.price_of, frame.now) or record_note(message)
        if figures and x < right:
            p.setPen(QColor(c.muted))
            room = right - x
            shown = self._fm_small.elidedText(figures, Qt.TextElideMode.ElideRight, room)
            p.drawText(QRect(x, y, room, self.header_height), Qt.AlignmentFlag.AlignVCenter, shown)
        y += self.header_height + HEADER_GAP
        # Body.
        doc_h = doc.size().height()
        bubble_rect: QRectF | None = None
        if bubble:
            bubble_rect = QRectF(left, y, width, doc_h + 2 * BUBBLE_PAD_Y)
            if message.kind is MessageKind.SUMMARY:
                paint_summary_card(p, bubble_rect, c)
            else:
                path = QPainterPath()
                path.addRoundedRect(bubble_rect, 10, 10)
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
            min(doc_h, frame.viewport_height - doc_rect.top()),
        )
        if frame.text_highlights is not None:
            ctx.selections = frame.text_highlights(message.id, doc)
        tables: list[ScrolledTable] = []
        if doc.size().width() <= doc.textWidth() + 1:
            doc.documentLayout().draw(p, ctx)
        elif frame.table_offsets is not None:  # a table wider than the column scrolls sideways
            tables = paint_document(
                p,
                doc,
                ctx,
                message_id=message.id,
                width=doc_rect.width(),
                offsets=frame.table_offsets,
                colors=c,
                origin=doc_rect.topLeft(),
            )
        else:  # cut at the column's edge
            p.setClipRect(QRectF(0, 0, doc_rect.width(), doc_h), Qt.ClipOperation.IntersectClip)
            doc.documentLayout().draw(p, ctx)
        p.restore()
        # Footer: actions.
        geo = RowGeometry(row, message.id, top, height, doc_rect, bubble_rect, tables=tables)
        if counts_rect is not None:
            geo.actions.append((counts_rect, CHANGES_ACTION))
        fy = int(doc_rect.bottom() + (BUBBLE_PAD_Y if bubble_rect else 0)) + 4
        self._paint_actions(p, frame, geo, left, fy, actions, version)
        if message.id == frame.focus_id:
            self._paint_focus_ring(p, c, left, top, width, height)
        return geo

    def _paint_marker(
        self, p: QPainter, frame: FrameState, row: int, top: int, height: int, message: Message
    ) -> RowGeometry:
        """A marker is a divider across the column with its label in the middle ("Agent: Reviewer")."""
        c, left, width = frame.colors, frame.left, frame.width
        label = marker_label(message)
        line_colour, label_colour = divider_colours(message, c)
        p.setFont(self.small_font)
        shown = self._fm_small.elidedText(label, Qt.TextElideMode.ElideMiddle, max(40, width - 80))
        text_w = self._fm_small.horizontalAdvance(shown)
        mid_y = top + height // 2
        gap_left = left + (width - text_w) // 2 - 10
        gap_right = left + (width + text_w) // 2 + 10
        p.setPen(QPen(line_colour, 1.0))
        p.drawLine(left, mid_y, gap_left, mid_y)
        p.drawLine(gap_right, mid_y, left + width, mid_y)
        p.setPen(label_colour)
        text_rect = QRect(gap_left, top, gap_right - gap_left, height)
        p.drawText(text_rect, Qt.AlignmentFlag.AlignCenter, shown)
        geo = RowGeometry(row, message.id, top, height, QRectF(text_rect), None)
        if message.id == frame.focus_id:
            self._paint_focus_ring(p, c, left, top, width, height)
        return geo

    def _paint_focus_ring(
        self, p: QPainter, c: ThemeColors, left: int, top: int, width: int, height: int
    ) -> None:
        """A 2 px accent outline around the whole row, a little outside the message column.

        The accent is the colour the theme draws focus in elsewhere, so the ring reads as
        keyboard focus (not as a selection or a search flash).
        """
        pen = QPen(QColor(c.accent))
        pen.setWidthF(2.0)
        p.save()
        p.setPen(pen)
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRoundedRect(
            QRectF(left - FOCUS_RING_OUTSET, top + 2, width + 2 * FOCUS_RING_OUTSET, height - 4), 8, 8
        )
        p.restore()

    def _paint_status(self, p: QPainter, c: ThemeColors, x: int, y: int, text: str, colour: str) -> int:
        """A small quiet label (Stopped, Interrupted, Failed): the status colour on a faint tint of it.

        Returns the label's width, so what follows it in the header starts after it.
        """
        w = self._fm_small.horizontalAdvance(text) + 2 * STATUS_PAD_X
        h = self._fm_small.height() + 2
        rect = QRectF(x, y + (self.header_height - h) / 2, w, h)
        path = QPainterPath()
        path.addRoundedRect(rect, h / 2, h / 2)
        p.fillPath(path, mix(colour, c.base, 0.14 if c.dark else 0.10))
        p.setPen(QColor(colour))
        p.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
        return w

    def _paint_actions(
        self,
        p: QPainter,
        frame: FrameState,
        geo: RowGeometry,
        left: int,
        fy: int,
        actions: list[str],
        version: Version | None,
    ) -> None:
        c = frame.colors
        p.setFont(self.small_font)
        x = left
        h = FOOTER_H - 4
        for action in actions:
            if action == VERSION:
                if version is None:
                    continue
                for part in ("prev_version", "label", "next_version"):
                    text = f"{version.index} / {version.count}" if part == "label" else ACTION_LABELS[part]
                    w = self._fm_small.horizontalAdvance(text) + (8 if part != "label" else 6)
                    rect = QRectF(x, fy, w, h)
                    if part == "label":
                        p.setPen(QColor(c.muted))
                        geo.version_label = (rect, text)
                    else:
                        hovered = frame.hover == (geo.message_id, part)
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
            hovered = frame.hover == (geo.message_id, action)
            if hovered:
                path = QPainterPath()
                path.addRoundedRect(rect, 4, 4)
                p.fillPath(path, QColor(c.hover))
            p.setPen(QColor(c.text if hovered else c.muted))
            p.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
            geo.actions.append((rect, action))
            x += int(w) + 2
