"""The engine: the turns of live conversations, and the facets around them.

This is the implementation of ``threadline.engine.api.EngineApi``, used by the
window and by the command line alike. It owns the store, the provider clients
and the tool registry, and is passed to whoever needs it (no global object).

Engine is the core: turns (send, compare, regenerate, resume, cancel, compact),
export and import, providers and settings. The rest are facets it holds, each with
its own protocol in ``engine/api.py`` (docs/design.md, "The engine: a core and its
facets"): ``sessions`` (``engine/registry.py``: the live conversations and their
lifecycle), ``agents``, ``projects``, ``messages`` and ``controls``.
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
)
from threadline.core.conversation import InterruptedTools
from threadline.core.messages import ContextFile, ImageBlock, Message, ToolCall
from threadline.core.meter import ContextMeter
from threadline.core.project import is_colour
from threadline.core.session import SearchHit, SessionInfo, automatic_title
from threadline.engine.agent_sessions import Agents
from threadline.engine.agents import AgentService
from threadline.engine.api import EngineApi
from threadline.engine.approval import ApprovalHandler, Decision
from threadline.engine.change_watch import ChangeWatch
from threadline.engine.compare_runner import CompareRunner
from threadline.engine.context_meter import meter_for
from threadline.engine.conversation_controls import ConversationControls
from threadline.engine.errors import NothingToSendError, SessionBusyError, SessionClosedError
from threadline.engine.events import (
    ActivePathChanged,
    CompareStarted,
    MessageAdded,
    MessageChanged,
    SessionBusyElsewhere,
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
from threadline.engine.provider_settings import Providers, Settings
from threadline.engine.providers import (
    CONTEXT_WINDOWS_SETTING,
    ProviderHub,
)
from threadline.engine.registry import UNDO_SECONDS, SessionRegistry
from threadline.engine.turn_runner import TurnRunner, user_error
from threadline.engine.usage_report import PriceBook, SessionUsage, session_usage
from threadline.engine.workspace import Workspace
from threadline.files.data_dir import make_data_dir_private
from threadline.llm.base import ChatParams
from threadline.llm.retry import RetryPolicy
from threadline.store.errors import StoreError
from threadline.store.repository import Store
from threadline.tools.builtin import builtin_tools
from threadline.tools.mcp_manager import McpServerManager
from threadline.tools.registry import ToolRegistry

if TYPE_CHECKING:
    # Import and export are rare, explicit actions: their formats and writers load with the
    # first of them, not with every start (the memory saved: docs/performance.md).
    from threadline.interchange.model import ImportedProject, ImportProgress, ImportReport

log = logging.getLogger("threadline.engine")

DATABASE_FILENAME = "threadline.db"
CLOSE_SAVE_GRACE = 5.0
"""Seconds ``aclose`` lets cancelled turns store their endings before giving unsaved writes up."""


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
        self.data_dir = data_dir
        self.tools = tools if tools is not None else ToolRegistry(builtin_tools())
        self.tool_servers = McpServerManager(store, self.tools, log_dir=data_dir / "logs")
        self.hub = ProviderHub(store, timeout=provider_timeout)
        self.providers = Providers(store, self.hub)
        """Providers, their keys and model lists (``engine/provider_settings.py``)."""
        self.settings = Settings(store, self.hub)
        """Stored settings and upgrade notices (``engine/provider_settings.py``)."""
        self.change_watch: ChangeWatch | None = None
        """With ``watch_changes``: shows what other processes write (see ``change_watch``)."""
        self.sessions = SessionRegistry(self, undo_seconds)
        """The live conversations and their lifecycle (``engine/registry.py``)."""
        self.controls = ConversationControls(store, self.ready)
        """Clear, tangents and checkpoints (``engine/conversation_controls.py``)."""
        self.projects = ProjectService(
            store,
            self.sessions.tell,
            open_conversations=self.sessions.open_conversations,
            session_changed=self.sessions.session_changed,
        )
        """Folders of chats with shared instructions and context (``engine/projects.py``)."""
        self.agents = Agents(self, AgentService(store), self.projects)
        """The agent library where it meets open chats (``engine/agent_sessions.py``)."""
        self.messages = MessageOps(store, self.sessions.live, self.running, self.spawn, undo_seconds)
        """Deleting messages (undoably) and editing replies (``engine/message_ops.py``)."""
        self.workspace = Workspace(store, data_dir, self.tools, self.sessions.live)
        """What the tools changed on disk and the way back (``engine/workspace.py``)."""
        self._tasks: dict[str, asyncio.Task[object]] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self._approval_handler: ApprovalHandler | None = None
        self.elsewhere = ElsewhereWatch(self.leases, self.sessions.live, self.spawn)
        """Tells open tabs where their chat's turn runs elsewhere (``SessionBusyElsewhere``)."""
        if watch_changes:
            self.change_watch = ChangeWatch(
                store.url,
                changed=self.sessions.changed_elsewhere,
                removed=self.sessions.removed_elsewhere,
                live=self.sessions.live,
                busy=lambda session_id: self.running(session_id) or bool(self.messages.pending(session_id)),
                load_tree=self.store.load_tree,
                session_touched=self.elsewhere.touched,
                on_receiving=self.sessions.changes_receiving,
                projects_changed=self.projects.refresh,
                since=watch_since,
            )
            self.sessions.subscribe_sessions(self.change_watch.observe)
            self.change_watch.start()
        self.runner = TurnRunner(
            store,
            self.hub,
            self.tools,
            load_agent=self.agents.turn_agent,
            approval_handler=lambda: self._approve if self._approval_handler else None,
            retry_policy=retry_policy,
        )
        self.runner.workspace = self.workspace
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
        await engine.workspace.reconcile()  # tool calls a stop cut off from their records
        return engine

    async def aclose(self) -> None:
        """Cancel running turns (their partial replies are stored) and close everything."""
        if self.change_watch is not None:
            await self.change_watch.aclose()  # first: no check runs while the rest closes
        await self.messages.purge()  # deletes still waiting for their undo window happen now
        await self.sessions.purge_deleted()
        await self._stop_tasks()
        await self.leases.aclose()
        await self.tool_servers.aclose()
        await self.hub.aclose()
        await self.store.close()

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

    async def stop_turn(self, session_id: str) -> None:
        """Cancel the session's running turn and wait until it has stored its ending (closing)."""
        task = self._tasks.get(session_id)
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def search(self, query: str, limit: int = 50, *, project_id: str | None = None) -> list[SearchHit]:
        if not query.strip():
            return []
        hits = await self.store.search(query, limit=limit, project_id=project_id)
        hidden = self.messages.hidden()
        return [h for h in hits if not self.sessions.is_deleted(h.session_id) and h.message_id not in hidden]

    async def context_meter(self, session_id: str, prompt: str = "") -> ContextMeter:
        """What the next request of an open session would hold, part by part, against its window."""
        live = self.sessions.live(session_id)
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
        return session_usage(session_id, await self.sessions.tree(session_id), book)

    async def export_markdown(self, session_id: str) -> str:
        from threadline.core.transcript import transcript_markdown  # with the first export

        info = await self.store.get_session(session_id)
        tree = await self.sessions.tree(session_id)
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
            self.store.get_session,
            self.store.list_sessions,
            self.sessions.tree,
            self.sessions.pending_deletes,
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
            announce=self.sessions.changed_elsewhere,
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
        self.spawn(self.sessions.remember_last_used(live.info))
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
        live = self.sessions.live(session_id)
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
            # continuing a reply continues with its model
            await self.sessions.set_session_model(session_id, *used)

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
        live = self.sessions.live(session_id)
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
        live = self.sessions.live(session_id)
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

        live = self.sessions.live(session_id)
        if live is not None and live.conversation.ready_for_input:
            await reload_tree(live, self.store.load_tree)

    def _lease_taken_over(self, session_id: str, host: str) -> None:
        """This turn's lease went elsewhere while it was cut off: the tab says why it stops."""
        live = self.sessions.live(session_id)
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
            live = self.sessions.live(session_id)
            agent = await self.agents.get_agent(live.info.agent_id if live else DEFAULT_AGENT_ID)
            rules = tuple(dict.fromkeys(self.tools.always_allow_rule(c) for c in calls if c.id in always))
            await self.agents.save_agent(replace(agent, approval_rules=rules + agent.approval_rules))
        return decisions

    # -- providers, agents, settings ----------------------------------------------------------------

    # -- internals -------------------------------------------------------------------------------------

    def ready(self, session_id: str) -> LiveConversation:
        live = self.sessions.live(session_id)
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
            self.sessions.session_changed(
                await self.store.rename_session(live.session_id, title, by_user=False)
            )

    async def _refresh_info(self, session_id: str) -> None:
        info = await self.store.get_session(session_id)
        if info is not None:
            self.sessions.session_changed(info)

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
