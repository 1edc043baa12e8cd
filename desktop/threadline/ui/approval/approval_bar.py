"""The inline approval prompt of a tab: the tool calls a turn is waiting on, answered in place.

Not a modal dialog: the conversation stays readable and scrollable above it, and
other tabs stay usable. The bar lists one ``ApprovalCallRow`` per call; each is
answered on its own (Allow once / Always allow / Deny with a reason), or all at
once with Allow all / Deny all when a round has several. When every call has an
answer the bar emits ``decided`` with the decisions in call order and hides.

Keyboard: Tab moves through the answers, Alt+A / Alt+W / Alt+D answer the first
open call (Qt's mnemonics; when several rows share one, it moves between them),
Enter in a reason field denies, Esc stops the turn (``stopRequested``).

The bar keeps no state beyond the request it shows; the tab owns the waiting.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from threadline.core.memory import PROPOSE_MEMORY
from threadline.core.messages import ToolCall
from threadline.engine.approval import Decision
from threadline.ui.approval.approval_call_row import ApprovalCallRow
from threadline.ui.approval.memory_proposal_row import MemoryProposalRow
from threadline.ui.common.announce import announce
from threadline.ui.common.theme import LIGHT, ThemeColors, mix


def approval_stylesheet(c: ThemeColors) -> str:
    warm = mix(c.warning, c.base, 0.10 if c.dark else 0.07).name()
    warm_border = mix(c.warning, c.border, 0.45).name()
    return f"""
#ApprovalBar {{ background: {warm}; border: 1px solid {warm_border}; border-radius: 10px; }}
#ApprovalTitle {{ color: {c.text}; font-weight: 600; }}
#ApprovalHint {{ color: {c.muted}; }}
#ApprovalDot {{ background: {c.warning}; border-radius: 4px; }}
#ApprovalScroll, #ApprovalRows {{ background: transparent; border: none; }}
#ApprovalCall {{ background: {c.base}; border: 1px solid {c.border}; border-radius: 8px; }}
#ApprovalCall[answered="true"] {{ background: transparent; }}
#ApprovalCall[single="true"] {{ background: transparent; border: none; }}
#ToolName {{ color: {c.text}; background: {c.inline_code_bg}; border-radius: 4px; padding: 1px 6px;
            font-family: monospace; font-weight: 600; }}
#ToolWhat {{ color: {c.muted}; }}
#ToolNote {{ color: {c.muted}; }}
#ToolOutcome[allowed="true"] {{ color: {c.success}; font-weight: 600; }}
#ToolOutcome[allowed="false"] {{ color: {c.error_text}; font-weight: 600; }}
#CodeBox {{ background: {c.code_bg}; color: {c.text}; border: 1px solid {c.code_border}; border-radius: 6px;
            selection-background-color: {c.selection}; }}
#DenyReason {{ background: {c.base}; color: {c.text}; border: 1px solid {c.border}; border-radius: 6px;
               padding: 4px 8px; selection-background-color: {c.selection}; }}
#DenyReason:focus {{ border-color: {c.accent}; }}
#ApprovePrimary {{ background: {c.accent}; color: {c.accent_text}; border: 1px solid {c.accent};
                   border-radius: 6px; padding: 5px 14px; font-weight: 600; }}
#ApprovePrimary:hover {{ background: {mix("#ffffff", c.accent, 0.12).name()}; }}
#ApproveSecondary {{ background: {c.base}; color: {c.text}; border: 1px solid {c.border}; border-radius: 6px;
                     padding: 5px 12px; }}
