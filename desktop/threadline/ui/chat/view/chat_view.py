"""The chat view: a virtualized list of rendered messages over a ConversationModel.

Why not a QListView or a widget per message: a widget per message lays out every
message, and QListView asks the delegate for the size of every row on each relayout,
which a growing streaming row triggers every frame. This view is a QAbstractScrollArea
that paints only the rows intersecting the viewport. Its parts live next to it:

* ``view_layout`` — row heights (estimated until seen) and the anchor of the visible part;
* ``document_cache`` — one QTextDocument per message, the streaming reply grown in place;
* ``message_html`` — what a message's body says, as HTML (a pure function);
* ``row_painter`` — header, body and footer buttons of one row;
* ``hit_testing`` — what the pointer is over;
* ``selection_editor`` — the read-only browser laid over a message to select its text;
* ``message_keys`` — the keys that act on the current message (shown in its menu);
* ``message_menu`` — a message's menu: its commands, then the link or formula under the pointer;
* ``chat_accessibility`` — the messages as a list for screen readers.

and four helper objects typed against ``view_host.ViewHost``: ``scroller`` (following
the stream, the scroll bar, bringing a message in; ``view_scroller``), ``message_cursor``
(the current message the keyboard acts on, and when its letter keys act;
``message_cursor``), ``commands`` (what a message's buttons, links and menu do;
``view_commands``) and ``pointer`` (hover and clicks; ``view_pointer``).

The view itself wires them to the model's row signals, the scroll bar, the mouse and
the keyboard, and emits what the user asked for (``actionTriggered``). Up/Down and K/J
move the current message, Home/End go to the first/last, the keys of ``message_keys`` act
on it and the Menu key or Shift+F10 opens its menu. Text typed while the keyboard has not
chosen a message goes to the message box (``typedAhead``; docs/accessibility.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QPointF,
    QRect,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import (
    QColor,
    QContextMenuEvent,
    QFocusEvent,
    QImage,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QShowEvent,
    QTextDocument,
    QWheelEvent,
)
from PySide6.QtWidgets import QAbstractScrollArea, QTextBrowser, QWidget

from threadline.core.messages import Message, MessageKind
from threadline.core.usage import PriceLookup
from threadline.ui.chat.changes.header_counts import CHANGES_ACTION, HeaderCounts, counts_tooltip
from threadline.ui.chat.view import chat_accessibility, hit_testing, view_layout
from threadline.ui.chat.view.chat_accessibility import MessageItems
from threadline.ui.chat.view.context_marks import (
    NOT_SENT_OPACITY,
    checkpoints_by_message,
)
from threadline.ui.chat.view.conversation_model import ConversationModel
from threadline.ui.chat.view.document_cache import DocumentCache, RenderedMessage
from threadline.ui.chat.view.empty_hint import EmptyHint, paint_empty_hint
from threadline.ui.chat.view.hit_testing import Hit, RowGeometry
from threadline.ui.chat.view.image_viewer import ImageViewer
from threadline.ui.chat.view.message_actions import VERSION
from threadline.ui.chat.view.message_cursor import MessageCursor
from threadline.ui.chat.view.message_html import IMAGE_SCHEME, ToolNamer, display_tool_name
from threadline.ui.chat.view.message_keys import command_for_key
from threadline.ui.chat.view.message_labels import status_label
from threadline.ui.chat.view.row_painter import FrameState, RowPainter, TextHighlights
from threadline.ui.chat.view.selection_editor import SelectionEditor
from threadline.ui.chat.view.table_scroll_input import TableScrolling
from threadline.ui.chat.view.thinking_block import thinking_key, thinking_open
from threadline.ui.chat.view.view_commands import ViewCommands
from threadline.ui.chat.view.view_layout import (
    RowLayout,
    document_width,
    estimate_heights,
    has_bubble,
    row_height,
)
from threadline.ui.chat.view.view_pointer import ViewPointer
from threadline.ui.chat.view.view_scroller import ViewScroller
from threadline.ui.common.theme import LIGHT, ThemeColors

__all__ = ["IMAGE_SCHEME", "ChatView"]


class ChatView(QAbstractScrollArea):
    """Paints the messages of a ConversationModel; emits what the user asked for."""

    actionTriggered = Signal(str, str)  # action name, message id
    atBottomChanged = Signal(bool)
    escapePressed = Signal()
    currentMessageChanged = Signal(str)  # message id ("" when there is none)
    typedAhead = Signal(QKeyEvent)
    """Text typed while no message was chosen by the keyboard: it belongs in the message box."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ChatView")
        self.setFrameShape(QAbstractScrollArea.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.viewport().setMouseTracking(True)
        self.viewport().setAutoFillBackground(False)
        self._model: ConversationModel | None = None
        self.price_of: PriceLookup | None = None
        """Prices for the cost shown in each reply's header (set by the tab from the engine)."""
        self.change_counts: dict[str, HeaderCounts] = {}
        """Each turn's file changes by its last reply's id (``set_change_counts``)."""
        self._colors: ThemeColors = LIGHT
        self.rows = RowLayout()
        """Row heights and the anchor of the visible part (``view_layout``)."""
        self.empty_hint: EmptyHint = ("", ())
        """(title, lines) shown while the chat has no message (``set_empty_hint``)."""
        self._highlight_timer = QTimer(self)
        self._highlight_timer.setSingleShot(True)
        self._highlight_timer.setInterval(0)  # right after the frame that showed plain code
        self._highlight_timer.timeout.connect(self._highlight_pending)
        self._docs = DocumentCache(on_highlight_wanted=self._want_highlighting)
        self._painter = RowPainter(self.font())
        self._docs.set_font(self._painter.body_font)
        self._expanded: set[str] = set()
        self._visible: list[RowGeometry] = []
        self._selection = SelectionEditor(self.viewport(), self)
        self._selection.linkActivated.connect(self._link_activated)
        self._selection.escaped.connect(self.setFocus)
        self._tool_namer: ToolNamer | None = None
        self._announced: set[str] = set()
        self.accessible_items = MessageItems(self, self)
        """The messages' stand-ins for assistive tools (see ``chat_accessibility``)."""
        self.scroller = ViewScroller(self)
        """Where the view is scrolled, following the stream (``view_scroller``)."""
        self.message_cursor = MessageCursor(self)
        """The current message, which the keyboard acts on (``message_cursor``)."""
        self.commands = ViewCommands(self, self, self._docs, self._expanded)
        """What a message's buttons, links and menu do (``view_commands``)."""
        self.pointer = ViewPointer(self, self.message_cursor, self.commands)
        """The mouse: hover, clicks on buttons and links, double click to select (``view_pointer``)."""
        self.setAccessibleName("Messages")
        self.setAccessibleDescription(
            "Up and Down move between messages; the Menu key lists what you can do with one."
        )
        self.verticalScrollBar().valueChanged.connect(self._scrolled)
        self.verticalScrollBar().setSingleStep(40)
        self.text_highlights: TextHighlights | None = None
        """Ranges painted highlighted in messages' text (set by the find bar)."""
        self.tables = TableScrolling(self.viewport().update)
        """Wide tables scrolled sideways in place (Shift+wheel, their bar, Shift+Left/Right)."""

    # -- setup -----------------------------------------------------------------------------

    def setModel(self, model: ConversationModel) -> None:
        if self._model is not None:
            self._connect(self._model, connect=False)
        self._model = model
        self._connect(model, connect=True)
        self.tables.offsets.keep_only(())
        self._reset_rows()

    def model(self) -> ConversationModel | None:
        return self._model

    def _connect(self, m: ConversationModel, *, connect: bool) -> None:
        pairs = (
            (m.rowsInserted, self._rows_inserted),
            (m.rowsRemoved, self._rows_removed),
            (m.dataChanged, self._data_changed),
            (m.modelReset, self._reset_rows),
            (m.messageFinished, self._reply_finished),
        )
        for signal, slot in pairs:
            if connect:
                signal.connect(slot)
            else:
                signal.disconnect(slot)

    @property
    def render_count(self) -> int:
        """Number of documents rendered (tests and benchmarks read it)."""
        return self._docs.render_count

    def set_tool_namer(self, namer: ToolNamer | None) -> None:
        """How to show a stored tool name (the engine's registry maps wire to policy names)."""
        self._tool_namer = namer
        self._docs.set_tool_namer(namer)
        self.viewport().update()

    def set_excluded_sources(self, keys: frozenset[str]) -> None:
        """The passages excluded from this chat, shown struck out in each reply's Sources."""
        if self._docs.set_excluded_sources(keys) and self._model is not None:
            for row in range(self._model.rowCount()):
                self.rows.mark_stale(row)
            self._relayout()

    def tool_display_name(self, name: str) -> str:
        """The policy name of a registered tool; ``server/tool`` for an MCP tool no longer registered."""
        return display_tool_name(name, self._tool_namer)

    def set_colors(self, colors: ThemeColors) -> None:
        self._colors = colors
        self._docs.set_colors(colors)
        self.viewport().update()

    # -- geometry --------------------------------------------------------------------------

    def content_width(self) -> int:
        return view_layout.content_width(self.viewport().width())

    def total_height(self) -> int:
        return self.rows.total_height()

    def _estimates(self, first: int, last: int) -> Sequence[int]:
        m = self._model
        if m is None:
            return ()
        return estimate_heights(m.text_shapes(first, last), self.content_width(), self._painter.metrics)

    # -- model signals ---------------------------------------------------------------------

    def _reset_rows(self) -> None:
        self._selection.close()
        m = self._model
        n = m.rowCount() if m is not None else 0
        self.rows.reset(self._estimates(0, n - 1))
        self._docs.clear()
        self.message_cursor.forget_missing()
        self._relayout()

    def _rows_inserted(self, _parent: QModelIndex | QPersistentModelIndex, first: int, last: int) -> None:
        self.rows.insert(first, self._estimates(first, last))
        self.message_cursor.rows_inserted(first, last)
        self._relayout()

    def _rows_removed(self, _parent: QModelIndex | QPersistentModelIndex, first: int, last: int) -> None:
        self.rows.remove(first, last)
        selecting = self._selection.message_id
        if selecting is not None and self._model is not None and self._model.row_of(selecting) < 0:
            self._selection.close()
        self.message_cursor.forget_missing(near=first)
        self._relayout()

    def _data_changed(
        self,
        top_left: QModelIndex | QPersistentModelIndex,
        bottom_right: QModelIndex | QPersistentModelIndex,
        _roles: list[int] | None = None,
    ) -> None:
        for row in range(top_left.row(), bottom_right.row() + 1):
            self.rows.mark_stale(row)  # re-measure when next visible
        if self.isVisible():
            self._relayout()

    def _relayout(self) -> None:
        if self.isVisible():
            self.viewport().update()
        else:
            self.scroller.sync_scrollbar()

    # -- rendering and layout --------------------------------------------------------------

    def _want_highlighting(self) -> None:
        if not self._highlight_timer.isActive():
            self._highlight_timer.start()

    def _highlight_pending(self) -> None:
        """Build the lexers the last frame lacked, then render those messages again, highlighted."""
        if self._docs.highlight_pending():
            self.viewport().update()

    def _measure(self, row: int) -> tuple[Message, RenderedMessage, int]:
        assert self._model is not None
        message = self._model.message_at(row)
        assert message is not None
        width = self.content_width()
        rendered = self._docs.render(
            message, self._model.revision(message.id), document_width(message, width), self._expanded
        )
        doc_h = int(rendered.doc.size().height() + 0.999)
        height = row_height(doc_h, bubble=has_bubble(message), header_height=self._painter.header_height)
        self.rows.set_measured(row, height, width)
        return message, rendered, height

    def measure_height(self, row: int) -> int:
        return self._measure(row)[2]

    def ensure_layout(self) -> None:
        """Fix the anchor so the viewport is filled, measuring only the rows that show."""
        if self._model is None:
            self.rows.anchor_row, self.rows.anchor_off = 0, 0
        else:
            self.rows.fill(self.viewport().height(), self.measure_height)
        if self._model is None or not len(self.rows):
            self._visible = []
        self.scroller.sync_scrollbar()

    def _scrolled(self, value: int) -> None:
        self._selection.close()
        self.scroller.scrolled(value)

    @property
    def following(self) -> bool:
        """Whether the view follows new content (the user is at the bottom)."""
        return self.scroller.following

    def scroll_to_bottom(self) -> None:
        self.scroller.scroll_to_bottom()

    def scroll_to_message(self, message_id: str, *, flash: bool = True) -> bool:
        """Bring a message to the top of the view (search hits), briefly highlighted."""
        return self.scroller.scroll_to_message(message_id, flash=flash)

    def bring_into_view(self, message_id: str) -> bool:
        """Scroll as little as needed so a message shows whole (``view_scroller``)."""
        return self.scroller.bring_into_view(message_id)

    def reveal_text(self, message_id: str, doc_top: float, doc_bottom: float, *, clear_top: int = 0) -> bool:
        """Scroll a part of a message's document into view (find matches; ``view_scroller``)."""
        return self.scroller.reveal_text(message_id, doc_top, doc_bottom, clear_top=clear_top)

    @property
    def image_viewer(self) -> ImageViewer | None:
        """The last image opened full size from a message (tests read it)."""
        return self.commands.image_viewer

    @property
    def header_height(self) -> int:
        return self._painter.header_height

    def geometry_of(self, message_id: str) -> RowGeometry | None:
        """Where a message was last painted (``ensure_visible_geometry``), None when not in view."""
        return next((g for g in self._visible if g.message_id == message_id), None)

    @property
    def colors(self) -> ThemeColors:
        return self._colors

    def rendered_document(self, message_id: str) -> QTextDocument | None:
        """A message's document as it is painted now (rendered if needed)."""
        row = self._model.row_of(message_id) if self._model is not None else -1
        return self._measure(row)[1].doc if row >= 0 else None

    def open_tool_box(self, message_id: str, key: str) -> None:
        """Open a collapsed tool box (the find bar shows a match inside it)."""
        if key in self._expanded or self._model is None:
            return
        self._expanded.add(key)
        self.rows.mark_stale(self._model.row_of(message_id))
        self.viewport().update()

    def open_thinking(self, message: Message) -> None:
        """Open a reply's closed thinking block (the find bar shows a match inside it). Its key
        flips the block's default (open while thinking, closed after), so it is set or cleared
        as the block's state needs."""
        if self._model is None or thinking_open(message, self._expanded):
            return
        self._expanded.symmetric_difference_update({thinking_key(message.id)})
        self.rows.mark_stale(self._model.row_of(message.id))
        self.viewport().update()

    # -- painting ----------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self.viewport())
        try:
            self._paint_all(painter)
        finally:
            painter.end()

    def set_empty_hint(self, title: str, lines: tuple[str, ...]) -> None:
        """What a chat with no message yet shows in the middle of the view, instead of nothing:
        that this is where the conversation will be, and what will answer."""
        if (title, lines) != self.empty_hint:
            self.empty_hint = (title, lines)
            self.viewport().update()

    def _paint_empty(self, painter: QPainter) -> None:
        paint_empty_hint(painter, self.viewport().rect(), self.font(), self._colors, self.empty_hint)

    def _paint_all(self, painter: QPainter) -> None:
        self.ensure_layout()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.fillRect(self.viewport().rect(), QColor(self._colors.base))
        self._visible = []
        if self._model is None or not len(self.rows):
            self._paint_empty(painter)
            return
        viewport_width = self.viewport().width()
        cursor = self.message_cursor
        frame = FrameState(
            colors=self._colors,
            left=view_layout.content_left(viewport_width),
            width=self.content_width(),
            viewport_width=viewport_width,
            viewport_height=self.viewport().height(),
            hover=self.pointer.hover,
            flash_id=self.scroller.flash_id,
            focus_id=cursor.current if self.hasFocus() and cursor.keys_armed else None,
            price_of=self.price_of,
            text_highlights=self.text_highlights,
            checkpoints=checkpoints_by_message(self._model.named_checkpoints()),
            table_offsets=self.tables.offsets,
            change_counts=self.change_counts,
        )
        first_sent = self._model.first_sent_row()  # rows above it are summarised or cleared: dimmed
        y = -self.rows.anchor_off
        row = self.rows.anchor_row
        n = len(self.rows)
        busy = not self._model.live.conversation.ready_for_input
        while row < n and y < frame.viewport_height:
            message, rendered, h = self._measure(row)
            actions = self.commands.actions_for(message, busy)
            version = self._model.version(message.id) if VERSION in actions else None
            painter.setOpacity(NOT_SENT_OPACITY if row < first_sent and message.marker is None else 1.0)
            geo = self._painter.paint_row(
                painter,
                frame,
                row,
                y,
                h,
                message,
                rendered.doc,
                bubble=has_bubble(message),
                actions=actions,
                version=version,
            )
            self._visible.append(geo)
            y += h
            row += 1
        painter.setOpacity(1.0)

    def _status(self, message: Message) -> tuple[str, str]:
        """The header's status label of ``message`` and its colour (tests read it)."""
        return status_label(message, self._colors)

    # -- hit-testing -------------------------------------------------------------------------

    def _document_of(self, message_id: str) -> QTextDocument | None:
        rendered = self._docs.get(message_id)
        return rendered.doc if rendered is not None else None

    def hit(self, pos: QPointF) -> Hit:
        return hit_testing.hit(self._visible, pos, self._document_of)

    def set_change_counts(self, counts: dict[str, HeaderCounts]) -> None:
        """Show "+12 −3 in 2 files" in these replies' headers (and no counts elsewhere)."""
        if counts != self.change_counts:
            self.change_counts = counts
            self.viewport().update()

    def action_tooltip(self, message_id: str, action: str) -> str:
        counts = self.change_counts.get(message_id) if action == CHANGES_ACTION else None
        return counts_tooltip(counts) if counts is not None else ""

    def action_rect(self, message_id: str, action: str) -> QRect | None:
        """Where an action button of a visible message is (for tests driving the mouse)."""
        self.ensure_visible_geometry()
        for geo in self._visible:
            if geo.message_id == message_id:
                for rect, name in geo.actions:
                    if name == action:
                        return rect.toRect()
        return None

    def version_text(self, message_id: str) -> str | None:
        self.ensure_visible_geometry()
        for geo in self._visible:
            if geo.message_id == message_id and geo.version_label:
                return geo.version_label[1]
        return None

    def anchor_rect(self, message_id: str, href: str) -> QRect | None:
        """Where a link with ``href`` of a visible message is painted (tests)."""
        self.ensure_visible_geometry()
        doc = self._document_of(message_id)
        geo = self.geometry_of(message_id)
        if doc is None or geo is None:
            return None
        return hit_testing.anchor_rect(doc, geo.doc_rect, href)

    def visible_message_ids(self) -> list[str]:
        self.ensure_visible_geometry()
        return [g.message_id for g in self._visible]

    def ensure_visible_geometry(self) -> None:
        """Lay out and paint the visible rows now (into an image), so hit rectangles are current."""
        size = self.viewport().size()
        image = QImage(max(1, size.width()), max(1, size.height()), QImage.Format.Format_ARGB32_Premultiplied)
        painter = QPainter(image)
        try:
            self._paint_all(painter)
        finally:
            painter.end()

    # -- interaction ---------------------------------------------------------------------------

    def wheelEvent(self, event: QWheelEvent) -> None:
        if self.tables.wheel(self._visible, event):
            event.accept()
            return
        super().wheelEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self.tables.move(event.position()):
            return
        self.pointer.moved(event.position())
        super().mouseMoveEvent(event)

    def leaveEvent(self, event: QEvent) -> None:
        self.pointer.left()
        super().leaveEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        event.accept()  # clicks are handled on release (actions, links)
        if event.button() == Qt.MouseButton.LeftButton and self.tables.press(self._visible, event.position()):
            return
        self.pointer.pressed(event.position())

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return super().mouseReleaseEvent(event)
        if not self.tables.release():
            self.pointer.released(event.position())
        return None

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        self.pointer.double_clicked(event.position())

    def _link_activated(self, message_id: str, href: str) -> None:
        self.commands.activate_link(message_id, href)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        if event.reason() == QContextMenuEvent.Reason.Keyboard:  # Menu key, Shift+F10
            self._open_current_menu()
            return
        target = self.hit(QPointF(event.pos()))
        if target.row is None:
            return
        self.message_cursor.set_current(target.row.message_id, scroll=False)
        href = target.href or self.commands.formula_at(target, event.pos())
        self.commands.exec_menu(target.row.message_id, event.globalPos(), href)

    def _open_current_menu(self) -> None:
        current = self.message_cursor.ensure_current()
        if current is not None:
            self.commands.open_menu(current)

    def open_message_menu(self, message_id: str) -> None:
        """Open a message's menu below its header (the keyboard's way to its actions)."""
        self.commands.open_menu(message_id)

    def offered_commands(self, message_id: str) -> list[str]:
        """What can be done to a message now, in menu order (``view_commands``)."""
        return self.commands.offered(message_id)

    def run_command(self, action: str, message_id: str) -> None:
        """Do ``action`` to a message, as its footer button or menu entry would."""
        self.commands.run(action, message_id)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        shift_f10 = key == Qt.Key.Key_F10 and event.modifiers() == Qt.KeyboardModifier.ShiftModifier
        if key == Qt.Key.Key_Menu or shift_f10:  # handled here, so Qt sends no context menu event too
            self._open_current_menu()
            return
        cursor = self.message_cursor
        if not cursor.keys_armed and cursor.typed_text(event):
            self.typedAhead.emit(
                QKeyEvent(event.type(), event.key(), event.modifiers(), event.text(), event.isAutoRepeat())
            )
            return
        if cursor.navigate(event):
            self.viewport().update()
            return
        if self.tables.key(self._visible, cursor.current, event):
            return
        if key == Qt.Key.Key_Delete and not cursor.keys_armed:
            return  # Del removes messages: only on one the keyboard chose
        current = cursor.current
        if current is not None and self._model is not None and self._model.row_of(current) >= 0:
            action = command_for_key(event, self.offered_commands(current))
            if action is not None:
                self.run_command(action, current)
                return
        bar = self.verticalScrollBar()
        if key == Qt.Key.Key_Escape:
            self.escapePressed.emit()
        elif key == Qt.Key.Key_PageDown:
            bar.triggerAction(bar.SliderAction.SliderPageStepAdd)
        elif key == Qt.Key.Key_PageUp:
            bar.triggerAction(bar.SliderAction.SliderPageStepSub)
        else:
            super().keyPressEvent(event)

    # -- the current message (``message_cursor``) ----------------------------------------------

    def current_message_id(self) -> str | None:
        """The message the keyboard acts on (ringed while the view has the focus)."""
        return self.message_cursor.current

    def set_current_message(self, message_id: str) -> bool:
        """Make a message current and scroll it into view; False if it is not in the view."""
        return self.message_cursor.set_current_message(message_id)

    def _reply_finished(self, message_id: str) -> None:
        """Announce a finished reply once (the model may report the same reply finished again)."""
        message = self._model.message(message_id) if self._model is not None else None
        if message is None or not message.text or message.kind is MessageKind.TOOL_RESULTS:
            return
        if message_id not in self._announced:
            self._announced.add(message_id)
            self.accessible_items.reply_finished(message_id)

    def focusInEvent(self, event: QFocusEvent) -> None:
        super().focusInEvent(event)
        self.message_cursor.focus_in(event.reason())
        self.viewport().update()

    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        self.viewport().update()

    # -- what assistive tools ask (chat_accessibility.MessageList) -----------------------------

    def accessible_message_count(self) -> int:
        return self._model.rowCount() if self._model is not None else 0

    def accessible_message_id(self, row: int) -> str | None:
        message = self._model.message_at(row) if self._model is not None else None
        return message.id if message is not None else None

    def accessible_row_of(self, message_id: str) -> int:
        return self._model.row_of(message_id) if self._model is not None else -1

    def accessible_message(self, message_id: str) -> Message | None:
        return self._model.message(message_id) if self._model is not None else None

    def message_screen_rect(self, message_id: str) -> QRect | None:
        """Where a message is on the screen, None when it is scrolled out of view."""
        if not self._visible and self.isVisible():
            self.ensure_visible_geometry()  # not painted yet (each paint keeps the geometry current)
        geo = self.geometry_of(message_id)
        if geo is None or not self.isVisible():
            return None
        left = view_layout.content_left(self.viewport().width())
        rect = QRect(left, geo.top, self.content_width(), geo.height).intersected(self.viewport().rect())
        if rect.isEmpty():
            return None
        return QRect(self.viewport().mapToGlobal(rect.topLeft()), rect.size())

    def message_id_at(self, global_pos: QPoint) -> str | None:
        geo = hit_testing.row_at(self._visible, QPointF(self.viewport().mapFromGlobal(global_pos)))
        return geo.message_id if geo is not None else None

    # -- selection editor ------------------------------------------------------------------------

    def open_selection_editor(self, message_id: str) -> QTextBrowser | None:
        self._selection.close()
        geo = self.geometry_of(message_id)
        rendered = self._docs.get(message_id)
        if geo is None or rendered is None:
            return None
        return self._selection.open(message_id, rendered.doc, geo.doc_rect.toAlignedRect())

    def selection_editor(self) -> QTextBrowser | None:
        return self._selection.browser

    # -- Qt housekeeping -----------------------------------------------------------------------

    def resizeEvent(self, event: QResizeEvent) -> None:
        self._selection.close()
        super().resizeEvent(event)
        self.viewport().update()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.viewport().update()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.FontChange:
            self._painter.set_font(self.font())
            self._docs.set_font(self._painter.body_font)
        super().changeEvent(event)

    def sizeHint(self) -> QSize:
        return QSize(640, 480)


chat_accessibility.install(ChatView)
