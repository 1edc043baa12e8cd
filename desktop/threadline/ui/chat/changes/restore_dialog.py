"""The restore preview: exactly which files a restore would change, create or delete, before any is.

Given a ``RestorePlan`` it lists the clean steps grouped by what happens to each file, then
the conflicts — files someone else changed after the tool's write, each with its reason and
an unticked "Restore anyway" — and the files that cannot be restored, with why. The main
button counts what would be written ("Restore 3 files") and follows the ticks; pressing it
emits ``restoreAccepted`` with the conflicting paths the user picked (the forced set the
engine's restore takes). The same dialog previews "Undo restore": that is a plan too.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from threadline.core.file_changes import ChangeKind, RestoreAction, RestorePlan, RestoreStep
from threadline.ui.chat.changes.change_colours import change_colours
from threadline.ui.chat.changes.shown_paths import printable, shown_path
from threadline.ui.common.theme import ThemeColors

GROUPS = (
    (RestoreAction.CHANGE, "Will get their earlier content back"),
    (RestoreAction.CREATE, "Will be created again"),
    (RestoreAction.DELETE, "Will be deleted"),
)
ACTION_WORDS = {
    RestoreAction.CHANGE: "change",
    RestoreAction.CREATE: "create",
    RestoreAction.DELETE: "delete",
}


def restore_label(count: int) -> str:
    return f"Restore {count} file" if count == 1 else f"Restore {count} files"


class RestorePreviewDialog(QDialog):
    """What a restore would do; "Restore N files" emits the conflicts ticked (``restoreAccepted``)."""

    restoreAccepted = Signal(object)  # frozenset[str]: conflicting paths to restore anyway

    def __init__(
        self,
        plan: RestorePlan,
        colors: ThemeColors,
        *,
        root: str | None = None,
        title: str = "Restore files",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("RestorePreviewDialog")
        self.setWindowTitle(title)
        self.plan = plan
        self._colors = colors
        self._root = root
        self.checks: dict[str, QCheckBox] = {}
        """The "Restore anyway" box of each conflicting path."""
        self.heading = QLabel(printable(plan.description) or title, self)
        self.heading.setObjectName("SectionTitle")
        self.heading.setWordWrap(True)
        self.hint = QLabel(
            "Nothing is touched until you press Restore. What is there now is recorded first, "
            "so this restore can be undone.",
            self,
        )
        self.hint.setObjectName("Hint")
        self.hint.setWordWrap(True)
        body = QWidget()
        body.setObjectName("RestoreBody")
        self._column = QVBoxLayout(body)
        self._column.setContentsMargins(0, 0, 8, 0)
        self._column.setSpacing(4)
        self._build_sections()
        self._column.addStretch(1)
        scroll = QScrollArea(self)
        scroll.setObjectName("RestoreScroll")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(body)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setObjectName("SecondaryButton")
        self.cancel_button.clicked.connect(self.reject)
        self.restore_button = QPushButton(self)
        self.restore_button.setObjectName("PrimaryButton")
        self.restore_button.setDefault(True)
        self.restore_button.clicked.connect(self._restore)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.restore_button)
        column = QVBoxLayout(self)
        column.setContentsMargins(18, 16, 18, 14)
        column.setSpacing(8)
        column.addWidget(self.heading)
        column.addWidget(self.hint)
        column.addWidget(scroll, 1)
        column.addLayout(buttons)
        self.set_colors(colors)
        self._update_button()
        chrome = self.sizeHint().height() - scroll.sizeHint().height()
        self.resize(660, min(720, max(360, chrome + body.sizeHint().height() + 8)))

    @property
    def count(self) -> int:
        """Files the restore would write: the clean steps and the conflicts ticked."""
        return len(self.plan.clean) + len(self.forced())

    def forced(self) -> frozenset[str]:
        return frozenset(path for path, box in self.checks.items() if box.isChecked())

    def set_colors(self, colors: ThemeColors) -> None:
        self._colors = colors
        c = colors
        colours = change_colours(c, c.base)
        modified = colours.kinds[ChangeKind.MODIFIED]
        self.setStyleSheet(
            f"#RestoreBody, #RestoreScroll {{ background: {c.window}; }}"
            f"#RestoreGroup {{ color: {c.text}; font-weight: 600; padding-top: 10px; }}"
            f"#RestoreGroupNote {{ color: {c.muted}; }}"
            f"#RestoreList {{ background: {c.base}; border: 1px solid {c.border}; border-radius: 6px; }}"
            f"#RestoreRow {{ background: transparent; border: none; border-top: 1px solid {c.border}; }}"
            f'#RestoreRow[first="true"] {{ border-top: none; }}'
            f"#RestorePath {{ color: {c.text}; }}"
            f"#RestoreWhy {{ color: {c.muted}; }}"
            f"#RestoreConflictWhy {{ color: {c.warning}; }}"
            f'#RestoreAction[action="change"] {{ color: {modified}; font-weight: 600; }}'
            f'#RestoreAction[action="create"] {{ color: {colours.added}; font-weight: 600; }}'
            f'#RestoreAction[action="delete"] {{ color: {colours.removed}; font-weight: 600; }}'
            f'#RestoreAction[action="blocked"] {{ color: {c.muted}; font-weight: 600; }}'
        )

    # -- building ------------------------------------------------------------------------------

    def _build_sections(self) -> None:
        plan = self.plan
        clean = plan.clean
        if not plan.steps:
            self._group("Nothing to restore: the files are as they are recorded.")
        for action, heading in GROUPS:
            steps = [s for s in clean if s.action is action]
            if steps:
                box = self._group(f"{heading} ({len(steps)})")
                for step in steps:
                    self._row(box, step)
        if plan.conflicts:
            box = self._group(
                f"Changed since the tool wrote them ({len(plan.conflicts)})",
                "Someone else changed these files afterwards. They are left as they are unless you "
                "tick them one by one.",
            )
            for step in plan.conflicts:
                self._row(box, step, conflict=True)
        if plan.blocked:
            box = self._group(f"Cannot be restored ({len(plan.blocked)})")
            for step in plan.blocked:
                self._row(box, step, blocked=True)

    def _group(self, title: str, note: str = "") -> QVBoxLayout:
        """A heading (and a note under it) over a bordered list; returns the list's layout."""
        label = QLabel(title)
        label.setObjectName("RestoreGroup")
        self._column.addWidget(label)
        if note:
            hint = QLabel(note)
            hint.setObjectName("RestoreGroupNote")
            hint.setWordWrap(True)
            self._column.addWidget(hint)
        box = QFrame()
        box.setObjectName("RestoreList")
        rows = QVBoxLayout(box)
        rows.setContentsMargins(1, 1, 1, 1)
        rows.setSpacing(0)
        self._column.addWidget(box)
        return rows

    def _row(
        self, box: QVBoxLayout, step: RestoreStep, *, conflict: bool = False, blocked: bool = False
    ) -> None:
        row = QFrame()
        row.setObjectName("RestoreRow")
        row.setProperty("first", box.count() == 0)
        layout = QHBoxLayout(row)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.setSpacing(10)
        action = QLabel(ACTION_WORDS[step.action])
        action.setObjectName("RestoreAction")
        action.setProperty("action", step.action.value if not blocked else "blocked")
        bold = QFont(action.font())
        bold.setWeight(QFont.Weight.DemiBold)
        widest = max(QFontMetrics(bold).horizontalAdvance(w) for w in ACTION_WORDS.values())
        action.setFixedWidth(widest + 6)
        layout.addWidget(action, 0, Qt.AlignmentFlag.AlignTop)
        texts = QVBoxLayout()
        texts.setSpacing(1)
        path = QLabel(shown_path(step.path, self._root))
        path.setObjectName("RestorePath")
        path.setToolTip(shown_path(step.path))
        path.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        texts.addWidget(path)
        why = step.blocked if blocked else step.conflict if conflict else ""
        if why:
            reason = QLabel(printable(why))
            reason.setObjectName("RestoreConflictWhy" if conflict else "RestoreWhy")
            reason.setWordWrap(True)
            texts.addWidget(reason)
        layout.addLayout(texts, 1)
        if conflict:
            check = QCheckBox("Restore anyway")
            check.setAccessibleName(f"Restore {shown_path(step.path, self._root)} anyway")
            check.toggled.connect(self._update_button)
            self.checks[step.path] = check
            layout.addWidget(check, 0, Qt.AlignmentFlag.AlignVCenter)
        box.addWidget(row)

    def _update_button(self) -> None:
        count = self.count
        self.restore_button.setText(restore_label(count))
        self.restore_button.setEnabled(count > 0)

    def _restore(self) -> None:
        if self.count == 0:
            return
        self.restoreAccepted.emit(self.forced())
        self.accept()
