"""What can be done to chats in the sidebar: the context menu, rename, pin, duplicate,
archive and delete (one chat or several selected), and the undo bar that takes the last
archive or delete back.

Each action goes to the engine, which owns the session's state: the row changes when the
engine's session event arrives, in this window and in any other. Delete and archive show
an undo bar for a few seconds; its Undo asks the engine to restore the session
(``restore_session``: a pending delete is the engine's, not the sidebar's) or to unarchive
it, and the window reopens the tab it closed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QFrame, QHBoxLayout, QListView, QMenu, QPushButton, QWidget

from threadline.core.session import SessionInfo
from threadline.ui.common.elided_label import ElidedLabel
from threadline.ui.common.tasks import spawn
from threadline.ui.sessions.project_scope import ProjectScope
from threadline.ui.sessions.session_list_model import SessionListModel, SessionRole
from threadline.ui.sessions.session_selection import (
    SelectionCommands,
    build_selection_menu,
    selected_sessions,
)

if TYPE_CHECKING:  # the engine's modules load after the first paint
    from threadline.engine.api import EngineApi

NOT_ARCHIVED = "Could not archive the chat"
NOT_DELETED = "Could not delete the chat"
UNDO_SECONDS = 6
"""How long the undo bar stays; the engine keeps a deleted session restorable a little longer."""


class ActionsHost(Protocol):
    """What the session actions need of their sidebar."""

    engine: EngineApi | None
    model: SessionListModel
    archived_model: SessionListModel
    project_scope: ProjectScope

    def rename_inline(self, session_id: str) -> None: ...


class UndoBar(QFrame):
    undo = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("UndoBar")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 4, 4, 4)
        self.label = ElidedLabel()  # a long title ends in "…" in a narrow sidebar, not mid-letter
        layout.addWidget(self.label, 1)
        self.button = QPushButton("Undo")
        self.button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.button.clicked.connect(self.undo)
        layout.addWidget(self.button)
        self.hide()


class SessionActions(QObject):
    """The sidebar's actions on chats; ``widget`` (the sidebar) is the parent of their menus."""

    openRequested = Signal(str, object)
    archiveUndone = Signal(str)
    """Undo of an archive: the session is back in the list, the window reopens its tab."""
    errorMessage = Signal(str)
    exportRequested = Signal(list)

    def __init__(self, host: ActionsHost, widget: QWidget) -> None:
        super().__init__(widget)
        self.host = host
        self.widget = widget
        self._undo: tuple[str, tuple[str, ...]] | None = None  # ("delete" | "archive", session ids)
        self.undo_bar = UndoBar()
        self.undo_bar.undo.connect(self.undo)
        self._undo_timer = QTimer(self)
        self._undo_timer.setSingleShot(True)
        self._undo_timer.setInterval(UNDO_SECONDS * 1000)
        self._undo_timer.timeout.connect(self._undo_expired)

    def context_menu(self, view: QListView, pos: QPoint) -> None:
        index = view.indexAt(pos)
        info: SessionInfo | None = index.data(SessionRole) if index.isValid() else None
        if info is None:
            return
        chosen = selected_sessions(view)
        if len(chosen) > 1 and info.id in {c.id for c in chosen}:
            menu = build_selection_menu(self.widget, chosen, self.selection_commands())
            if not info.archived:
                self.host.project_scope.move_menu(menu, [c.id for c in chosen], None)
        else:
            menu = self.build_menu(info)
        menu.exec(view.viewport().mapToGlobal(pos))

    def selection_commands(self) -> SelectionCommands:
        return SelectionCommands(
            export=lambda ids: self.exportRequested.emit(list(ids)),
            pin=self.pin_many,
            archive=self.archive_many,
            unarchive=self.unarchive_many,
            delete=self.delete_many,
        )

    def pin_many(self, session_ids: Sequence[str], pinned: bool) -> None:
        """Pin (or unpin) each chat not already so; the others are left untouched."""
        for sid in session_ids:
            info = self.host.model.session(sid)
            if info is not None and info.pinned != pinned:
                self.set_pinned(sid, pinned)

    def unarchive_many(self, session_ids: Sequence[str]) -> None:
        for sid in session_ids:
            self.unarchive(sid)

    def archive_many(self, session_ids: Sequence[str]) -> None:
        """Archive every chat given; one Undo brings them all back."""
        if self.host.engine is None or not session_ids:
            return
        for sid in session_ids:
            spawn(
                self.host.engine.sessions.archive_session(sid, True),
                tell=self,
                context=NOT_ARCHIVED,
                session_id=sid,
            )
        self._offer_undo("archive", tuple(session_ids), f"Archived {len(session_ids)} chats")

    def delete_many(self, session_ids: Sequence[str]) -> None:
        """Delete every chat given; one Undo restores them all."""
        if self.host.engine is None or not session_ids:
            return
        for sid in session_ids:
            spawn(
                self.host.engine.sessions.delete_session(sid), tell=self, context=NOT_DELETED, session_id=sid
            )
        self._offer_undo("delete", tuple(session_ids), f"Deleted {len(session_ids)} chats")

    def build_menu(self, info: SessionInfo) -> QMenu:
        menu = QMenu(self.widget)
        if info.archived:
            menu.addAction("Open", lambda: self.openRequested.emit(info.id, None))
            menu.addAction("Unarchive", lambda: self.unarchive(info.id))
            menu.addSeparator()
            delete = menu.addAction("Delete", lambda: self.delete(info.id))
            delete.setShortcut(QKeySequence(Qt.Key.Key_Delete))
            return menu
        menu.addAction("Open", lambda: self.openRequested.emit(info.id, None))
        # The editor opens once the menu has closed: opened while it closes, it loses focus and shuts.
        rename = menu.addAction(
            "Rename", lambda: QTimer.singleShot(0, lambda: self.host.rename_inline(info.id))
        )
        rename.setShortcut(QKeySequence(Qt.Key.Key_F2))
        menu.addAction("Unpin" if info.pinned else "Pin", lambda: self.set_pinned(info.id, not info.pinned))
        menu.addAction("Duplicate", lambda: self.fork(info.id))
        self.host.project_scope.move_menu(menu, [info.id], info.project_id)
        menu.addSeparator()
        menu.addAction("Archive", lambda: self.archive(info.id))
        menu.addAction("Delete", lambda: self.delete(info.id)).setShortcut(QKeySequence(Qt.Key.Key_Delete))
        return menu

    def rename(self, session_id: str, title: str) -> None:
        if self.host.engine is not None:
            spawn(
                self.host.engine.sessions.rename_session(session_id, title),
                tell=self,
                context="Could not rename the chat",
                session_id=session_id,
            )

    def set_pinned(self, session_id: str, pinned: bool) -> None:
        if self.host.engine is not None:
            spawn(
                self.host.engine.sessions.pin_session(session_id, pinned),
                tell=self,
                context="Could not pin the chat" if pinned else "Could not unpin the chat",
                session_id=session_id,
            )

    def archive(self, session_id: str) -> None:
        """Archive through the engine (the window closes an open tab); Undo brings it back."""
        if self.host.engine is None:
            return
        info = self.host.model.session(session_id)
        spawn(
            self.host.engine.sessions.archive_session(session_id, True),
            tell=self,
            context=NOT_ARCHIVED,
            session_id=session_id,
        )
        self._offer_undo("archive", session_id, f"Archived “{_short(info.display_title if info else '')}”")

    def unarchive(self, session_id: str) -> None:
        if self.host.engine is not None:
            spawn(
                self.host.engine.sessions.archive_session(session_id, False),
                tell=self,
                context="Could not unarchive the chat",
                session_id=session_id,
            )

    def fork(self, session_id: str) -> None:
        """Duplicate through the engine; the window opens the copy on ``SessionForked``."""
        if self.host.engine is not None:
            spawn(
                self.host.engine.sessions.fork_session(session_id),
                tell=self,
                context="Could not duplicate the chat",
                session_id=session_id,
            )

    def delete(self, session_id: str) -> None:
        """Delete through the engine (the row and an open tab go at once); Undo restores it."""
        if self.host.engine is None:
            return
        info = self.host.model.session(session_id) or self.host.archived_model.session(session_id)
        if info is None:
            return
        spawn(
            self.host.engine.sessions.delete_session(session_id),
            tell=self,
            context=NOT_DELETED,
            session_id=session_id,
        )
        self._offer_undo("delete", session_id, f"Deleted “{_short(info.display_title)}”")

    def _offer_undo(self, kind: str, session_ids: str | tuple[str, ...], text: str) -> None:
        ids = (session_ids,) if isinstance(session_ids, str) else session_ids
        self._undo = (kind, ids)  # one undo at a time (for one chat or several), like mail clients
        self.undo_bar.label.setText(text)
        self.undo_bar.show()
        self._undo_timer.start()

    def undo(self) -> None:
        """The undo bar's button: restore the deleted session, or unarchive the archived one."""
        undo, self._undo = self._undo, None
        self._undo_timer.stop()
        self.undo_bar.hide()
        if undo is None or self.host.engine is None:
            return
        kind, session_ids = undo
        for session_id in session_ids:
            if kind == "delete":
                spawn(
                    self.host.engine.sessions.restore_session(session_id),
                    on_done=self._restored,
                    tell=self,
                    context="Could not bring the chat back",
                )
            else:
                spawn(
                    self.host.engine.sessions.archive_session(session_id, False),
                    on_done=self._archive_undone(session_id),
                    tell=self,
                    context="Could not unarchive the chat",
                )

    def _archive_undone(self, session_id: str) -> Callable[[object], None]:
        return lambda _none: self.archiveUndone.emit(session_id)

    def _restored(self, info: SessionInfo | None) -> None:
        if info is None:
            self.errorMessage.emit("That chat was already deleted; it cannot be brought back.")

    def _undo_expired(self) -> None:
        self._undo = None
        self.undo_bar.hide()


def _short(text: str, limit: int = 32) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
