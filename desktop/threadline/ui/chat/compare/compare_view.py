"""Replies of several models side by side: one column per worker of a compare.

Shown in the chat tab while a compare runs (and until the person continues with
one reply or closes it), and read-only for a prompt's existing versions ("Compare
versions"). Each column has its model, its state, the reply header's figures
(tokens, speed, cost: ``message_labels.usage_label``), the reply, and "Continue
with this one"; a running column also has its own Stop. On a narrow tab the
columns stack (``NARROW_WIDTH``).

Streaming stays cheap with four columns at 1,000 tokens/s: tokens are buffered
and appended to the column's document at most once a frame (plain text at the
end, no relayout of what was there), and a reply is rendered as Markdown once,
when it ends (``bench/compare_bench.py`` measures the stall).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QResizeEvent, QTextCursor
from PySide6.QtWidgets import (
    QBoxLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from threadline.core.compare import CompareTarget, CompareWorker, WorkerState
from threadline.core.messages import Message, MessageKind, MessageStatus
from threadline.core.tree import ConversationTree
from threadline.core.turn import TurnState
from threadline.core.usage import PriceLookup
from threadline.engine.api import LiveConversationApi
from threadline.engine.events import (
    CompareStarted,
    CompareWorkerChanged,
    CompareWorkerEvent,
    ConversationEvent,
    MessageAdded,
    MessageChanged,
    TextDelta,
    TurnStateChanged,
)
from threadline.ui.chat.view.message_labels import usage_label
from threadline.ui.common.theme import ThemeColors

FRAME_MS = 16
NARROW_WIDTH = 720
"""Below this width the columns stack, each as wide as the tab."""


def column_markdown(messages: Sequence[Message]) -> str:
    """One worker's messages below the prompt as Markdown: its text, tool calls and their outcome."""
    parts: list[str] = []
    for message in messages:
        if message.is_assistant:
            if message.text.strip():
                parts.append(message.text)
            for call in message.tool_calls:
                parts.append(f"`⚙ {call.name}` {call.arguments[:200]}")
            if message.status is MessageStatus.FAILED and message.metadata and message.metadata.error:
                parts.append(f"**Failed:** {message.metadata.error}")
        elif message.kind in (MessageKind.TOOL_RESULTS, MessageKind.CANCELLED_TOOL_USES):
            for result in message.tool_results:
                outcome = (
                    "refused or stopped"
                    if message.kind is MessageKind.CANCELLED_TOOL_USES
                    else ("error" if result.is_error else "ok")
                )
                parts.append(f"*{result.tool_name or 'tool'}: {outcome}*")
    return "\n\n".join(parts)


