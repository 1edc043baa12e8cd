"""One tool call waiting for the user: what it is, what it would do, and the three answers.

Shows the call under its policy name (``shell``, ``write_file``, ``git/git_status``),
then what matters for deciding: the command line of a shell call, the diff a
``write_file`` would make, or the arguments as indented JSON. Allow once, Always
allow and Deny answer it; Deny takes an optional reason the model will read
(Enter in the reason field denies). Once answered, the buttons give way to a
one-line summary of the answer.
"""

from __future__ import annotations

import json

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from threadline.core.messages import ToolCall
from threadline.engine.approval import Decision
from threadline.ui.common.code_box import CodeBox
from threadline.ui.common.theme import ThemeColors

MAX_ARGUMENT_CHARS = 20_000


def pretty_arguments(arguments: str) -> str:
    """Arguments for reading: ``name: value`` lines when flat and short, else indented JSON."""
    try:
        value = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return arguments
    if value in ({}, None):
        return ""
    flat = isinstance(value, dict) and all(
        isinstance(v, int | float | bool) or (isinstance(v, str) and "\n" not in v and len(v) <= 200)
        for v in value.values()
    )
    if flat:
        text = "\n".join(f"{k}: {v if isinstance(v, str) else json.dumps(v)}" for k, v in value.items())
    else:
        text = json.dumps(value, indent=2, ensure_ascii=False)
    return text if len(text) <= MAX_ARGUMENT_CHARS else text[:MAX_ARGUMENT_CHARS] + "\n…"


def describe_call(call: ToolCall) -> str:
    """A short phrase for what the call would do, shown next to its name."""
    args = call.parsed_arguments()

    def arg(key: str) -> str:
        value = args.get(key)
        return value if isinstance(value, str) else ""

    if call.name == "shell":
        return "Run a command"
    if call.name == "read_file":
        return f"Read {arg('path')}" if arg("path") else "Read a file"
    if call.name == "list_directory":
        return f"List {arg('path')}" if arg("path") else "List the allowed folder"
    if call.name == "search_files":
        return f"Search for “{arg('query')}”" if arg("query") else "Search in files"
    if call.name == "write_file":
        path = args.get("path")
        return f"Write {path}" if isinstance(path, str) and path else "Write a file"
    if "/" in call.name:
        server, tool = call.name.split("/", 1)
        return f"Call “{tool}” on the {server} server"
    return "Use a tool"


