"""Running one turn: stream, store, tool rounds, commit (docs/design.md §1, §2 "one flow").

A turn runs as one asyncio task per session. Every step is written to the store
as it happens: the prompt before the request goes out, the reply as soon as its
first token arrives (then its text coalesced, at most ~250 ms behind), each
tool round as it completes. Cancellation can land at any ``await``; the
``except`` paths record the partial reply and cancelled results, shielded so a
second cancel cannot lose them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace

from threadline.core.compaction import (
    NothingToCompactError,
)
from threadline.core.config import AgentConfig, ProviderConfig
from threadline.core.gathered_context import GatheredContext, estimate, newest_turn_tokens, with_context
from threadline.core.messages import (
    Message,
    MessageStatus,
    RequestMetadata,
    ToolCall,
    ToolResult,
    stopped_result,
    utcnow,
)
from threadline.core.request import (
    BuiltRequest,
    Limits,
    NothingFitsError,
    ToolSpec,
    build_request,
    estimate_tool_tokens,
)
from threadline.core.turn import TurnState
from threadline.engine.approval import ApprovalHandler, decide, refusal_reason
from threadline.engine.compaction import (
    MAX_COMPACTIONS_PER_TURN,
    Compactor,
    ProbableOverflowError,
    empty_reply_error,
    naming_what_does_not_fit,
)
from threadline.engine.errors import TurnStopped
from threadline.engine.events import (
    ActivePathChanged,
    ContextGathered,
    ErrorAction,
    MessageAdded,
    MessageChanged,
    ModelLoading,
    RetryScheduled,
    SaveStateChanged,
    TextDelta,
    TurnFailed,
    TurnStateChanged,
    UserFacingError,
)
from threadline.engine.knowledge import KnowledgeService, knowledge_for_turn
from threadline.engine.live import LiveConversation
from threadline.engine.memory import MemoryService
from threadline.engine.providers import ProviderHub, SetupError
from threadline.engine.reasoning_stream import ReasoningTracker
from threadline.engine.sticky_context import (
    DEFAULT_ASSUMED_WINDOW,
    DEFAULT_WINDOW_SETTING,
    StickyContextGatherer,
    TurnHooks,
)
from threadline.engine.store_trouble import awaiting, prompt_waiting
from threadline.engine.text_writer import TurnWriter
from threadline.engine.workspace import Workspace, recorded
from threadline.llm import errors as llm_errors
from threadline.llm import events as llm_events
from threadline.llm.base import ChatParams, Provider
from threadline.llm.retry import RetryPolicy
from threadline.store.errors import StoreError
from threadline.store.repository import Store
from threadline.tools.context import tool_context
from threadline.tools.registry import ToolRegistry
from threadline.web.sources import numbered_path, offers_web, web_sources_of

log = logging.getLogger("threadline.engine")

NOT_ASKED_AGAIN = (
    "Threadline stopped before this call ran. It needs the user's own answer each time, so it "
    "was not run again; propose it again if it still matters."
)
"""An interrupted call of a tool that always asks (a memory proposal) is not rerun unasked."""

HISTORY_CAP_SETTING = "history_cap"
DEFAULT_HISTORY_CAP = 400
REPLY_RESERVE_TOKENS = 4096
MAX_TOOL_ROUNDS = 25
SAVE_ON_CLOSE_GRACE = 5.0
"""Seconds a turn closed while its writes are still going through (and not failing) waits for them."""


_ERROR_ACTIONS: dict[type[Exception], tuple[ErrorAction, ...]] = {
    ProbableOverflowError: (ErrorAction.COMPACT, ErrorAction.SET_CONTEXT_WINDOW, ErrorAction.RETRY),
    llm_errors.AuthenticationError: (ErrorAction.ADD_KEY, ErrorAction.RETRY),
    llm_errors.PermissionDeniedError: (ErrorAction.PICK_MODEL, ErrorAction.SETTINGS),
    llm_errors.ModelNotFoundError: (ErrorAction.PICK_MODEL,),
    llm_errors.ContextOverflowError: (ErrorAction.COMPACT, ErrorAction.NEW_SESSION),
    llm_errors.BadRequestError: (ErrorAction.RETRY, ErrorAction.PICK_MODEL),
}


def user_error(err: Exception) -> UserFacingError:
    """What to show for ``err``: its own message and the buttons that can help."""
    if isinstance(err, SetupError):
        return err.error
    if isinstance(err, NothingFitsError):
        return UserFacingError(
            "context_full", err.user_message, (ErrorAction.COMPACT, ErrorAction.NEW_SESSION)
        )
    if isinstance(err, NothingToCompactError):
        return UserFacingError("compaction", err.user_message, (ErrorAction.NEW_SESSION,))
    if isinstance(err, TurnStopped):
        return UserFacingError(err.kind, err.user_message, err.actions)
    if isinstance(err, llm_errors.ProviderError):
        actions = next((a for t, a in _ERROR_ACTIONS.items() if isinstance(err, t)), (ErrorAction.RETRY,))
        retry_after = err.retry_after if isinstance(err, llm_errors.RateLimitError) else None
        return UserFacingError(err.kind, err.user_message, actions, retry_after)
    if isinstance(err, StoreError):
        return UserFacingError("storage", err.user_message)
    return UserFacingError(
        "internal",
        "Something went wrong inside Threadline and the reply stopped. Try again; if it keeps "
        "happening, the log file in the data folder has the details.",
    )


KEPT_IN_MEMORY = "The reply so far is kept in memory and will be saved as soon as the database accepts it."


def saving_error(err: Exception) -> UserFacingError:
    """What the tab says while a turn's writes are failing and being retried: the store's words, then ours."""
    what = err.user_message if isinstance(err, StoreError) else "The conversation database refused a write."
    return UserFacingError("storage", f"{what} {KEPT_IN_MEMORY}", actions=())


def unsent_prompt_error(err: StoreError) -> UserFacingError:
    """The prompt could not be stored, so nothing was sent (the text goes back to the composer)."""
    return UserFacingError(
        "storage", f"Your message was not sent, because it could not be saved first. {err.user_message}", ()
    )


class TurnRunner:
    """Runs turns for the engine; one instance serves every session."""

    workspace: Workspace | None = None
    """Records what each tool call changes on disk (``engine/workspace.py``), set by the engine."""
    instructions: Callable[[Sequence[ToolSpec]], str] | None = None
    """The MCP servers' instructions for the tools offered (``engine/mcp_instructions.py``)."""

    def __init__(
        self,
        store: Store,
        hub: ProviderHub,
        tools: ToolRegistry,
        *,
        load_agent: Callable[[LiveConversation], Awaitable[AgentConfig]],
        approval_handler: Callable[[], ApprovalHandler | None],
        retry_policy: RetryPolicy | None = None,
    ) -> None:
        self._store = store
        self._hub = hub
        self._tools = tools
        self._load_agent = load_agent
        self._approval_handler = approval_handler
        self._retry = retry_policy or RetryPolicy()
        self._ran: dict[str, list[ToolResult]] = {}
        self._running_call: dict[str, tuple[ToolCall, float]] = {}
        """The call each session's tool round runs now and when it started (``time.monotonic``)."""
        self._sent_tokens: dict[str, int] = {}
        """The estimated size of each session's latest request: what an overflow refused."""
        self._saving: set[str] = set()
        self._failures: dict[str, TurnFailed] = {}
        self.sticky = StickyContextGatherer()
        self.knowledge: KnowledgeService | None = None
        """Passages of attached knowledge bases for each request (``engine/knowledge.py``)."""
        self.memory: MemoryService | None = None
        """The user's saved memories for each request (``engine/memory.py``)."""
        self._turn_hooks: dict[str, TurnHooks] = {}
        self.compactor = Compactor(store, hub, self._retry, self.token_budget)
        """Summarising to fit the window (``engine/compaction.py``)."""

    def sibling(
        self,
        *,
        load_agent: Callable[[LiveConversation], Awaitable[AgentConfig]],
        approval_handler: Callable[[], ApprovalHandler | None],
    ) -> TurnRunner:
        """A runner for one compare worker: its own agent and approvals, everything else shared.

        A worker's request is built as the chat's own would be, so what the engine attached to
        this runner (context files, server instructions, knowledge, saved memories, the record of
        file changes) goes with it; an attribute added to the runner belongs here too.
        """
        other = TurnRunner(
            self._store,
            self._hub,
            self._tools,
            load_agent=load_agent,
            approval_handler=approval_handler,
            retry_policy=self._retry,
        )
        other.sticky = self.sticky  # the session's context files are read once, not per worker
        other.workspace = self.workspace
        other.instructions = self.instructions
        other.knowledge = self.knowledge
        other.memory = self.memory
        return other

    async def run(
        self,
        live: LiveConversation,
        *,
        stored_first: Sequence[Message] = (),
        resuming: bool = False,
        on_stored: Callable[[], None] | None = None,
    ) -> None:
        """Drive the staged turn of ``live`` to its end (commit, cancel or failure), and store it.

        ``stored_first`` are the messages the turn's start added (the prompt); they
        are written before anything is sent. If the store refuses them, the turn
        fails at once with ``TurnFailed.unsent_prompt`` set and nothing is sent.
        Once stored, ``on_stored`` is called (the sidebar's preview can follow
        before the reply, which may wait for approval).

        Every later write goes through the turn's ``TurnWriter``: a failure there
        does not stop the turn, it is retried (``SaveStateChanged`` tells the tab),
        and this method returns only when everything is stored; the engine then
        announces the final state. A turn that failed says so (``TurnFailed``) once
        its ending is stored and the task is over (the engine takes it with ``take_failure``),
        so the Retry the tab offers is accepted; if storing
        the ending fails, right away, beside the ``SaveStateChanged``. Cancelling
        while only saving remains abandons the unsaved writes (the engine does that
        only when closing the session).
        """
        conversation = live.conversation
        session_id = live.session_id
        failure: list[TurnFailed] = []  # announced once the ending is stored, or at once if saving fails

        def save_state(err: Exception | None) -> None:
            live.emit(_save_state(session_id, err))
            if err is not None and failure:
                live.emit(failure.pop())

        writer = TurnWriter(self._store, session_id, on_save_state=save_state)
        target = RequestMetadata()  # provider and model, once known, for a failure record
        self._turn_hooks[session_id] = TurnHooks()  # every-prompt hooks run once per turn
        try:
            if not await self._store_prompt(live, stored_first):
                return
            if stored_first and on_stored is not None:
                on_stored()
            if not stored_first:
                writer.set_active_leaf(conversation.tree.active_leaf)
            if resuming and conversation.reply is not None:
                writer.update(conversation.reply)
            agent = await self._load_agent(live)  # the session's agent, as its history pinned it
            with tool_context(live.session_id, conversation.path(), agent.allowed_folders):  # whose sign in
                await self._tools.prepare(agent.enabled_tools)  # starts the MCP servers the agent uses
            if self.workspace is not None:  # the first look at the folders, while the model thinks
                offered = [spec.name for spec in self._offered_tools(agent)]
                self.workspace.prescan(live, offered, agent.allowed_folders)
            if conversation.running_tools is not None:  # an interrupted round, run again
                writer.update(conversation.running_tools)
                pending = conversation.pending_tool_calls()
                again = tuple(c for c in pending if not getattr(self._tools.get(c.name), "asks_user", False))
                await self._run_tools(
                    live, agent, writer, again, NOT_ASKED_AGAIN if len(again) < len(pending) else ""
                )
            config, model = await self._hub.resolve(live.info, agent)
            target = RequestMetadata(provider=config.name, model=model)
            provider = await self._hub.client(config)
            params = ChatParams.for_agent(model, agent)
            compactions = int(
                await self.compactor.compact_if_near_limit(live, agent, config, provider, params)
            )
            refused_before: int | None = None
            rounds = 0
            while True:
                try:
                    await self._stream_round(live, agent, config, provider, params, writer, resuming)
                except llm_errors.ContextOverflowError as overflow:
                    if conversation.reply is not None:
                        raise
                    refused = self._sent_tokens.get(live.session_id)
                    told = overflow
                    if compactions and isinstance(overflow, ProbableOverflowError):
                        told = overflow.after_compacting()
                    shrinking = refused is not None and (refused_before is None or refused < refused_before)
                    if compactions >= MAX_COMPACTIONS_PER_TURN or (compactions and not shrinking):
                        raise told from overflow  # compacting no longer makes the request smaller
                    refused_before = refused
                    limit, keep = self.compactor.limits(agent, config.name, params.model, refused)
                    try:
                        await self.compactor.compact(
                            live, provider, params, keep_turns=1, limit=limit, keep_tokens=keep
                        )
                    except NothingToCompactError:
                        raise naming_what_does_not_fit(told, live) from None
                    compactions += 1
                    continue
                resuming = False
                if conversation.state is TurnState.IDLE:
                    return
                rounds += 1
                if rounds > MAX_TOOL_ROUNDS:
                    raise TurnStopped(
                        f"The model asked for tools {MAX_TOOL_ROUNDS} times in a row, so the turn was "
                        "stopped. Send a message to let it continue.",
                        kind="tool_loop",
                    )
                await self._tool_round(live, agent, writer)
        except asyncio.CancelledError:
            stored = (conversation.reply, conversation.running_tools)  # updated in place, not appended
            ran = tuple(self._ran.pop(live.session_id, ()))  # results of calls that finished before the stop
            ran += self._stopped_call(live.session_id)
            self._record_ending(live, writer, stored, conversation.cancel(completed=ran))
            raise
        except Exception as err:
            if not isinstance(
                err, llm_errors.ProviderError | SetupError | NothingFitsError | TurnStopped | StoreError
            ):
                log.exception("turn in session %s failed", live.session_id)
            error = user_error(err)
            reply = conversation.reply
            stored = (reply, conversation.running_tools)
            changed = conversation.fail(error.message, completed=tuple(self._ran.pop(live.session_id, ())))
            if reply is None:
                changed.append(self._failure_record(live, error, target))
            self._record_ending(live, writer, stored, changed)
            failure.append(TurnFailed(live.session_id, error))
            if writer.failing is not None:
                live.emit(failure.pop())
        finally:
            self._ran.pop(live.session_id, None)
            self._running_call.pop(live.session_id, None)
            self._turn_hooks.pop(session_id, None)
            try:
                await self._save(live, writer)
            finally:
                if failure:  # the engine announces it once this task is over (see take_failure)
                    self._failures[session_id] = failure.pop()

    def _stopped_call(self, session_id: str) -> tuple[ToolResult, ...]:
        """The result of the call a Stop cut short while it ran: it did run, for this long."""
        running = self._running_call.pop(session_id, None)
        if running is None:
            return ()
        call, started = running
        return (stopped_result(call, time.monotonic() - started),)

    def take_failure(self, session_id: str) -> TurnFailed | None:
        """The ``TurnFailed`` of a turn that just ended, for the engine to announce.

        It is announced only after the turn's task has left the engine, right before
        the final state: a Retry clicked the moment the error shows is then accepted.
        """
        return self._failures.pop(session_id, None)

    def saving(self, session_id: str) -> bool:
        """Whether the turn of ``session_id`` has ended and only waits for its writes to be stored."""
        return session_id in self._saving

    async def _store_prompt(self, live: LiveConversation, stored_first: Sequence[Message]) -> bool:
        """Store the prompt before anything is sent; if the store refuses, take it back and fail.

        While the store retries a lost connection, the tab hears that the message waits.
        """
        waited: list[Exception] = []

        def waiting(trouble: Exception) -> None:
            waited.append(trouble)
            live.emit(prompt_waiting(live.session_id, trouble))

        try:
            for message in stored_first:
                # Shielded: a Stop pressed at once must not leave the prompt half-way.
                append = asyncio.shield(self._store.append_message(live.session_id, message))
                await awaiting(append, self._store, waiting)
        except StoreError as err:
            log.warning("session %s: the prompt could not be stored: %s", live.session_id, err)
            conversation = live.conversation
            for message in reversed(stored_first):
                conversation.tree.remove_leaf(message.id)
            conversation.fail(str(err))
            live.emit(ActivePathChanged(live.session_id, conversation.tree.active_leaf))
            prompt = stored_first[0] if stored_first else None
            live.emit(TurnFailed(live.session_id, unsent_prompt_error(err), unsent_prompt=prompt))
            return False
        finally:
            if waited:
                live.emit(SaveStateChanged(live.session_id, saving=False))
        return True

    async def _save(self, live: LiveConversation, writer: TurnWriter) -> None:
        """Wait until the writer stored everything; a forced close gives up (and says what was lost)."""
        self._saving.add(live.session_id)
        try:
            await writer.stop()
        except asyncio.CancelledError:
            if writer.failing is None:  # healthy, just not finished: a close waits for it, briefly
                with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                    await asyncio.wait_for(asyncio.shield(writer.drain()), SAVE_ON_CLOSE_GRACE)
            if writer.abandon():
                log.error(
                    "session %s was closed before its last changes could be saved; they are lost",
                    live.session_id,
                )
            raise
        finally:
            self._saving.discard(live.session_id)

    # -- one request --------------------------------------------------------------------

    async def _stream_round(
        self,
        live: LiveConversation,
        agent: AgentConfig,
        config: ProviderConfig,
        provider: Provider,
        params: ChatParams,
        writer: TurnWriter,
        resuming: bool,
    ) -> None:
        conversation = live.conversation
        tools = self._offered_tools(agent)
        request = await self._build(live, agent, config.name, params.model, tools, continue_reply=resuming)
        self._sent_tokens[live.session_id] = request.estimated_tokens + estimate_tool_tokens(tools)
        started = utcnow()
        clock = time.perf_counter()
        first_token: float | None = None
        reply = conversation.reply if resuming else None
        if reply is not None:
            writer.track(reply)

        async def on_retry(attempt: int, delay: float, err: llm_errors.ProviderError, most: int) -> None:
            live.emit(RetryScheduled(live.session_id, attempt, delay, err.reason, most))

        finished: llm_events.StreamFinished | None = None
        thoughts = ReasoningTracker(live.session_id, live.emit, writer.text_changed)
        home = asyncio.get_running_loop()

        def loading(now: bool) -> None:  # on the thread that waits for the runtime
            home.call_soon_threadsafe(live.emit, ModelLoading(live.session_id, params.model, now))

        unwatch = self._hub.local.watch_turn(config.name, params.model, loading) if self._hub.local else None
        stream = self._hub.stream(provider, request, params, tools, self._retry, on_retry)
        try:
            async for event in stream:
                if reply is None:
                    metadata = RequestMetadata(provider=config.name, model=params.model, started_at=started)
                    reply = conversation.begin_reply(metadata)
                    knowledge = live.last_knowledge.sources if live.last_knowledge else ()
                    reply.sources = knowledge + web_sources_of(conversation, tools)
                    live.emit(MessageAdded(live.session_id, reply))
                    writer.append(reply)
                    writer.track(reply)
                if thoughts.observe(reply, event):
                    continue
                if isinstance(event, llm_events.TextDelta):
                    if first_token is None:
                        first_token = (time.perf_counter() - clock) * 1000
                    conversation.append_text(event.text)
                    writer.text_changed()
                    live.emit(TextDelta(live.session_id, reply.id, event.text))
                elif isinstance(event, llm_events.StreamFinished):
                    finished = event
        except llm_errors.MalformedStreamError as err:
            if reply is None:  # not a word arrived: see ``empty_reply_error``
                window = self._hub.context_window(config.name, params.model)
                raise empty_reply_error(err, request, config.name, params.model, window) from err
            raise
        finally:
            if unwatch is not None:
                unwatch()
            if reply is not None:  # a stream stopped mid-thought still says how long it thought
                thoughts.close(reply)
        if finished is None or reply is None:
            raise TurnStopped(
                f"The reply from {config.name} ended before it was complete. Retry to ask again.",
                kind="incomplete_reply",
            )
        usage = finished.usage
        metadata = replace(
            reply.metadata or RequestMetadata(),
            request_id=finished.request_id,
            model=finished.model or params.model,
            ended_at=utcnow(),
            time_to_first_token_ms=first_token,
            input_tokens=usage.input_tokens if usage else None,
            output_tokens=usage.output_tokens if usage else None,
            stop_reason=finished.stop_reason,
        )
        conversation.finish_reply(tool_calls=finished.tool_calls, metadata=metadata)
        writer.update(reply)
        live.emit(MessageChanged(live.session_id, reply))
        if conversation.turn.busy:  # tool calls; the end of the turn is announced by the engine once saved
            live.emit(TurnStateChanged(live.session_id, conversation.state))

    async def _build(
        self,
        live: LiveConversation,
        agent: AgentConfig,
        provider: str,
        model: str,
        tools: Sequence[ToolSpec],
        *,
        continue_reply: bool,
    ) -> BuiltRequest:
        cap = await self._store.get_setting(HISTORY_CAP_SETTING, DEFAULT_HISTORY_CAP)
        gathered = await self._gather(live, agent, provider, model)
        knowledge = await knowledge_for_turn(self.knowledge, live, agent, gathered)
        memory = await self.memory.block_for(agent.id, live.info.project_id) if self.memory else ""
        system = with_context(with_context(agent.system_prompt, self.server_instructions(agent)), memory)
        path = live.conversation.path()
        if offers_web(tools):  # the numbers the reply's Sources will show (web/sources.py)
            path = numbered_path(path, len(knowledge.sources) + 1)
        return build_request(
            path,
            system=with_context(with_context(system, gathered.block), knowledge.block),
            limits=Limits(history_cap=int(cap), token_budget=self.token_budget(agent, provider, model)),
            known_tools=self._tools.names(),
            continue_reply=continue_reply,
        )

    async def _gather(
        self, live: LiveConversation, agent: AgentConfig, provider: str, model: str
    ) -> GatheredContext:
        """The sticky context of this request, read now; kept on ``live`` and announced for the tab."""
        assumed = await self._store.get_setting(DEFAULT_WINDOW_SETTING, DEFAULT_ASSUMED_WINDOW)
        if not isinstance(assumed, int | float) or assumed <= 0:
            assumed = DEFAULT_ASSUMED_WINDOW
        budget = self.token_budget(agent, provider, model)
        path = live.conversation.path()
        room = None if budget is None else budget - estimate(agent.system_prompt) - newest_turn_tokens(path)
        gathered = await self.sticky.gather(
            live.session_id,
            agent,
            live.info.context,
            window=self._hub.context_window(provider, model),
            default_window=int(assumed),
            room=room,
            turn=self._turn_hooks.get(live.session_id),
        )
        live.last_context = gathered
        live.emit(ContextGathered(live.session_id, gathered))
        return gathered

    def token_budget(self, agent: AgentConfig, provider: str, model: str) -> int | None:
        """Tokens the messages may use: the window less the reply's reserve and the tool definitions.

        ``None`` when the window is unknown (the provider's overflow error is the limit then).
        Automatic compaction starts at ``compaction.COMPACT_THRESHOLD`` of it; the context meter warns
        before that point from the same figure.
        """
        window = self._hub.context_window(provider, model)
        if not window:
            return None
        tools = estimate_tool_tokens(self._offered_tools(agent))
        return window - reply_reserve(agent, window) - tools

    def server_instructions(self, agent: AgentConfig) -> str:
        return self.instructions(self._offered_tools(agent)) if self.instructions is not None else ""

    def _offered_tools(self, agent: AgentConfig) -> list[ToolSpec]:
        return self._tools.offered(agent)

    # -- tools ----------------------------------------------------------------------------

    async def _tool_round(self, live: LiveConversation, agent: AgentConfig, writer: TurnWriter) -> None:
        conversation = live.conversation
        calls = conversation.pending_tool_calls()
        with tool_context(live.session_id, conversation.path(), agent.allowed_folders):  # for previews
            decisions = await decide(
                live.session_id,
                self._tools.for_policy(calls),  # the prompt shows and rules match ``server/tool``
                agent,
                self._approval_handler(),
                policy=lambda call: self._tools.approval(agent, call),
            )
        conversation.decided()
        live.emit(TurnStateChanged(live.session_id, conversation.state))
        allowed = tuple(
            replace(call, arguments=decision.arguments) if decision.arguments is not None else call
            for call, decision in zip(calls, decisions, strict=True)
            if decision.allow
        )
        writer.append(conversation.begin_tools())
        await self._run_tools(live, agent, writer, allowed, refusal_reason(decisions))

    async def _run_tools(
        self,
        live: LiveConversation,
        agent: AgentConfig,
        writer: TurnWriter,
        calls: Sequence[ToolCall],
        refused_reason: str = "",
    ) -> None:
        """Run ``calls`` into the round's answer, which is stored ``streaming`` before any starts.

        A process killed meanwhile leaves that answer behind (``interrupted`` at the
        next start) with the results of the calls that had finished; the writer
        beats for it so another instance does not take it for left behind. A call
        that already has a result (an interrupted round run again) is not run twice.
        """
        conversation = live.conversation
        answer = conversation.running_tools
        assert answer is not None
        writer.track(answer)
        await writer.drain()  # stored as running before the first tool starts
        results = self._ran[live.session_id] = list(answer.tool_results)
        done = {r.call_id for r in results}
        history = conversation.path()
        for call in calls:
            if call.id in done:
                continue
            self._running_call[live.session_id] = (call, time.monotonic())
            with tool_context(live.session_id, history, agent.allowed_folders):
                async with recorded(self.workspace, live, call, agent.allowed_folders):
                    result = await self._tools.run(call)
            del self._running_call[live.session_id]
            results.append(result)
            conversation.add_tool_result(result)
            writer.update(answer)
        del self._ran[live.session_id]
        message = conversation.record_tool_results(tuple(results), refused_reason=refused_reason)
        writer.update(message)
        live.emit(MessageAdded(live.session_id, message))
        live.emit(TurnStateChanged(live.session_id, conversation.state))

    # -- endings ------------------------------------------------------------------------------

    def _failure_record(
        self, live: LiveConversation, error: UserFacingError, target: RequestMetadata
    ) -> Message:
        """A turn that failed before any reply still leaves a stored trace of why (left out of requests)."""
        now = utcnow()
        failed = Message.reply(
            parent_id=live.conversation.tree.active_leaf,
            status=MessageStatus.FAILED,
            metadata=replace(target, started_at=now, ended_at=now, error=error.message),
        )
        live.conversation.tree.add(failed)
        return failed

    def _record_ending(
        self,
        live: LiveConversation,
        writer: TurnWriter,
        stored: tuple[Message | None, ...],
        changed: list[Message],
    ) -> None:
        """Queue and announce how a turn ended early: the partial reply, then new messages.

        ``stored`` are messages already in the store (the reply, a running tool
        round's answer): they are updated in place, the others appended. Nothing
        here awaits or raises for the store: the writes are queued behind the
        reply's text and stored (or retried) before the turn is over.
        """
        for message in changed:
            if any(message is known for known in stored):
                writer.update(message)
                live.emit(MessageChanged(live.session_id, message))
            else:
                writer.append(message)
                live.emit(MessageAdded(live.session_id, message))


def reply_reserve(agent: AgentConfig, window: int) -> int:
    """Tokens kept back for the reply: the agent's ``max_tokens``, else ``REPLY_RESERVE_TOKENS``
    but never so much that less than a quarter of the window is left for the conversation:
    a small local window (llama.cpp started with 512 tokens) must still hold a compacted turn."""
    return agent.max_tokens or min(REPLY_RESERVE_TOKENS, window - window // 4)


def _save_state(session_id: str, err: Exception | None) -> SaveStateChanged:
    if err is None:
        return SaveStateChanged(session_id, saving=False)
    return SaveStateChanged(session_id, saving=True, error=saving_error(err))
