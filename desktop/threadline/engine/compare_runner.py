"""Running a compare: one prompt, two to four workers at once, each reply a sibling version.

The compare is the session's one turn (``TurnState.COMPARING``). Each worker runs
its lane (``core/compare.py``) through a ``TurnRunner`` of its own, so streaming,
coalesced writes, tool rounds, approvals, retries, failures and cancellation are
exactly those of an ordinary turn: nothing of the turn logic is repeated here.
A runner of its own per worker because a runner keys its per-turn state by
session id, and these turns share one session.

What this module adds:

* the prompt is stored once, before any worker sends;
* each worker's events reach the session's observers wrapped
  (``CompareWorkerEvent``/``CompareWorkerChanged``), so the chat's list (the
  session's path, which ends at the prompt meanwhile) is untouched and the
  columns follow their worker;
* approvals are asked one worker at a time (the tab has one approval bar), each
  labelled with its worker (``approval_label``);
* Stop (cancelling this task) stops every worker; ``stop_worker`` one of them;
  ``pick`` stops the others and, once all have ended, makes the chosen reply the
  active path. The session's active leaf is stored last, so after a restart the
  chat shows the chosen (or first finished) reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace

from threadline.core.compare import Compare, CompareTarget, CompareWorker
from threadline.core.config import AgentConfig
from threadline.core.messages import Message, ToolCall
from threadline.engine.approval import ApprovalHandler, Decision
from threadline.engine.errors import TurnStopped
from threadline.engine.events import (
    ActivePathChanged,
    CompareWorkerChanged,
    CompareWorkerEvent,
    ContextGathered,
    ConversationEvent,
    MessageAdded,
    MessageChanged,
    ReasoningDelta,
    RetryScheduled,
    TextDelta,
    TurnFailed,
    TurnStateChanged,
)
from threadline.engine.live import LiveConversation
from threadline.engine.turn_runner import TurnRunner, unsent_prompt_error
from threadline.store.errors import StoreError
from threadline.store.repository import Store

log = logging.getLogger("threadline.engine")

_APPROVAL_LABEL: contextvars.ContextVar[str] = contextvars.ContextVar("compare_approval_label", default="")

SessionAgent = Callable[[LiveConversation], Awaitable[AgentConfig]]
NamedAgent = Callable[[LiveConversation, str], Awaitable[AgentConfig | None]]


def approval_label() -> str:
    """The worker asking for approval, inside a compare's approval handler ("" otherwise)."""
    return _APPROVAL_LABEL.get()