class ApprovalCallRow(QFrame):
    decided = Signal(object)  # Decision

    def __init__(
        self, call: ToolCall, preview: str | None, colors: ThemeColors, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("ApprovalCall")
        self.call = call
        self.decision: Decision | None = None
        self.boxes: list[CodeBox] = []

        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 12, 10)
        layout.setSpacing(6)

        head = QHBoxLayout()
        head.setSpacing(8)
        self.name_label = QLabel(call.name)
        self.name_label.setObjectName("ToolName")
        self.name_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        head.addWidget(self.name_label)
        self.what_label = QLabel(describe_call(call))
        self.what_label.setObjectName("ToolWhat")
        self.what_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        head.addWidget(self.what_label, 1)
        self.outcome = QLabel()
        self.outcome.setObjectName("ToolOutcome")
        self.outcome.hide()
        head.addWidget(self.outcome)
        layout.addLayout(head)

        self._add_details(layout, preview, colors)

        self.answers = QWidget()
        answers = QHBoxLayout(self.answers)
        answers.setContentsMargins(0, 2, 0, 0)
        answers.setSpacing(8)
        self.allow_button = QPushButton("&Allow once")
        self.allow_button.setObjectName("ApprovePrimary")
        self.allow_button.setToolTip("Run this call now; ask again next time (Alt+A)")
        self.always_button = QPushButton("Al&ways allow")
        self.always_button.setObjectName("ApproveSecondary")
        self.always_button.setToolTip(
            "Run it and allow this exact command from now on (Alt+W)"
            if call.name == "shell"
            else f"Run it and allow {call.name} from now on, without asking (Alt+W)"
        )
        self.reason = QLineEdit()
        self.reason.setObjectName("DenyReason")
        self.reason.setAccessibleName(f"Reason for denying {call.name}")
        self.reason.setPlaceholderText("Reason for denying (optional, the model sees it)")
        self.reason.setClearButtonEnabled(True)
        self.reason.returnPressed.connect(self.deny)
        self.deny_button = QPushButton("&Deny")
        self.deny_button.setObjectName("ApproveSecondary")
        self.deny_button.setToolTip("Refuse this call; the model is told, with your reason (Alt+D)")
        for b in (self.allow_button, self.always_button, self.deny_button):
            b.setCursor(Qt.CursorShape.PointingHandCursor)
            b.setAutoDefault(False)
        self.allow_button.clicked.connect(self.allow_once)
        self.always_button.clicked.connect(self.allow_always)
        self.deny_button.clicked.connect(self.deny)
        answers.addWidget(self.allow_button)
        answers.addWidget(self.always_button)
        answers.addSpacing(12)
        answers.addWidget(self.reason, 1)
        answers.addWidget(self.deny_button)
        layout.addWidget(self.answers)
        self.setFocusProxy(self.allow_button)

    def _add_details(self, layout: QVBoxLayout, preview: str | None, colors: ThemeColors) -> None:
        args = self.call.parsed_arguments()
        command = args.get("command")
        if self.call.name == "shell" and isinstance(command, str):
            self._box(layout, command, colors, max_lines=6)
            extra = []
            if isinstance(args.get("cwd"), str) and args["cwd"]:
                extra.append(f"in {args['cwd']}")
            if isinstance(args.get("timeout"), int | float):
                extra.append(f"time limit {args['timeout']:g} s")
            if extra:
                self._note(layout, " · ".join(extra))
            return
        if preview:
            self._box(layout, preview, colors, diff=True, wrap=False, max_lines=14)
            return
        text = pretty_arguments(self.call.arguments)
        if text:
            self._box(layout, text, colors, max_lines=10)
        else:
            self._note(layout, "No arguments.")

    def _box(self, layout: QVBoxLayout, text: str, colors: ThemeColors, **options: object) -> None:
        box = CodeBox(text, colors, **options)  # type: ignore[arg-type]
        box.setAccessibleName(f"{self.call.name} {'changes' if options.get('diff') else 'arguments'}")
        self.boxes.append(box)
        layout.addWidget(box)

    def _note(self, layout: QVBoxLayout, text: str) -> None:
        label = QLabel(text)
        label.setObjectName("ToolNote")
        label.setWordWrap(True)
        layout.addWidget(label)

    def set_single(self, single: bool) -> None:
        """A lone call sits flat in the bar, with Allow once as the primary button."""
        self.setProperty("single", "true" if single else "false")
        layout = self.layout()
        if layout is not None:
            layout.setContentsMargins(*((2, 4, 2, 0) if single else (12, 10, 12, 10)))
        self.allow_button.setObjectName("ApprovePrimary" if single else "ApproveSecondary")
        for w in (self, self.allow_button):
            w.style().unpolish(w)
            w.style().polish(w)

    def set_colors(self, colors: ThemeColors) -> None:
        for box in self.boxes:
            box.set_colors(colors)

    # -- answers ------------------------------------------------------------------------

    def allow_once(self) -> None:
        self._decide(Decision(self.call.id, allow=True), "Allowed once")

    def allow_always(self) -> None:
        self._decide(Decision(self.call.id, allow=True, always=True), "Always allowed")

    def deny(self) -> None:
        reason = self.reason.text().strip()
        self._decide(
            Decision(self.call.id, allow=False, reason=reason), f"Denied — {reason}" if reason else "Denied"
        )

    def _decide(self, decision: Decision, summary: str) -> None:
        if self.decision is not None:
            return
        self.decision = decision
        self.answers.hide()
        self.outcome.setText(summary)
        self.outcome.setProperty("allowed", "true" if decision.allow else "false")
        self.outcome.style().unpolish(self.outcome)
        self.outcome.style().polish(self.outcome)
        self.outcome.show()
        self.setProperty("answered", "true")
        self.style().unpolish(self)
        self.style().polish(self)
        self.decided.emit(decision)
