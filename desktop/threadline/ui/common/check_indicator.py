"""Check boxes and radio buttons in the theme's colours, drawn for ``ThemedStyle.drawPrimitive``.

Fusion derives the indicators' outline from the window colour, which all but vanishes on
a dark window; these are drawn from the theme's tokens instead, with the focus ring only
on keyboard focus. A module of its own, imported at the first indicator painted: the
painting classes it needs are not imported before the window's first frame, which has
none (importing a Qt class makes all its enums, docs/performance.md).
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QStyle, QStyleOption

from threadline.ui.common.theme_colors import ThemeColors, mix

State = QStyle.StateFlag


def draw_check_indicator(c: ThemeColors, option: QStyleOption, painter: QPainter, *, radio: bool) -> None:
    """A check box's (or, ``radio``, a radio button's) indicator in ``option.rect``."""
    state = option.state
    enabled = bool(state & State.State_Enabled)
    on = bool(state & State.State_On)
    partial = bool(state & State.State_NoChange)
    marked = (on or partial) and enabled
    rect = QRectF(option.rect)
    side = min(rect.width(), rect.height()) - 1
    box = QRectF(0, 0, side, side)
    box.moveCenter(rect.center())
    if marked:
        fill, border = QColor(c.accent), QColor(c.accent)
    elif not enabled:
        fill, border = QColor(c.surface), QColor(c.border)
    else:
        fill = QColor(c.base)
        border = mix(c.muted, c.base, 0.85 if c.dark else 0.7)
        if state & State.State_MouseOver:
            border = QColor(c.accent)
    if (on or partial) and not enabled:
        fill = QColor(c.border)
    if state & State.State_Sunken and enabled:
        fill = mix(c.accent, fill.name(), 0.25) if not marked else fill.darker(110)
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    path = QPainterPath()
    if radio:
        path.addEllipse(box)
    else:
        path.addRoundedRect(box, 3, 3)
    painter.fillPath(path, fill)
    painter.setPen(QPen(border, 1))
    painter.drawPath(path)
    if state & State.State_HasFocus and state & State.State_KeyboardFocusChange:
        ring = QPainterPath()
        outer = box.adjusted(-2, -2, 2, 2)
        if radio:
            ring.addEllipse(outer)
        else:
            ring.addRoundedRect(outer, 4, 4)
        painter.setPen(QPen(QColor(c.link), 1.5))
        painter.drawPath(ring)
    mark = QColor(c.accent_text) if enabled else QColor(c.muted)
    if radio and on:
        dot = box.adjusted(side * 0.3, side * 0.3, -side * 0.3, -side * 0.3)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(mark)
        painter.drawEllipse(dot)
    elif not radio and (on or partial):
        pen = QPen(mark, max(1.5, side / 7))
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
        painter.setPen(pen)
        x, y, w = box.x(), box.y(), box.width()
        if partial:
            painter.drawLine(QPointF(x + w * 0.28, y + w * 0.5), QPointF(x + w * 0.72, y + w * 0.5))
        else:
            painter.drawPolyline(
                [
                    QPointF(x + w * 0.26, y + w * 0.52),
                    QPointF(x + w * 0.43, y + w * 0.69),
                    QPointF(x + w * 0.75, y + w * 0.33),
                ]
            )
    painter.restore()
