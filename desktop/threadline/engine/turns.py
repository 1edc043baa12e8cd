"""The turns facet (``engine.turns``): running the turns of open conversations.

A turn is one asyncio task per session: send, compare, regenerate, resume, retry,
edit-and-resend, the rerun of tool calls a crash interrupted, and ``/compact``
(``TurnsApi`` in ``engine/api.py``). This object starts those tasks, keeps them (a
session runs at most one; ``running``, ``wait_idle``, ``cancel``, ``stop_turn``), asks the
lease first so a chat runs one turn across instances (``engine/leases.py``), and routes
tool-call approval to the window's prompt. Apart from the engine's core for the reason
qutebrowser's tab keeps ``tab.scroller`` and ``tab.search`` apart: the core holds the
parts, and a caller reaches the turns as ``engine.turns.send(...)`` through a small
protocol of its own (docs/design.md, "The engine: a core and its facets").

What happens inside one turn (stream, store, tool rounds) is ``engine/turn_runner.py``;
a compare's workers are ``engine/compare_runner.py``; summarising to fit the window is
``engine/compaction.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from threadline.core.compare import CompareTarget
from threadline.core.config import DEFAULT_AGENT_ID
from threadline.core.conversation import InterruptedTools
from threadline.core.messages import ContextFile, ImageBlock, Message, ToolCall
from threadline.core.meter import ContextMeter
from threadline.core.session import automatic_title
from threadline.engine.approval import ApprovalHandler, Decision
from threadline.engine.compare_runner import CompareRunner
from threadline.engine.context_meter import meter_for
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
from threadline.engine.leases import start_turn, taken_over_error
from threadline.engine.live import LiveConversation
from threadline.engine.turn_runner import TurnRunner, user_error
from threadline.llm.base import ChatParams
from threadline.llm.retry import RetryPolicy

if TYPE_CHECKING:
    from threadline.engine.engine import Engine

log = logging.getLogger("threadline.engine")

CLOSE_SAVE_GRACE = 5.0
"""Seconds ``stop_all`` lets cancelled turns store their endings before giving unsaved writes up."""


class Turns:
    """What ``TurnsApi`` offers the window and the command line; one instance per engine.

    Built once the engine holds its store, provider hub, tools, sessions and agents; the
    leases, messages and change feed it reaches at run time through the engine.
    """

    def __init__(self, engine: Engine, retry_policy: RetryPolicy | None = None) -> None:
        self._engine = engine
        self._store = engine.store
        self._tasks: dict[str, asyncio.Task[object]] = {}
        self._leaf_before: dict[str, str | None] = {}
        self._approval_handler: ApprovalHandler | None = None
        self.runner = TurnRunner(
            engine.store,
            engine.hub,
            engine.tools,
            load_agent=engine.agents.turn_agent,
            approval_handler=lambda: self._approve if self._approval_handler else None,
            retry_policy=retry_policy,
        )
        """One turn's steps (``engine/turn_runner.py``)."""
        self.comparing = CompareRunner(
            engine.store,
            template=self.runner,
            session_agent=engine.agents.turn_agent,
            named_agent=engine.agents.named_agent,
            approval_handler=lambda: self._approve if self._approval_handler else None,
        )
        """Several workers on one prompt (``engine/compare_runner.py``)."""

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

    async def stop_turn(self, session_id: str) -> None:
        """Cancel the session's running turn and wait until it has stored its ending (closing)."""
        task = self._tasks.get(session_id)
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def context_meter(self, session_id: str, prompt: str = "") -> ContextMeter:
        """What the next request of an open session would hold, part by part, against its window."""
        live = self._engine.sessions.live(session_id)
        if live is None:
            raise SessionClosedError(session_id)
        agent = await self._engine.agents.turn_agent(live)
        memory = await self._engine.memory.block_for(agent.id, live.info.project_id)
        return meter_for(live, agent, self.runner, self._engine.hub, self._engine.tools, prompt, memory)

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
        self._engine.spawn(self._engine.sessions.remember_last_used(live.info))
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
        live = self._engine.sessions.live(session_id)
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
            await self._engine.controls.set_active_leaf(
                session_id, live.conversation.tree.newest_leaf_under(reply_id)
            )
        if all(used) and used != (live.info.provider, live.info.model):
            # continuing a reply continues with its model
            await self._engine.sessions.set_session_model(session_id, *used)

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
        await self._store.update_message(answer)
        live.emit(MessageChanged(session_id, answer))

    def interrupted_tools(self, session_id: str) -> InterruptedTools | None:
        """The calls a crash stopped while they ran, at the chat's last message (``None``: none)."""
        live = self._engine.sessions.live(session_id)
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
            if self._engine.tools.get(name) is not None:
                return self._engine.tools.ends_with_threadline(name)
            return self._engine.tool_servers.runs_locally(name)  # a server whose tools are not listed yet

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
        lease = await self._engine.leases.request_stop(session_id)
        live = self._engine.sessions.live(session_id)
        if live is not None:
            live.emit(SessionBusyElsewhere(session_id, lease.host if lease else "", lease is not None))
        return lease is not None

    async def busy_elsewhere(self, session_id: str) -> str | None:
        """The host whose instance runs a turn in this chat right now, or ``None`` (free, this
        engine, or a dead holder whose lease has expired)."""
        lease = await self._engine.leases.elsewhere(session_id)
        return lease.host if lease is not None else None

    async def catch_up(self, session_id: str) -> None:
        """Take the stored tree of an open, idle chat now, before a send that waited for another
        instance's turn: the prompt goes after what that turn wrote, whether or not the change
        feed has brought it here yet."""
        from threadline.engine.change_watch import reload_tree

        live = self._engine.sessions.live(session_id)
        if live is not None and live.conversation.ready_for_input:
            await reload_tree(live, self._store.load_tree)

    def lease_taken_over(self, session_id: str, host: str) -> None:
        """This turn's lease went elsewhere while it was cut off: the tab says why it stops."""
        live = self._engine.sessions.live(session_id)
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
        if not await start_turn(self._engine.leases, live, (), None):
            return None
        try:
            agent = await self._engine.agents.turn_agent(live)
            config, model = await self._engine.hub.resolve(live.info, agent)
            params = ChatParams.for_agent(model, agent)
            provider = await self._engine.hub.client(config)
            limit, keep = self.runner.compactor.limits(agent, config.name, model)
            return await self.runner.compactor.compact(
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
            await self._engine.leases.release(live.session_id)

    def set_approval_handler(self, handler: ApprovalHandler | None) -> None:
        """The UI's inline approval prompt; ``None`` refuses calls that need asking."""
        self._approval_handler = handler

    async def _approve(self, session_id: str, calls: tuple[ToolCall, ...]) -> Sequence[Decision]:
        assert self._approval_handler is not None
        decisions = list(await self._approval_handler(session_id, calls))
        always = {d.call_id for d in decisions if d.allow and d.always}
        if always:
            live = self._engine.sessions.live(session_id)
            agent = await self._engine.agents.get_agent(live.info.agent_id if live else DEFAULT_AGENT_ID)
            rules = tuple(
                dict.fromkeys(self._engine.tools.always_allow_rule(c) for c in calls if c.id in always)
            )
            await self._engine.agents.save_agent(replace(agent, approval_rules=rules + agent.approval_rules))
        return decisions

    def ready(self, session_id: str) -> LiveConversation:
        live = self._engine.sessions.live(session_id)
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
            self._engine.spawn(self._refresh_info(session_id))
            if title_from and not live.info.title:
                self._engine.spawn(self._automatic_title(live, title_from))

        leased = False
        try:
            leaf_before = self._leaf_before.pop(session_id, None)
            leased = await start_turn(self._engine.leases, live, stored_first, leaf_before)
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
                await self._engine.leases.release(session_id)
            if self._tasks.get(session_id) is asyncio.current_task():
                del self._tasks[session_id]
            self._engine.spawn(self._refresh_info(session_id))
            failure = self.runner.take_failure(session_id)
            if failure is not None:
                live.emit(failure)
            live.emit(TurnStateChanged(session_id, live.conversation.state))

    async def stop_all(self) -> None:
        """Cancel every turn (the engine is closing), letting cancelled turns store their endings.

        A turn the store keeps refusing is given ``CLOSE_SAVE_GRACE`` seconds, then
        cancelled again, which gives its unsaved writes up (logged). The engine then
        cancels the background work they spawned on their way out (``Engine.aclose``).
        """
        turns = list(self._tasks.values())
        for task in turns:
            task.cancel()
        if turns:
            _, late = await asyncio.wait(turns, timeout=CLOSE_SAVE_GRACE)
            for task in late:
                task.cancel()
            await asyncio.gather(*turns, return_exceptions=True)

    @staticmethod
    def _turn_done(task: asyncio.Task[None]) -> None:
        """Retrieve a turn's unexpected exception (``wait_idle`` raises it too), so none goes unseen."""
        if not task.cancelled() and task.exception() is not None:
            log.error("turn task %s failed", task.get_name(), exc_info=task.exception())

    async def _automatic_title(self, live: LiveConversation, prompt: str) -> None:
        title = automatic_title(prompt)
        if title:
            self._engine.sessions.session_changed(
                await self._store.rename_session(live.session_id, title, by_user=False)
            )

    async def _refresh_info(self, session_id: str) -> None:
        info = await self._store.get_session(session_id)
        if info is not None:
            self._engine.sessions.session_changed(info)
