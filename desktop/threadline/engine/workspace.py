"""``engine.workspace``: what the tools changed on disk, and the way back (docs/workspace.md).

The engine's side of ``threadline.workspace``: it records each tool call of a turn
(``recording``, used by the turn runner around ``ToolRegistry.run``), stores the change
sets, tells the open tab (``FileChangesRecorded``), and answers the window and the command
line: a session's change sets and turns, a change's diff, restore plans (to a checkpoint,
before a turn, undoing a turn or a restore) and running them, the snapshots' space.

What a call is recorded by: a built-in tool that declares its paths (``write_file``) by
those paths alone; a tool that changes no file (read-only built-ins, MCP tools annotated
``readOnlyHint``) not at all; ``shell`` and other MCP tools by a scan of the agent's
allowed folders before and after. Recording never fails a tool call: a problem is logged
and the call runs unrecorded.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from threadline.core.file_changes import (
    ChangeSet,
    ChangeSource,
    FileChange,
    FileDiff,
    RestorePlan,
    TurnChanges,
    turns_with_changes,
)
from threadline.core.messages import Message, MessageKind, ToolCall
from threadline.core.tree import ConversationTree
from threadline.engine.errors import EngineError
from threadline.engine.events import FileChangesRecorded
from threadline.engine.live import LiveConversation
from threadline.store.repository import Store
from threadline.tools.registry import DeclaresPaths, ToolRegistry
from threadline.workspace.blobs import SnapshotStore, SpaceUsed, days_ago
from threadline.workspace.limits import DEFAULT_LIMITS, Budget, Limits

if TYPE_CHECKING:
    from threadline.workspace.recorder import Recorder, Recording
    from threadline.workspace.scan import ScanCache

log = logging.getLogger("threadline.engine.workspace")

COLLECT_GRACE_DAYS = 1 / 24
"""Unreferenced snapshots younger than an hour are spared: a running tool call's look before
may have just stored them for a change set not written yet."""


class WorkspaceError(EngineError):
    """A restore that cannot be planned (no such checkpoint or turn)."""


class Workspace:
    def __init__(
        self,
        store: Store,
        data_dir: Path,
        tools: ToolRegistry,
        live: Callable[[str], LiveConversation | None],
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        self._store = store
        self._data_dir = Path(data_dir)
        self._tools = tools
        self._live = live
        self.limits = limits
        self.snapshots = SnapshotStore.in_data_dir(data_dir)
        self._machine = ""
        self._recorder: Recorder | None = None
        self._caches: dict[str, ScanCache] = {}
        self._budgets: dict[str, tuple[str, Budget]] = {}
        self._prescans: dict[str, asyncio.Task[None]] = {}
        """A session's first look at its folders, running while the model thinks (``prescan``)."""
        self._prescanned: set[tuple[str, tuple[str, ...]]] = set()
        """(session, folders) looked at once already: the cache is warm for them."""
        self._stop = threading.Event()

    @property
    def machine(self) -> str:
        """This computer's id (read from the data folder the first time it is needed)."""
        if not self._machine:
            from threadline.workspace.machine import machine_id

            self._machine = machine_id(self._data_dir)
        return self._machine

    @property
    def recorder(self) -> Recorder:
        if self._recorder is None:
            from threadline.workspace.recorder import Recorder

            self._recorder = Recorder(self._data_dir, self.snapshots, self.machine, self.limits)
        return self._recorder

    # -- recording (the turn runner) ---------------------------------------------------------

    @asynccontextmanager
    async def recording(
        self, live: LiveConversation, call: ToolCall, folders: Sequence[str]
    ) -> AsyncIterator[None]:
        """Around one tool call (inside its tool context): record what it changed on disk."""
        wanted, paths = self._what_to_record(call, folders)
        if not wanted:
            yield
            return
        from threadline.workspace.recorder import CallInfo
        from threadline.workspace.scan import ScanCache

        session_id = live.session_id
        reply = live.conversation.reply
        info = CallInfo(session_id, reply.id if reply is not None else "", call.id, call.name)
        cache = self._caches.setdefault(session_id, ScanCache())
        budget = self._budget(live)
        prescan = self._prescans.get(session_id)
        if prescan is not None and paths is None:  # a scan waits for the rest of the first look
            await asyncio.shield(prescan)
        try:
            started = await asyncio.to_thread(self.recorder.begin, info, folders, paths, cache, budget)
        except Exception:
            log.exception("could not look at the files before tool call %s; it runs unrecorded", call.id)
            yield
            return
        try:
            yield
        finally:
            await self._finish(live, started, cache, budget)

    def prescan(self, live: LiveConversation, offered: Collection[str], folders: Sequence[str]) -> None:
        """At a turn's start: when one of the ``offered`` tools is recorded by a scan (``shell``, an
        MCP tool that may write), look at ``folders`` now, in the background, while the model
        thinks. The session's first scan reads (and keeps) every file; done here, the first
        call's own look finds the cache warm and only stats them (docs/workspace.md, "Scanning")."""
        key = (live.session_id, tuple(folders))
        if not folders or key in self._prescanned or live.session_id in self._prescans:
            return
        if not any(self._scans_for(name) for name in offered):
            return
        from threadline.workspace.scan import ScanCache

        self._prescanned.add(key)
        cache = self._caches.setdefault(live.session_id, ScanCache())
        task = asyncio.get_running_loop().create_task(
            self._prescan(cache, folders, self._budget(live)), name=f"prescan-{live.session_id}"
        )
        self._prescans[live.session_id] = task
        task.add_done_callback(lambda done: self._prescan_done(live.session_id, done))

    async def _prescan(self, cache: ScanCache, folders: Sequence[str], budget: Budget) -> None:
        try:
            await asyncio.to_thread(self.recorder.look_ahead, folders, cache, budget, self._stop)
        except Exception:  # the call's own look will try again, and say what went wrong
            log.exception("could not look at the allowed folders ahead of the tool calls")

    def _prescan_done(self, session_id: str, task: asyncio.Task[None]) -> None:
        if self._prescans.get(session_id) is task:
            del self._prescans[session_id]

    def _scans_for(self, name: str) -> bool:
        tool = self._tools.get(name)
        return (
            tool is not None
            and not getattr(tool, "reads_only", False)
            and not isinstance(tool, DeclaresPaths)
        )

    async def aclose(self) -> None:
        """Stop the looks ahead still running (the engine closes)."""
        self._stop.set()
        running = list(self._prescans.values())
        await asyncio.gather(*running, return_exceptions=True)

    def _what_to_record(self, call: ToolCall, folders: Sequence[str]) -> tuple[bool, list[str] | None]:
        """(whether to record, the paths to look at or ``None`` for a scan of ``folders``)."""
        tool = self._tools.get(call.name)
        if tool is None or not folders or getattr(tool, "reads_only", False):
            return False, None
        if isinstance(tool, DeclaresPaths):
            try:
                return True, tool.touched_paths(call.parsed_arguments())
            except Exception:
                return False, None  # bad arguments or a path outside the folders: the call will refuse
        return True, None

    def _budget(self, live: LiveConversation) -> Budget:
        """The turn's budget of kept content: one per prompt, shared by its tool calls."""
        prompt = next((m.id for m in reversed(live.conversation.path()) if m.kind is MessageKind.PROMPT), "")
        known = self._budgets.get(live.session_id)
        if known is None or known[0] != prompt:
            known = self._budgets[live.session_id] = (prompt, Budget(self.limits.max_turn_bytes))
        return known[1]

    async def _finish(
        self, live: LiveConversation, started: Recording, cache: ScanCache, budget: Budget
    ) -> None:
        try:
            change_set = await asyncio.to_thread(self.recorder.finish, started, cache, budget)
            if change_set is not None:
                await self._store.add_change_set(change_set)
                live.emit(FileChangesRecorded(live.session_id, change_set))
        except Exception:
            log.exception("could not record the file changes of tool call %s", started.call.call_id)
            return  # the pending record stays: the next start records it
        self.recorder.forget(started.id)

    async def reconcile(self) -> int:
        """Record the calls a stop cut off from their records (at start); how many were found."""
        pending = self._data_dir / "snapshots" / "pending"
        if not pending.is_dir():
            return 0  # the usual start: nothing to import or read
        unfinished = await asyncio.to_thread(self.recorder.unfinished)
        for recording_id, change_set in unfinished:
            if change_set is not None:
                try:
                    await self._store.add_change_set(change_set)
                except Exception:
                    log.exception("could not record the file changes found at start (%s)", recording_id)
                    continue
            self.recorder.forget(recording_id)
        return len(unfinished)

    def forget_session(self, session_id: str) -> None:
        """The session closed: its scan cache and budget go (the next scan stats afresh)."""
        self._caches.pop(session_id, None)
        self._budgets.pop(session_id, None)
        self._prescanned = {key for key in self._prescanned if key[0] != session_id}

    # -- reading ----------------------------------------------------------------------------

    async def change_sets(self, session_id: str) -> list[ChangeSet]:
        """Every change set of the session (tool calls and restores, all branches), oldest first."""
        return await self._store.change_sets(session_id)

    async def turn_changes(self, session_id: str) -> list[TurnChanges]:
        """The turns of the shown path that changed files, numbered from 1 as ``changes`` lists them."""
        return turns_with_changes(await self._path(session_id), await self.change_sets(session_id))

    async def file_diff(self, change: FileChange) -> FileDiff:
        from threadline.workspace.changes import file_diff

        return await asyncio.to_thread(file_diff, change, self.snapshots)

    async def _path(self, session_id: str) -> list[Message]:
        live = self._live(session_id)
        if live is not None:
            return live.conversation.path()
        return (await self._store.load_tree(session_id)).path()

    # -- the way back -----------------------------------------------------------------------

    async def plan_checkpoint(self, session_id: str, name: str) -> RestorePlan:
        """Files as they were when the checkpoint's message was written."""
        checkpoints = await self._checkpoints(session_id)
        message_id = checkpoints.get(name)
        if message_id is None:
            raise WorkspaceError(f"There is no checkpoint named “{name}” in this chat.")
        tree = await self._tree(session_id)
        moment = tree.get(message_id).created_at.timestamp()
        return await self._plan_since(session_id, moment, f"Files as they were at checkpoint “{name}”")

    async def plan_before_turn(self, session_id: str, number: int) -> RestorePlan:
        """Files as they were before turn ``number``'s tools ran (and everything after)."""
        prompt = await self._prompt(session_id, number)
        return await self._plan_since(
            session_id, prompt.created_at.timestamp(), f"Files as they were before turn {number}"
        )

    async def plan_undo_turn(self, session_id: str, number: int) -> RestorePlan:
        """Undo turn ``number``'s file changes alone (later changes to the same files are conflicts)."""
        await self._prompt(session_id, number)
        turn = next((t for t in await self.turn_changes(session_id) if t.number == number), None)
        history = await self.change_sets(session_id)
        undo = list(turn.change_sets) if turn is not None else []
        return await self._plan(session_id, f"Undo turn {number}'s file changes", undo, history)

    async def plan_undo_restore(self, session_id: str, change_set_id: str) -> RestorePlan:
        """Undo a restore: its own change set, restored."""
        history = await self.change_sets(session_id)
        found = next((s for s in history if s.id == change_set_id and s.source is ChangeSource.RESTORE), None)
        if found is None:
            raise WorkspaceError("That restore is not recorded in this chat.")
        return await self._plan(session_id, f"Undo the restore “{found.note}”", [found], history)

    async def run_restore(self, plan: RestorePlan, forced: Collection[str] = ()) -> ChangeSet:
        """Apply the plan's clean steps and the conflicts in ``forced``; the restore's change set
        (stored, and told to the open tab, when it changed anything)."""
        from threadline.workspace.restore import run_restore

        result = await asyncio.to_thread(
            run_restore, plan, self.snapshots, self.machine, forced=forced, limits=self.limits
        )
        if result.changes:
            await self._store.add_change_set(result)
            live = self._live(plan.session_id)
            if live is not None:
                live.emit(FileChangesRecorded(plan.session_id, result))
        return result

    async def _plan_since(self, session_id: str, moment: float, description: str) -> RestorePlan:
        history = await self.change_sets(session_id)
        undo = [s for s in history if s.created_at >= moment]
        return await self._plan(session_id, description, undo, history)

    async def _plan(
        self, session_id: str, description: str, undo: Sequence[ChangeSet], history: Sequence[ChangeSet]
    ) -> RestorePlan:
        from threadline.workspace.restore import plan_restore

        return await asyncio.to_thread(
            plan_restore, session_id, description, undo, history, self.snapshots, self.machine
        )

    async def _prompt(self, session_id: str, number: int) -> Message:
        prompts = [m for m in await self._path(session_id) if m.kind is MessageKind.PROMPT]
        if not 1 <= number <= len(prompts):
            raise WorkspaceError(f"This chat has no turn {number} (it has {len(prompts)}).")
        return prompts[number - 1]

    async def _checkpoints(self, session_id: str) -> dict[str, str]:
        live = self._live(session_id)
        if live is not None:
            return dict(live.conversation.tree.checkpoints)
        info = await self._store.get_session(session_id)
        return dict(info.checkpoints) if info is not None else {}

    async def _tree(self, session_id: str) -> ConversationTree:
        live = self._live(session_id)
        return live.conversation.tree if live is not None else await self._store.load_tree(session_id)

    # -- space ------------------------------------------------------------------------------

    async def space_used(self) -> SpaceUsed:
        """The snapshots' size on this computer (Settings → Data)."""
        return await asyncio.to_thread(self.snapshots.space_used)

    async def drop_snapshots_older_than(self, days: float) -> int:
        """Drop the contents only change sets older than ``days`` refer to; how many went.

        The change sets stay listed; restoring them says the content is no longer kept."""
        keep = await self._store.kept_digests(self.machine, newer_than=days_ago(days))
        return await asyncio.to_thread(self.snapshots.collect, keep, older_than=days_ago(days))

    async def collect(self) -> int:
        """Drop the contents no change set refers to any more (a deleted chat's); never raises."""
        try:
            keep = await self._store.kept_digests(self.machine)
            return await asyncio.to_thread(
                self.snapshots.collect, keep, older_than=days_ago(COLLECT_GRACE_DAYS)
            )
        except Exception:
            log.exception("could not drop the file snapshots no chat refers to")
            return 0


@asynccontextmanager
async def recorded(
    workspace: Workspace | None, live: LiveConversation, call: ToolCall, folders: Sequence[str]
) -> AsyncIterator[None]:
    """``workspace.recording(...)``, or nothing when no workspace records (a bare runner in tests)."""
    if workspace is None:
        yield
        return
    async with workspace.recording(live, call, folders):
        yield
