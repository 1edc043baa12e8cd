"""The wheel, mouse and keys that scroll a chat's wide tables sideways (``table_scroll``).

Kept apart from the chat view so the view only forwards its events: each handler returns
``True`` when the event was about a wide table (the view then does nothing more with it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QKeyEvent, QTextDocument, QWheelEvent

from threadline.ui.chat.view.hit_testing import RowGeometry, row_at, table_at
from threadline.ui.chat.view.table_scroll import (
    KEY_STEP_PX,
    ScrolledTable,
    TableOffsets,
    bar_hit_area,
    offset_for_thumb_at,
    wheel_pixels,
    wide_tables,
)

REVEAL_MARGIN_PX = 24.0
"""Room kept beside a find match brought into view inside a table."""


@dataclass(slots=True)
class _Drag:
    table: ScrolledTable
    grab: float
    """Where on the thumb it was grabbed (x from the thumb's left edge)."""


class TableScrolling:
    """Scrolls the wide tables of one chat view; ``changed`` repaints it."""

    def __init__(self, changed: Callable[[], None]) -> None:
        self.offsets = TableOffsets()
        self._changed = changed
        self._drag: _Drag | None = None

    @property
    def dragging(self) -> bool:
        return self._drag is not None

    def _scroll(self, table: ScrolledTable, offset: float) -> None:
        if self.offsets.scroll_to(table.message_id, table.index, offset, table.max_offset):
            self._changed()

    def _scroll_by(self, table: ScrolledTable, dx: float) -> None:
        """From where the table is now (several events can come between two paints)."""
        now = self.offsets.get(table.message_id, table.index, table.max_offset)
        self._scroll(table, now + dx)

    def wheel(self, visible: Sequence[RowGeometry], event: QWheelEvent) -> bool:
        """Shift+wheel, a horizontal wheel or a sideways swipe over a wide table scrolls it."""
        geo = row_at(visible, event.position())
        table = table_at(geo, event.position()) if geo is not None else None
        if table is None:
            return False
        angle, pixel = event.angleDelta(), event.pixelDelta()
        shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        dx = wheel_pixels(angle.x(), angle.y(), pixel.x(), pixel.y(), shift=shift)
        if not dx:
            return False
        self._scroll_by(table, dx)
        return True

    def press(self, visible: Sequence[RowGeometry], pos: QPointF) -> bool:
        """A press on a table's bar: on the thumb it starts a drag, beside it pages that way."""
        geo = row_at(visible, pos)
        table = next((t for t in geo.tables if bar_hit_area(t).contains(pos)), None) if geo else None
        if table is None:
            return False
        if table.thumb.left() <= pos.x() <= table.thumb.right():
            self._drag = _Drag(table, pos.x() - table.thumb.left())
        else:
            page = table.rect.width() * 0.9
            self._scroll_by(table, page if pos.x() > table.thumb.right() else -page)
        return True

    def move(self, pos: QPointF) -> bool:
        if self._drag is None:
            return False
        table = self._drag.table
        self._scroll(table, offset_for_thumb_at(table, pos.x() - self._drag.grab))
        return True

    def release(self) -> bool:
        dragged = self._drag is not None
        self._drag = None
        return dragged

    def key(self, visible: Sequence[RowGeometry], message_id: str | None, event: QKeyEvent) -> bool:
        """Shift+Left / Shift+Right scroll the first wide table on screen of the current message."""
        if message_id is None or event.modifiers() != Qt.KeyboardModifier.ShiftModifier:
            return False
        step = {Qt.Key.Key_Left: -KEY_STEP_PX, Qt.Key.Key_Right: KEY_STEP_PX}.get(Qt.Key(event.key()))
        geo = next((g for g in visible if g.message_id == message_id), None)
        if step is None or geo is None or not geo.tables:
            return False
        table = geo.tables[0]
        self._scroll_by(table, step)
        return True

    def reveal(self, message_id: str, doc: QTextDocument, x0: float, x1: float, y: float) -> None:
        """Scroll the wide table holding document point (``x0``…``x1``, ``y``) so that span shows
        (a find match past the column's edge)."""
        width = doc.textWidth()
        table = next((t for t in wide_tables(doc, width) if t.top <= y <= t.top + t.height), None)
        if table is None:
            return
        max_offset = table.right - width
        now = self.offsets.get(message_id, table.index, max_offset)
        if x1 - now > width:
            wanted = x1 - width + REVEAL_MARGIN_PX
        elif x0 < now:
            wanted = x0 - REVEAL_MARGIN_PX
        else:
            return
        if self.offsets.scroll_to(message_id, table.index, wanted, max_offset):
            self._changed()
