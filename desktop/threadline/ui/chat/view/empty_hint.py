"""What a chat with no message yet shows in the middle of its view: where the conversation
will be and what will answer (the message box says how to send). A blank area read as
"nothing loaded"."""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter

from threadline.core.config import DEFAULT_AGENT_ID
from threadline.core.session import SessionInfo
from threadline.ui.common.theme import ThemeColors

EmptyHint = tuple[str, tuple[str, ...]]
"""(title, lines)."""


def empty_hint(info: SessionInfo, agent_id: str, agent_name: str) -> EmptyHint:
    """What an empty chat says: where to type, and who will answer."""
    if not info.model:
        who = "Choose a model below, then write your message."
    else:
        where = f" · {info.provider}" if info.provider else ""
        who = f"Replies come from {info.model}{where}."
    agent = (f"Agent: {agent_name}",) if agent_id != DEFAULT_AGENT_ID and agent_name else ()
    return "Start the conversation below", (who, *agent)  # the box itself says how to send


def paint_empty_hint(
    painter: QPainter, rect: QRect, font: QFont, colors: ThemeColors, hint: EmptyHint
) -> None:
    """``hint`` centred across ``rect``, a third of the way down: the title larger, the lines muted."""
    title, lines = hint
    if not title:
        return
    area = rect.adjusted(24, 0, -24, 0)
    big = QFont(font)
    big.setPointSizeF(big.pointSizeF() * 1.35)
    big.setWeight(QFont.Weight.DemiBold)
    heights = [QFontMetrics(big).height() + 8, *(QFontMetrics(font).height() + 2 for _ in lines)]
    y = area.top() + max(0, (area.height() - sum(heights)) // 3)
    rows = [(title, big, colors.text), *((line, font, colors.muted) for line in lines)]
    for (text, face, color), height in zip(rows, heights, strict=True):
        painter.setFont(face)
        painter.setPen(QColor(color))
        shown = QFontMetrics(face).elidedText(text, Qt.TextElideMode.ElideRight, area.width())
        painter.drawText(QRect(area.left(), y, area.width(), height), Qt.AlignmentFlag.AlignHCenter, shown)
        y += height
