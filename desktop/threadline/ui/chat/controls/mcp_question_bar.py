"""The bar of a tab where an MCP server's tool call talks to the person: its question, and its progress.

A server may ask something in the middle of a tool call (elicitation, docs/mcp.md). Form
mode shows the server's message and its schema as a form (``ElicitationForm``) with
Accept / Decline / Cancel; URL mode shows the page's host in bold and the whole address
below it, with "Open in browser" / Decline / Cancel. Like the approval bar it sits above
the composer, not in a dialog: the conversation stays readable and the other tabs usable.

Below the question, the running call: its server and tool, a bar when the server says how
far it got of a known total (a count otherwise), its message, and Stop. After the person
agreed to open a page, the call shows "Waiting for you to finish on HOST" here until it ends.

Keyboard: Enter in a form's field accepts it, Esc stops the reply (``stopRequested``); Alt+A, Alt+D,
Alt+C and Alt+O are the buttons' mnemonics.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from threadline.ui.chat.controls.elicitation_form import ElicitationForm
from threadline.ui.common.announce import announce
from threadline.ui.common.theme import LIGHT, ThemeColors, mix


def question_stylesheet(c: ThemeColors) -> str:
    tint = mix(c.accent, c.base, 0.08 if c.dark else 0.05).name()
    edge = mix(c.accent, c.border, 0.40).name()
    return f"""
#McpQuestionBar {{ background: {tint}; border: 1px solid {edge}; border-radius: 10px; }}
#McpQuestionTitle {{ color: {c.text}; font-weight: 600; }}
#McpQuestionMessage, #ElicitationLabel {{ color: {c.text}; }}
#McpQuestionHint, #McpUrlFull, #McpRunningMessage {{ color: {c.muted}; }}
#McpUrlHost {{ color: {c.text}; font-weight: 600; }}
#McpQuestionProblem {{ color: {c.error_text}; }}
#McpRunning {{ color: {c.text}; }}
#McpPrimary {{ background: {c.accent}; color: {c.accent_text}; border: 1px solid {c.accent};
               border-radius: 6px; padding: 5px 14px; font-weight: 600; }}
#McpSecondary {{ background: {c.base}; color: {c.text}; border: 1px solid {c.border}; border-radius: 6px;
                 padding: 5px 12px; }}
#McpSecondary:hover {{ background: {c.hover}; }}
#McpPrimary:focus, #McpSecondary:focus {{ border: 2px solid {c.link}; padding: 4px 11px; }}
#ElicitationForm QLineEdit {{ background: {c.base}; color: {c.text}; border: 1px solid {c.border};
                              border-radius: 6px; padding: 3px 6px; }}
