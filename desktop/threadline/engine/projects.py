"""Projects: folders of chats with shared instructions and context (see ``core/project.py``).

``ProjectService`` keeps the projects in the store and the list it last read in
memory. Another instance on the same database may edit a project at any time, so
nothing that is sent relies on that copy: every turn reads its project's stored
row (one row by primary key, well under a millisecond) through ``get``. Edits made
elsewhere arrive through the change feed (``project_changed`` entries, migration
0009): the engine's change watch calls ``refresh``, which reads the list again.
Whenever a read finds the stored projects differ from the copy — an edit here, one
made elsewhere and named by the feed, or one found by a turn — listeners hear
``ProjectsChanged`` with the whole list, so the sidebar follows; a re-read that
finds the list unchanged (the feed's echo of an edit made here) says nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import replace

from threadline.core.project import Project, ProjectError, next_colour
from threadline.core.session import SessionInfo
from threadline.engine.errors import EngineError, SessionClosedError
from threadline.engine.events import ProjectsChanged
from threadline.engine.live import LiveConversation
from threadline.store.errors import NotFoundError
from threadline.store.repository import Store

log = logging.getLogger("threadline.engine")


class ProjectNotFoundError(EngineError):
    default_message = "That project no longer exists; it may have been deleted in another window."


class ProjectNameError(EngineError):
    """A project name that is empty, too long or already taken."""


class ProjectService:
    """Create, edit, delete and list projects; tells ``announce`` after each change.

    The engine reaches it as ``engine.projects`` (``ProjectsApi`` in ``engine/api.py``):
    moving a chat in or out of a project changes its row, which ``session_changed``
    tells the sidebar and the open tab (``open_conversations`` finds those a deleted
    project leaves).
    """

    def __init__(
        self,
        store: Store,
        announce: Callable[[ProjectsChanged], None],
        *,
        open_conversations: Callable[[], Iterable[LiveConversation]],
        session_changed: Callable[[SessionInfo], None],
    ) -> None:
        self._store = store
        self._announce = announce
        self._open_conversations = open_conversations
        self._session_changed = session_changed
        self._known: dict[str, Project] | None = None

    async def list_projects(self) -> list[Project]:
        """Every project by name, read from the store (other instances may have changed them);
        ``ProjectsChanged`` follows when the list differs from the one read before."""
        projects = await self._store.list_projects()
        self._remember(projects)
        return projects

    async def refresh(self) -> None:
        """The change feed says projects changed: read them, and announce the list if it differs
        from the one last told (an edit made here was announced already and stays silent)."""
        projects = await self._store.list_projects()
        self._remember(projects, always=self._known is None)

    async def get(self, project_id: str | None) -> Project | None:
        """The project ``project_id`` names as stored now (``None`` for none or a project
        deleted since): a turn must send the instructions as they are, not as this instance
        last saw them. A row that differs from the remembered one refreshes the list."""
        if not project_id:
            return None
        stored = await self._store.get_project(project_id)
        if self._known is not None and self._known.get(project_id) != stored:
            await self.list_projects()  # changed elsewhere: the sidebar hears ProjectsChanged
        return stored

    async def find_project(self, name_or_id: str) -> Project:
        """The project with this id or name (case-insensitive), for the command line."""
        for project in await self.list_projects():
            if project.id == name_or_id or project.name.lower() == name_or_id.strip().lower():
                return project
        raise ProjectNotFoundError(f"There is no project called “{name_or_id}”.")

    async def create_project(self, name: str, *, colour: str = "", instructions: str = "") -> Project:
        projects = await self.list_projects()
        project = Project.create(
            name, colour=colour or next_colour([p.colour for p in projects]), instructions=instructions
        )
        return await self.save_project(project)

    async def save_project(self, project: Project) -> Project:
        """Store a new or edited project; ``ProjectNameError`` when its name is unusable or taken."""
        try:
            checked = project.validated()
        except ProjectError as err:
            raise ProjectNameError(err.user_message) from None
        taken = [
            p
            for p in await self.list_projects()
            if p.id != checked.id and p.name.lower() == checked.name.lower()
        ]
        if taken:
            raise ProjectNameError(f"There is already a project called “{taken[0].name}”.")
        stored = await self._store.save_project(checked)
        await self._changed()
        return stored

    async def rename_project(self, project_id: str, name: str) -> Project:
        project = await self._require(project_id)
        return await self.save_project(replace(project, name=name))

    async def delete_project(self, project_id: str) -> int:
        """Delete a project; its chats move out of it (nothing else is deleted). Returns how many."""
        try:
            moved = await self._store.delete_project(project_id)
        except NotFoundError:
            raise ProjectNotFoundError() from None
        log.info("project deleted; %d chats moved out of it", moved)
        await self._changed()
        for live in list(self._open_conversations()):
            if live.info.project_id == project_id:
                self._session_changed(replace(live.info, project_id=None))
        return moved

    async def project_chat_counts(self, *, archived: bool = False) -> dict[str, int]:
        """How many chats each project holds (archived ones or the others), for the sidebar."""
        return await self._store.project_chat_counts(archived=archived)

    async def set_session_project(self, session_id: str, project_id: str | None) -> None:
        """Move a chat into a project (``None``: out of any)."""
        try:
            info = await self._store.set_session_project(session_id, project_id)
        except NotFoundError:
            if project_id is not None and await self.get(project_id) is None:
                raise ProjectNotFoundError() from None
            raise SessionClosedError() from None
        self._session_changed(info)

    async def _require(self, project_id: str) -> Project:
        project = await self.get(project_id)
        if project is None:
            raise ProjectNotFoundError()
        return project

    async def _changed(self) -> None:
        """After a change made here: always announce, with the list as stored now."""
        self._remember(await self._store.list_projects(), always=True)

    def _remember(self, projects: list[Project], *, always: bool = False) -> None:
        known = {p.id: p for p in projects}
        changed = self._known is not None and known != self._known
        self._known = known
        if changed or always:
            self._announce(ProjectsChanged(tuple(projects)))
