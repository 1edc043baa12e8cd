"""A memory the model proposes, waiting for the user: Accept, Edit…, Decline (docs/memory.md).

It sits in the approval bar like any tool call (the turn waits for it, Stop ends it), but
its answers are the user's say over what is remembered: nothing is saved until Accept,
Edit… lets the text be changed first (the edited text is what is saved, and the model is
told it was edited), and Decline tells the model the user did not want it kept. There is no
"always": a rule may not decide what the user remembers.
"""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from threadline.core.memory import DECLINED_REASON, EDITED_FLAG, MAX_MEMORY_CHARS, MemoryScope
from threadline.core.messages import ToolCall
from threadline.engine.approval import Decision
from threadline.ui.approval.approval_call_row import ApprovalCallRow
from threadline.ui.common.theme import ThemeColors

SCOPE_WORDS = {
    MemoryScope.GLOBAL.value: "Remember for all chats",
    MemoryScope.PROJECT.value: "Remember for this project's chats",
    MemoryScope.AGENT.value: "Remember for this agent's chats",
}


def proposed_text(call: ToolCall) -> str:
    text = call.parsed_arguments().get("text")
    return text.strip() if isinstance(text, str) else ""


class MemoryProposalRow(ApprovalCallRow):
    def __init__(
        self, call: ToolCall, preview: str | None, colors: ThemeColors, parent: QWidget | None = None
    ) -> None:
        super().__init__(call, preview, colors, parent)
        self.setObjectName("MemoryProposal")
        scope = call.parsed_arguments().get("scope")
        self.what_label.setText(
            SCOPE_WORDS.get(scope if isinstance(scope, str) else "", SCOPE_WORDS["global"])
        )
        self.allow_button.setText("&Accept")
        self.allow_button.setToolTip(
            "Save this memory; it goes into the system prompt of your next chats (Alt+A)"
        )
        self.always_button.hide()
        self.reason.hide()
        self.deny_button.setText("De&cline")
        self.deny_button.setToolTip("Do not save it; the model is told you declined (Alt+C)")
        self.edit_button = QPushButton("&Edit…")
        self.edit_button.setObjectName("ApproveSecondary")
        self.edit_button.setToolTip("Change the text before saving it (Alt+E)")
        self.edit_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.edit_button.setAutoDefault(False)
        self.edit_button.clicked.connect(self.start_edit)
        answers = self.answers.layout()
        assert answers is not None
        answers.insertWidget(answers.indexOf(self.allow_button) + 1, self.edit_button)  # type: ignore[attr-defined]

    def _add_details(self, layout: QVBoxLayout, preview: str | None, colors: ThemeColors) -> None:
        self.text_label = QLabel(proposed_text(self.call) or "(no text)")
        self.text_label.setObjectName("MemoryText")
        self.text_label.setWordWrap(True)
        self.text_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.text_label)
        self.editor = QLineEdit(proposed_text(self.call))
        self.editor.setObjectName("MemoryEditor")
        self.editor.setAccessibleName("Memory text")
        self.editor.setMaxLength(MAX_MEMORY_CHARS)
        self.editor.returnPressed.connect(self.allow_once)
        self.editor.hide()
        layout.addWidget(self.editor)

    @property
    def editing(self) -> bool:
        return not self.editor.isHidden()

    def start_edit(self) -> None:
        self.text_label.hide()
        self.editor.show()
        self.edit_button.setEnabled(False)
        self.allow_button.setText("Save && &accept")
        self.editor.setFocus(Qt.FocusReason.OtherFocusReason)
        self.editor.selectAll()

    def allow_once(self) -> None:
        original = proposed_text(self.call)
        text = " ".join(self.editor.text().split()) if self.editing else original
        if not text:
            self.editor.setFocus(Qt.FocusReason.OtherFocusReason)  # nothing to save: keep editing
            return
        if text == original:
            self._decide(Decision(self.call.id, allow=True), "Accepted")
            return
        arguments = {**self.call.parsed_arguments(), "text": text, EDITED_FLAG: True}
        decision = Decision(self.call.id, allow=True, arguments=json.dumps(arguments, ensure_ascii=False))
        self._decide(decision, "Accepted, edited")

    def allow_always(self) -> None:
        self.allow_once()  # no "always" for a memory: each one is the user's own choice

    def deny(self) -> None:
        self._decide(Decision(self.call.id, allow=False, reason=DECLINED_REASON), "Declined")
