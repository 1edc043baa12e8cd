"""File → Export…: which chats (this one, the selected ones, everything) and in which format.

The dialog only asks; ``export_chats`` then asks where to save (a native save dialog)
and runs ``engine.library.export`` as a task. The file appears only once it is complete, and
the status bar says where it went or what went wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import (
    QAbstractButton,
    QButtonGroup,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QGroupBox,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from threadline.engine.exporting import ExportFormat
from threadline.ui.common.tasks import spawn

if TYPE_CHECKING:
    from threadline.engine.api import EngineApi

FORMATS = (
    (ExportFormat.MARKDOWN, "Markdown — the conversation as shown"),
    (ExportFormat.MARKDOWN_BRANCHES, "Markdown — every version of every message"),
    (ExportFormat.JSON, "Threadline JSON — everything, to import again"),
)
FILTERS = {".md": "Markdown (*.md)", ".json": "Threadline JSON (*.json)"}


class ExportDialog(QDialog):
    """Scope and format; ``session_ids()`` and ``export_format()`` read the choice."""

    def __init__(
        self,
        parent: QWidget | None,
        *,
        current: str | None,
        selected: Sequence[str],
        prefer_selected: bool = False,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("ExportDialog")
        self.setWindowTitle("Export chats")
        self._current = current
        self._selected = list(selected)
        self._thinking_choice = False
        """The box's state for Markdown, kept while JSON shows it ticked and disabled."""
        layout = QVBoxLayout(self)

        scope_box = QGroupBox("Chats")
        scope_layout = QVBoxLayout(scope_box)
        self.scope = QButtonGroup(self)
        self.this_chat = QRadioButton("This chat")
        self.this_chat.setEnabled(current is not None)
        count = len(self._selected)
        self.selected_chats = QRadioButton(f"The selected chats ({count})")
        self.selected_chats.setEnabled(count > 1)
        self.everything = QRadioButton("Every chat, archived ones too")
        for button in (self.this_chat, self.selected_chats, self.everything):
            self.scope.addButton(button)
            scope_layout.addWidget(button)
        if prefer_selected and count > 1:
            self.selected_chats.setChecked(True)
        elif current is not None:
            self.this_chat.setChecked(True)
        else:
            self.everything.setChecked(True)
        layout.addWidget(scope_box)

        format_box = QGroupBox("Format")
        format_layout = QVBoxLayout(format_box)
        self.formats = QButtonGroup(self)
        self._format_buttons: dict[ExportFormat, QRadioButton] = {}
        for fmt, label in FORMATS:
            button = QRadioButton(label)
            self._format_buttons[fmt] = button
            self.formats.addButton(button)
            format_layout.addWidget(button)
        self._format_buttons[ExportFormat.MARKDOWN].setChecked(True)
        self.include_thinking = QCheckBox("Include thinking")
        self.include_thinking.setObjectName("IncludeThinking")
        self.include_thinking.setToolTip(
            "Each reply's reasoning as a quote block above it. Threadline JSON always keeps it."
        )
        format_layout.addWidget(self.include_thinking)
        self.formats.buttonToggled.connect(self._format_toggled)
        layout.addWidget(format_box)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.export_button = buttons.addButton("Export…", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def session_ids(self) -> list[str] | None:
        """The chats chosen; ``None`` for every chat."""
        if self.this_chat.isChecked() and self._current is not None:
            return [self._current]
        if self.selected_chats.isChecked():
            return list(self._selected)
        return None

    def export_format(self) -> ExportFormat:
        return next(fmt for fmt, button in self._format_buttons.items() if button.isChecked())

    def thinking_included(self) -> bool:
        """Whether replies' reasoning goes in: the box for Markdown; always for JSON."""
        return self.export_format() is ExportFormat.JSON or self.include_thinking.isChecked()

    def _format_toggled(self, button: QAbstractButton, checked: bool) -> None:
        """The box only means something for Markdown: JSON carries reasoning anyway, so the
        box is shown ticked and disabled there, and the person's own choice comes back after."""
        if not checked:
            return
        is_json = button is self._format_buttons[ExportFormat.JSON]
        if is_json and self.include_thinking.isEnabled():
            self._thinking_choice = self.include_thinking.isChecked()
            self.include_thinking.setChecked(True)
        elif not is_json and not self.include_thinking.isEnabled():
            self.include_thinking.setChecked(self._thinking_choice)
        self.include_thinking.setEnabled(not is_json)


def suggested_name(fmt: ExportFormat, session_ids: list[str] | None, title: str) -> str:
    if session_ids is None:
        stem = "Threadline chats"
    elif len(session_ids) == 1:
        stem = "".join(ch if ch.isalnum() or ch in " -_" else "_" for ch in title).strip() or "chat"
    else:
        stem = f"{len(session_ids)} chats"
    return stem + fmt.suffix


def export_chats(
    parent: QWidget,
    engine: EngineApi,
    *,
    current: str | None,
    current_title: str,
    selected: Sequence[str],
    prefer_selected: bool,
    tell: Callable[[str], None],
) -> None:
    """Ask what to export and where, then export it as a task; ``tell`` shows the outcome."""
    dialog = ExportDialog(parent, current=current, selected=selected, prefer_selected=prefer_selected)
    if dialog.exec() != QDialog.DialogCode.Accepted:
        return
    session_ids, fmt = dialog.session_ids(), dialog.export_format()
    thinking = dialog.thinking_included()
    name = suggested_name(fmt, session_ids, current_title)
    path, _ = QFileDialog.getSaveFileName(parent, "Export chats", name, FILTERS[fmt.suffix])
    if not path:
        return
    target = Path(path)
    if not target.suffix:
        target = target.with_suffix(fmt.suffix)
    tell(f"Exporting to {target}…")
    spawn(
        engine.library.export(target, fmt, session_ids, include_thinking=thinking),
        on_done=lambda _none: tell(f"Exported to {target}"),
        tell=parent,
        name="export",
    )
