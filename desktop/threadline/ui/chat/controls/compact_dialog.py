"""The "Compact conversation" dialog: how much to keep verbatim, and what the summary should keep.

Compaction writes a summary of the older part of the chat; later requests carry the
summary instead of those messages, which stay in the chat (dimmed) and in search. The
person chooses how many of the latest turns are still sent word for word, and may steer
the summary ("keep every file name and decision"). The dialog only asks: the tab runs
the compaction and shows its progress and any failure in its banner.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QPlainTextEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

DEFAULT_KEEP_TURNS = 2
MAX_KEEP_TURNS = 50
INSTRUCTIONS_HINT = "Optional: what the summary must keep, e.g. “every file name and decision”"


@dataclass(frozen=True, slots=True)
class CompactChoice:
    keep_turns: int
    instructions: str


class CompactDialog(QDialog):
    """Asks how many recent turns to keep and how to steer the summary; ``choice()`` after Accept."""

    def __init__(self, parent: QWidget | None = None, *, keep_turns: int = DEFAULT_KEEP_TURNS) -> None:
        super().__init__(parent)
        self.setObjectName("CompactDialog")
        self.setWindowTitle("Compact conversation")
        self.setMinimumWidth(460)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(18, 16, 18, 14)
        layout.setSpacing(12)
        intro = QLabel(
            "Older messages are replaced by a summary in what is sent to the model. "
            "They stay in the chat, set back, and can still be searched."
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.keep = QSpinBox()
        self.keep.setObjectName("CompactKeepTurns")
        self.keep.setRange(0, MAX_KEEP_TURNS)
        self.keep.setValue(keep_turns)
        self.keep.setSuffix(" turns")
        self.keep.setAccessibleName("Recent turns to keep word for word")
        self.keep.setToolTip("0 summarises everything; a turn is one of your messages and what answered it")
        self.keep.valueChanged.connect(self._update_keep_suffix)
        keep_label = QLabel("&Keep the latest")
        keep_label.setBuddy(self.keep)
        form.addRow(keep_label, self.keep)
        self.instructions = QPlainTextEdit()
        self.instructions.setObjectName("CompactInstructions")
        self.instructions.setPlaceholderText(INSTRUCTIONS_HINT)
        self.instructions.setAccessibleName("Instructions for the summary")
        self.instructions.setTabChangesFocus(True)
        self.instructions.setFixedHeight(self.instructions.fontMetrics().lineSpacing() * 4 + 14)
        focus_label = QLabel("&Summary should")
        focus_label.setBuddy(self.instructions)
        form.addRow(focus_label, self.instructions)
        layout.addLayout(form)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.compact_button = buttons.addButton("Compact", QDialogButtonBox.ButtonRole.AcceptRole)
        self.compact_button.setObjectName("CompactButton")
        self.compact_button.setDefault(True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self._update_keep_suffix(keep_turns)
        self.keep.setFocus(Qt.FocusReason.OtherFocusReason)

    def _update_keep_suffix(self, value: int) -> None:
        self.keep.setSuffix(" turn" if value == 1 else " turns")

    def choice(self) -> CompactChoice:
        return CompactChoice(self.keep.value(), self.instructions.toPlainText().strip())
