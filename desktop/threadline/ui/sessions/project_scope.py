"""What the sidebar does with projects: choose one, make, edit and delete them, move chats.

The sidebar shows ``ProjectList`` and asks this object for the rest, so the
sidebar itself only learns "the chosen project changed" (``scopeChanged``) and
where a new chat goes (``project_id``). Every change goes to the engine; the list
follows the engine's ``ProjectsChanged`` events, in this window and any other.

Another instance on the same database may edit projects too: the change feed
carries those edits (``project_changed`` entries), and the engine announces
``ProjectsChanged`` when the list it re-reads differs, so this window follows
without reading the list on a timer or when it is activated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QMenu, QMessageBox, QWidget

from threadline.core.project import Project, next_colour
from threadline.ui.common.tasks import spawn
from threadline.ui.sessions.project_list import ProjectList

if TYPE_CHECKING:  # the engine's modules load after the first paint
    from threadline.engine.api import EngineApi

COUNTS_DELAY_MS = 400
"""Chat counts are read again this long after the last change (a burst of moves reads once)."""


class ProjectScope(QObject):
    """The projects section's behaviour (see the module doc)."""

    scopeChanged = Signal(object)
    """The chosen project id, or ``None`` for all chats."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.host = parent
        self.engine: EngineApi | None = None
        self.view = ProjectList(parent)
        self.view.projectChosen.connect(self.scopeChanged)
        self.view.newProjectRequested.connect(self.new_project)
        self.view.editRequested.connect(self.edit_project)
        self.view.deleteRequested.connect(self.delete_project)
        self.view.chatsDropped.connect(self.move_chats)
        self._counts_timer = QTimer(self)
        self._counts_timer.setSingleShot(True)
        self._counts_timer.setInterval(COUNTS_DELAY_MS)
        self._counts_timer.timeout.connect(self.refresh_counts)

    @property
    def project_id(self) -> str | None:
        """The chosen project (new chats start in it), or ``None``."""
        return self.view.current

    def set_engine(self, engine: EngineApi) -> None:
        self.engine = engine

    async def load(self) -> None:
        """Read the projects and their chat counts (at start)."""
        if self.engine is None:
            return
        projects = await self.engine.projects.list_projects()
        counts = await self.engine.projects.project_chat_counts() if projects else {}
        self.view.set_projects(projects, counts)

    def projects_changed(self, projects: Sequence[Project]) -> None:
        """The engine's ``ProjectsChanged``: show the list as it is now."""
        self.view.set_projects(list(projects))
        self.chats_changed()

    def chats_changed(self) -> None:
        """A chat was added, moved, archived or deleted: read the counts again, soon."""
        if self.view.projects:
            self._counts_timer.start()

    def refresh_counts(self) -> None:
        if self.engine is None:
            return
        spawn(self.engine.projects.project_chat_counts(), on_done=self.view.set_counts, tell=self)

    # -- actions -----------------------------------------------------------------------------------

    def new_project(self, chats: Sequence[str] = ()) -> None:
        """Ask for a new project's name and settings; ``chats`` move into it once it is made."""
        if self.engine is None:
            return
        from threadline.ui.sessions.project_dialog import ProjectDialog  # first use, after the first paint

        colour = next_colour([p.colour for p in self.view.projects])
        dialog = ProjectDialog(self.engine, None, self.host, colour=colour)
        dialog.setModal(True)

        def finished(_result: int) -> None:
            if dialog.saved is not None and chats:
                self.move_chats(dialog.saved.id, list(chats))
            dialog.deleteLater()

        dialog.finished.connect(finished)
        dialog.open()

    def edit_project(self, project_id: str) -> None:
        project = self.view.project(project_id)
        if self.engine is None or project is None:
            return
        from threadline.ui.sessions.project_dialog import ProjectDialog

        dialog = ProjectDialog(self.engine, project, self.host)
        dialog.setModal(True)
        dialog.finished.connect(lambda _result: dialog.deleteLater())
        dialog.open()

    def delete_project(self, project_id: str) -> None:
        """Ask, then delete the project; its chats stay, outside any project."""
        project = self.view.project(project_id)
        if self.engine is None or project is None:
            return
        count = self.view.counts.get(project_id, 0)
        chats = (
            f"Its {count} chat{'s' if count != 1 else ''} will stay, outside any project." if count else ""
        )
        box = QMessageBox(self.host)
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle("Delete project")
        box.setText(f"Delete the project “{project.name}”?")
        box.setInformativeText(f"{chats} Its instructions and context files are deleted.".strip())
        delete = box.addButton("Delete project", QMessageBox.ButtonRole.DestructiveRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        engine = self.engine

        def answered(_result: int) -> None:
            if box.clickedButton() is delete:
                spawn(
                    engine.projects.delete_project(project_id),
                    tell=self,
                    context="Could not delete the project",
                )
            box.deleteLater()

        box.finished.connect(answered)
        box.open()

    def move_chats(self, project_id: str | None, session_ids: Sequence[str]) -> None:
        """Move chats into ``project_id`` (``None``: out of any project)."""
        if self.engine is None:
            return
        for session_id in session_ids:
            spawn(
                self.engine.projects.set_session_project(session_id, project_id),
                tell=self,
                context="Could not move the chat",
                session_id=session_id,
            )
        self.chats_changed()

    def move_menu(self, parent: QMenu, session_ids: Sequence[str], current: str | None) -> QMenu:
        """The "Move to project" submenu of a chat (or of several selected chats), added to
        ``parent`` before its first separator (with the other ways of organising chats)."""
        from threadline.ui.sessions.project_dialog import colour_icon

        menu = QMenu("Move to project", parent)
        separator = next((a for a in parent.actions() if a.isSeparator()), None)
        if separator is not None:
            parent.insertMenu(separator, menu)
        else:
            parent.addMenu(menu)
        ids = list(session_ids)
        for project in self.view.projects:
            action = menu.addAction(colour_icon(project.colour), project.name)
            action.setCheckable(True)
            action.setChecked(project.id == current)
            action.triggered.connect(lambda _checked=False, pid=project.id: self.move_chats(pid, ids))
        if self.view.projects:
            menu.addSeparator()
            out = menu.addAction("No project", lambda: self.move_chats(None, ids))
            out.setEnabled(current is not None or len(ids) > 1)
        menu.addAction("New project…", lambda: self.new_project(ids))
        return menu
