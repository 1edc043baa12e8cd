"""A chat tab's file changes: the reply headers' counts, the dialogs and the way back.

The tab builds one :class:`FileChangesWiring`; it reads the session's change sets from
``engine.workspace`` and keeps the chat view's counts (``ChatView.set_change_counts``) and
the status line's totals (``totalsChanged``) in step with them. It re-reads them, at most
a few times a second, when the engine tells of a new change set (``FileChangesRecorded``,
also after a restore) and when the tab's messages change: another window on the same
database records its change sets before the messages that follow them reach this one
through the change feed (``engine/change_watch.py``), so a refresh on those messages shows
them (docs/file-changes-ui.md, "Other windows").

What the user asks for goes to the engine; its answers open the widgets of this room:
``TurnChangesDialog`` (diffs asked for as files are selected), ``RestorePreviewDialog``
(a plan first, then the restore with the conflicts the user ticked) and the
``RestoreNotice`` with "Undo restore". Errors reach the user through the bridge.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import shiboken6
from PySide6.QtCore import QObject, Qt, QTimer, Signal, SignalInstance
from PySide6.QtWidgets import QBoxLayout, QMessageBox, QWidget

from threadline.core.file_changes import (
    ChangeSet,
    ChangeSource,
    FileChange,
    FileDiff,
    FileTotal,
    RestorePlan,
    TurnChanges,
    file_totals,
)
from threadline.engine.api import EngineApi, LiveConversationApi
from threadline.engine.events import (
    ActivePathChanged,
    ConversationEvent,
    FileChangesRecorded,
    MessageAdded,
    MessageChanged,
    MessagesRemoved,
    MessagesRestored,
)
from threadline.ui.chat.changes.header_counts import HeaderCounts, header_counts
from threadline.ui.chat.changes.restore_notice import RestoreNotice, restore_result
from threadline.ui.common.message_bridge import MessageBridge
from threadline.ui.common.tasks import spawn
from threadline.ui.common.theme import ThemeColors

if TYPE_CHECKING:  # the dialogs (and the diff's highlighting) load when first opened
    from threadline.ui.chat.changes.changes_dialog import TurnChangesDialog
    from threadline.ui.chat.changes.restore_dialog import RestorePreviewDialog

DELETE_ON_CLOSE = Qt.WidgetAttribute.WA_DeleteOnClose
REFRESH_MS = 150
"""Events come in bursts (a tool round adds and changes several messages): one read for them."""
REFRESHING = (
    FileChangesRecorded,
    MessageAdded,
    MessageChanged,
    ActivePathChanged,
    MessagesRemoved,
    MessagesRestored,
)


class CountsView(Protocol):
    """The chat view, as far as the counts go (``ChatView``; this room sits below the view)."""

    def set_change_counts(self, counts: dict[str, HeaderCounts]) -> None: ...
    def window(self) -> QWidget: ...


class CheckpointControls(Protocol):
    """The tab's conversation controls: they say when a checkpoint was restored."""

    @property
    def checkpointRestored(self) -> SignalInstance: ...


class ChangesHost(Protocol):
    """What the file changes need of their tab."""

    engine: EngineApi
    live: LiveConversationApi
    bridge: MessageBridge

    @property
    def undo_bar(self) -> QWidget:
        """The notice goes above it, in the column over the message box."""
        ...

    @property
    def view(self) -> CountsView: ...
    @property
    def controls(self) -> CheckpointControls: ...
    @property
    def session_id(self) -> str: ...
    @property
    def colors(self) -> ThemeColors: ...
    @property
    def busy(self) -> bool: ...
    def show_status(self, text: str) -> None: ...


