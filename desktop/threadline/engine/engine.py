"""The engine: one registry of live conversations, their turns, and everything around them.

This is the implementation of ``threadline.engine.api.EngineApi``, used by the
window and by the command line alike. It owns the store, the provider clients
and the tool registry, and is passed to whoever needs it (no global object).

Session lifecycle (the registry is the one owner of a session's state):

* A session stores its agent, provider and model from the moment it is created:
  ``new_session`` takes the ones used last (``LAST_USED_SETTING``, updated when a
  model is picked or a prompt is sent) and only when nothing was ever used the
  default provider. Adding or removing a provider never changes a session; a
  session whose provider is gone keeps its history and asks for a model.
* Deleting is undoable and owned here, not by a window: ``delete_session`` takes
  the session out of the registry at once (a running turn is cancelled, its
  partial reply stored), emits ``SessionRemoved`` to every session observer, and
  deletes the stored session only after ``undo_seconds`` or at ``aclose``
  (``purge_deleted``). Meanwhile it is absent from listings and search and cannot
  be opened; ``restore_session`` cancels the delete and emits ``SessionRestored``,
  which a window uses to reopen the tab it closed. The CLI and every window thus
  agree on what exists.
* Archiving cancels a running turn and closes the live conversation (a window
  closes the tab on the ``SessionUpdated`` with ``archived``); forking emits
  ``SessionForked`` so the window opens the copy.
* Drafts (unsent text and attachments) are stored per session (``get_draft``,
  ``save_draft``) and removed with the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from threadline.core.compare import CompareTarget
from threadline.core.config import (
    DEFAULT_AGENT_ID,
    ModelInfo,
    ProviderConfig,
)
from threadline.core.conversation import Conversation, InterruptedTools
from threadline.core.messages import ContextFile, ImageBlock, Message, ToolCall
from threadline.core.meter import ContextMeter
from threadline.core.project import is_colour
from threadline.core.session import SearchHit, SessionInfo, automatic_title
from threadline.core.sticky import StickyContext
from threadline.core.tree import ConversationTree
from threadline.engine.agent_sessions import Agents
from threadline.engine.agents import AgentService
from threadline.engine.api import EngineApi, Unsubscribe
from threadline.engine.approval import ApprovalHandler, Decision
from threadline.engine.change_watch import ChangeWatch
from threadline.engine.compare_runner import CompareRunner
from threadline.engine.context_meter import meter_for
from threadline.engine.conversation_controls import ConversationControls
from threadline.engine.drafts import Draft, draft_key
from threadline.engine.errors import NothingToSendError, SessionBusyError, SessionClosedError
from threadline.engine.events import (
    ActivePathChanged,
    ChangesReceiving,
    CompareStarted,
    MessageAdded,
    MessageChanged,
    SessionBusyElsewhere,
    SessionEvent,
    SessionForked,
    SessionRemoved,
    SessionRestored,
    SessionUpdated,
    TurnFailed,
    TurnStateChanged,
)
from threadline.engine.exporting import (
    ChatSource,
    ExportFormat,
    ExportProgress,
    export_chunks,
    write_to_file,
)
from threadline.engine.leases import ElsewhereWatch, SessionLeases, start_turn, taken_over_error
from threadline.engine.live import LiveConversation
from threadline.engine.message_ops import MessageOps
from threadline.engine.projects import ProjectService
from threadline.engine.providers import (
    CONTEXT_WINDOWS_SETTING,
    DEFAULT_MODEL_SETTING,
    DEFAULT_PROVIDER_SETTING,
    ProviderHub,
)
from threadline.engine.turn_runner import TurnRunner, user_error
from threadline.engine.usage_report import PriceBook, SessionUsage, session_usage
from threadline.llm import credentials
from threadline.llm.base import ChatParams
from threadline.llm.retry import RetryPolicy
from threadline.paths import make_data_dir_private
from threadline.store.errors import NotFoundError, StoreError
from threadline.store.key_values import NOTICES_SETTING
from threadline.store.repository import Store
from threadline.tools.builtin import builtin_tools
from threadline.tools.mcp_manager import McpServerManager
from threadline.tools.registry import ToolRegistry

if TYPE_CHECKING:
    # Import and export are rare, explicit actions: their formats and writers load with the
    # first of them, not with every start (~0.5 MB, docs/performance.md).
    from threadline.interchange.model import ImportedProject, ImportProgress, ImportReport

log = logging.getLogger("threadline.engine")

DATABASE_FILENAME = "threadline.db"
CLOSE_SAVE_GRACE = 5.0
"""Seconds ``aclose`` lets cancelled turns store their endings before giving unsaved writes up."""
SessionObserver = Callable[[SessionEvent], None]

LAST_USED_SETTING = "last_used_model"
"""``{"agent_id", "provider", "model"}`` of the last pick or send: what a new chat starts with."""
UNDO_SECONDS = 10.0
"""How long a deleted session can be restored before it is deleted from the store."""


class Engine:
    def __init__(
        self,
        store: Store,
        data_dir: Path,
        *,
        tools: ToolRegistry | None = None,
        retry_policy: RetryPolicy | None = None,
        provider_timeout: float = 120.0,
        undo_seconds: float = UNDO_SECONDS,
        watch_changes: bool = False,
        watch_since: int | None = None,
        lease_heartbeat: float | None = None,
    ) -> None:
        self.store = store
        self.leases = (
            SessionLeases(
                store,
                on_stop_requested=self.cancel,
                on_taken_over=self._lease_taken_over,
                heartbeat_every=lease_heartbeat,
            )
            if lease_heartbeat is not None
            else SessionLeases(store, on_stop_requested=self.cancel, on_taken_over=self._lease_taken_over)
        )
        """One turn per session across instances (``engine/leases.py``); a turn start that finds
        the chat busy elsewhere is refused at once (its prompt back in the composer)."""
        self._leaf_before: dict[str, str | None] = {}
        self.undo_seconds = undo_seconds
        self._pending_deletes: dict[str, asyncio.TimerHandle] = {}
        self._last_used: tuple[str, str, str] | None = None
        self.data_dir = data_dir
        self.tools = tools if tools is not None else ToolRegistry(builtin_tools())
        self.tool_servers = McpServerManager(store, self.tools, log_dir=data_dir / "logs")
        self.hub = ProviderHub(store, timeout=provider_timeout)
        self.controls = ConversationControls(store, self.ready)
        """Clear, tangents and checkpoints (``engine/conversation_controls.py``)."""
        self.projects = ProjectService(
            store,
            self._tell_sessions,
            open_conversations=self.open_conversations,
            session_changed=self.session_changed,
        )
        """Folders of chats with shared instructions and context (``engine/projects.py``)."""
        self.agents = Agents(self, AgentService(store), self.projects)
        """The agent library where it meets open chats (``engine/agent_sessions.py``)."""
        self.messages = MessageOps(store, self.live, self.running, self.spawn, undo_seconds)
        """Deleting messages (undoably) and editing replies (``engine/message_ops.py``)."""
        self._live: dict[str, LiveConversation] = {}
        self._opening: dict[str, asyncio.Future[LiveConversation]] = {}
        self._tasks: dict[str, asyncio.Task[object]] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self._session_observers: list[SessionObserver] = []
        self._approval_handler: ApprovalHandler | None = None
        self.change_watch: ChangeWatch | None = None
        """With ``watch_changes``: shows what other processes write (see ``change_watch``)."""
        self.elsewhere = ElsewhereWatch(self.leases, self.live, self.spawn)
        """Tells open tabs where their chat's turn runs elsewhere (``SessionBusyElsewhere``)."""
        if watch_changes:
            self.change_watch = ChangeWatch(
                store.url,
                changed=self._changed_elsewhere,
                removed=self._removed_elsewhere,
                live=self.live,
                busy=lambda session_id: self.running(session_id) or bool(self.messages.pending(session_id)),
                load_tree=self.store.load_tree,
                session_touched=self.elsewhere.touched,
                on_receiving=self._changes_receiving,
                projects_changed=self.projects.refresh,
                since=watch_since,
            )
            self.subscribe_sessions(self.change_watch.observe)
            self.change_watch.start()
        self.runner = TurnRunner(
            store,
            self.hub,
            self.tools,
            load_agent=self.agents.turn_agent,
            approval_handler=lambda: self._approve if self._approval_handler else None,
            retry_policy=retry_policy,
        )
        self.comparing = CompareRunner(
            store,
            self.hub,
            self.tools,
            sticky=self.runner.sticky,
            session_agent=self.agents.turn_agent,
            named_agent=self.agents.named_agent,
            approval_handler=lambda: self._approve if self._approval_handler else None,
            retry_policy=retry_policy,
        )
        """Several workers on one prompt (``engine/compare_runner.py``)."""

    @classmethod
    async def open(cls, data_dir: Path, *, database_url: str | None = None, **options: Any) -> Engine:
        """Open (creating and migrating) the store in ``data_dir`` or at ``database_url``."""
        made_private = make_data_dir_private(data_dir)  # cheap (a marker once done), before any loop work
        if made_private:
            log.info("made private (owner only): %s", ", ".join(str(p) for p in made_private))
        url = database_url or Store.sqlite_url(data_dir / DATABASE_FILENAME)
        store = await Store.open(url)  # backups go beside a SQLite file, wherever it is
        if options.get("watch_changes") and "watch_since" not in options:
            # Before anything is read: the feed connects later, and must not miss what
            # other instances write in between (see ``change_watch``).
            options["watch_since"] = await store.newest_change()
        engine = cls(store, data_dir, **options)
        engine.hub.set_user_windows(await store.get_setting(CONTEXT_WINDOWS_SETTING))
        return engine

    async def aclose(self) -> None:
        """Cancel running turns (their partial replies are stored) and close everything."""
        if self.change_watch is not None:
            await self.change_watch.aclose()  # first: no check runs while the rest closes
        await self.messages.purge()  # deletes still waiting for their undo window happen now
        await self.purge_deleted()
        await self._stop_tasks()
        await self.leases.aclose()
        await self.tool_servers.aclose()
        await self.hub.aclose()
        await self.store.close()

    # -- the registry: one live conversation per session ---------------------------------

    async def open_session(self, session_id: str) -> LiveConversation:
        if session_id in self._pending_deletes:
            raise SessionClosedError()
        live = self._live.get(session_id)
        if live is not None:
            if self.change_watch is not None:
                self.elsewhere.opened(session_id, first=False)  # another tab: told if busy elsewhere
                self._tell_not_receiving(live)
            return live
        pending = self._opening.get(session_id)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[LiveConversation] = asyncio.get_running_loop().create_future()
        self._opening[session_id] = future
        try:
            info = await self.store.get_session(session_id)
            if info is None:
                raise NotFoundError(f"no session {session_id!r}")
            tree = await self.store.load_tree(session_id)
            live = LiveConversation(info, Conversation(session_id, tree))
            if live.conversation.interrupted_tools() is not None:
                with contextlib.suppress(Exception):  # unread, its tools just count as unknown
                    await self.tool_servers.load()  # registers MCP tools, for interrupted_tools_unsure
            self._live[session_id] = live
            if self.change_watch is not None:
                self.change_watch.attach(live)  # its own changes are not taken back from the feed
                self.elsewhere.opened(session_id, first=True)  # a turn elsewhere may predate this open
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

    def running(self, session_id: str) -> bool:
        task = self._tasks.get(session_id)
        return task is not None and not task.done()

    async def wait_idle(self, session_id: str) -> None:
        """Wait for the running turn of a session, if any, to end and be stored (CLI and tests).

        A turn that ended with an error the user sees (``TurnFailed``) returns normally;
        an unexpected exception of the turn's task is raised here, not swallowed.
        Cancelling the waiter does not cancel the turn.
        """
        task = self._tasks.get(session_id)
        if task is None:
            return
        await asyncio.wait({task})
        if not task.cancelled() and (error := task.exception()) is not None:
            raise error

    async def release_caches(self) -> None:
        """Give back the database's page cache, e.g. after a long chat was closed (its
        pages were the cache's content; ``Store.release_page_cache``)."""
        await self.store.release_page_cache()

    async def close_session(self, session_id: str) -> None:
        """Forget the live conversation; a running turn is cancelled first (its text is kept)."""
        task = self._tasks.get(session_id)
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        await self.messages.purge(session_id)  # its tab, and so its Undo, is gone
        self._live.pop(session_id, None)
        self.runner.sticky.forget(session_id)

    # -- sessions ------------------------------------------------------------------------------

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
        info = await self.store.create_session(title=title, agent_id=agent_id, provider=provider, model=model)
        if project_id is not None:
            info = await self.store.set_session_project(info.id, project_id)
        self.session_changed(info)
        return info

    async def _initial_model(self, agent_id: str | None = None) -> tuple[str, str, str]:
        """The agent, provider and model of a new chat (``agent_id``: that agent, see ``new_session``)."""
        providers = {p.name: p for p in await self.store.list_providers()}
        if agent_id is not None:
            chosen = await self.agents.get_agent(agent_id)
            pinned = "" if chosen.id == DEFAULT_AGENT_ID else chosen.id  # "" as the other defaults
            if chosen.provider in providers and chosen.model:
                return pinned, chosen.provider, chosen.model
            _, provider, model = await self._initial_model()
            return pinned, provider, model
        last = await self.store.get_setting(LAST_USED_SETTING, None)
        if isinstance(last, dict):
            agent_id, provider, model = (str(last.get(k) or "") for k in ("agent_id", "provider", "model"))
            if provider in providers and model:
                return agent_id, provider, model
        agent = await self.agents.get_agent()
        if agent.provider in providers and agent.model:
            return "", agent.provider, agent.model
        default = await self.store.get_setting(DEFAULT_PROVIDER_SETTING, "")
        name = default if default in providers else next(iter(providers), "")
        if not name:
            return "", "", ""  # no provider yet: the chat asks for a model once there is one
        model = providers[name].default_model
        if not model and name == default:
            model = str(await self.store.get_setting(DEFAULT_MODEL_SETTING, "") or "")
        return "", name, model

    async def remember_last_used(self, info: SessionInfo) -> None:
        """Make a session's agent, provider and model the ones the next new chat starts with."""
        used = (info.agent_id, info.provider, info.model)
        if not info.provider or not info.model or used == self._last_used:
            return
        self._last_used = used
        await self.store.set_setting(
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
        sessions = await self.store.list_sessions(
            archived=archived, limit=limit, offset=offset, after=after, project_id=project_id
        )
        return self._shown([s for s in sessions if s.id not in self._pending_deletes])

    async def search_sessions(
        self, query: str, *, limit: int = 50, archived: bool | None = None, project_id: str | None = None
    ) -> list[SessionInfo]:
        if not query.strip():
            return []
        sessions = await self.store.search_sessions(
            query, limit=limit, archived=archived, project_id=project_id
        )
        return self._shown([s for s in sessions if s.id not in self._pending_deletes])

    async def rename_session(self, session_id: str, title: str) -> None:
        self.session_changed(await self.store.rename_session(session_id, title.strip(), by_user=True))

    async def pin_session(self, session_id: str, pinned: bool) -> None:
        self.session_changed(await self.store.pin_session(session_id, pinned))

    async def archive_session(self, session_id: str, archived: bool) -> None:
        """Archive (or bring back) a session; archiving stops its running turn (the text is kept)
        and closes its live conversation, so an open tab closes on the ``SessionUpdated``."""
        self.session_changed(await self.store.archive_session(session_id, archived))
        if archived:
            await self.close_session(session_id)

    async def delete_session(self, session_id: str) -> None:
        """Remove a session now, undoably: see the module doc (``restore_session``, ``purge_deleted``)."""
        if session_id in self._pending_deletes:
            return
        timer = asyncio.get_running_loop().call_later(
            self.undo_seconds, lambda: self.spawn(self._purge(session_id))
        )
        self._pending_deletes[session_id] = timer
        self._tell_sessions(SessionRemoved(session_id))  # before any wait: the tab closes at once
        await self.close_session(session_id)

    async def restore_session(self, session_id: str) -> SessionInfo | None:
        """Undo a pending delete; ``None`` when there is none (never deleted, or too late)."""
        timer = self._pending_deletes.pop(session_id, None)
        if timer is None:
            return None
        timer.cancel()
        info = await self.store.get_session(session_id)
        if info is not None:
            self._tell_sessions(SessionRestored(info))
        return info

    def pending_deletes(self) -> list[str]:
        """Sessions deleted but still restorable."""
        return list(self._pending_deletes)

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
        await self.store.delete_session(session_id)
        await self.store.set_ui_state(draft_key(session_id), None)

    async def fork_session(self, session_id: str, leaf_id: str | None = None) -> SessionInfo:
        """A new session holding a copy of the path to ``leaf_id`` (default: the active leaf).

        The copy keeps the source's agent, provider and model; ``SessionForked`` tells the
        windows to open it.
        """
        source = await self.store.get_session(session_id)
        if source is None or session_id in self._pending_deletes:
            raise SessionClosedError()
        tree = await self._tree(session_id)
        copies = tree.fork_path(leaf_id)
        info = await self.store.create_session(
            title=f"{source.display_title} (copy)",
            agent_id=source.agent_id,
            provider=source.provider,
            model=source.model,
        )
        if copies:
            await self.store.append_messages(info.id, copies)
        fresh = await self.store.get_session(info.id) or info
        self.session_changed(fresh)
        self._tell_sessions(SessionForked(session_id, fresh))
        return fresh

    async def search(self, query: str, limit: int = 50, *, project_id: str | None = None) -> list[SearchHit]:
        if not query.strip():
            return []
        hits = await self.store.search(query, limit=limit, project_id=project_id)
        hidden = self.messages.hidden()
        return [h for h in hits if h.session_id not in self._pending_deletes and h.message_id not in hidden]

    async def context_meter(self, session_id: str, prompt: str = "") -> ContextMeter:
        """What the next request of an open session would hold, part by part, against its window."""
        live = self._live.get(session_id)
        if live is None:
            raise SessionClosedError(session_id)
        return meter_for(live, await self.agents.turn_agent(live), self.runner, self.hub, self.tools, prompt)

    async def price_book(self) -> PriceBook:
        """The prices replies are costed with (shipped and the user's own), read now."""
        return await PriceBook.load(self.store)

    async def usage(self, session_id: str, prices: PriceBook | None = None) -> SessionUsage:
        """Tokens, speed and cost of every reply of a session, from its stored history.

        ``prices`` saves reading the price table again when many sessions are summed.
        """
        book = prices if prices is not None else await PriceBook.load(self.store)
        return session_usage(session_id, await self._tree(session_id), book)

    async def export_markdown(self, session_id: str) -> str:
        from threadline.core.transcript import transcript_markdown  # with the first export

        info = await self.store.get_session(session_id)
        tree = await self._tree(session_id)
        return transcript_markdown(tree.path(), info.display_title if info else "")

    def export_chunks(
        self,
        fmt: ExportFormat,
        session_ids: Sequence[str] | None = None,
        progress: ExportProgress | None = None,
        *,
        include_thinking: bool = False,
    ) -> AsyncIterator[str]:
        """The text of an export, a chat at a time (``None``: every chat, archived ones last);
        Markdown shows replies' reasoning only with ``include_thinking`` (JSON always has it)."""
        source = ChatSource(
            self.store.get_session, self.store.list_sessions, self._tree, lambda: self._pending_deletes
        )
        total = None if session_ids is None else len(dict.fromkeys(session_ids))
        return export_chunks(
            source.chats(session_ids),
            fmt,
            progress,
            total,
            project_of=self.projects.get,
            include_thinking=include_thinking,
        )

    async def export(
        self,
        path: Path,
        fmt: ExportFormat,
        session_ids: Sequence[str] | None = None,
        progress: ExportProgress | None = None,
        *,
        include_thinking: bool = False,
    ) -> None:
        """Write an export to ``path``, replacing it only once complete (``ExportError`` on failure)."""
        chunks = self.export_chunks(fmt, session_ids, progress, include_thinking=include_thinking)
        await write_to_file(path, chunks)

    async def import_file(
        self, path: Path, progress: Callable[[ImportProgress], None] | None = None
    ) -> ImportReport:
        """Import a ChatGPT, Claude, Open WebUI or Threadline export (``engine.importer``);
        new and updated chats are announced as ``SessionUpdated``; cancel → ``report.cancelled``."""
        from threadline.engine.importer import import_file

        return await import_file(
            self.store,
            path,
            progress=progress,
            announce=self._changed_elsewhere,
            place_in_project=self._place_imported,
        )

    async def _place_imported(self, session_id: str, described: ImportedProject) -> SessionInfo:
        """Put an imported chat in the project its file names: the one here with that name,
        or a new one with the file's colour and instructions (never its context files)."""
        project = next(
            (p for p in await self.projects.list_projects() if p.name.lower() == described.name.lower()), None
        )
        if project is None:
            colour = described.colour if is_colour(described.colour) else ""
            project = await self.projects.create_project(
                described.name, colour=colour, instructions=described.instructions
            )
        return await self.store.set_session_project(session_id, project.id)

    def subscribe_sessions(self, callback: SessionObserver) -> Unsubscribe:
        self._session_observers.append(callback)

        def unsubscribe() -> None:
            if callback in self._session_observers:
                self._session_observers.remove(callback)

        return unsubscribe

    async def set_session_model(self, session_id: str, provider: str, model: str) -> None:
        """Pin another model to the session; it also becomes the model new chats start with."""
        info = await self.store.update_session(session_id, provider=provider, model=model)
        self.session_changed(info)
        await self.remember_last_used(info)

    async def set_session_context(self, session_id: str, context: StickyContext) -> SessionInfo:
        """Store the session's own sticky context (on top of its agent's); the next request reads it."""
        info = await self.store.update_session(session_id, context=context)
        self.session_changed(info)
        return info

    async def get_draft(self, session_id: str) -> Draft | None:
        """The unsent text and attachments of a session, if any."""
        return Draft.from_json(await self.store.get_ui_state(draft_key(session_id), None))

    async def save_draft(self, session_id: str, draft: Draft | None) -> None:
        """Keep (or with ``None`` or an empty draft, forget) a session's unsent prompt."""
        value = draft.to_json() if draft is not None and not draft.empty else None
        await self.store.set_ui_state(draft_key(session_id), value)

    # -- turns -------------------------------------------------------------------------------------

    def send(
        self,
        session_id: str,
        text: str,
        *,
        images: Sequence[ImageBlock] = (),
        context: Sequence[ContextFile] = (),
    ) -> None:
        """Stage the prompt now (the tab shows it at once) and run the turn in a task."""
        if not (text.strip() or images or context):
            raise NothingToSendError()
        live = self.ready(session_id)
        prompt = live.conversation.stage(text, images=tuple(images), context=tuple(context))
        live.emit(MessageAdded(session_id, prompt))
        self.spawn(self.remember_last_used(live.info))
        self._start(live, stored_first=(prompt,), title_from=text)

    def send_compare(
        self,
        session_id: str,
        text: str,
        targets: Sequence[CompareTarget],
        *,
        images: Sequence[ImageBlock] = (),
        context: Sequence[ContextFile] = (),
    ) -> None:
        """Send one prompt to 2–4 models or agents at once; each reply is a version under it.

        One turn: the session is busy until every worker ended or one was picked
        (``pick_compare``). ``TreeError`` when the targets are fewer than two or more than four.
        """
        if not (text.strip() or images or context):
            raise NothingToSendError()
        live = self.ready(session_id)
        prompt = live.conversation.start_compare(
            text, tuple(targets), images=tuple(images), context=tuple(context)
        )
        live.emit(MessageAdded(session_id, prompt))
        live.emit(CompareStarted(session_id, prompt.id, tuple(targets)))
        # stored_first: a compare turned away (busy elsewhere) gives the prompt back, as a send does.
        self._start(live, stored_first=(prompt,), title_from=text, comparing=True)

    def stop_compare_worker(self, session_id: str, index: int) -> None:
        """Stop one worker of the running compare; the others go on."""
        self.comparing.stop_worker(session_id, index)

    async def pick_compare(self, session_id: str, reply_id: str) -> None:
        """Continue with ``reply_id`` (one of a prompt's replies): it becomes the active path,
        and the model that wrote it the session's model.

        During a compare the other workers stop (their text kept) and the turn ends;
        after one, it is a version switch to that reply's newest branch.
        """
        live = self._live.get(session_id)
        if live is None:
            raise SessionClosedError()
        compare = live.conversation.compare
        worker = compare.worker_of(reply_id) if compare is not None else None
        reply = live.conversation.tree.get(reply_id)
        used = (reply.metadata.provider, reply.metadata.model) if reply.metadata else ("", "")
        if worker is not None and self.comparing.pick(session_id, worker.index):
            if not worker.target.agent_id:
                used = (worker.target.provider, worker.target.model)
            with contextlib.suppress(Exception):  # a worker's failure is its column's to show
                await self.wait_idle(session_id)
        else:
            live = self.ready(session_id)
            await self.set_active_leaf(session_id, live.conversation.tree.newest_leaf_under(reply_id))
        if all(used) and used != (live.info.provider, live.info.model):
            await self.set_session_model(session_id, *used)  # continuing a reply continues with its model

    def edit_and_resend(self, session_id: str, message_id: str, text: str) -> None:
        live = self.ready(session_id)
        prompt = live.conversation.edit(message_id, text)
        live.emit(ActivePathChanged(session_id, prompt.id))
        self._start(live, stored_first=(prompt,))

    def regenerate(self, session_id: str, message_id: str) -> None:
        live = self.ready(session_id)
        parent = live.conversation.regenerate(message_id)
        live.emit(ActivePathChanged(session_id, parent.id))
        self._start(live)

    def resume(self, session_id: str, message_id: str) -> None:
        """Continue a stopped reply: a leaf grows in place, one with later turns as a new version.

        The new version is stored as a new message (appended before anything is
        sent), never as an update of the reply the later turns were built on.
        """
        live = self.ready(session_id)
        reply = live.conversation.resume(message_id)
        if reply.id == message_id:
            live.emit(MessageChanged(session_id, reply))
            self._start(live, resuming=True)
        else:
            live.emit(ActivePathChanged(session_id, reply.id))
            self._start(live, stored_first=(reply,), resuming=True)

    def rerun_interrupted_tools(self, session_id: str) -> None:
        """Run again the tool calls Threadline stopped while they ran (a crash); the turn then goes on.

        Raises ``TreeError`` when the chat's last message is not such a round
        (``interrupted_tools`` says whether it is).
        """
        live = self.ready(session_id)
        answer = live.conversation.rerun_tools()
        live.emit(MessageChanged(session_id, answer))
        self._start(live)

    async def skip_interrupted_tools(self, session_id: str) -> None:
        """Leave the interrupted calls unrun: each is answered "interrupted", stored at once."""
        live = self.ready(session_id)
        answer = live.conversation.skip_tools()
        await self.store.update_message(answer)
        live.emit(MessageChanged(session_id, answer))

    def interrupted_tools(self, session_id: str) -> InterruptedTools | None:
        """The calls a crash stopped while they ran, at the chat's last message (``None``: none)."""
        live = self._live.get(session_id)
        return live.conversation.interrupted_tools() if live is not None else None

    def interrupted_tools_unsure(self, session_id: str) -> tuple[str, ...]:
        """Names of the interrupted calls' tools whose work may have gone on after the crash.

        A remote MCP server keeps working on a call whatever happens to Threadline, and a
        tool not known now cannot be vouched for; the processes of the shell tool and of
        stdio servers end with Threadline (docs/tools.md).
        """
        stopped = self.interrupted_tools(session_id)
        if stopped is None:
            return ()

        def ended(name: str) -> bool:
            if self.tools.get(name) is not None:
                return self.tools.ends_with_threadline(name)
            return self.tool_servers.runs_locally(name)  # a server whose tools are not listed yet

        return tuple(dict.fromkeys(call.name for call in stopped.calls if not ended(call.name)))

    def retry(self, session_id: str) -> None:
        """Ask again after a failure: a new version of the failed reply (or an answer to the prompt)."""
        live = self.ready(session_id)
        leaf_id = live.conversation.tree.active_leaf
        if leaf_id is None:
            return
        leaf = live.conversation.tree.get(leaf_id)
        target = (
            live.conversation.regenerate(leaf.id) if leaf.is_assistant else live.conversation.answer(leaf.id)
        )
        live.emit(ActivePathChanged(session_id, target.id))
        self._start(live)

    async def stop_elsewhere(self, session_id: str) -> bool:
        """Ask the instance running a turn in this chat (another window, process or machine) to stop it.

        That instance stops as its own Stop would, at its next heartbeat; ``False`` when
        no turn runs anywhere (the lease is gone).
        """
        lease = await self.leases.request_stop(session_id)
        live = self._live.get(session_id)
        if live is not None:
            live.emit(SessionBusyElsewhere(session_id, lease.host if lease else "", lease is not None))
        return lease is not None

    async def busy_elsewhere(self, session_id: str) -> str | None:
        """The host whose instance runs a turn in this chat right now, or ``None`` (free, this
        engine, or a dead holder whose lease has expired)."""
        lease = await self.leases.elsewhere(session_id)
        return lease.host if lease is not None else None

    async def catch_up(self, session_id: str) -> None:
        """Take the stored tree of an open, idle chat now, before a send that waited for another
        instance's turn: the prompt goes after what that turn wrote, whether or not the change
        feed has brought it here yet."""
        from threadline.engine.change_watch import reload_tree

        live = self._live.get(session_id)
        if live is not None and live.conversation.ready_for_input:
            await reload_tree(live, self.store.load_tree)

    def _changes_receiving(self, receiving: bool) -> None:
        """The change feed lost the database, or has it back: every open tab says so."""
        for live in list(self._live.values()):
            live.emit(ChangesReceiving(live.session_id, receiving))

    def _tell_not_receiving(self, live: LiveConversation) -> None:
        """A tab opened while other instances' changes do not arrive hears so once it has subscribed."""
        watch = self.change_watch
        if watch is None or watch.receiving is not False:
            return

        def tell() -> None:
            if watch.receiving is False:  # not back meanwhile (that news went to every tab)
                live.emit(ChangesReceiving(live.session_id, False))

        asyncio.get_running_loop().call_soon(tell)

    def _lease_taken_over(self, session_id: str, host: str) -> None:
        """This turn's lease went elsewhere while it was cut off: the tab says why it stops."""
        live = self._live.get(session_id)
        if live is not None:
            live.emit(TurnFailed(session_id, taken_over_error(host)))

    def cancel(self, session_id: str) -> None:
        """Stop the running turn or compaction; its partial reply and cancelled results are stored.

        A turn that has already ended and only waits for the store to accept its
        last writes is not cancelled: that would lose them (the tab says "Saving…").
        """
        task = self._tasks.get(session_id)
        if task is not None and not task.done() and not self.runner.saving(session_id):
            task.cancel()

    async def switch_version(self, session_id: str, message_id: str, offset: int) -> None:
        live = self.ready(session_id)
        origin = live.conversation.tree.tangent_origin
        leaf = live.conversation.switch_version(message_id, offset)
        await self.store.set_active_leaf(session_id, leaf)
        live.emit(ActivePathChanged(session_id, leaf))
        await self.controls.store_tangent_if_left(live, origin)

    async def set_active_leaf(self, session_id: str, leaf_id: str) -> None:
        live = self.ready(session_id)
        origin = live.conversation.tree.tangent_origin
        live.conversation.set_active_leaf(leaf_id)
        await self.store.set_active_leaf(session_id, leaf_id)
        live.emit(ActivePathChanged(session_id, leaf_id))
        await self.controls.store_tangent_if_left(live, origin)

    async def compact(
        self, session_id: str, instructions: str = "", *, keep_turns: int = 2
    ) -> Message | None:
        """Summarise the older part of the conversation now; the summary, or ``None`` if it failed.

        A failure is announced as ``TurnFailed`` (the tab's banner shows it), so a caller
        only needs the result to know whether to show success. ``keep_turns`` turns stay
        verbatim; 0 summarises everything, which is what a context overflow calls for:
        there the latest turn is the one that no longer fits.
        """
        live = self.ready(session_id)
        task = asyncio.create_task(
            self._compact(live, instructions, keep_turns), name=f"compact-{session_id}"
        )
        self._tasks[session_id] = task
        try:
            await asyncio.gather(task, return_exceptions=True)
        finally:
            if self._tasks.get(session_id) is task:
                del self._tasks[session_id]
        return None if task.cancelled() or task.exception() is not None else task.result()

    async def _compact(self, live: LiveConversation, instructions: str, keep_turns: int) -> Message | None:
        if not await start_turn(self.leases, live, (), None):
            return None
        try:
            agent = await self.agents.turn_agent(live)
            config, model = await self.hub.resolve(live.info, agent)
            params = ChatParams.for_agent(model, agent)
            provider = await self.hub.client(config)
            limit, keep = self.runner.compaction_limits(agent, config.name, model)
            return await self.runner.compact(
                live,
                provider,
                params,
                keep_turns=keep_turns,
                instructions=instructions,
                limit=limit,
                keep_tokens=keep,
            )
        except asyncio.CancelledError:
            raise
        except Exception as err:
            live.emit(TurnFailed(live.session_id, user_error(err)))
            return None
        finally:
            await self.leases.release(live.session_id)

    # -- approval ----------------------------------------------------------------------------------

    def set_approval_handler(self, handler: ApprovalHandler | None) -> None:
        """The UI's inline approval prompt; ``None`` refuses calls that need asking."""
        self._approval_handler = handler

    async def _approve(self, session_id: str, calls: tuple[ToolCall, ...]) -> Sequence[Decision]:
        assert self._approval_handler is not None
        decisions = list(await self._approval_handler(session_id, calls))
        always = {d.call_id for d in decisions if d.allow and d.always}
        if always:
            live = self._live.get(session_id)
            agent = await self.agents.get_agent(live.info.agent_id if live else DEFAULT_AGENT_ID)
            rules = tuple(dict.fromkeys(self.tools.always_allow_rule(c) for c in calls if c.id in always))
            await self.agents.save_agent(replace(agent, approval_rules=rules + agent.approval_rules))
        return decisions

    # -- providers, agents, settings ----------------------------------------------------------------

    async def list_providers(self) -> list[ProviderConfig]:
        return await self.store.list_providers()

    async def save_provider(
        self, config: ProviderConfig, api_key: str | None = None, *, previous_name: str | None = None
    ) -> None:
        """Save ``config``; its key and typed header values go to the keychain first.

        ``previous_name``: the provider is renamed from that one (its header values move along,
        then the old provider is removed). Raises ``CredentialsError`` when a secret cannot be
        kept (no keychain: the message says how to use an environment variable).
        """
        previous = await self.store.get_provider(previous_name or config.name)
        config = credentials.store_headers(config, previous)  # raises before anything is saved
        if api_key:
            credentials.set_api_key(config.name, api_key)  # raises when there is no keychain
        await self.store.save_provider(config)
        await self.hub.forget(config.name)
        if previous is not None and previous.name != config.name:
            await self.remove_provider(previous.name)
        elif previous is not None:
            credentials.forget_headers(previous, config)

    async def remove_provider(self, name: str) -> None:
        stored = await self.store.get_provider(name)
        await self.store.remove_provider(name)
        await self.hub.forget(name)
        if stored is not None:
            credentials.forget_headers(stored, None)
        with contextlib.suppress(credentials.KeychainUnavailableError):
            credentials.delete_api_key(name)

    async def list_models(self, provider: str) -> list[ModelInfo]:
        config = await self.store.get_provider(provider)
        if config is None:
            raise NotFoundError(
                f"no provider {provider!r}",
                user_message=f"The provider {provider!r} no longer exists. Pick another model.",
            )
        return await self.hub.list_models(config)

    def remember_models(self, provider: str, models: list[ModelInfo]) -> None:
        """Take a listing saved by an earlier run, so its context windows guide budgets and
        compaction from the first turn, before the server is asked again."""
        self.hub.remember_models(provider, models)

    async def detect_local_servers(self) -> list[ProviderConfig]:
        from threadline.llm.local import detect_local_servers

        return await detect_local_servers()

    def has_api_key(self, provider: str) -> bool:
        return credentials.has_keychain_entry(provider)

    async def get_setting(self, key: str, default: Any = None) -> Any:
        return await self.store.get_setting(key, default)

    async def take_notices(self) -> list[str]:
        """What an upgrade has to tell the user (``NOTICES_SETTING``), once: read and cleared."""
        notices = await self.store.get_setting(NOTICES_SETTING, None)
        if not notices:
            return []
        await self.store.set_setting(NOTICES_SETTING, None)
        return [str(n) for n in notices] if isinstance(notices, list) else [str(notices)]

    async def set_setting(self, key: str, value: Any) -> None:
        await self.store.set_setting(key, value)
        if key == CONTEXT_WINDOWS_SETTING:
            self.hub.set_user_windows(value)

    # -- internals -------------------------------------------------------------------------------------

    def ready(self, session_id: str) -> LiveConversation:
        live = self._live.get(session_id)
        if live is None:
            raise SessionClosedError()
        if self.running(session_id) or not live.conversation.ready_for_input:
            raise SessionBusyError()
        self._leaf_before[session_id] = live.conversation.tree.active_leaf  # where a refused start goes back
        return live

    def _start(
        self,
        live: LiveConversation,
        *,
        stored_first: Sequence[Message] = (),
        resuming: bool = False,
        title_from: str = "",
        comparing: bool = False,
    ) -> None:
        live.emit(TurnStateChanged(live.session_id, live.conversation.state))
        task = asyncio.create_task(
            self._run_turn(live, stored_first, resuming, title_from, comparing),
            name=f"turn-{live.session_id}",
        )
        self._tasks[live.session_id] = task
        task.add_done_callback(self._turn_done)

    async def _run_turn(
        self,
        live: LiveConversation,
        stored_first: Sequence[Message],
        resuming: bool,
        title_from: str,
        comparing: bool = False,
    ) -> None:
        """Run the turn, then (only then) announce its final state.

        "Idle" means saved: the runner returns once its writer has stored everything,
        and this task leaves ``_tasks`` before the final ``TurnStateChanged``, so an
        observer may send again from inside that very event.
        """
        session_id = live.session_id

        def prompt_stored() -> None:
            self.spawn(self._refresh_info(session_id))
            if title_from and not live.info.title:
                self.spawn(self._automatic_title(live, title_from))

        leased = False
        try:
            leaf_before = self._leaf_before.pop(session_id, None)
            leased = await start_turn(self.leases, live, stored_first, leaf_before)
            if not leased:
                return
            if comparing:
                await self.comparing.run(live, on_stored=prompt_stored)
            else:
                await self.runner.run(
                    live, stored_first=stored_first, resuming=resuming, on_stored=prompt_stored
                )
        finally:
            if leased:  # the runner returned once its writes were saved: idle means saved, here too
                await self.leases.release(session_id)
            if self._tasks.get(session_id) is asyncio.current_task():
                del self._tasks[session_id]
            self.spawn(self._refresh_info(session_id))
            failure = self.runner.take_failure(session_id)
            if failure is not None:
                live.emit(failure)
            live.emit(TurnStateChanged(session_id, live.conversation.state))

    async def _stop_tasks(self) -> None:
        """Cancel turns and background work, letting cancelled turns store their endings.

        A turn the store keeps refusing is given ``CLOSE_SAVE_GRACE`` seconds, then
        cancelled again, which gives its unsaved writes up (logged). Work the
        cancelled tasks spawn on their way out is cancelled too: nothing is left
        pending when the store closes.
        """
        turns = list(self._tasks.values())
        for task in turns:
            task.cancel()
        if turns:
            _, late = await asyncio.wait(turns, timeout=CLOSE_SAVE_GRACE)
            for task in late:
                task.cancel()
            await asyncio.gather(*turns, return_exceptions=True)
        while self._background:
            background = list(self._background)
            for task in background:
                task.cancel()
            await asyncio.gather(*background, return_exceptions=True)

    @staticmethod
    def _turn_done(task: asyncio.Task[None]) -> None:
        """Retrieve a turn's unexpected exception (``wait_idle`` raises it too), so none goes unseen."""
        if not task.cancelled() and task.exception() is not None:
            log.error("turn task %s failed", task.get_name(), exc_info=task.exception())

    async def _automatic_title(self, live: LiveConversation, prompt: str) -> None:
        title = automatic_title(prompt)
        if title:
            self.session_changed(await self.store.rename_session(live.session_id, title, by_user=False))

    async def _refresh_info(self, session_id: str) -> None:
        info = await self.store.get_session(session_id)
        if info is not None:
            self.session_changed(info)

    async def _tree(self, session_id: str) -> ConversationTree:
        live = self._live.get(session_id)
        return live.conversation.tree if live else await self.store.load_tree(session_id)

    def session_changed(self, info: SessionInfo) -> None:
        if info.id in self._pending_deletes:
            return  # a late update (a cancelled turn's last write) must not bring the row back
        event = SessionUpdated(info)
        live = self._live.get(info.id)
        if live is not None:
            live.info = info
        if self.change_watch is not None and not self.change_watch.is_news(info):
            return  # the change feed announced it already (or this engine did)
        if live is not None:
            live.emit(event)
        self._tell_sessions(event)

    def _shown(self, sessions: list[SessionInfo]) -> list[SessionInfo]:
        """Sessions a window is about to show: the change watch keeps them current."""
        if self.change_watch is not None:
            self.change_watch.remember(sessions)
        return sessions

    async def _changed_elsewhere(self, info: SessionInfo) -> None:
        """Another instance changed a session (the change watch has updated an open tree)."""
        if info.id not in self._pending_deletes:
            self.session_changed(info)

    async def _removed_elsewhere(self, session_id: str) -> None:
        """Another process deleted a session this engine has shown."""
        if session_id in self._pending_deletes:
            return
        self._tell_sessions(SessionRemoved(session_id))
        await self.close_session(session_id)

    def _tell_sessions(self, event: SessionEvent) -> None:
        for observer in list(self._session_observers):
            self._notify(observer, event)

    @staticmethod
    def _notify(observer: SessionObserver, event: SessionEvent) -> None:
        try:
            observer(event)
        except Exception:
            log.exception("session observer failed on %s", type(event).__name__)

    def spawn(self, coroutine: Any) -> None:
        task = asyncio.create_task(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background_done)

    def _background_done(self, task: asyncio.Task[Any]) -> None:
        self._background.discard(task)
        error = None if task.cancelled() else task.exception()
        if isinstance(error, StoreError):  # a listing refresh or title the store refused: not a bug
            log.warning("background store work failed: %s", error)
        elif error is not None:
            log.error("background task failed", exc_info=error)


if TYPE_CHECKING:

    def _implements_api(engine: Engine) -> EngineApi:
        return engine  # mypy checks Engine against the interface the UI is written for
