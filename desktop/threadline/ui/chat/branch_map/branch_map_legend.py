"""The key under the branch map: which shape and colour stands for what."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QFont, QFontMetricsF, QPainter, QPainterPath, QPaintEvent, QPen
from PySide6.QtWidgets import QWidget

from threadline.ui.chat.branch_map.branch_map_style import MapPalette, NodeRole, palette_for
from threadline.ui.common.theme import LIGHT, ThemeColors

ENTRIES = (
    (NodeRole.USER, "You"),
    (NodeRole.ASSISTANT, "Assistant"),
    (NodeRole.TOOL, "Tools"),
    (NodeRole.SUMMARY, "Summary"),
    (None, "Tangent"),
)
SWATCH = 8.0
LINE_HEIGHT = 18


class BranchMapLegend(QWidget):
    """A line (or two, when narrow) of small swatches with their names."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("BranchMapLegend")
        self.setAccessibleName("Legend")
        self.setAccessibleDescription(
            "Blue dots are your messages, grey the assistant's, amber tool rounds, green squares "
            "summaries; violet lines are tangents; the thick line is the shown path; flags are checkpoints."
        )
        self._palette: MapPalette = palette_for(LIGHT)
        self._font = QFont(self.font())
        self._font.setPointSizeF(max(6.5, self.font().pointSizeF() * 0.8))

    def set_colors(self, colors: ThemeColors) -> None:
        self._palette = palette_for(colors)
        self.update()

    def _items(self) -> list[tuple[NodeRole | None, str, float]]:
        metrics = QFontMetricsF(self._font)
        return [(role, name, SWATCH + 5 + metrics.horizontalAdvance(name) + 12) for role, name in ENTRIES]

    def _lines(self, width: float) -> list[list[tuple[NodeRole | None, str, float]]]:
        lines: list[list[tuple[NodeRole | None, str, float]]] = [[]]
        used = 0.0
        for item in self._items():
            if lines[-1] and used + item[2] > width - 16:
                lines.append([])
                used = 0.0
            lines[-1].append(item)
            used += item[2]
        return lines

    def sizeHint(self) -> QSize:
        return QSize(240, LINE_HEIGHT + 8)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return len(self._lines(width)) * LINE_HEIGHT + 8

    def paintEvent(self, event: QPaintEvent) -> None:
        pal = self._palette
        painter = QPainter(self)
        try:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            painter.setFont(self._font)
            y = 4.0
            for line in self._lines(self.width()):
                x = 10.0
                mid = y + LINE_HEIGHT / 2
                for role, name, width in line:
                    if role is None:
                        pen = QPen(pal.tangent, 2.2)
                        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
                        painter.setPen(pen)
                        curve = QPainterPath(QPointF(x, mid + 4))
                        curve.cubicTo(
                            QPointF(x + 4, mid + 4), QPointF(x + 4, mid - 4), QPointF(x + SWATCH, mid - 4)
                        )
                        painter.drawPath(curve)
                    else:
                        painter.setPen(Qt.PenStyle.NoPen)
                        painter.setBrush(pal.role(role))
                        box = QRectF(x, mid - SWATCH / 2, SWATCH, SWATCH)
                        if role is NodeRole.SUMMARY:
                            painter.drawRoundedRect(box, 2, 2)
                        else:
                            painter.drawEllipse(box)
                    painter.setPen(pal.muted)
                    painter.drawText(
                        QRectF(x + SWATCH + 5, y, width, LINE_HEIGHT), Qt.AlignmentFlag.AlignVCenter, name
                    )
                    x += width
                y += LINE_HEIGHT
        finally:
            painter.end()
