"""The reply header's "+12 −3 in 2 files": the words, their colours, the painting and a button.

The chat view paints its rows (``chat/view/row_painter.py``), so the header's counts are
given to it as what a painter needs: :func:`counts_parts` (each part's text and colour),
:func:`counts_width` and :func:`paint_counts`, which draws them as a quiet pill (filled
while the pointer is over it) and returns the rectangle to hit-test, as the footer's action
buttons record theirs. :class:`ChangeCountsButton` is the same thing as a widget, for
places built of widgets (and the screenshots). The + part is green and the − part red, as
code review tools show them, in both themes (``change_colours``).
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QEvent, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QEnterEvent, QFontMetrics, QPainter, QPainterPath, QPaintEvent
from PySide6.QtWidgets import QAbstractButton, QSizePolicy, QWidget

from threadline.core.file_changes import FileTotal, TurnChanges, change_summary
from threadline.ui.chat.changes.change_colours import KIND_WORDS, change_colours
from threadline.ui.chat.changes.shown_paths import shown_path
from threadline.ui.common.theme import ThemeColors, mix

CHANGES_ACTION = "file_changes"
"""The action name the view records for the counts' rectangle (``RowGeometry.actions``)."""
UNDO_CHANGES_ACTION = "undo_file_changes"
"""A reply's menu entry "Undo this turn's file changes…" (offered where the counts show)."""
PILL_PAD_X = 7
PART_GAP = 5
TOOLTIP_FILES = 12
"""Files named in the tooltip at most; the rest are counted."""


@dataclass(frozen=True, slots=True)
class HeaderCounts:
    """What a reply's header says about its turn's file changes."""

    added: int
    removed: int
    files: tuple[FileTotal, ...]
    root: str | None = None
    """The allowed folder the tooltip's paths are shown in, if any."""

    @property
    def summary(self) -> str:
        return change_summary(self.added, self.removed, len(self.files))


def header_counts(turn: TurnChanges, root: str | None = None) -> HeaderCounts:
    return HeaderCounts(turn.added, turn.removed, tuple(turn.files), root)


def counts_parts(
    counts: HeaderCounts, c: ThemeColors, background: str | None = None
) -> list[tuple[str, str]]:
    """("+12", green), ("−3", red), ("in 2 files", muted): the summary's words and colours."""
    colours = change_colours(c, background)
    plus, minus, *rest = counts.summary.split(" ")
    return [(plus, colours.added), (minus, colours.removed), (" ".join(rest), c.muted)]


def counts_width(fm: QFontMetrics, counts: HeaderCounts) -> int:
    words = counts.summary.split(" ")
    parts = [words[0], words[1], " ".join(words[2:])]
    return sum(fm.horizontalAdvance(t) for t in parts) + PART_GAP * (len(parts) - 1) + 2 * PILL_PAD_X


def counts_tooltip(counts: HeaderCounts) -> str:
    """The files, one a line with their counts, then what a click does."""
    lines = [f"Files changed in this turn: {counts.summary}"]
    for total in counts.files[:TOOLTIP_FILES]:
        shown = shown_path(total.path, counts.root)
        lines.append(f"  {shown}  +{total.added} \u2212{total.removed} ({KIND_WORDS[total.kind]})")
    more = len(counts.files) - TOOLTIP_FILES
    if more > 0:
        lines.append(f"  and {more} more")
    lines.append("Click to see the changes.")
    return "\n".join(lines)


def paint_counts(
    p: QPainter,
    fm: QFontMetrics,
    c: ThemeColors,
    x: float,
    y: float,
    height: float,
    counts: HeaderCounts,
    *,
    hovered: bool = False,
    background: str | None = None,
) -> QRectF:
    """Paint the counts at ``x`` in a row ``height`` high from ``y``; returns their hit rectangle.

    The font ``fm`` measures must be the painter's current font (the header's small font).
    """
    back = background or c.base
    w = counts_width(fm, counts)
    h = fm.height() + 2
    rect = QRectF(x, y + (height - h) / 2, w, h)
    p.save()
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    path = QPainterPath()
    path.addRoundedRect(rect, h / 2, h / 2)
    if hovered:
        p.fillPath(path, QColor(c.hover))
        back = c.hover
    p.setPen(mix(c.border, back, 0.9 if hovered else 0.7))
    p.drawPath(path)
    tx = rect.left() + PILL_PAD_X
    for text, colour in counts_parts(counts, c, back):
        p.setPen(QColor(colour if not (hovered and colour == c.muted) else c.text))
        advance = fm.horizontalAdvance(text)
        p.drawText(QRectF(tx, rect.top(), advance + 1, rect.height()), Qt.AlignmentFlag.AlignVCenter, text)
        tx += advance + PART_GAP
    p.restore()
    return rect


class ChangeCountsButton(QAbstractButton):
    """The counts as a widget: clicking it emits ``clicked`` (open the turn's changes)."""

    def __init__(self, colors: ThemeColors, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ChangeCountsButton")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self._colors = colors
        self._counts: HeaderCounts | None = None
        self._hovered = False
        self.hide()

    @property
    def counts(self) -> HeaderCounts | None:
        return self._counts

    def set_counts(self, counts: HeaderCounts | None) -> None:
        """Show ``counts`` (hidden when ``None`` or no file changed)."""
        self._counts = counts if counts is not None and counts.files else None
        if self._counts is None:
            self.setText("")
            self.setToolTip("")
            self.hide()
            return
        self.setText(self._counts.summary)
        self.setToolTip(counts_tooltip(self._counts))
        self.setAccessibleName(f"File changes: {self._counts.summary}")
        self.updateGeometry()
        self.show()
        self.update()

    def set_colors(self, colors: ThemeColors) -> None:
        self._colors = colors
        self.update()

    def sizeHint(self) -> QSize:
        if self._counts is None:
            return QSize(0, 0)
        fm = self.fontMetrics()
        return QSize(counts_width(fm, self._counts) + 2, fm.height() + 6)

    def enterEvent(self, event: QEnterEvent) -> None:
        self._hovered = True
        self.update()
        super().enterEvent(event)

    def leaveEvent(self, event: QEvent) -> None:
        self._hovered = False
        self.update()
        super().leaveEvent(event)

    def paintEvent(self, event: QPaintEvent) -> None:
        if self._counts is None:
            return
        p = QPainter(self)
        p.setFont(self.font())
        rect = paint_counts(
            p,
            self.fontMetrics(),
            self._colors,
            1,
            0,
            self.height(),
            self._counts,
            hovered=self._hovered or self.isDown(),
        )
        if self.hasFocus():
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
            p.setPen(QColor(self._colors.accent))
            p.drawRoundedRect(rect.adjusted(-0.5, -0.5, 0.5, 0.5), rect.height() / 2, rect.height() / 2)
        p.end()