#ElicitationForm QCheckBox {{ color: {c.text}; }}
"""


def _button(text: str, primary: bool = False) -> QPushButton:
    button = QPushButton(text)
    button.setObjectName("McpPrimary" if primary else "McpSecondary")
    return button


class McpQuestionBar(QFrame):
    answered = Signal(str, dict)  # action ("accept", "decline", "cancel"), form values
    stopRequested = Signal()

    def __init__(self, colors: ThemeColors = LIGHT, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("McpQuestionBar")
        self.setAccessibleName("MCP server")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 12, 12)
        layout.setSpacing(8)

        self.question = QWidget()
        q = QVBoxLayout(self.question)
        q.setContentsMargins(0, 0, 0, 0)
        q.setSpacing(6)
        head = QHBoxLayout()
        self.title = QLabel()
        self.title.setObjectName("McpQuestionTitle")
        head.addWidget(self.title)
        hint = QLabel("Waiting for you · Esc stops the reply")
        hint.setObjectName("McpQuestionHint")
        head.addWidget(hint, 1)
        q.addLayout(head)
        self.message = QLabel()
        self.message.setObjectName("McpQuestionMessage")
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        q.addWidget(self.message)
        self.body = QVBoxLayout()
        q.addLayout(self.body)
        self.problem = QLabel()
        self.problem.setObjectName("McpQuestionProblem")
        self.problem.setWordWrap(True)
        self.problem.hide()
        q.addWidget(self.problem)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.cancel_button = _button("&Cancel")
        self.cancel_button.setToolTip("Cancel: the server stops asking and goes on without an answer")
        self.decline_button = _button("&Decline")
        self.decline_button.setToolTip("Say no: the server is told you declined")
        self.accept_button = _button("&Accept", primary=True)
        for button in (self.cancel_button, self.decline_button, self.accept_button):
            buttons.addWidget(button)
        self.cancel_button.clicked.connect(lambda: self._answer("cancel"))
        self.decline_button.clicked.connect(lambda: self._answer("decline"))
        self.accept_button.clicked.connect(lambda: self._answer("accept"))
        q.addLayout(buttons)
        layout.addWidget(self.question)
        self.question.hide()

        self.running = QWidget()
        r = QHBoxLayout(self.running)
        r.setContentsMargins(0, 0, 0, 0)
        self.running_label = QLabel()
        self.running_label.setObjectName("McpRunning")
        r.addWidget(self.running_label)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(220)
        self.progress.setTextVisible(False)
        self.progress.setAccessibleName("Tool progress")
        r.addWidget(self.progress)
        self.running_message = QLabel()
        self.running_message.setObjectName("McpRunningMessage")
        r.addWidget(self.running_message, 1)
        self.stop_button = _button("S&top")
        self.stop_button.setToolTip("Stop the reply; the server is told to cancel the call (Esc)")
        self.stop_button.clicked.connect(self.stopRequested)
        r.addWidget(self.stop_button)
        layout.addWidget(self.running)
        self.running.hide()

        self.form: ElicitationForm | None = None
        self.url_host: QLabel | None = None
        self.set_colors(colors)
        self.hide()

    def set_colors(self, colors: ThemeColors) -> None:
        self.setStyleSheet(question_stylesheet(colors))

    # -- the question ---------------------------------------------------------------------------

    def ask_form(self, server: str, tool: str, message: str, schema: dict[str, Any]) -> None:
        self._clear_body()
        self._head(server, tool, message)
        self.form = ElicitationForm(schema)
        self.body.addWidget(self.form)
        self.accept_button.setText("&Accept")
        self.accept_button.setToolTip("Send these values to the server")
        self._show_question(f"{server} asks: {message}")

    def ask_url(self, server: str, tool: str, message: str, host: str, url: str) -> None:
        self._clear_body()
        self._head(server, tool, message)
        box = QWidget()
        b = QVBoxLayout(box)
        b.setContentsMargins(0, 0, 0, 0)
        b.setSpacing(2)
        self.url_host = QLabel(f"Opens a page on {host}")
        self.url_host.setObjectName("McpUrlHost")
        self.url_host.setTextFormat(Qt.TextFormat.PlainText)
        full = QLabel(url)
        full.setObjectName("McpUrlFull")
        full.setTextFormat(Qt.TextFormat.PlainText)
        full.setWordWrap(True)
        full.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        b.addWidget(self.url_host)
        b.addWidget(full)
        self.body.addWidget(box)
        self.accept_button.setText("&Open in browser")
        self.accept_button.setToolTip(f"Open {url} in your browser")
        self._show_question(f"{server} asks to open a page on {host}: {message}")

    def ask_sign_in(self, server: str, host: str, url: str) -> None:
        self._clear_body()
        self.title.setText(f"{server} needs you to sign in")
        self.message.setText(f"Sign in on {host} in your browser; the reply goes on once you are signed in.")
        self.problem.hide()
        self.accept_button.setText("&Sign in")
        self.accept_button.setToolTip(f"Open the sign-in page on {host} in your browser")
        self.decline_button.hide()
        self._show_question(f"{server} needs you to sign in")

    def _head(self, server: str, tool: str, message: str) -> None:
        self.title.setText(f"{server} asks" + (f" (while running {tool})" if tool else ""))
        self.message.setText(message)
        self.problem.hide()

    def _show_question(self, spoken: str) -> None:
        self.question.show()
        self.show()
        announce(self, spoken)

    def focus_first(self) -> None:
        first = self.form.first_field() if self.form is not None else None
        (first or self.accept_button).setFocus(Qt.FocusReason.OtherFocusReason)

    def _answer(self, action: str) -> None:
        values: dict[str, Any] = {}
        if action == "accept" and self.form is not None:
            problems = self.form.problems()
            if problems:
                self.problem.setText(" ".join(problems))
                self.problem.show()
                announce(self, self.problem.text(), assertive=True)
                return
            values = self.form.values()
        self.end_question()
        self.answered.emit(action, values)

    def end_question(self) -> None:
        self._clear_body()
        self.question.hide()
        self._fit()

    @property
    def asking(self) -> bool:
        return not self.question.isHidden()

    def _clear_body(self) -> None:
        self.decline_button.show()
        while self.body.count():
            item = self.body.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self.form = None
        self.url_host = None

    # -- the running call -----------------------------------------------------------------------

    def show_running(self, label: str, progress: float, total: float | None, message: str) -> None:
        """A call's state: ``total`` known shows a bar, otherwise a count (or a busy bar when 0)."""
        self.running_label.setText(label)
        if total is not None and total > 0:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(1000 * min(1.0, progress / total)))
            count = f"{progress:g} of {total:g}"
        else:
            self.progress.setRange(0, 0)
            count = f"{progress:g}" if progress else ""
        self.running_message.setText(" · ".join(p for p in (count, message) if p))
        self.progress.setAccessibleDescription(self.running_message.text())
        self.running.show()
        self.show()

    def end_running(self) -> None:
        self.running.hide()
        self._fit()

    def _fit(self) -> None:
        if self.question.isHidden() and self.running.isHidden():
            self.hide()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.stopRequested.emit()
            return
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.asking and self.form is not None:
            self._answer("accept")
            return
        super().keyPressEvent(event)