#ApproveSecondary:hover {{ background: {c.hover}; }}
#ApprovePrimary:focus, #ApproveSecondary:focus {{ border: 2px solid {c.link}; padding: 4px 11px; }}
"""


class _FitScrollArea(QScrollArea):
    """Scrolls the rows only when they are taller than the room the tab gives the bar."""

    def sizeHint(self) -> QSize:
        inner = self.widget()
        height = inner.sizeHint().height() if inner is not None else 0
        return QSize(super().sizeHint().width(), min(height + 2, self.maximumHeight()))

    def minimumSizeHint(self) -> QSize:
        return QSize(0, min(self.sizeHint().height(), 120))


class ApprovalBar(QFrame):
    decided = Signal(list)  # list[Decision], in call order
    stopRequested = Signal()

    def __init__(self, colors: ThemeColors = LIGHT, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ApprovalBar")
        self.setAccessibleName("Tool approval")
        self._colors = colors
        self.rows: list[ApprovalCallRow] = []

        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 12, 12)
        layout.setSpacing(8)

        head = QHBoxLayout()
        head.setSpacing(8)
        dot = QLabel()
        dot.setObjectName("ApprovalDot")
        dot.setFixedSize(8, 8)
        head.addWidget(dot, 0, Qt.AlignmentFlag.AlignVCenter)
        self.title = QLabel()
        self.title.setObjectName("ApprovalTitle")
        head.addWidget(self.title)
        self.hint = QLabel("Waiting for you · Esc stops the reply")
        self.hint.setObjectName("ApprovalHint")
        head.addWidget(self.hint, 1)
        self.allow_all_button = QPushButton("Allow a&ll")
        self.allow_all_button.setObjectName("ApproveSecondary")
        self.allow_all_button.setToolTip("Allow every call below once (Alt+L)")
        self.allow_all_button.clicked.connect(self.allow_all)
        self.deny_all_button = QPushButton("De&ny all")
        self.deny_all_button.setObjectName("ApproveSecondary")
        self.deny_all_button.setToolTip("Deny every call that has no answer yet (Alt+N)")
        self.deny_all_button.clicked.connect(self.deny_all)
        for b in (self.allow_all_button, self.deny_all_button):
            b.setCursor(Qt.CursorShape.PointingHandCursor)
            b.setAutoDefault(False)
            head.addWidget(b)
        layout.addLayout(head)

        self.rows_area = _FitScrollArea()
        self.rows_area.setObjectName("ApprovalScroll")
        self.rows_area.setAccessibleName("Tool calls waiting for approval")
        self.rows_area.setWidgetResizable(True)
        self.rows_area.setFrameShape(QFrame.Shape.NoFrame)
        self.rows_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._rows_widget = QWidget()
        self._rows_widget.setObjectName("ApprovalRows")
        self._rows_layout = QVBoxLayout(self._rows_widget)
        self._rows_layout.setContentsMargins(0, 0, 0, 0)
        self._rows_layout.setSpacing(8)
        self.rows_area.setWidget(self._rows_widget)
        layout.addWidget(self.rows_area)
        self.setStyleSheet(approval_stylesheet(colors))
        self.hide()

    # -- the request ------------------------------------------------------------------------

    @property
    def pending(self) -> bool:
        return bool(self.rows)

    def ask(self, calls: Sequence[ToolCall], previews: Mapping[str, str | None], asker: str = "") -> None:
        """Show ``calls`` (policy names) with their previews (a diff for writes) and wait for answers.

        ``asker`` names who asks when it is not simply "the assistant": in a compare, the
        model or agent of the column whose reply wants the tools."""
        self._clear_rows()
        for call in calls:
            kind = MemoryProposalRow if call.name == PROPOSE_MEMORY else ApprovalCallRow
            row = kind(call, previews.get(call.id), self._colors)
            row.decided.connect(self._row_decided)
            self._rows_layout.addWidget(row)
            self.rows.append(row)
        several = len(self.rows) > 1
        for row in self.rows:
            row.set_single(not several)
        # One primary button in view: "Allow all" for a round, "Allow once" for a lone call.
        self.allow_all_button.setObjectName("ApprovePrimary" if several else "ApproveSecondary")
        self.allow_all_button.style().unpolish(self.allow_all_button)
        self.allow_all_button.style().polish(self.allow_all_button)
        title = self._title(calls)
        self.title.setText(title.replace("The assistant", asker, 1) if asker else title)
        self.allow_all_button.setVisible(several)
        self.deny_all_button.setVisible(several)
        self.show()
        self.rows_area.updateGeometry()
        # Assertive: the reply is stopped until the user answers, whatever they were reading.
        announce(self, f"{self.title.text()}. {self.hint.text()}", assertive=True)

    def clear(self) -> None:
        """Forget the request (answered, stopped, or the tab is closing)."""
        self._clear_rows()
        self.hide()

    def _clear_rows(self) -> None:
        for row in self.rows:
            row.decided.disconnect(self._row_decided)
            self._rows_layout.removeWidget(row)
            row.hide()
            row.deleteLater()
        self.rows = []

    @staticmethod
    def _title(calls: Sequence[ToolCall]) -> str:
        if len(calls) > 1:
            return f"The assistant wants to use {len(calls)} tools"
        name = calls[0].name if calls else ""
        if name == "shell":
            return "The assistant wants to run a command"
        if name == "write_file":
            return "The assistant wants to change a file"
        if name == PROPOSE_MEMORY:
            return "The assistant suggests something to remember"
        return "The assistant wants to use a tool"

    def first_open_row(self) -> ApprovalCallRow | None:
        return next((r for r in self.rows if r.decision is None), None)

    def focus_first(self) -> None:
        row = self.first_open_row()
        if row is not None:
            row.allow_button.setFocus(Qt.FocusReason.OtherFocusReason)

    def set_max_rows_height(self, height: int) -> None:
        self.rows_area.setMaximumHeight(max(120, height))
        self.rows_area.updateGeometry()

    # -- answers ------------------------------------------------------------------------------

    def allow_all(self) -> None:
        """Allow every tool call once; a memory proposal still waits for its own answer."""
        for row in list(self.rows):
            if row.decision is None and not isinstance(row, MemoryProposalRow):
                row.allow_once()

    def deny_all(self) -> None:
        for row in list(self.rows):
            if row.decision is None:
                row.deny()

    def _row_decided(self, _decision: Decision) -> None:
        rows = self.rows
        if any(r.decision is None for r in rows):
            focused = QApplication.focusWidget()
            if focused is None or not self.isAncestorOf(focused) or not focused.isVisible():
                self.focus_first()
            return
        decisions = [r.decision for r in rows if r.decision is not None]
        self.decided.emit(decisions)  # the tab clears the bar (and moves the focus on)
        if self.rows is rows:
            self.clear()

    # -- look and keys ---------------------------------------------------------------------------

    def set_colors(self, colors: ThemeColors) -> None:
        if colors == self._colors:
            return
        self._colors = colors
        self.setStyleSheet(approval_stylesheet(colors))
        for row in self.rows:
            row.set_colors(colors)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            focused = QApplication.focusWidget()
            if isinstance(focused, QLineEdit) and focused.text():
                focused.clear()  # Esc first clears a reason being typed
            else:
                self.stopRequested.emit()
            event.accept()
            return
        super().keyPressEvent(event)
