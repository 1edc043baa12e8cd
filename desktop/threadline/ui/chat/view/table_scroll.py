"""Tables wider than the message column scroll sideways in place.

A Markdown table keeps its natural column widths (``wide_tables``), so a wide one runs past
the column's right edge. Rather than clip it, the row painter draws each such table through
a window as wide as the column, shifted by that table's own horizontal offset, and puts a
thin scroll bar just under the table (in its bottom margin). The rest of the message is drawn as
before, clipped to the column.

Why paint the same document twice instead of making each table its own widget or text
object: the chat paints one cached ``QTextDocument`` per message, row by row, which is what
keeps a 10,000-message chat fast; the table's part is drawn with the same layout, only
translated and clipped, so find highlights (painted by the layout from the paint context's
selections) and link hit-testing (the offset is added to the point) stay in step with the
document for free, and nothing is laid out again when a table scrolls.

Offsets are remembered per message and table (the n-th table of the message) while the
chat is open, and clamped to the table's width at every paint, so a wider window simply
shows more of the table.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QPainter,
    QPainterPath,
    QRegion,
    QTextDocument,
    QTextFrame,
    QTextLength,
    QTextTable,
)

from threadline.ui.common.theme import ThemeColors

BAR_HEIGHT = 6.0
"""Height of the overlay scroll bar under a wide table (its hit area is a little taller)."""
BAR_INSET = 2.0
"""Gap between the bar and the table's bottom edge."""
WHEEL_STEP_PX = 48.0
"""Pixels one notch of a wheel (120 eighths of a degree) scrolls a table sideways."""
KEY_STEP_PX = 64.0
"""Pixels Shift+Left / Shift+Right scroll the current message's table."""
MIN_THUMB_PX = 24.0


@dataclass(frozen=True, slots=True)
class WideTable:
    """A table of a message's document that is wider than the column, in document coordinates."""

    index: int
    """Which table of the document it is (counting every table, wide or not)."""
    top: float
    height: float
    right: float
    """Where the table ends on the right; more than the column's width."""
    bar_top: float
    """Where its scroll bar goes: in the table's bottom margin when there is room, else over
    its last pixels."""


@dataclass(slots=True)
class ScrolledTable:
    """A wide table as painted in this frame, in viewport coordinates (hit-testing reads it)."""

    message_id: str
    index: int
    rect: QRectF
    """The visible window onto the table (the column's width)."""
    bar: QRectF
    """The scroll bar's track."""
    thumb: QRectF
    offset: float
    max_offset: float


def wide_tables(doc: QTextDocument, column_width: float) -> list[WideTable]:
    """The tables of ``doc`` that run past ``column_width`` (none: a look at the root frame)."""
    if doc.size().width() <= column_width + 1:
        return []
    layout = doc.documentLayout()
    found: list[WideTable] = []
    index = 0
    stack: list[QTextFrame] = list(reversed(doc.rootFrame().childFrames()))
    while stack:
        frame = stack.pop()
        stack.extend(reversed(frame.childFrames()))
        if not isinstance(frame, QTextTable):
            continue
        box = _drawn_box(doc, frame)
        if box.right() > column_width + 1:
            frame_bottom = layout.frameBoundingRect(frame).bottom()
            room = frame_bottom - box.bottom() >= BAR_HEIGHT + 2 * BAR_INSET
            bar_top = box.bottom() + BAR_INSET if room else box.bottom() - BAR_HEIGHT - BAR_INSET
            # The band that scrolls: from just above the table's top border (it may sit on
            # a fractional pixel) to the bar's end, not into the frame's bottom margin,
            # where the next paragraph (the "Open table" link) may begin.
            top = box.top() - 2
            bottom = max(box.bottom() + 1, bar_top + BAR_HEIGHT + BAR_INSET)
            found.append(WideTable(index, top, bottom - top, box.right(), bar_top))
        index += 1
    return found


def _drawn_box(doc: QTextDocument, table: QTextTable) -> QRectF:
    """Where the table's borders are drawn, from its cells' text and the format's padding and
    border (its frame's bounding rectangle also holds margins, and is offset from them)."""
    layout = doc.documentLayout()
    fmt = table.format()
    edge = fmt.cellPadding() + fmt.border()
    first = layout.blockBoundingRect(doc.findBlock(table.cellAt(0, 0).firstPosition()))
    left, top = first.left() - edge, first.top() - edge
    row = table.rows() - 1
    bottom = max(
        layout.blockBoundingRect(doc.findBlock(table.cellAt(row, column).lastPosition())).bottom()
        for column in range(table.columns())
    )
    width = fmt.width()
    if width.type() == QTextLength.Type.FixedLength:  # what wide_tables gave it
        right = left + width.rawValue()
    else:
        right = layout.frameBoundingRect(table).right()
    return QRectF(QPointF(left, top), QPointF(right, bottom + edge))


