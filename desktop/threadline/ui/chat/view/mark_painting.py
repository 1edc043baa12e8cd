"""Painting the conversation controls' marks inside a chat row.

A summary sits on a faint card with an accent rule at its left edge (a record written for
the model, not a reply); a checkpoint is a small flag with its name at the right end of
the row's header; the dividers of a cleared context and of a tangent get their own
colours. The row painter calls these so its own code stays about ordinary messages.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPainterPath

from threadline.core.messages import Message
from threadline.ui.chat.view.context_marks import is_clear, is_tangent, mark_colours
from threadline.ui.common.theme import ThemeColors, mix

BADGE_PAD_X = 7
BADGE_GAP = 6
SUMMARY_RULE = 3.0


def paint_summary_card(p: QPainter, rect: QRectF, c: ThemeColors) -> None:
    """The summary's card: a faint accent tint and a rule down its left edge."""
    colours = mark_colours(c)
    path = QPainterPath()
    path.addRoundedRect(rect, 10, 10)
    p.fillPath(path, QColor(colours.summary_bg))
    p.save()
    p.setClipPath(path)
    p.fillRect(QRectF(rect.left(), rect.top(), SUMMARY_RULE, rect.height()), QColor(colours.summary_bar))
    p.restore()


def badges_width(fm: QFontMetrics, names: Sequence[str]) -> int:
    """How wide the flags of ``names`` are, gaps included (0 for none)."""
    if not names:
        return 0
    return sum(fm.horizontalAdvance(flag_text(n)) + 2 * BADGE_PAD_X for n in names) + BADGE_GAP * (
        len(names) - 1
    )


def flag_text(name: str) -> str:
    return f"⚑ {name}"


def paint_badges(
    p: QPainter, fm: QFontMetrics, c: ThemeColors, right: int, y: int, height: int, names: Sequence[str]
) -> int:
    """Flags for the checkpoints of a message, right-aligned to ``right``; returns their left edge."""
    colours = mark_colours(c)
    x = right - badges_width(fm, names)
    left = x
    h = fm.height() + 2
    for name in names:
        text = flag_text(name)
        w = fm.horizontalAdvance(text) + 2 * BADGE_PAD_X
        rect = QRectF(x, y + (height - h) / 2, w, h)
        path = QPainterPath()
        path.addRoundedRect(rect, h / 2, h / 2)
        p.fillPath(path, QColor(colours.badge_bg))
        if c.high_contrast:
            p.setPen(QColor(c.text))
            p.drawPath(path)
        p.setPen(QColor(colours.badge_text))
        p.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
        x += w + BADGE_GAP
    return left


def divider_colours(message: Message, c: ThemeColors) -> tuple[QColor, QColor]:
    """(line, label) colours of a marker's divider: a tangent in its hue, a clear a little
    stronger than other markers (it changes what is sent), the rest quiet."""
    if is_tangent(message):
        hue = mark_colours(c).tangent
        return mix(hue, c.base, 0.55), QColor(hue)
    if is_clear(message):
        return mix(c.text, c.base, 0.45), QColor(c.text)
    return mix(c.muted, c.base, 0.45), QColor(c.muted)