class CompareRunner:
    """Runs compares for the engine; one instance serves every session."""

    def __init__(
        self,
        store: Store,
        *,
        template: TurnRunner,
        session_agent: SessionAgent,
        named_agent: NamedAgent,
        approval_handler: Callable[[], ApprovalHandler | None],
    ) -> None:
        self._store = store
        self._template = template
        self._session_agent = session_agent
        self._named_agent = named_agent
        self._approval_handler = approval_handler
        self._workers: dict[str, dict[int, asyncio.Task[None]]] = {}
        self._picked: dict[str, int] = {}
        self._asking: dict[str, asyncio.Lock] = {}

    async def run(self, live: LiveConversation, *, on_stored: Callable[[], None] | None = None) -> None:
        """Run the staged compare of ``live`` until every worker has ended, and store its outcome."""
        conversation = live.conversation
        compare = conversation.compare
        assert compare is not None, "start_compare first"
        session_id = live.session_id
        prompt = conversation.tree.get(compare.prompt_id)
        tasks: dict[int, asyncio.Task[None]] = {}
        try:
            # Inside the try: a Stop while the prompt is being stored must still settle the
            # compare, or the session would stay COMPARING (busy) until reopened.
            if not await self._store_prompt(live, prompt):
                return
            if on_stored is not None:
                on_stored()
            tasks = {
                w.index: asyncio.create_task(self._run_worker(live, w), name=f"compare-{session_id}-{i}")
                for i, w in enumerate(compare.workers)
            }
            self._workers[session_id] = tasks
            outcomes = await asyncio.gather(*tasks.values(), return_exceptions=True)
            for outcome in outcomes:
                if isinstance(outcome, Exception):
                    raise outcome
        finally:
            # Stop cancelled this task and, through gather, every worker: wait for their endings.
            await asyncio.gather(*tasks.values(), return_exceptions=True)
            self._workers.pop(session_id, None)
            self._asking.pop(session_id, None)
            picked = self._picked.pop(session_id, None)
            if tasks or conversation.compare is compare:  # not when the prompt's store failed (ended)
                await self._settle(live, compare, picked)

    def stop_worker(self, session_id: str, index: int) -> bool:
        """Stop one worker of the running compare (its partial reply is kept); the others go on."""
        task = self._workers.get(session_id, {}).get(index)
        if task is None or task.done():
            return False
        task.cancel()
        return True

    def pick(self, session_id: str, index: int) -> bool:
        """Continue with worker ``index``: the others stop; its reply becomes the path once all ended.

        ``False`` when no compare runs in ``session_id``.
        """
        tasks = self._workers.get(session_id)
        if tasks is None:
            return False
        self._picked[session_id] = index
        for other, task in tasks.items():
            if other != index:
                task.cancel()
        return True

    def running(self, session_id: str) -> bool:
        return session_id in self._workers

    # -- one worker -------------------------------------------------------------------------------

    async def _run_worker(self, live: LiveConversation, worker: CompareWorker) -> None:
        _APPROVAL_LABEL.set(worker.target.display)  # this task's context: its approvals say who asks
        lane = LiveConversation(live.info, worker.lane)
        lane.subscribe(lambda event: self._relay(live, worker, event))
        runner = self._template.sibling(
            load_agent=lambda lane_live: self._worker_agent(live, lane_live, worker.target),
            approval_handler=lambda: self._labelled_handler(live.session_id),
        )
        try:
            await runner.run(lane)
        finally:
            failure = runner.take_failure(live.session_id)
            if live.conversation.compare is not None:
                live.conversation.worker_ended(worker.index)
            live.emit(
                CompareWorkerChanged(
                    live.session_id, worker.index, worker.state, failure.error if failure else None
                )
            )

    async def _worker_agent(
        self, live: LiveConversation, lane: LiveConversation, target: CompareTarget
    ) -> AgentConfig:
        """The worker's agent (the session's, or the target's), its model pinned on the lane."""
        if target.agent_id:
            agent = await self._named_agent(live, target.agent_id)
            if agent is None:
                raise TurnStopped(
                    f"The agent “{target.display}” no longer exists, so it could not answer.",
                    kind="agent_missing",
                )
        else:
            agent = await self._session_agent(lane)
        provider = target.provider or (agent.provider if target.agent_id else "") or live.info.provider
        model = target.model or (agent.model if target.agent_id else "") or live.info.model
        lane.info = replace(live.info, provider=provider, model=model)
        return agent

    def _labelled_handler(self, session_id: str) -> ApprovalHandler | None:
        handler = self._approval_handler()
        if handler is None:
            return None
        lock = self._asking.setdefault(session_id, asyncio.Lock())

        async def ask(asking_session: str, calls: tuple[ToolCall, ...]) -> Sequence[Decision]:
            async with lock:  # one approval bar per tab: workers ask in turn
                return await handler(asking_session, calls)

        return ask

    def _relay(self, live: LiveConversation, worker: CompareWorker, event: ConversationEvent) -> None:
        """A lane's event as the session's observers hear it (see the module doc)."""
        session_id = live.session_id
        if isinstance(event, MessageAdded | TextDelta | MessageChanged | ReasoningDelta):
            live.emit(CompareWorkerEvent(session_id, worker.index, event))
        elif isinstance(event, TurnStateChanged):
            live.emit(CompareWorkerChanged(session_id, worker.index, worker.state))
        elif isinstance(event, RetryScheduled):
            live.emit(CompareWorkerChanged(session_id, worker.index, worker.state, note=event.describe()))
        elif isinstance(event, TurnFailed):  # said at once only while saving fails
            live.emit(CompareWorkerChanged(session_id, worker.index, worker.state, event.error))
        elif isinstance(event, ContextGathered | ActivePathChanged):
            return  # the lane's own request context and leaf: not the session's
        else:
            live.emit(event)  # saving state, session updates

    # -- start and end -----------------------------------------------------------------------------

    async def _store_prompt(self, live: LiveConversation, prompt: Message) -> bool:
        """Store the prompt before any worker sends; ``False`` (compare ended, prompt given back)
        when the store refuses it.

        Shielded, and a Stop waits for the write to end: the compare then settles on a
        prompt that is stored (or, refused, given back) rather than on a write in flight.
        """
        append = asyncio.ensure_future(self._store.append_message(live.session_id, prompt))
        try:
            try:
                await asyncio.shield(append)
            except asyncio.CancelledError:
                with contextlib.suppress(StoreError):
                    await asyncio.shield(append)
                refused = None if append.cancelled() else append.exception()
                if isinstance(refused, StoreError):
                    self._prompt_refused(live, prompt, refused)
                raise
        except StoreError as err:
            self._prompt_refused(live, prompt, err)
            return False
        return True

    def _prompt_refused(self, live: LiveConversation, prompt: Message, err: StoreError) -> None:
        log.warning("session %s: the compare's prompt could not be stored: %s", live.session_id, err)
        conversation = live.conversation
        conversation.fail(str(err))
        conversation.tree.remove_leaf(prompt.id)
        live.emit(ActivePathChanged(live.session_id, conversation.tree.active_leaf))
        live.emit(TurnFailed(live.session_id, unsent_prompt_error(err), unsent_prompt=prompt))

    async def _settle(self, live: LiveConversation, compare: Compare, picked: int | None) -> None:
        """Every worker has ended: show the picked (or first finished) reply, and store that."""
        conversation = live.conversation
        if conversation.compare is not None:  # a worker that never ran (cancelled before it started)
            conversation.cancel()
        if picked is not None:
            conversation.tree.set_active_leaf(compare.worker(picked).leaf)
        leaf = conversation.tree.active_leaf
        try:
            await asyncio.shield(self._store.set_active_leaf(live.session_id, leaf))
        except StoreError as err:  # the chat shows it anyway; the next turn's writes store it
            log.warning(
                "session %s: the compare's chosen reply was not stored as shown: %s", live.session_id, err
            )
        live.emit(ActivePathChanged(live.session_id, leaf))
