"""The session registry (``engine.sessions``): one live conversation per session, and its lifecycle.

The registry is the one owner of a session's state; the window and the command line
reach it as ``engine.sessions`` (``SessionsApi`` in ``engine/api.py``):

* A session stores its agent, provider and model from the moment it is created:
  ``new_session`` takes the ones used last (``LAST_USED_SETTING``, updated when a
  model is picked or a prompt is sent) and only when nothing was ever used the
  default provider. Adding or removing a provider never changes a session; a
  session whose provider is gone keeps its history and asks for a model.
* Deleting is undoable and owned here, not by a window: ``delete_session`` takes
  the session out of the registry at once (a running turn is cancelled, its
  partial reply stored), emits ``SessionRemoved`` to every session observer, and
  deletes the stored session only after ``undo_seconds`` or when the engine closes
  (``purge_deleted``). Meanwhile it is absent from listings and search and cannot
  be opened; ``restore_session`` cancels the delete and emits ``SessionRestored``,
  which a window uses to reopen the tab it closed. The CLI and every window thus
  agree on what exists.
* Archiving cancels a running turn and closes the live conversation (a window
  closes the tab on the ``SessionUpdated`` with ``archived``); forking emits
  ``SessionForked`` so the window opens the copy.
* Drafts (unsent text and attachments) are stored per session (``get_draft``,
  ``save_draft``) and removed with the session.

Turns stay with the engine: closing a session asks it to stop the session's turn first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from threadline.core.config import DEFAULT_AGENT_ID
from threadline.core.conversation import Conversation
from threadline.core.session import SessionInfo
from threadline.core.sticky import StickyContext
from threadline.core.tree import ConversationTree
from threadline.engine.api import Unsubscribe
from threadline.engine.drafts import Draft, draft_key
from threadline.engine.errors import SessionClosedError
from threadline.engine.events import (
    ChangesReceiving,
    SessionEvent,
    SessionForked,
    SessionRemoved,
    SessionRestored,
    SessionUpdated,
)
from threadline.engine.live import LiveConversation
from threadline.engine.providers import DEFAULT_MODEL_SETTING, DEFAULT_PROVIDER_SETTING
from threadline.store.errors import NotFoundError

if TYPE_CHECKING:
    from threadline.engine.engine import Engine

log = logging.getLogger("threadline.engine")

SessionObserver = Callable[[SessionEvent], None]

LAST_USED_SETTING = "last_used_model"
"""``{"agent_id", "provider", "model"}`` of the last pick or send: what a new chat starts with."""
UNDO_SECONDS = 10.0
"""How long a deleted session can be restored before it is deleted from the store."""


class SessionRegistry:
    """Open, close, create, list, rename, archive, delete (undoably), fork; tells observers."""

    def __init__(self, engine: Engine, undo_seconds: float = UNDO_SECONDS) -> None:
        self._engine = engine
        self._store = engine.store
        self.undo_seconds = undo_seconds
        self._live: dict[str, LiveConversation] = {}
        self._opening: dict[str, asyncio.Future[LiveConversation]] = {}
        self._pending_deletes: dict[str, asyncio.TimerHandle] = {}
        self._observers: list[SessionObserver] = []
        self._last_used: tuple[str, str, str] | None = None

    # -- live conversations ------------------------------------------------------------------

    async def open_session(self, session_id: str) -> LiveConversation:
        if session_id in self._pending_deletes:
            raise SessionClosedError()
        engine = self._engine
        live = self._live.get(session_id)
        if live is not None:
            if engine.change_watch is not None:
                engine.elsewhere.opened(session_id, first=False)  # another tab: told if busy elsewhere
                self._tell_not_receiving(live)
            return live
        pending = self._opening.get(session_id)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[LiveConversation] = asyncio.get_running_loop().create_future()
        self._opening[session_id] = future
        try:
            info = await self._store.get_session(session_id)
            if info is None:
                raise NotFoundError(f"no session {session_id!r}")
            tree = await self._store.load_tree(session_id)
            live = LiveConversation(info, Conversation(session_id, tree))
            if live.conversation.interrupted_tools() is not None:
                with contextlib.suppress(Exception):  # unread, its tools just count as unknown
                    await engine.tool_servers.load()  # registers MCP tools, for interrupted_tools_unsure
            self._live[session_id] = live
            if engine.change_watch is not None:
                engine.change_watch.attach(live)  # its own changes are not taken back from the feed
                engine.elsewhere.opened(session_id, first=True)  # a turn elsewhere may predate this open
                self._tell_not_receiving(live)
            future.set_result(live)
            return live
        except BaseException as err:
            future.set_exception(err)
            future.exception()  # retrieved here, so a lone opener leaves no warning behind
            raise
        finally:
            del self._opening[session_id]

    def live(self, session_id: str) -> LiveConversation | None:
        return self._live.get(session_id)

    def open_conversations(self) -> list[LiveConversation]:
        """Every open conversation, for facets that tell each one of a change (a copy)."""
        return list(self._live.values())

    async def close_session(self, session_id: str) -> None:
        """Forget the live conversation; a running turn is cancelled first (its text is kept)."""
        await self._engine.turns.stop_turn(session_id)
        await self._engine.messages.purge(session_id)  # its tab, and so its Undo, is gone
        self._live.pop(session_id, None)
        self._engine.turns.runner.sticky.forget(session_id)
        self._engine.workspace.forget_session(session_id)

    async def get_session(self, session_id: str) -> SessionInfo | None:
        """The session as stored now, or ``None`` when there is none (the command line's ``--session``)."""
        return await self._store.get_session(session_id)

    async def stored_tree(self, session_id: str) -> ConversationTree:
        """The tree as the database holds it now, whatever an open conversation holds in memory
        (how much of a reply whose writes failed was kept)."""
        return await self._store.load_tree(session_id)

    async def tree(self, session_id: str) -> ConversationTree:
        """The open conversation's tree, or the stored one of a closed session."""
        live = self._live.get(session_id)
        return live.conversation.tree if live else await self._store.load_tree(session_id)

    # -- creating, listing, editing ------------------------------------------------------------

    async def new_session(
        self, title: str = "", *, project_id: str | None = None, agent_id: str | None = None
    ) -> SessionInfo:
        """A session pinned to the agent, provider and model used last (see the module doc),
        in ``project_id`` when given.

        With ``agent_id`` it runs with that agent instead (``threadline ask`` starts every new
        chat with the default agent unless ``--agent`` names one, never with the agent a chat
        in the window picked last): the agent's provider and model when it names them, else
        the ones a new chat would use.
        """
        agent_id, provider, model = await self._initial_model(agent_id)
        info = await self._store.create_session(
            title=title, agent_id=agent_id, provider=provider, model=model
        )
        if project_id is not None:
            info = await self._store.set_session_project(info.id, project_id)
        self.session_changed(info)
        return info

    async def _initial_model(self, agent_id: str | None = None) -> tuple[str, str, str]:
        """The agent, provider and model of a new chat (``agent_id``: that agent, see ``new_session``)."""
        providers = {p.name: p for p in await self._store.list_providers()}
        agents = self._engine.agents
        if agent_id is not None:
            chosen = await agents.get_agent(agent_id)
            pinned = "" if chosen.id == DEFAULT_AGENT_ID else chosen.id  # "" as the other defaults
            if chosen.provider in providers and chosen.model:
                return pinned, chosen.provider, chosen.model
            _, provider, model = await self._initial_model()
            return pinned, provider, model
        last = await self._store.get_setting(LAST_USED_SETTING, None)
        if isinstance(last, dict):
            agent_id, provider, model = (str(last.get(k) or "") for k in ("agent_id", "provider", "model"))
            if provider in providers and model:
                return agent_id, provider, model
        agent = await agents.get_agent()
        if agent.provider in providers and agent.model:
            return "", agent.provider, agent.model
        default = await self._store.get_setting(DEFAULT_PROVIDER_SETTING, "")
        name = default if default in providers else next(iter(providers), "")
        if not name:
            return "", "", ""  # no provider yet: the chat asks for a model once there is one
        model = providers[name].default_model
        if not model and name == default:
            model = str(await self._store.get_setting(DEFAULT_MODEL_SETTING, "") or "")
        return "", name, model

    async def remember_last_used(self, info: SessionInfo) -> None:
        """Make a session's agent, provider and model the ones the next new chat starts with."""
        used = (info.agent_id, info.provider, info.model)
        if not info.provider or not info.model or used == self._last_used:
            return
        self._last_used = used
        await self._store.set_setting(
            LAST_USED_SETTING, {"agent_id": info.agent_id, "provider": info.provider, "model": info.model}
        )

    async def list_sessions(
        self,
        *,
        archived: bool = False,
        limit: int = 500,
        offset: int = 0,
        after: SessionInfo | None = None,
        project_id: str | None = None,
    ) -> list[SessionInfo]:
        sessions = await self._store.list_sessions(
            archived=archived, limit=limit, offset=offset, after=after, project_id=project_id
        )
        return self._shown([s for s in sessions if s.id not in self._pending_deletes])

    async def search_sessions(
        self, query: str, *, limit: int = 50, archived: bool | None = None, project_id: str | None = None
    ) -> list[SessionInfo]:
        if not query.strip():
            return []
        sessions = await self._store.search_sessions(
            query, limit=limit, archived=archived, project_id=project_id
        )
        return self._shown([s for s in sessions if s.id not in self._pending_deletes])

    async def rename_session(self, session_id: str, title: str) -> None:
        self.session_changed(await self._store.rename_session(session_id, title.strip(), by_user=True))

    async def pin_session(self, session_id: str, pinned: bool) -> None:
        self.session_changed(await self._store.pin_session(session_id, pinned))

    async def set_session_model(self, session_id: str, provider: str, model: str) -> None:
        """Pin another model to the session; it also becomes the model new chats start with."""
        info = await self._store.update_session(session_id, provider=provider, model=model)
        self.session_changed(info)
        await self.remember_last_used(info)

    async def set_session_context(self, session_id: str, context: StickyContext) -> SessionInfo:
        """Store the session's own sticky context (on top of its agent's); the next request reads it."""
        info = await self._store.update_session(session_id, context=context)
        self.session_changed(info)
        return info

    async def get_draft(self, session_id: str) -> Draft | None:
        """The unsent text and attachments of a session, if any."""
        return Draft.from_json(await self._store.get_ui_state(draft_key(session_id), None))

    async def save_draft(self, session_id: str, draft: Draft | None) -> None:
        """Keep (or with ``None`` or an empty draft, forget) a session's unsent prompt."""
        value = draft.to_json() if draft is not None and not draft.empty else None
        await self._store.set_ui_state(draft_key(session_id), value)

    # -- archive, delete with undo, fork -----------------------------------------------------------

    async def archive_session(self, session_id: str, archived: bool) -> None:
        """Archive (or bring back) a session; archiving stops its running turn (the text is kept)
        and closes its live conversation, so an open tab closes on the ``SessionUpdated``."""
        self.session_changed(await self._store.archive_session(session_id, archived))
        if archived:
            await self.close_session(session_id)

    async def delete_session(self, session_id: str) -> None:
        """Remove a session now, undoably: see the module doc (``restore_session``, ``purge_deleted``)."""
        if session_id in self._pending_deletes:
            return
        timer = asyncio.get_running_loop().call_later(
            self.undo_seconds, lambda: self._engine.spawn(self._purge(session_id))
        )
        self._pending_deletes[session_id] = timer
        self.tell(SessionRemoved(session_id))  # before any wait: the tab closes at once
        await self.close_session(session_id)

    async def restore_session(self, session_id: str) -> SessionInfo | None:
        """Undo a pending delete; ``None`` when there is none (never deleted, or too late)."""
        timer = self._pending_deletes.pop(session_id, None)
        if timer is None:
            return None
        timer.cancel()
        info = await self._store.get_session(session_id)
        if info is not None:
            self.tell(SessionRestored(info))
        return info

    def pending_deletes(self) -> list[str]:
        """Sessions deleted but still restorable."""
        return list(self._pending_deletes)

    def is_deleted(self, session_id: str) -> bool:
        """Deleted but still restorable: absent from listings, search and exports."""
        return session_id in self._pending_deletes

    async def purge_deleted(self) -> None:
        """Carry out every pending delete now (closing); a failure is logged, never raised."""
        for session_id in list(self._pending_deletes):
            try:
                await self._purge(session_id)
            except Exception:
                log.exception("could not delete session %s", session_id)

    async def _purge(self, session_id: str) -> None:
        timer = self._pending_deletes.pop(session_id, None)
        if timer is None:
            return
        timer.cancel()
        await self._store.delete_session(session_id)
        await self._store.set_ui_state(draft_key(session_id), None)
        await self._engine.workspace.collect()  # its file snapshots, unless another chat shares them

    async def fork_session(self, session_id: str, leaf_id: str | None = None) -> SessionInfo:
        """A new session holding a copy of the path to ``leaf_id`` (default: the active leaf).

        The copy keeps the source's agent, provider and model; ``SessionForked`` tells the
        windows to open it.
        """
        source = await self._store.get_session(session_id)
        if source is None or session_id in self._pending_deletes:
            raise SessionClosedError()
        tree = await self.tree(session_id)
        copies = tree.fork_path(leaf_id)
        info = await self._store.create_session(
            title=f"{source.display_title} (copy)",
            agent_id=source.agent_id,
            provider=source.provider,
            model=source.model,
        )
        if copies:
            await self._store.append_messages(info.id, copies)
        fresh = await self._store.get_session(info.id) or info
        self.session_changed(fresh)
        self.tell(SessionForked(session_id, fresh))
        return fresh

    # -- observers -----------------------------------------------------------------------------------

    def subscribe_sessions(self, callback: SessionObserver) -> Unsubscribe:
        self._observers.append(callback)

        def unsubscribe() -> None:
            if callback in self._observers:
                self._observers.remove(callback)

        return unsubscribe

    def session_changed(self, info: SessionInfo) -> None:
        """A session's row changed here: its tab and every session observer hear it once."""
        if info.id in self._pending_deletes:
            return  # a late update (a cancelled turn's last write) must not bring the row back
        event = SessionUpdated(info)
        live = self._live.get(info.id)
        if live is not None:
            live.info = info
        watch = self._engine.change_watch
        if watch is not None and not watch.is_news(info):
            return  # the change feed announced it already (or this engine did)
        if live is not None:
            live.emit(event)
        self.tell(event)

    def tell(self, event: SessionEvent) -> None:
        """Tell every session observer (one that fails is logged, the others still hear it)."""
        for observer in list(self._observers):
            try:
                observer(event)
            except Exception:
                log.exception("session observer failed on %s", type(event).__name__)

    async def changed_elsewhere(self, info: SessionInfo) -> None:
        """Another instance changed a session (the change watch has updated an open tree)."""
        if info.id not in self._pending_deletes:
            self.session_changed(info)

    async def removed_elsewhere(self, session_id: str) -> None:
        """Another process deleted a session this engine has shown."""
        if session_id in self._pending_deletes:
            return
        self.tell(SessionRemoved(session_id))
        await self.close_session(session_id)

    def changes_receiving(self, receiving: bool) -> None:
        """The change feed lost the database, or has it back: every open tab says so."""
        for live in list(self._live.values()):
            live.emit(ChangesReceiving(live.session_id, receiving))

    def _tell_not_receiving(self, live: LiveConversation) -> None:
        """A tab opened while other instances' changes do not arrive hears so once it has subscribed."""
        watch = self._engine.change_watch
        if watch is None or watch.receiving is not False:
            return

        def tell() -> None:
            if watch.receiving is False:  # not back meanwhile (that news went to every tab)
                live.emit(ChangesReceiving(live.session_id, False))

        asyncio.get_running_loop().call_soon(tell)

    def _shown(self, sessions: list[SessionInfo]) -> list[SessionInfo]:
        """Sessions a window is about to show: the change watch keeps them current."""
        watch = self._engine.change_watch
        if watch is not None:
            watch.remember(sessions)
        return sessions
