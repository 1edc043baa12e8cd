"""The branch map: the whole conversation tree of a session, painted, with the shown path highlighted.

One custom-painted scroll area, no widget per message: the grid comes from
``core.tree_layout`` (rows are depths, the shown path is column 0, branches go right)
and ``paintEvent`` draws only the rows and columns in view, so a 10,000-message tree
costs what its visible part costs (bench/branch_map_bench.py). Parent links of one
style are batched into a single path per frame.

Each message is a small shape coloured by who it is from (see ``branch_map_style``);
the shown path is drawn solid with a thicker line, the rest dimmer; a tangent's branch
has its own accent; checkpoints carry a flag with their name. The map follows the
keyboard — arrows move between messages (Up/Down along a branch, Left/Right between
the branches at that depth), Enter shows the selected message's branch — and the
mouse: hover for an excerpt and time, click to show a branch. What a click or Enter
does is up to the owner (``nodeActivated``); the map itself never talks to the engine.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable

from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFocusEvent,
    QFont,
    QFontMetricsF,
    QHelpEvent,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPen,
    QResizeEvent,
)
from PySide6.QtWidgets import QAbstractScrollArea, QToolTip, QWidget

from threadline.core.messages import Message
from threadline.core.tree import ConversationTree, TreeError
from threadline.core.tree_layout import NO_PARENT, TreeLayout, checkpoint_names, layout_conversation
from threadline.ui.chat.branch_map.branch_map_describe import describe_message, excerpt
from threadline.ui.chat.branch_map.branch_map_style import (
    ACTIVE_NODE_RADIUS,
    COLUMN_WIDTH,
    MARGIN_LEFT,
    MARGIN_RIGHT,
    MARGIN_TOP,
    NODE_RADIUS,
    ROW_HEIGHT,
    SHAPES,
    TURN_LABEL_EVERY,
    NodeShape,
    is_unfinished,
    node_role,
    palette_for,
)
from threadline.ui.common.announce import announce
from threadline.ui.common.shortcuts import KeyHint
from threadline.ui.common.theme import LIGHT, ThemeColors

FLAG_HEIGHT = 16
FLAG_MAX_TEXT = 120
PAGE_STEP_ROWS = 10

KEY_HINTS_SECTION = "Branch map (it has the focus)"


def key_hints() -> tuple[KeyHint, ...]:
    """The keys the map reads itself, for the shortcuts sheet (made when asked: needs a Qt app)."""
    return (
        KeyHint.of(KEY_HINTS_SECTION, "Earlier / later message on this branch", "Up", "Down"),
        KeyHint.of(KEY_HINTS_SECTION, "Other branches at this depth", "Left", "Right"),
        KeyHint.of(KEY_HINTS_SECTION, "First message / where the shown path ends", "Home", "End"),
        KeyHint.of(KEY_HINTS_SECTION, "Show the selected message's branch", "Return", "Space"),
    )


class BranchMap(QAbstractScrollArea):
    """The painted tree of one conversation; ``relayout`` after the tree changed."""

    nodeActivated = Signal(str)
    """A message was clicked or chosen with Enter: show its branch (or scroll to it)."""
    currentChanged = Signal(str)
    """The keyboard selection moved to another message."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("BranchMap")
        self.setAccessibleName("Branch map")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setFrameShape(QAbstractScrollArea.Shape.NoFrame)
        self.viewport().setMouseTracking(True)
        self.verticalScrollBar().setSingleStep(ROW_HEIGHT)
        self.horizontalScrollBar().setSingleStep(COLUMN_WIDTH)
        self._tree: ConversationTree | None = None
        self._layout = layout_conversation(ConversationTree())
        self._flags: dict[int, str] = {}
        self._palette = palette_for(LIGHT)
        self._current = NO_PARENT
        self._hover = NO_PARENT
        self._flag_hits: list[tuple[QRectF, int]] = []
        self._font = QFont(self.font())
        self._small = QFont(self.font())
        self._small.setPointSizeF(max(6.5, self.font().pointSizeF() * 0.8))
        self.paint_hook: Callable[[float], None] | None = None
        """Told each paint's duration in ms (the benchmark sets it)."""
        self._describe()

    # -- data ----------------------------------------------------------------------------

    def set_tree(self, tree: ConversationTree) -> None:
        """Draw ``tree`` (held by reference: call ``relayout`` when it changed)."""
        self._tree = tree
        self.relayout()
        self.scroll_to_node(self._layout.active_leaf)

    @property
    def tree_layout(self) -> TreeLayout:
        return self._layout

    @property
    def current_id(self) -> str | None:
        return self._layout.ids[self._current] if self._current != NO_PARENT else None

    def relayout(self) -> None:
        """Lay the tree out again, keep the selection, and follow the shown path's end if it was in view."""
        if self._tree is None:
            return
        old = self._layout
        was_following = old.active_leaf == NO_PARENT or self._node_in_view(old.active_leaf)
        current = self.current_id
        self._layout = layout_conversation(self._tree)
        self._flags = {}
        for name, mid in sorted(checkpoint_names(self._tree).items()):
            node = self._layout.index_of.get(mid)
            if node is not None:
                self._flags[node] = f"{self._flags[node]}, {name}" if node in self._flags else name
        self._hover = NO_PARENT
        moved = old.active_leaf == NO_PARENT or old.ids[old.active_leaf] != self._active_id()
        if current is not None and current in self._layout.index_of and not moved:
            self._current = self._layout.index_of[current]
        else:
            self._current = self._layout.active_leaf
        self._update_scroll_ranges()
        if was_following and moved:
            self.scroll_to_node(self._layout.active_leaf)
        self._describe()
        self.viewport().update()

    def _active_id(self) -> str | None:
        leaf = self._layout.active_leaf
        return self._layout.ids[leaf] if leaf != NO_PARENT else None

    def set_colors(self, colors: ThemeColors) -> None:
        self._palette = palette_for(colors)
        self.viewport().update()

    def set_current(self, message_id: str) -> bool:
        node = self._layout.index_of.get(message_id, NO_PARENT)
        if node == NO_PARENT:
            return False
        self._move_to(node)
        return True

    # -- geometry ------------------------------------------------------------------------

    def node_center(self, node: int) -> QPointF:
        """Where ``node`` is drawn, in viewport coordinates."""
        x = MARGIN_LEFT + self._layout.columns[node] * COLUMN_WIDTH + COLUMN_WIDTH / 2
        y = MARGIN_TOP + self._layout.rows[node] * ROW_HEIGHT + ROW_HEIGHT / 2
        return QPointF(x - self.horizontalScrollBar().value(), y - self.verticalScrollBar().value())

    def message_point(self, message_id: str) -> QPoint | None:
        """The viewport point of a message (tests click there), or ``None`` when it is not in the tree."""
        node = self._layout.index_of.get(message_id)
        return None if node is None else self.node_center(node).toPoint()

    def node_at(self, pos: QPoint | QPointF) -> int:
        for rect, node in self._flag_hits:
            if rect.contains(QPointF(pos)):
                return node
        x = pos.x() + self.horizontalScrollBar().value() - MARGIN_LEFT
        y = pos.y() + self.verticalScrollBar().value() - MARGIN_TOP
        if x < 0 or y < 0:
            return NO_PARENT
        return self._layout.node_at(int(y // ROW_HEIGHT), int(x // COLUMN_WIDTH))

    def _content_size(self) -> QSize:
        width = MARGIN_LEFT + self._layout.column_count * COLUMN_WIDTH + MARGIN_RIGHT
        height = 2 * MARGIN_TOP + self._layout.row_count * ROW_HEIGHT
        return QSize(width, height)

    def _update_scroll_ranges(self) -> None:
        size = self._content_size()
        view = self.viewport().size()
        v, h = self.verticalScrollBar(), self.horizontalScrollBar()
        v.setRange(0, max(0, size.height() - view.height()))
        v.setPageStep(max(ROW_HEIGHT, view.height() - ROW_HEIGHT))
        h.setRange(0, max(0, size.width() - view.width()))
        h.setPageStep(max(COLUMN_WIDTH, view.width() - COLUMN_WIDTH))

    def _node_in_view(self, node: int) -> bool:
        if node == NO_PARENT or node >= len(self._layout):
            return False
        return self.viewport().rect().contains(self.node_center(node).toPoint())

    def scroll_to_node(self, node: int) -> None:
        """Scroll just enough that ``node`` is in view (centred when it was far away)."""
        if node == NO_PARENT:
            return
        center = self.node_center(node)
        view = self.viewport().rect()
        v, h = self.verticalScrollBar(), self.horizontalScrollBar()
        margin = ROW_HEIGHT * 2
        if center.y() < margin or center.y() > view.height() - margin:
            v.setValue(int(v.value() + center.y() - view.height() / 2))
        if center.x() < COLUMN_WIDTH or center.x() > view.width() - COLUMN_WIDTH:
            h.setValue(int(h.value() + center.x() - MARGIN_LEFT - COLUMN_WIDTH))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._update_scroll_ranges()

    def sizeHint(self) -> QSize:
        return QSize(240, 480)

    def minimumSizeHint(self) -> QSize:
        return QSize(120, 120)

    # -- painting ------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        from time import perf_counter

        started = perf_counter()
        painter = QPainter(self.viewport())
        try:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            painter.fillRect(event.rect(), self._palette.background)
            self._paint_visible(painter)
        finally:
            painter.end()
        if self.paint_hook is not None:
            self.paint_hook((perf_counter() - started) * 1000)

    def _visible_range(self) -> tuple[int, int, int, int]:
        """First and last row and column in view (one more on each side for links that cross in)."""
        top = self.verticalScrollBar().value() - MARGIN_TOP
        left = self.horizontalScrollBar().value() - MARGIN_LEFT
        view = self.viewport().size()
        first_row = max(0, top // ROW_HEIGHT - 1)
        last_row = min(self._layout.row_count - 1, (top + view.height()) // ROW_HEIGHT + 1)
        first_col = max(0, left // COLUMN_WIDTH - 1)
        last_col = (left + view.width()) // COLUMN_WIDTH + 1
        return first_row, last_row, first_col, last_col

    def _paint_visible(self, painter: QPainter) -> None:
        layout, pal = self._layout, self._palette
        self._flag_hits = []
        if not len(layout):
            painter.setPen(pal.muted)
            painter.drawText(
                self.viewport().rect().adjusted(12, 12, -12, -12),
                int(Qt.AlignmentFlag.AlignTop) | int(Qt.TextFlag.TextWordWrap),
                "No messages yet. Branches appear here when you edit a prompt, "
                "regenerate a reply or start a tangent.",
            )
            return
        first_row, last_row, first_col, last_col = self._visible_range()
        self._paint_gutter(painter, first_row, last_row)
        self._paint_lane(painter)
        visible: list[int] = []
        links: dict[tuple[bool, bool], QPainterPath] = {}
        for row in range(first_row, min(last_row + 1, layout.row_count - 1) + 1):
            nodes = layout.by_row[row]
            start = bisect.bisect_left(nodes, first_col, key=layout.columns.__getitem__)
            for node in nodes[start:]:
                if row <= last_row and layout.columns[node] <= last_col:
                    visible.append(node)
                parent = layout.parents[node]
                if parent != NO_PARENT and layout.columns[parent] <= last_col:
                    style = (layout.on_active_path[node], layout.tangent[node])
                    path = links.get(style)
                    if path is None:
                        path = links[style] = QPainterPath()
                    self._add_link(path, parent, node)
        self._stroke_links(painter, links)
        if self._hover != NO_PARENT and self._hover in visible:
            self._paint_halo(painter, self._hover)
        for node in visible:
            self._paint_node(painter, node)
        self._paint_annotations(painter, first_row, last_row)
        if self._current != NO_PARENT and self.hasFocus():
            self._paint_focus(painter, self._current)

    def _paint_gutter(self, painter: QPainter, first_row: int, last_row: int) -> None:
        """Every tenth depth numbered in the left margin, so a long map has landmarks."""
        painter.setFont(self._small)
        painter.setPen(self._palette.muted)
        x = MARGIN_LEFT - 8 - self.horizontalScrollBar().value()
        top = MARGIN_TOP - self.verticalScrollBar().value()
        for row in range(first_row, last_row + 1):
            if row == 0 or (row + 1) % TURN_LABEL_EVERY == 0:
                rect = QRectF(x - 34, top + row * ROW_HEIGHT, 34, ROW_HEIGHT)
                painter.drawText(
                    rect, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, str(row + 1)
                )

    def _paint_lane(self, painter: QPainter) -> None:
        """A soft band down column 0 behind the shown path, from its first message to its end."""
        layout = self._layout
        if layout.active_leaf == NO_PARENT:
            return
        bottom = self.node_center(layout.active_leaf)  # the path starts at row 0, column 0
        top = QPointF(bottom.x(), bottom.y() - layout.rows[layout.active_leaf] * ROW_HEIGHT)
        half = COLUMN_WIDTH / 2 - 1
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self._palette.lane)
        band = QRectF(top.x() - half, top.y() - half, 2 * half, bottom.y() - top.y() + 2 * half)
        painter.drawRoundedRect(band, half, half)

    def _add_link(self, path: QPainterPath, parent: int, node: int) -> None:
        start, end = self.node_center(parent), self.node_center(node)
        path.moveTo(start)
        if start.x() == end.x():
            path.lineTo(end)
            return
        # A branch leaves its parent downwards and arrives from above: an S in the gap between rows.
        bend = ROW_HEIGHT * 0.55
        path.cubicTo(QPointF(start.x(), start.y() + bend), QPointF(end.x(), end.y() - bend), end)

    def _stroke_links(self, painter: QPainter, links: dict[tuple[bool, bool], QPainterPath]) -> None:
        pal = self._palette
        painter.setBrush(Qt.BrushStyle.NoBrush)
        for (active, tangent), path in sorted(links.items()):
            color = QColor(pal.tangent if tangent else pal.active_line if active else pal.line)
            if tangent and not active:
                color.setAlphaF(0.6)
            pen = QPen(color, 2.6 if active else 1.6)
            pen.setCapStyle(Qt.PenCapStyle.RoundCap)
            painter.setPen(pen)
            painter.drawPath(path)

    def _node_color(self, node: int, message: Message | None) -> QColor:
        pal = self._palette
        if message is None:
            return pal.muted
        if self._layout.tangent[node] and message.is_marker:
            return QColor(pal.tangent)
        return QColor(pal.role(node_role(message)))

    def _paint_node(self, painter: QPainter, node: int) -> None:
        layout, pal = self._layout, self._palette
        message = self._message(node)
        active = layout.on_active_path[node]
        color = self._node_color(node, message)
        if not active:
            color.setAlphaF(pal.dim_alpha)
        radius = ACTIVE_NODE_RADIUS if active else NODE_RADIUS
        center = self.node_center(node)
        shape = SHAPES.get(node_role(message)) if message is not None else None
        hollow = message is not None and is_unfinished(message)
        ring = pal.failed if hollow and message is not None and message.status.value == "failed" else color
        painter.setPen(QPen(ring, 1.8) if hollow else QPen(pal.background, 1.5))
        painter.setBrush(pal.background if hollow else color)
        if shape is NodeShape.DIAMOND:
            r = radius + 1
            diamond = QPainterPath()
            diamond.moveTo(center.x(), center.y() - r)
            diamond.lineTo(center.x() + r, center.y())
            diamond.lineTo(center.x(), center.y() + r)
            diamond.lineTo(center.x() - r, center.y())
            diamond.closeSubpath()
            painter.drawPath(diamond)
        elif shape is NodeShape.SQUARE:
            painter.drawRoundedRect(
                QRectF(center.x() - radius, center.y() - radius, 2 * radius, 2 * radius), 2, 2
            )
        else:
            painter.drawEllipse(center, radius, radius)
        if node == layout.active_leaf:
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.setPen(QPen(pal.active_line, 1.6))
            painter.drawEllipse(center, radius + 3.5, radius + 3.5)

    def _paint_halo(self, painter: QPainter, node: int) -> None:
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self._palette.hover)
        painter.drawEllipse(self.node_center(node), ROW_HEIGHT / 2, ROW_HEIGHT / 2)

    def _paint_focus(self, painter: QPainter, node: int) -> None:
        pen = QPen(self._palette.focus, 1.5)
        pen.setStyle(Qt.PenStyle.DotLine)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        center = self.node_center(node)
        painter.drawRoundedRect(QRectF(center.x() - 9.5, center.y() - 9.5, 19, 19), 5, 5)

    def _annotation_x(self) -> float:
        """Where the words start: right of the last column, in viewport coordinates."""
        graph = MARGIN_LEFT + self._layout.column_count * COLUMN_WIDTH + 6
        return graph - self.horizontalScrollBar().value()

    def _paint_annotations(self, painter: QPainter, first_row: int, last_row: int) -> None:
        """Right of the graph, each row's line of text: a checkpoint's flag, then an excerpt of the
        message in column 0 (the shown path), so the map reads like a table of contents."""
        layout, pal = self._layout, self._palette
        left = self._annotation_x()
        right = self.viewport().width() - 8
        painter.setFont(self._small)
        metrics = QFontMetricsF(self._small)
        for row in range(first_row, last_row + 1):
            nodes = layout.by_row[row]
            first = nodes[0] if nodes else NO_PARENT
            x = left
            flagged = [n for n in nodes if n in self._flags]
            for node in flagged:
                x = self._paint_flag(painter, node, self._flags[node], x) + 6
            if first == NO_PARENT or layout.columns[first] != 0 or right - x < 36:
                continue
            message = self._message(first)
            if message is None:
                continue
            text = metrics.elidedText(excerpt(message, 90), Qt.TextElideMode.ElideRight, right - x)
            color = QColor(pal.text if message.is_user else pal.muted)
            if not layout.on_active_path[first]:
                color.setAlphaF(pal.dim_alpha)
            painter.setPen(color)
            y = self.node_center(first).y()
            painter.drawText(
                QRectF(x, y - ROW_HEIGHT / 2, right - x, ROW_HEIGHT), Qt.AlignmentFlag.AlignVCenter, text
            )

    def _paint_flag(self, painter: QPainter, node: int, names: str, left: float) -> float:
        """A checkpoint: a small flag and its name in a pill, tied to its message by a dotted leader.

        Returns the pill's right edge."""
        pal = self._palette
        painter.setFont(self._small)
        metrics = QFontMetricsF(self._small)
        text = metrics.elidedText(names, Qt.TextElideMode.ElideRight, FLAG_MAX_TEXT)
        center = self.node_center(node)
        leader = QPen(pal.flag, 1.0)
        leader.setStyle(Qt.PenStyle.DotLine)
        painter.setPen(leader)
        painter.drawLine(QPointF(center.x() + ACTIVE_NODE_RADIUS + 2, center.y()), QPointF(left, center.y()))
        width = metrics.horizontalAdvance(text) + 22
        rect = QRectF(left, center.y() - FLAG_HEIGHT / 2, width, FLAG_HEIGHT)
        painter.setPen(QPen(pal.flag, 1.2))
        fill = QColor(pal.flag_fill)
        painter.setBrush(fill)
        painter.drawRoundedRect(rect, FLAG_HEIGHT / 2, FLAG_HEIGHT / 2)
        pole_x = rect.left() + 8
        flag = QPainterPath()
        flag.moveTo(pole_x, rect.top() + 4)
        flag.lineTo(pole_x + 6, rect.top() + 6.5)
        flag.lineTo(pole_x, rect.top() + 9)
        flag.closeSubpath()
        painter.setBrush(pal.flag)
        painter.setPen(QPen(pal.flag, 1.2))
        painter.drawLine(QPointF(pole_x, rect.top() + 3.5), QPointF(pole_x, rect.bottom() - 3.5))
        painter.drawPath(flag)
        painter.setPen(pal.flag_text)
        painter.drawText(rect.adjusted(16, 0, -6, 0), Qt.AlignmentFlag.AlignVCenter, text)
        self._flag_hits.append((rect, node))
        return rect.right()

    def _message(self, node: int) -> Message | None:
        if self._tree is None:
            return None
        try:
            return self._tree.get(self._layout.ids[node])
        except TreeError:
            return None

    # -- mouse and keyboard ---------------------------------------------------------------

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            node = self.node_at(event.pos())
            if node == NO_PARENT:
                QToolTip.hideText()
                event.ignore()
            else:
                QToolTip.showText(event.globalPos(), self.describe_node(node, rich=True), self.viewport())
            return True
        if event.type() == QEvent.Type.Leave and self._hover != NO_PARENT:
            self._hover = NO_PARENT
            self.viewport().update()
        return super().viewportEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        node = self.node_at(event.position())
        if node != self._hover:
            self._hover = node
            cursor = Qt.CursorShape.PointingHandCursor if node != NO_PARENT else Qt.CursorShape.ArrowCursor
            self.viewport().setCursor(cursor)
            self.viewport().update()
        super().mouseMoveEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            super().mousePressEvent(event)
            return
        node = self.node_at(event.position())
        if node == NO_PARENT:
            return
        self.setFocus(Qt.FocusReason.MouseFocusReason)
        self._move_to(node, speak=False)
        self.nodeActivated.emit(self._layout.ids[node])

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = Qt.Key(event.key())
        layout = self._layout
        node = self._current if self._current != NO_PARENT else layout.active_leaf
        if node == NO_PARENT:
            super().keyPressEvent(event)
            return
        target = NO_PARENT
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
            self.nodeActivated.emit(layout.ids[node])
            return
        if key == Qt.Key.Key_Up:
            target = layout.parents[node]
        elif key == Qt.Key.Key_Down:
            target = layout.primary_child[node]
        elif key in (Qt.Key.Key_Left, Qt.Key.Key_Right):
            row = layout.by_row[layout.rows[node]]
            place = row.index(node) + (-1 if key == Qt.Key.Key_Left else 1)
            target = row[place] if 0 <= place < len(row) else NO_PARENT
        elif key == Qt.Key.Key_PageUp:
            target = self._walk(node, layout.parents, PAGE_STEP_ROWS)
        elif key == Qt.Key.Key_PageDown:
            target = self._walk(node, layout.primary_child, PAGE_STEP_ROWS)
        elif key == Qt.Key.Key_Home:
            target = self._walk(node, layout.parents, len(layout))
        elif key == Qt.Key.Key_End:
            target = layout.active_leaf
        else:
            super().keyPressEvent(event)
            return
        if target != NO_PARENT:
            self._move_to(target)
        event.accept()

    @staticmethod
    def _walk(node: int, step: list[int], count: int) -> int:
        for _ in range(count):
            following = step[node]
            if following == NO_PARENT:
                break
            node = following
        return node

    def _move_to(self, node: int, *, speak: bool = True) -> None:
        if node == self._current:
            self.scroll_to_node(node)
            return
        self._current = node
        self.scroll_to_node(node)
        self.viewport().update()
        text = self.describe_node(node)
        self.setAccessibleDescription(text)
        if speak and self.hasFocus():
            announce(self, text)
        self.currentChanged.emit(self._layout.ids[node])

    def focusInEvent(self, event: QFocusEvent) -> None:
        super().focusInEvent(event)
        if self._current == NO_PARENT:
            self._current = self._layout.active_leaf
        if (
            event.reason() != Qt.FocusReason.MouseFocusReason
        ):  # a click shows what it clicked, not the old pick
            self.scroll_to_node(self._current)
        self.viewport().update()

    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        self.viewport().update()

    # -- words ----------------------------------------------------------------------------

    def describe_node(self, node: int, *, rich: bool = False) -> str:
        """What the tooltip and a screen reader say about a message."""
        message = self._message(node)
        if message is None or self._tree is None:
            return ""
        return describe_message(
            message,
            self._tree,
            on_path=self._layout.on_active_path[node],
            tangent=self._layout.tangent[node],
            checkpoint=self._flags.get(node, ""),
            rich=rich,
        )

    def _describe(self) -> None:
        layout = self._layout
        self.setAccessibleDescription(
            f"{len(layout)} messages, {layout.branch_count} branches; the shown path runs down the left. "
            "Arrow keys move between messages, Enter shows the selected message's branch."
        )