class TableOffsets:
    """How far each wide table of the open chat is scrolled sideways."""

    def __init__(self) -> None:
        self._offsets: dict[tuple[str, int], float] = {}

    def get(self, message_id: str, index: int, max_offset: float) -> float:
        return min(max(0.0, self._offsets.get((message_id, index), 0.0)), max(0.0, max_offset))

    def scroll_to(self, message_id: str, index: int, offset: float, max_offset: float) -> bool:
        """Scroll a table to ``offset`` (clamped); ``True`` when that moved it."""
        before = self.get(message_id, index, max_offset)
        after = min(max(0.0, offset), max(0.0, max_offset))
        self._offsets[(message_id, index)] = after
        return after != before

    def keep_only(self, message_ids: Collection[str]) -> None:
        """Drop the offsets of messages no longer shown (a chat closed, a message deleted)."""
        for key in [k for k in self._offsets if k[0] not in message_ids]:
            del self._offsets[key]


def paint_document(
    p: QPainter,
    doc: QTextDocument,
    ctx: QAbstractTextDocumentLayout.PaintContext,
    *,
    message_id: str,
    width: float,
    offsets: TableOffsets,
    colors: ThemeColors,
    origin: QPointF,
) -> list[ScrolledTable]:
    """Draw ``doc`` (the painter already translated to its top left, ``origin`` in the
    viewport) clipped to ``width``, each wide table through its own shifted window; returns
    the tables as painted, for hit-testing."""
    layout = doc.documentLayout()
    height = doc.size().height()
    tables = wide_tables(doc, width)
    rest = QRegion(QRectF(0, 0, width, height).toAlignedRect())
    for table in tables:
        rest -= QRegion(QRectF(0, table.top, width, table.height).toAlignedRect())
    p.save()
    p.setClipRegion(rest, Qt.ClipOperation.IntersectClip)
    layout.draw(p, ctx)
    p.restore()
    painted: list[ScrolledTable] = []
    clip = QRectF(ctx.clip)
    for table in tables:
        max_offset = table.right - width
        offset = offsets.get(message_id, table.index, max_offset)
        window = QRectF(0, table.top, width, table.height)
        p.save()
        p.setClipRect(window, Qt.ClipOperation.IntersectClip)
        p.translate(-offset, 0)
        ctx.clip = QRectF(offset, table.top, width, table.height).intersected(clip.translated(offset, 0))
        layout.draw(p, ctx)
        p.restore()
        bar, thumb = _bar_rects(window, table.bar_top, offset, max_offset, table.right)
        _paint_bar(p, bar, thumb, colors)
        painted.append(
            ScrolledTable(
                message_id,
                table.index,
                window.translated(origin),
                bar.translated(origin),
                thumb.translated(origin),
                offset,
                max_offset,
            )
        )
    ctx.clip = clip
    return painted


def _bar_rects(
    window: QRectF, top: float, offset: float, max_offset: float, full: float
) -> tuple[QRectF, QRectF]:
    bar = QRectF(window.left(), top, window.width(), BAR_HEIGHT)
    thumb_w = max(MIN_THUMB_PX, bar.width() * window.width() / full)
    travel = bar.width() - thumb_w
    x = bar.left() + (travel * offset / max_offset if max_offset > 0 else 0.0)
    return bar, QRectF(x, bar.top(), thumb_w, bar.height())


def _paint_bar(p: QPainter, bar: QRectF, thumb: QRectF, colors: ThemeColors) -> None:
    """A quiet track and a rounded thumb, like an overlay scroll bar."""
    p.save()
    p.setPen(Qt.PenStyle.NoPen)
    track = QColor(colors.muted)
    track.setAlphaF(0.16)
    path = QPainterPath()
    path.addRoundedRect(bar, bar.height() / 2, bar.height() / 2)
    p.fillPath(path, track)
    handle = QColor(colors.muted)
    handle.setAlphaF(0.7)
    path = QPainterPath()
    path.addRoundedRect(thumb, thumb.height() / 2, thumb.height() / 2)
    p.fillPath(path, handle)
    p.restore()


def bar_hit_area(table: ScrolledTable) -> QRectF:
    """Where a press grabs the bar: its track, a few pixels taller so it is easy to hit."""
    return table.bar.adjusted(0, -3, 0, 0)


def offset_for_thumb_at(table: ScrolledTable, thumb_left: float) -> float:
    """The offset that puts the thumb's left edge at ``thumb_left`` (viewport x)."""
    travel = table.bar.width() - table.thumb.width()
    if travel <= 0:
        return 0.0
    share = (thumb_left - table.bar.left()) / travel
    return share * table.max_offset


def wheel_pixels(angle_x: int, angle_y: int, pixel_x: int, pixel_y: int, *, shift: bool) -> float:
    """How far a wheel event scrolls a table sideways (positive: towards the right); 0: not sideways.

    A horizontal wheel or a touchpad's sideways swipe scrolls it; so does the vertical wheel
    with Shift held, as in every desktop app. Precise pixel deltas win when the device has them.
    """
    if angle_x or pixel_x:
        if abs(angle_x) < abs(angle_y) and not shift:
            return 0.0  # mostly a vertical swipe: the chat scrolls
        return float(-pixel_x) if pixel_x else -angle_x / 120 * WHEEL_STEP_PX
    if shift and (angle_y or pixel_y):
        return float(-pixel_y) if pixel_y else -angle_y / 120 * WHEEL_STEP_PX
    return 0.0
