"""The engine: a small core holding the parts, and the facets the callers reach.

This is the implementation of ``threadline.engine.api.EngineApi``, used by the
window and by the command line alike. It owns the store, the provider clients
and the tool registry, and is passed to whoever needs it (no global object).

The core only builds, opens and closes the parts and runs background work for
them (``spawn``); everything a caller does goes through a facet with its own
protocol in ``engine/api.py`` (docs/design.md, "The engine: a core and its facets"),
as qutebrowser's tab keeps ``tab.scroller`` and ``tab.search``: ``sessions``
(``engine/registry.py``: the live conversations and their lifecycle), ``turns``
(``engine/turns.py``: send, compare, regenerate, stop, compact), ``library``
(``engine/library.py``: search, export, import, usage), ``agents``, ``projects``,
``messages``, ``controls``, ``providers``, ``settings``, ``database``, ``workspace``
(``engine/workspace.py``: what the tools changed on disk, and the way back), ``models``
(``engine/models.py``: local models, their search and downloads) and ``mcp``
(``engine/mcp_catalog.py``: the MCP servers' prompts and resources), ``memory``
(``engine/memory.py``: saved memories and past-chat search) and ``web`` (``engine/web.py``: the
web search provider and the rules of ``fetch_page``).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from threadline.engine.agent_sessions import Agents
from threadline.engine.agents import AgentService
from threadline.engine.api import EngineApi
from threadline.engine.change_watch import ChangeWatch
from threadline.engine.conversation_controls import ConversationControls
from threadline.engine.database_setup import DatabaseSetup
from threadline.engine.extensions import Extensions
from threadline.engine.knowledge import KnowledgeService
from threadline.engine.knowledge_tool import SearchKnowledgeTool
from threadline.engine.leases import ElsewhereWatch, SessionLeases
from threadline.engine.library import Library
from threadline.engine.local_runtime import LocalModels
from threadline.engine.mcp_catalog import McpCatalog
from threadline.engine.mcp_instructions import McpInstructions
from threadline.engine.mcp_people import McpPeople
from threadline.engine.mcp_servers import McpServers
from threadline.engine.memory import MemoryService
from threadline.engine.memory_tools import ProposeMemoryTool, SearchPastChatsTool
from threadline.engine.message_ops import MessageOps
from threadline.engine.models import Models
from threadline.engine.projects import ProjectService
from threadline.engine.provider_settings import Providers, Settings
from threadline.engine.providers import CONTEXT_WINDOWS_SETTING, ProviderHub
from threadline.engine.registry import UNDO_SECONDS, SessionRegistry
from threadline.engine.turns import Turns
from threadline.engine.voice import Voice
from threadline.engine.web import WebService
from threadline.engine.workspace import Workspace
from threadline.files.data_dir import make_data_dir_private
from threadline.llm.retry import RetryPolicy
from threadline.store.errors import StoreError
from threadline.store.repository import Store
from threadline.tools.builtin import builtin_tools
from threadline.tools.mcp.manager import McpServerManager
from threadline.tools.registry import ToolRegistry

log = logging.getLogger("threadline.engine")

DATABASE_FILENAME = "threadline.db"


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
        self.data_dir = data_dir
        self.tools = tools if tools is not None else ToolRegistry(builtin_tools())
        self.tool_servers = McpServerManager(store, self.tools, log_dir=data_dir / "logs")
        self.mcp = McpCatalog(self.tool_servers)
        """The MCP servers' prompts and resources (``engine/mcp_catalog.py``)."""
        self.extensions = Extensions(store, data_dir, self.tool_servers)
        """MCP bundles installed as servers (``engine/extensions.py``)."""
        self.mcp_people = McpPeople(self.tool_servers)
        self.mcp_servers = McpServers(self.tool_servers)
        self.hub = ProviderHub(store, timeout=provider_timeout)
        self.providers = Providers(store, self.hub)
        """Providers, their keys and model lists (``engine/provider_settings.py``)."""
        self.settings = Settings(store, self.hub)
        """Stored settings and upgrade notices (``engine/provider_settings.py``)."""
        self.database = DatabaseSetup(data_dir, store.url)
        """Which database the conversations live in: test, copy, choose (``engine/database_setup.py``)."""
        self.change_watch: ChangeWatch | None = None
        """With ``watch_changes``: shows what other processes write (see ``change_watch``)."""
        self._background: set[asyncio.Task[Any]] = set()
        self.sessions = SessionRegistry(self, undo_seconds)
        """The live conversations and their lifecycle (``engine/registry.py``)."""
        self.projects = ProjectService(
            store,
            self.sessions.tell,
            open_conversations=self.sessions.open_conversations,
            session_changed=self.sessions.session_changed,
        )
        """Folders of chats with shared instructions and context (``engine/projects.py``)."""
        self.agents = Agents(self, AgentService(store), self.projects)
        """The agent library where it meets open chats (``engine/agent_sessions.py``)."""
        self.workspace = Workspace(store, data_dir, self.tools, self.sessions.live)
        """What the tools changed on disk and the way back (``engine/workspace.py``)."""
        self.turns = Turns(self, retry_policy)
        """Running turns: send, compare, regenerate, stop, compact (``engine/turns.py``)."""
        self.turns.runner.workspace = self.workspace
        self.turns.runner.instructions = McpInstructions(self.tool_servers).block
        self.knowledge = KnowledgeService(store, data_dir, self.sessions.live)
        """Knowledge bases, their local index, and the passages sent with a turn (``engine/knowledge.py``)."""
        self.turns.runner.knowledge = self.knowledge
        self.tools.register(SearchKnowledgeTool(self.knowledge, self._chat_scope))
        self.memory = MemoryService(store, self._chat_scope, self.sessions.tell)
        """Saved memories, the memory switch, past-chat search (``engine/memory.py``)."""
        self.turns.runner.memory = self.memory
        self.tools.register(SearchPastChatsTool(self.memory))
        self.tools.register(ProposeMemoryTool(self.memory))
        self.web = WebService(store, self.tools)
        """Web search and page reading: the provider, its key, the rules (``engine/web.py``)."""
        self.library = Library(self)
        """The stored chats as a whole: search, export, import, usage (``engine/library.py``)."""
        self.models = Models(data_dir)
        """Local models: the Hub search, the models folder, downloads, the runtime (``engine/models.py``)."""
        self.hub.local = LocalModels(self.models)
        self.voice = Voice(store, data_dir, self.sessions)
        """Replies read aloud, recordings turned into text (``engine/voice.py``)."""
        self.leases = (
            SessionLeases(
                store,
                on_stop_requested=self.turns.cancel,
                on_taken_over=self.turns.lease_taken_over,
                heartbeat_every=lease_heartbeat,
            )
            if lease_heartbeat is not None
            else SessionLeases(
                store, on_stop_requested=self.turns.cancel, on_taken_over=self.turns.lease_taken_over
            )
        )
        """One turn per session across instances (``engine/leases.py``); a turn start that finds
        the chat busy elsewhere is refused at once (its prompt back in the composer)."""
        self.controls = ConversationControls(store, self.turns.ready)
        """Clear, tangents, checkpoints, versions (``engine/conversation_controls.py``)."""
        self.messages = MessageOps(store, self.sessions.live, self.turns.running, self.spawn, undo_seconds)
        """Deleting messages (undoably) and editing replies (``engine/message_ops.py``)."""
        self.elsewhere = ElsewhereWatch(self.leases, self.sessions.live, self.spawn)
        """Tells open tabs where their chat's turn runs elsewhere (``SessionBusyElsewhere``)."""
        if watch_changes:
            self.change_watch = ChangeWatch(
                store.url,
                changed=self.sessions.changed_elsewhere,
                removed=self.sessions.removed_elsewhere,
                live=self.sessions.live,
                busy=lambda session_id: (
                    self.turns.running(session_id) or bool(self.messages.pending(session_id))
                ),
                load_tree=self.store.load_tree,
                session_touched=self.elsewhere.touched,
                on_receiving=self.sessions.changes_receiving,
                projects_changed=self.projects.refresh,
                memories_changed=self.memory.refresh,
                since=watch_since,
            )
            self.sessions.subscribe_sessions(self.change_watch.observe)
            self.change_watch.start()

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
        await engine.memory.load()
        await engine.workspace.reconcile()  # tool calls a stop cut off from their records
        return engine

    async def aclose(self) -> None:
        """Cancel running turns (their partial replies are stored) and close everything."""
        if self.change_watch is not None:
            await self.change_watch.aclose()  # first: no check runs while the rest closes
        await self.messages.purge()  # deletes still waiting for their undo window happen now
        await self.sessions.purge_deleted()
        await self.turns.stop_all()
        await self.workspace.aclose()  # the looks ahead at the allowed folders
        await self.knowledge.aclose()
        await self._stop_background()  # what the cancelled turns spawned on their way out
        await self.leases.aclose()
        await self.models.aclose()  # downloads pause, their parts kept
        await self.voice.aclose()  # the voice falls silent
        await self.tool_servers.aclose()
        await self.hub.aclose()
        await self.store.close()

    async def _chat_scope(self, session_id: str) -> tuple[str, str | None]:
        """The agent a chat's turns run with, and its project: where knowledge is attached."""
        live = self.sessions.live(session_id)
        if live is None:
            return "", None
        return (await self.agents.turn_agent(live)).id, live.info.project_id

    async def release_caches(self) -> None:
        """Give back the database's page cache, e.g. after a long chat was closed (its
        pages were the cache's content; ``Store.release_page_cache``)."""
        await self.store.release_page_cache()

    async def _stop_background(self) -> None:
        """Cancel background work until none is left: nothing is pending when the store closes."""
        while self._background:
            background = list(self._background)
            for task in background:
                task.cancel()
            await asyncio.gather(*background, return_exceptions=True)

    def spawn(self, coroutine: Any) -> None:
        """Run ``coroutine`` as background work of the engine (a listing refresh, a title, a purge);
        its failure is logged, and ``aclose`` cancels what is left."""
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
