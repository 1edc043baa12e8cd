"""Edit a sticky context: files, folders and glob patterns, context hooks, and the context share.

One widget serves two places: the agent editor (Settings → Agents, with the share of the
context window shown) and a session's "Context…" dialog (share hidden: a session uses its
agent's share). It edits values only; saving is the caller's business.

Sources are typed or picked: the field takes a path, a folder or a pattern such as
``~/project/src/**/*.py`` and "Add" puts it in the list; "File…" and "Folder…" fill the
field from a file dialog. Hooks are rows of command, timing and time limit; a hook's name
and output cap are kept as they were (they are set on the command line or in exports).
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from threadline.core.sticky import (
    DEFAULT_CONTEXT_SHARE,
    DEFAULT_HOOK_TIMEOUT,
    ContextHook,
    ContextSource,
    HookTiming,
    StickyContext,
)

_TIMING_LABELS = {
    HookTiming.EVERY_PROMPT: "Before every prompt",
    HookTiming.SESSION_START: "Once, when the chat starts",
}
_SOURCE_ROLE = Qt.ItemDataRole.UserRole
_HOOK_TIP = (
    "The command runs in a shell, like the shell tool: its standard output is added as context. "
    "A hook that fails or runs past its time limit is shown in the tab and the turn goes on without it."
)


class HookRow(QWidget):
    """One context hook: command, when it runs, and its time limit."""

    def __init__(self, hook: ContextHook | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._original = hook or ContextHook(command="")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(6)
        self.command = QLineEdit(self._original.command)
        self.command.setPlaceholderText("command, e.g. git status --short")
        self.command.setAccessibleName("Hook command")
        self.timing = QComboBox()
        for timing, label in _TIMING_LABELS.items():
            self.timing.addItem(label, timing.value)
        self.timing.setCurrentIndex(self.timing.findData(self._original.timing.value))
        self.timing.setAccessibleName("When the hook runs")
        self.timeout = QDoubleSpinBox()
        self.timeout.setRange(1, 600)
        self.timeout.setDecimals(0)
        self.timeout.setSuffix(" s")
        self.timeout.setValue(self._original.timeout)
        self.timeout.setFixedWidth(84)
        self.timeout.setAccessibleName("Hook time limit")
        self.timeout.setToolTip("The hook is stopped after this time and the turn goes on without it")
        self.remove = QToolButton()
        self.remove.setText("✕")
        self.remove.setToolTip("Remove this hook")
        self.remove.setAccessibleName("Remove hook")
        row.addWidget(self.command, 1)
        row.addWidget(self.timing)
        row.addWidget(self.timeout)
        row.addWidget(self.remove)

    def hook(self) -> ContextHook | None:
        """The hook in the row; ``None`` when its command is empty."""
        command = self.command.text().strip()
        if not command:
            return None
        return replace(
            self._original,
            command=command,
            timing=HookTiming(self.timing.currentData()),
            timeout=float(self.timeout.value()),
        )


class StickyContextEditor(QWidget):
    """Sources, hooks and (optionally) the share of the context window; emits ``changed`` on any edit.

    API: ``set_value(context, share)``, ``value() -> StickyContext``, ``share() -> float``
    (0–1; ``DEFAULT_CONTEXT_SHARE`` when hidden and never set).
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None, *, show_share: bool = True) -> None:
        super().__init__(parent)
        self.setObjectName("StickyContextEditor")
        self._share = DEFAULT_CONTEXT_SHARE
        self.hook_rows: list[HookRow] = []
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        form.setVerticalSpacing(8)

        sources = QVBoxLayout()
        sources.setSpacing(4)
        self.sources = QListWidget()
        self.sources.setObjectName("ContextSources")
        self.sources.setAccessibleName("Context files, folders and patterns")
        self.sources.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.sources.setMinimumHeight(90)
        sources.addWidget(self.sources)
        entry = QHBoxLayout()
        entry.setSpacing(6)
        self.source_edit = QLineEdit()
        self.source_edit.setObjectName("ContextSourceEdit")
        self.source_edit.setPlaceholderText("file, folder or pattern, e.g. ~/project/src/**/*.py")
        self.source_edit.setAccessibleName("File, folder or pattern to add")
        self.source_edit.returnPressed.connect(self._add_typed_source)
        self.add_source_button = QPushButton("Add")
        self.add_source_button.setObjectName("SecondaryButton")
        self.add_source_button.clicked.connect(self._add_typed_source)
        self.browse_file_button = QPushButton("File…")
        self.browse_file_button.setObjectName("SecondaryButton")
        self.browse_file_button.setToolTip("Pick files to add")
        self.browse_file_button.clicked.connect(self._browse_files)
        self.browse_folder_button = QPushButton("Folder…")
        self.browse_folder_button.setObjectName("SecondaryButton")
        self.browse_folder_button.setToolTip("Pick a folder to add (its files are read recursively)")
        self.browse_folder_button.clicked.connect(self._browse_folder)
        self.remove_source_button = QPushButton("Remove")
        self.remove_source_button.setObjectName("SecondaryButton")
        self.remove_source_button.clicked.connect(self._remove_selected_sources)
        entry.addWidget(self.source_edit, 1)
        entry.addWidget(self.add_source_button)
        entry.addWidget(self.browse_file_button)
        entry.addWidget(self.browse_folder_button)
        entry.addWidget(self.remove_source_button)
        sources.addLayout(entry)
        hint = QLabel("Re-read from disk for every request, so an edit shows up on the next turn.")
        hint.setObjectName("Hint")
        hint.setWordWrap(True)
        sources.addWidget(hint)
        form.addRow("Files", sources)

        hooks = QVBoxLayout()
        hooks.setSpacing(4)
        self._hooks_layout = QVBoxLayout()
        self._hooks_layout.setSpacing(4)
        hooks.addLayout(self._hooks_layout)
        self.add_hook_button = QPushButton("Add hook")
        self.add_hook_button.setObjectName("SecondaryButton")
        self.add_hook_button.setToolTip(_HOOK_TIP)
        self.add_hook_button.clicked.connect(lambda: self.add_hook())
        add_row = QHBoxLayout()
        add_row.addWidget(self.add_hook_button)
        add_row.addStretch(1)
        hooks.addLayout(add_row)
        form.addRow("Hooks", hooks)

        self.share_spin = QSpinBox()
        self.share_spin.setRange(5, 100)
        self.share_spin.setSuffix(" %")
        self.share_spin.setValue(round(DEFAULT_CONTEXT_SHARE * 100))
        self.share_spin.setFixedWidth(90)
        self.share_spin.setAccessibleName("Share of the context window for sticky context")
        self.share_spin.setToolTip(
            "Sticky context may take at most this share of the model's context window; "
            "files that do not fit are left out of the request and the tab says which."
        )
        self.share_spin.valueChanged.connect(self._share_edited)
        if show_share:
            form.addRow("Context share", self.share_spin)
        else:
            self.share_spin.hide()

    # -- values ---------------------------------------------------------------------

    def set_value(self, context: StickyContext, share: float | None = None) -> None:
        """Show ``context`` (and ``share`` when given); does not emit ``changed``."""
        blocked = self.blockSignals(True)
        try:
            self.sources.clear()
            for source in context.sources:
                self._append_source(source)
            for row in list(self.hook_rows):
                self._drop_hook_row(row)
            for hook in context.hooks:
                self.add_hook(hook)
            if share is not None:
                share = min(max(share, 0.05), 1.0)
                self.share_spin.setValue(round(share * 100))
                self._share = share  # exact, not the spin box's whole percent
        finally:
            self.blockSignals(blocked)

    def value(self) -> StickyContext:
        sources: list[ContextSource] = []
        for i in range(self.sources.count()):
            source = self.sources.item(i).data(_SOURCE_ROLE)
            if isinstance(source, ContextSource):
                sources.append(source)
        hooks = tuple(h for h in (row.hook() for row in self.hook_rows) if h is not None)
        return StickyContext(sources=tuple(sources), hooks=hooks)

    def share(self) -> float:
        return self._share

    # -- sources --------------------------------------------------------------------

    def add_source(self, pattern: str) -> bool:
        """Add a file, folder or pattern as typed; ``False`` when empty or already listed."""
        pattern = pattern.strip()
        if not pattern or pattern in self._patterns():
            return False
        self._append_source(ContextSource(pattern=pattern))
        self.changed.emit()
        return True

    def _patterns(self) -> set[str]:
        found = set()
        for i in range(self.sources.count()):
            source = self.sources.item(i).data(_SOURCE_ROLE)
            if isinstance(source, ContextSource):
                found.add(source.pattern)
        return found

    def _append_source(self, source: ContextSource) -> None:
        item = QListWidgetItem(source.pattern)
        item.setData(_SOURCE_ROLE, source)
        if source.base:
            item.setToolTip(f"Relative to {source.base}")
        self.sources.addItem(item)

    def _add_typed_source(self) -> None:
        if self.add_source(self.source_edit.text()):
            self.source_edit.clear()

    def _browse_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Files to add as context")
        for path in paths:
            self.add_source(path)

    def _browse_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Folder to add as context")
        if folder:
            self.add_source(folder)

    def _remove_selected_sources(self) -> None:
        rows = sorted((self.sources.row(i) for i in self.sources.selectedItems()), reverse=True)
        for row in rows:
            self.sources.takeItem(row)
        if rows:
            self.changed.emit()

    # -- hooks ----------------------------------------------------------------------

    def add_hook(self, hook: ContextHook | None = None) -> HookRow:
        row = HookRow(hook or ContextHook(command="", timeout=DEFAULT_HOOK_TIMEOUT), self)
        row.remove.clicked.connect(lambda: self._remove_hook(row))
        row.command.textEdited.connect(lambda _t: self.changed.emit())
        row.timing.activated.connect(lambda _i: self.changed.emit())
        row.timeout.valueChanged.connect(lambda _v: self.changed.emit())
        self.hook_rows.append(row)
        self._hooks_layout.addWidget(row)
        row.show()  # the layout would show it only on the next event-loop turn
        if hook is None:
            row.command.setFocus()
            self.changed.emit()
        return row

    def _remove_hook(self, row: HookRow) -> None:
        self._drop_hook_row(row)
        self.changed.emit()

    def _drop_hook_row(self, row: HookRow) -> None:
        self.hook_rows.remove(row)
        self._hooks_layout.removeWidget(row)
        row.deleteLater()

    def _share_edited(self, percent: int) -> None:
        self._share = percent / 100
        self.changed.emit()
