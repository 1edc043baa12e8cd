"""Settings → Data: the space the file snapshots take, and dropping the old ones.

The snapshots are the contents of the files the assistant's tools changed, kept on this
computer so their changes can be undone (docs/workspace.md, "Storage"). This section shows
their size (``engine.workspace.space_used``) and drops the ones only older changes refer to
(``drop_snapshots_older_than``) after the user confirmed: the changes stay listed, but
those can no longer be undone.
"""

from __future__ import annotations

import shiboken6
from PySide6.QtWidgets import QHBoxLayout, QLabel, QMessageBox, QPushButton, QSpinBox, QVBoxLayout, QWidget

from threadline.engine.capability_apis import WorkspaceApi
from threadline.ui.common.message_bridge import MessageLevel, UserMessage
from threadline.ui.common.tasks import spawn
from threadline.ui.settings.page_layout import hint_label, section_title
from threadline.workspace.blobs import SpaceUsed

SNAPSHOTS_HINT = (
    "The contents of files the assistant's tools changed, kept on this computer so their "
    "changes can be undone. Dropping old snapshots keeps the list of changes, but those "
    "changes can no longer be undone."
)
DEFAULT_DAYS = 30


def size_words(size: int) -> str:
    """1,234,567 bytes as "1.2 MB" (decimal units, as file managers show them)."""
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{int(value)} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{size} bytes"  # pragma: no cover  (the loop always returns)


def space_words(space: SpaceUsed) -> str:
    if space.blobs == 0:
        return "No snapshots are kept."
    noun = "snapshot" if space.blobs == 1 else "snapshots"
    return f"{size_words(space.bytes)} in {space.blobs:,} {noun}."


class SnapshotsSection(QWidget):
    """Space used and "Drop snapshots older than N days"."""

    def __init__(self, workspace: WorkspaceApi, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("SnapshotsSection")
        self._workspace = workspace
        self.confirm: QMessageBox | None = None
        """The question asked before dropping (tests answer it)."""
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(section_title("Snapshots of changed files"))
        layout.addWidget(hint_label(SNAPSHOTS_HINT))
        self.space = QLabel("Measuring\u2026")
        self.space.setObjectName("SnapshotSpace")
        self.space.setAccessibleName("Space used by snapshots")
        layout.addWidget(self.space)
        row = QHBoxLayout()
        row.addWidget(QLabel("Drop snapshots older than"))
        self.days = QSpinBox()
        self.days.setObjectName("SnapshotDays")
        self.days.setRange(0, 3650)
        self.days.setValue(DEFAULT_DAYS)
        self.days.setSuffix(" days")
        self.days.setAccessibleName("Drop snapshots older than (days)")
        row.addWidget(self.days)
        self.drop_button = QPushButton("Drop\u2026")
        self.drop_button.setObjectName("SecondaryButton")
        self.drop_button.clicked.connect(self.ask_drop)
        row.addWidget(self.drop_button)
        row.addStretch(1)
        layout.addLayout(row)
        self.message = QLabel()
        self.message.setObjectName("SnapshotMessage")
        self.message.setWordWrap(True)
        layout.addWidget(self.message)
        self.refresh()

    def refresh(self) -> None:
        spawn(self._workspace.space_used(), tell=self, on_done=self._show_space, name="snapshot-space")

    def _show_space(self, space: SpaceUsed) -> None:
        if shiboken6.isValid(self):
            self.space.setText(space_words(space))

    def show_user_message(self, message: UserMessage) -> None:
        """This section's line (docs/ui-layout.md, "Telling the user")."""
        if shiboken6.isValid(self):
            self.message.setObjectName("FormError" if message.level is not MessageLevel.INFO else "")
            self.message.setText(message.text)

    def ask_drop(self) -> None:
        days = self.days.value()
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Drop snapshots",
            f"Drop the snapshots of file changes older than {days} days? Those changes stay "
            "listed but can no longer be undone.",
            QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setObjectName("DropSnapshotsQuestion")
        drop = box.addButton("Drop snapshots", QMessageBox.ButtonRole.AcceptRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.buttonClicked.connect(lambda button: self._drop(days) if button is drop else None)
        self.confirm = box
        box.open()

    def _drop(self, days: int) -> None:
        self.drop_button.setEnabled(False)

        def done(count: int) -> None:
            if not shiboken6.isValid(self):
                return
            self.drop_button.setEnabled(True)
            noun = "snapshot" if count == 1 else "snapshots"
            self.message.setText(f"Dropped {count:,} {noun}." if count else "No snapshot was that old.")
            self.refresh()

        def failed(_err: BaseException) -> None:
            if shiboken6.isValid(self):
                self.drop_button.setEnabled(True)

        spawn(
            self._workspace.drop_snapshots_older_than(days),
            tell=self,
            on_done=done,
            on_failed=failed,
            context="Snapshots not dropped",
        )