class FileChangesWiring(QObject):
    """Keeps a tab's counts and totals current and runs what the user asks of them."""

    totalsChanged = Signal(object)  # list[FileTotal]: the session's files, for the status line

    def __init__(self, host: ChangesHost, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._host = host
        self.turns: list[TurnChanges] = []
        self.change_sets: list[ChangeSet] = []
        self.totals: list[FileTotal] = []
        self.dialog: TurnChangesDialog | None = None
        """The changes dialog last opened (tests read it)."""
        self.preview: RestorePreviewDialog | None = None
        """The restore preview last opened."""
        self.question: QMessageBox | None = None
        """ "Restore the files as well?" after a checkpoint was restored."""
        self.loaded = False
        """True once the change sets were read (tests wait on it)."""
        self.notice = RestoreNotice()
        self.notice.undoRequested.connect(self.undo_restore)
        holder = host.undo_bar.parentWidget()
        column = holder.layout() if holder is not None else None
        if isinstance(column, QBoxLayout):
            column.insertWidget(column.indexOf(host.undo_bar), self.notice)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self.refresh)
        host.controls.checkpointRestored.connect(self.offer_checkpoint_files)
        self._unsubscribe: Any = host.live.subscribe(self._event)
        self.refresh()

    @property
    def root(self) -> str | None:
        """The folder the files are shown in: the deepest one holding all of them."""
        paths = [t.path for t in self.totals]
        if not paths:
            return None
        try:
            return os.path.commonpath([os.path.dirname(p) for p in paths])
        except ValueError:  # paths on different drives
            return None

    def close(self) -> None:
        self._timer.stop()
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    # -- reading --------------------------------------------------------------------------------

    def _event(self, event: ConversationEvent) -> None:
        if isinstance(event, REFRESHING):
            self._timer.start()

    def refresh(self) -> None:
        """Read the session's change sets again (what the headers and the status line show)."""
        spawn(self._read(), tell=self._host.bridge, on_done=self._show, session_id=self._host.session_id)

    async def _read(self) -> tuple[list[TurnChanges], list[ChangeSet]]:
        workspace, session_id = self._host.engine.workspace, self._host.session_id
        return await workspace.turn_changes(session_id), await workspace.change_sets(session_id)

    def _show(self, read: tuple[list[TurnChanges], list[ChangeSet]]) -> None:
        if self._unsubscribe is None:
            return  # the tab closed meanwhile
        self.turns, self.change_sets = read
        self.totals = file_totals(self.change_sets)
        root = self.root
        self._host.view.set_change_counts({t.reply_id: header_counts(t, root) for t in self.turns})
        self.loaded = True
        self.totalsChanged.emit(self.totals)

    def turn_of(self, reply_id: str) -> TurnChanges | None:
        return next((t for t in self.turns if t.reply_id == reply_id), None)

    # -- the changes dialog ---------------------------------------------------------------------

    def open_turn(self, reply_id: str) -> TurnChangesDialog | None:
        """The reply header's counts were clicked: the turn's files and their diffs."""
        turn = self.turn_of(reply_id)
        if turn is None:
            return None
        dialog = self._dialog(turn, can_undo=not self._host.busy)
        dialog.undoRequested.connect(lambda: self._undo_from(dialog, turn))
        dialog.open()
        return dialog

    def open_session_file(self, path: str) -> TurnChangesDialog | None:
        """A file of the status line's totals was picked: the chat's changes, at that file.

        Restores are part of the list (they changed files too); when the latest change was a
        restore, "Undo last restore…" is offered, also after a restart."""
        from threadline.ui.chat.changes.turn_files import merged_changes

        if not self.change_sets:
            return None
        last = self.change_sets[-1]
        can_undo = last.source is ChangeSource.RESTORE and not self._host.busy
        dialog = self._dialog(merged_changes(self.change_sets), can_undo=can_undo)
        dialog.setWindowTitle("File changes in this chat")
        dialog.undo_button.setText("Undo last restore\u2026")
        dialog.undoRequested.connect(lambda: self._undo_restore_from(dialog, last))
        dialog.open()
        dialog.select(path)
        return dialog

    def _dialog(self, source: TurnChanges | Sequence[FileChange], *, can_undo: bool) -> TurnChangesDialog:
        from threadline.ui.chat.changes.changes_dialog import TurnChangesDialog

        host = self._host
        dialog = TurnChangesDialog(
            source, host.colors, root=self.root, can_undo=can_undo, parent=host.view.window()
        )
        dialog.setAttribute(DELETE_ON_CLOSE, True)
        dialog.diffRequested.connect(lambda change: self._diff(dialog, change))
        self.dialog = dialog
        return dialog

    def _diff(self, dialog: TurnChangesDialog, change: FileChange) -> None:
        def shown(diff: FileDiff) -> None:
            if shiboken6.isValid(dialog):  # closed before the diff came: nothing to show it in
                dialog.show_diff(diff)

        spawn(
            self._host.engine.workspace.file_diff(change),
            tell=self._host.bridge,
            on_done=shown,
            context="Could not show the change",
            session_id=self._host.session_id,
        )

    def _undo_from(self, dialog: TurnChangesDialog, turn: TurnChanges) -> None:
        dialog.accept()
        self.undo_turn(turn.reply_id)

    def _undo_restore_from(self, dialog: TurnChangesDialog, restore: ChangeSet) -> None:
        dialog.accept()
        self.undo_restore(restore)

    # -- the way back ---------------------------------------------------------------------------

    def undo_turn(self, reply_id: str) -> None:
        """ "Undo this turn's file changes": the plan first, shown before anything is touched."""
        turn = self.turn_of(reply_id)
        if turn is None:
            return
        self._plan(
            self._host.engine.workspace.plan_undo_turn(self._host.session_id, turn.number),
            "Undo this turn's file changes",
        )

    def undo_restore(self, restore: ChangeSet) -> None:
        planning = self._host.engine.workspace.plan_undo_restore(self._host.session_id, restore.id)
        self._plan(planning, "Undo restore")

    def offer_checkpoint_files(self, name: str) -> None:
        """The conversation moved back to a checkpoint: offer the files too, if any changed since."""

        def planned(plan: RestorePlan) -> None:
            if not plan.steps:
                return
            count = len(plan.steps)
            box = QMessageBox(
                QMessageBox.Icon.Question,
                "Restore files too?",
                f"{count} {'file was' if count == 1 else 'files were'} changed by the assistant after "
                f"checkpoint “{name}”. Put them back as they were then?",
                QMessageBox.StandardButton.NoButton,
                self._host.view.window(),
            )
            box.setObjectName("RestoreFilesQuestion")
            box.addButton("Keep the files", QMessageBox.ButtonRole.RejectRole)
            show = box.addButton("Show the files\u2026", QMessageBox.ButtonRole.AcceptRole)
            box.setDefaultButton(show)
            box.accepted.connect(lambda: self._preview(plan, f"Restore files to “{name}”"))
            box.setAttribute(DELETE_ON_CLOSE, True)
            self.question = box
            box.open()

        spawn(
            self._host.engine.workspace.plan_checkpoint(self._host.session_id, name),
            tell=self._host.bridge,
            on_done=planned,
            context="Could not check the files changed since the checkpoint",
            session_id=self._host.session_id,
        )

    def _plan(self, planning: Any, title: str) -> None:
        spawn(
            planning,
            tell=self._host.bridge,
            on_done=lambda plan: self._preview(plan, title),
            context="Could not prepare the restore",
            session_id=self._host.session_id,
        )

    def _preview(self, plan: RestorePlan, title: str) -> None:
        if not plan.steps:
            self._host.show_status("Nothing to restore: the files are as they were.")
            return
        from threadline.ui.chat.changes.restore_dialog import RestorePreviewDialog

        host = self._host
        dialog = RestorePreviewDialog(
            plan, host.colors, root=self.root, title=title, parent=host.view.window()
        )
        dialog.setAttribute(DELETE_ON_CLOSE, True)
        dialog.restoreAccepted.connect(lambda forced: self._run(plan, forced))
        self.preview = dialog
        dialog.open()

    def _run(self, plan: RestorePlan, forced: Collection[str]) -> None:
        asked = len(plan.clean) + len(forced)
        spawn(
            self._host.engine.workspace.run_restore(plan, frozenset(forced)),
            tell=self._host.bridge,
            on_done=lambda result: self._restored(result, asked),
            context="Could not restore the files",
            session_id=self._host.session_id,
        )

    def _restored(self, result: ChangeSet, asked: int) -> None:
        self.notice.offer(result, restore_result(result, asked))
        self.refresh()
