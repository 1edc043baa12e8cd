"""What is under the pointer in the chat view: a row, one of its buttons, or a link.

Painting records a :class:`RowGeometry` for every visible row (where its document and
its footer buttons were drawn); the mouse handlers ask these functions what a position
hits, so clicks, hover and the context menu agree with what is on screen.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from PySide6.QtCore import QPointF, QRect, QRectF
from PySide6.QtGui import QTextDocument

from threadline.ui.chat.view.table_scroll import ScrolledTable


@dataclass(slots=True)
class RowGeometry:
    """Where one visible row was painted, in viewport coordinates."""

    row: int
    message_id: str
    top: int
    height: int
    doc_rect: QRectF
    bubble: QRectF | None
    actions: list[tuple[QRectF, str]] = field(default_factory=list)
    version_label: tuple[QRectF, str] | None = None
    tables: list[ScrolledTable] = field(default_factory=list)
    """Wide tables scrolled sideways in this row (``table_scroll``)."""


@dataclass(frozen=True, slots=True)
class Hit:
    """What a position hits: the row (if any), and a button or a link in it."""

    row: RowGeometry | None = None
    action: str | None = None
    href: str | None = None


DocumentOf = Callable[[str], QTextDocument | None]
"""The rendered document of a message id, if there is one."""


def row_at(visible: Sequence[RowGeometry], pos: QPointF) -> RowGeometry | None:
    for geo in visible:
        if geo.top <= pos.y() < geo.top + geo.height:
            return geo
    return None


def hit(visible: Sequence[RowGeometry], pos: QPointF, document_of: DocumentOf) -> Hit:
    """The row, action button and link under ``pos`` (a button wins over text under it)."""
    geo = row_at(visible, pos)
    if geo is None:
        return Hit()
    for rect, action in geo.actions:
        if rect.contains(pos):
            return Hit(geo, action=action)
    if geo.doc_rect.contains(pos):
        doc = document_of(geo.message_id)
        if doc is not None:
            point = pos - geo.doc_rect.topLeft()
            table = table_at(geo, pos)
            if table is not None:  # the table is drawn shifted left by its offset
                point += QPointF(table.offset, 0)
            href = doc.documentLayout().anchorAt(point)
            if href:
                return Hit(geo, href=href)
    return Hit(geo)


def table_at(geo: RowGeometry, pos: QPointF) -> ScrolledTable | None:
    """The wide table of a row whose visible window holds ``pos``."""
    return next((t for t in geo.tables if t.rect.contains(pos)), None)


def anchor_rect(doc: QTextDocument, doc_rect: QRectF, href: str, step: int = 3) -> QRect | None:
    """A small rectangle on a link to ``href`` inside a document painted at ``doc_rect``
    (tests click it; a scan, so not for use per frame)."""
    layout = doc.documentLayout()
    h = int(doc_rect.height())
    w = int(doc_rect.width())
    for yy in range(0, h, step):
        for xx in range(0, w, step):
            if layout.anchorAt(QPointF(xx, yy)) == href:
                return QRect(int(doc_rect.left()) + xx, int(doc_rect.top()) + yy, 2, 2)
    return None