class CompareColumn(QFrame):
    """One worker's reply: header, figures, body, and its buttons."""

    pickRequested = Signal(int)
    stopRequested = Signal(int)

    def __init__(self, index: int, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.index = index
        self.setObjectName("CompareColumn")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName(f"Reply of {title}")
        box = QVBoxLayout(self)
        box.setContentsMargins(12, 10, 12, 10)
        box.setSpacing(6)
        head = QHBoxLayout()
        self.title = QLabel(title)
        self.title.setObjectName("CompareTitle")
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        head.addWidget(self.title, 1)
        self.state = QLabel()
        self.state.setObjectName("CompareState")
        head.addWidget(self.state)
        box.addLayout(head)
        self.figures = QLabel()
        self.figures.setObjectName("CompareFigures")
        box.addWidget(self.figures)
        self.body = QTextBrowser()
        self.body.setObjectName("CompareBody")
        self.body.setFrameShape(QFrame.Shape.NoFrame)
        self.body.setOpenExternalLinks(True)
        self.body.setAccessibleName(f"Text of {title}'s reply")
        self.body.setMinimumHeight(140)
        box.addWidget(self.body, 1)
        buttons = QHBoxLayout()
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("FlatButton")
        self.stop_button.setAccessibleName(f"Stop {title}")
        self.stop_button.clicked.connect(lambda: self.stopRequested.emit(self.index))
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        self.pick_button = QPushButton("Continue with this one")
        self.pick_button.setObjectName("ComparePick")
        self.pick_button.setAccessibleName(f"Continue with {title}'s reply")
        self.pick_button.clicked.connect(lambda: self.pickRequested.emit(self.index))
        buttons.addWidget(self.pick_button)
        box.addLayout(buttons)
        self._pending = ""
        self.set_state(WorkerState.STREAMING, running=True, has_reply=False)

    def set_state(
        self, state: WorkerState, *, running: bool, has_reply: bool, colors: ThemeColors | None = None
    ) -> None:
        self.state.setText(state.label)
        if colors is not None:
            colour = {
                WorkerState.FAILED: colors.error_text,
                WorkerState.CANCELLED: colors.warning,
                WorkerState.DONE: colors.success,
            }.get(state, colors.accent)
            self.state.setStyleSheet(f"color: {colour};")
        self.stop_button.setVisible(running and not state.ended)
        self.pick_button.setEnabled(state.ended and has_reply)

    def append(self, text: str) -> None:
        self._pending += text

    def flush(self) -> None:
        """Append the buffered tokens at the end of the body (no relayout of earlier text)."""
        if not self._pending:
            return
        bar = self.body.verticalScrollBar()
        follow = bar.value() >= bar.maximum() - 4
        cursor = QTextCursor(self.body.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(self._pending)
        self._pending = ""
        if follow:
            bar.setValue(bar.maximum())

    def show_messages(self, messages: Sequence[Message]) -> None:
        """Show the worker's messages as Markdown (once a reply or round ended)."""
        self._pending = ""
        self.body.setMarkdown(column_markdown(messages))


class CompareView(QWidget):
    """The columns of one compare (or of one prompt's versions, read-only)."""

    pickRequested = Signal(str)  # the reply id to continue with
    stopRequested = Signal(int)  # a worker's index
    closeRequested = Signal()

    def __init__(self, live: LiveConversationApi, colors: ThemeColors, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("CompareView")
        self.setAccessibleName("Compared replies")
        self._live = live
        self._colors = colors
        self.price_of: PriceLookup | None = None
        self._workers: tuple[CompareWorker, ...] = ()
        self._messages: list[Callable[[], list[Message]]] = []
        self._states: list[WorkerState] = []
        self._running = False
        self.columns: list[CompareColumn] = []
        self._dirty: set[int] = set()
        self._flush = QTimer(self)
        self._flush.setSingleShot(True)
        self._flush.setInterval(FRAME_MS)
        self._flush.timeout.connect(self._flush_columns)
        self._ticker = QTimer(self)  # live figures (≈ tokens/s) while replies stream
        self._ticker.setInterval(500)
        self._ticker.timeout.connect(self._refresh_figures)

        outer = QVBoxLayout(self)
        outer.setContentsMargins(16, 8, 16, 8)
        outer.setSpacing(6)
        top = QHBoxLayout()
        self.heading = QLabel()
        self.heading.setObjectName("CompareHeading")
        top.addWidget(self.heading, 1)
        self.close_button = QPushButton("Close")
        self.close_button.setObjectName("FlatButton")
        self.close_button.setAccessibleName("Close the compared replies")
        self.close_button.clicked.connect(self.closeRequested)
        top.addWidget(self.close_button)
        outer.addLayout(top)
        self._scroll = QScrollArea()
        self._scroll.setWidgetResizable(True)
        self._scroll.setFrameShape(QFrame.Shape.NoFrame)
        inner = QWidget()
        self._row = QBoxLayout(QBoxLayout.Direction.LeftToRight, inner)
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.setSpacing(10)
        self._scroll.setWidget(inner)
        outer.addWidget(self._scroll, 1)
        self._unsubscribe = live.subscribe(self._on_event)
        self.set_colors(colors)
        self.hide()

    # -- public ------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._running

    def catch_up(self, event: ConversationEvent) -> None:
        """An event sent before this view subscribed (it is built when a compare starts)."""
        self._on_event(event)

    def detach(self) -> None:
        self._unsubscribe()
        self._flush.stop()
        self._ticker.stop()

    def set_colors(self, colors: ThemeColors) -> None:
        self._colors = colors
        self.setStyleSheet(
            f"#CompareColumn {{ background: {colors.base}; border: 1px solid {colors.border};"
            f" border-radius: 8px; }}"
            f"#CompareTitle {{ font-weight: 600; color: {colors.text}; }}"
            f"#CompareFigures, #CompareHeading {{ color: {colors.muted}; }}"
            f"#CompareBody {{ background: {colors.base}; color: {colors.text}; }}"
        )
        for index, column in enumerate(self.columns):
            self._show_state(index, column)

    def show_versions(self, tree: ConversationTree, prompt_id: str) -> None:
        """The replies already under ``prompt_id``, side by side (read-only; each can be continued)."""
        replies = [m for m in tree.children(prompt_id) if m.is_assistant]
        targets = [
            CompareTarget(m.metadata.provider, m.metadata.model) if m.metadata else CompareTarget()
            for m in replies
        ]
        self._build(prompt_id, targets, f"{len(replies)} versions of this message")
        self._workers = ()
        self._running = False
        self._messages = [functools.partial(_branch, tree, r.id) for r in replies]
        self._states = [_ended_state(reply) for reply in replies]
        for index, column in enumerate(self.columns):
            column.show_messages(self._messages[index]())
            self._show_state(index, column)
        self._refresh_figures()
        self.show()

    # -- events ---------------------------------------------------------------------------------

    def _on_event(self, event: ConversationEvent) -> None:
        if isinstance(event, CompareStarted):
            compare = self._live.conversation.compare
            if compare is None:
                return
            self._workers = compare.workers
            self._build(event.prompt_id, list(event.targets), f"Comparing {len(event.targets)} replies")
            self._messages = [w.messages for w in self._workers]
            self._states = [WorkerState.STREAMING] * len(self._workers)
            self._running = True
            self._ticker.start()
            for index, column in enumerate(self.columns):
                self._show_state(index, column)
            self.show()
        elif isinstance(event, CompareWorkerEvent) and 0 <= event.index < len(self.columns):
            self._worker_event(event.index, event.event)
        elif isinstance(event, CompareWorkerChanged) and 0 <= event.index < len(self.columns):
            self._states[event.index] = event.state
            column = self.columns[event.index]
            if event.state.ended or event.state is not WorkerState.STREAMING:
                column.show_messages(self._messages[event.index]())
            if event.error is not None and not column.body.toPlainText().strip():
                column.body.setPlainText(event.error.message)  # no failure record to show it
            elif event.note:
                column.figures.setText(event.note)
            self._show_state(event.index, column)
        elif isinstance(event, TurnStateChanged) and self._running and event.state is not TurnState.COMPARING:
            self._running = False
            self._ticker.stop()
            self._flush_columns()
            self.heading.setText(f"{len(self.columns)} replies — continue with the one you prefer")
            for index, column in enumerate(self.columns):
                column.show_messages(self._messages[index]())
                self._show_state(index, column)
            self._refresh_figures()

    def _worker_event(self, index: int, event: object) -> None:
        column = self.columns[index]
        if isinstance(event, TextDelta):
            column.append(event.delta)
            self._dirty.add(index)
            if not self._flush.isActive():
                self._flush.start()
        elif isinstance(event, MessageChanged | MessageAdded):
            message = event.message
            if message.status is not MessageStatus.STREAMING or not message.is_assistant:
                column.show_messages(self._messages[index]())
                self._refresh_figures()

    # -- internals --------------------------------------------------------------------------------

    def _build(self, prompt_id: str, targets: Sequence[CompareTarget], heading: str) -> None:
        for column in self.columns:
            self._row.removeWidget(column)
            column.deleteLater()
        self.columns = []
        self._dirty.clear()
        self.heading.setText(heading)
        self._prompt_id = prompt_id
        for index, target in enumerate(targets):
            column = CompareColumn(index, target.display)
            column.pickRequested.connect(self._pick)
            column.stopRequested.connect(self.stopRequested)
            self._row.addWidget(column, 1)
            self.columns.append(column)
        self._fit_direction()

    def _show_state(self, index: int, column: CompareColumn) -> None:
        if index >= len(self._states):
            return
        messages = self._messages[index]() if index < len(self._messages) else []
        has_reply = any(m.text.strip() or m.tool_calls for m in messages)  # not a bare failure record
        column.set_state(self._states[index], running=self._running, has_reply=has_reply, colors=self._colors)

    def _pick(self, index: int) -> None:
        messages = self._messages[index]() if index < len(self._messages) else []
        if messages:
            self.pickRequested.emit(messages[0].id)

    def _flush_columns(self) -> None:
        dirty, self._dirty = self._dirty, set()
        for index in dirty:
            self.columns[index].flush()

    def set_price_of(self, price_of: PriceLookup) -> None:
        """The price book arrived (``MeterFeed``): every column's figures show cost from now on."""
        self.price_of = price_of
        self._refresh_figures()

    def _refresh_figures(self) -> None:
        now = datetime.now(UTC)
        for index, column in enumerate(self.columns):
            replies = [m for m in self._messages[index]() if m.is_assistant]
            column.figures.setText(usage_label(replies[-1], self.price_of, now) if replies else "")

    def _fit_direction(self) -> None:
        narrow = self.width() < NARROW_WIDTH and len(self.columns) > 1
        self._row.setDirection(
            QBoxLayout.Direction.TopToBottom if narrow else QBoxLayout.Direction.LeftToRight
        )
        for column in self.columns:
            column.body.setMinimumHeight(160 if narrow else 140)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_direction()


def _branch(tree: ConversationTree, reply_id: str) -> list[Message]:
    """The reply and what follows it on its newest branch (the version as the switcher shows it)."""
    path = tree.path(tree.newest_leaf_under(reply_id))
    return path[[m.id for m in path].index(reply_id) :]


def _ended_state(reply: Message) -> WorkerState:
    if reply.status is MessageStatus.FAILED:
        return WorkerState.FAILED
    if reply.status in (MessageStatus.CANCELLED, MessageStatus.INTERRUPTED):
        return WorkerState.CANCELLED
    return WorkerState.DONE
