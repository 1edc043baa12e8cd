"""Several models on one prompt (engine/compare_runner.py) against the replay server.

Three workers, routed by the model name each request carries: one fails, one asks
for a tool, one streams slowly. Each outcome reaches its column's events, each
reply is stored under the prompt, and after picking one the next request carries
only the chosen branch.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from tests.integration.engine.helpers import SqliteWriteLock, stored_path, turn
from tests.integration.engine.test_engine_turns import LookupTool
from tests.support.sse_server import (
    RecordedRequest,
    ReplayServer,
    ScriptedResponse,
    openai_model_not_found,
    openai_text_stream,
    openai_tool_call_stream,
    sse_response,
)
from tests.support.waiting import until

from threadline.core.compare import CompareTarget, WorkerState
from threadline.core.config import AgentConfig
from threadline.core.messages import Message, MessageKind, MessageStatus, ToolCall
from threadline.core.turn import TurnState
from threadline.engine.approval import Decision
from threadline.engine.compare_runner import approval_label
from threadline.engine.engine import DATABASE_FILENAME, Engine
from threadline.engine.events import (
    CompareStarted,
    CompareWorkerChanged,
    CompareWorkerEvent,
    ConversationEvent,
    TextDelta,
    TurnFailed,
)
from threadline.store.repository import Store

pytestmark = pytest.mark.asyncio

TARGETS = (
    CompareTarget("replay", "fails"),
    CompareTarget("replay", "tools"),
    CompareTarget("replay", "slow"),
)
SLOW_TEXT = [f"slow{i} " for i in range(12)]


def three_workers(request: RecordedRequest) -> ScriptedResponse | None:
    """Answers by model: "fails" → 404, "tools" → a tool call then text, "slow" → a slow stream."""
    body = request.body
    model = body["model"]
    if model == "fails":
        return openai_model_not_found("fails")
    if model == "tools":
        if any(m["role"] == "tool" for m in body["messages"]):
            return sse_response(openai_text_stream(["It means ", "a long thread."], model="tools"))
        return sse_response(
            openai_tool_call_stream([("call_1", "lookup", {"q": "threadline"})], model="tools")
        )
    if model == "slow":
        return sse_response(openai_text_stream(SLOW_TEXT, model="slow"), chunk_delay=0.05)
    return sse_response(openai_text_stream(["Next answer."], model=model))


async def compare(
    engine: Engine, session_id: str, text: str, targets: Sequence[CompareTarget] = TARGETS
) -> list[ConversationEvent]:
    live = await engine.sessions.open_session(session_id)
    events: list[ConversationEvent] = []
    unsubscribe = live.subscribe(events.append)
    try:
        engine.turns.send_compare(session_id, text, targets)
        assert live.conversation.state is TurnState.COMPARING
        await asyncio.wait_for(engine.turns.wait_idle(session_id), 30)
    finally:
        unsubscribe()
    return events


async def allow_tools(engine: Engine) -> list[str]:
    engine.tools.register(LookupTool())
    await engine.agents.save_agent(AgentConfig("default", "Default", enabled_tools=("lookup",)))
    labels: list[str] = []

    async def allow(session_id: str, calls: tuple[ToolCall, ...]) -> list[Decision]:
        labels.append(approval_label())
        return [Decision(c.id, allow=True) for c in calls]

    engine.turns.set_approval_handler(allow)
    return labels


def final_states(events: list[ConversationEvent]) -> dict[int, CompareWorkerChanged]:
    last: dict[int, CompareWorkerChanged] = {}
    for event in events:
        if isinstance(event, CompareWorkerChanged):
            last[event.index] = event
    return last


async def test_three_workers_fail_use_a_tool_and_stream_slowly(
    engine: Engine, replay_server: ReplayServer
) -> None:
    labels = await allow_tools(engine)
    replay_server.responder = three_workers
    session = await engine.sessions.new_session()
    events = await compare(engine, session.id, "What is a threadline?")

    started = next(e for e in events if isinstance(e, CompareStarted))
    assert started.targets == TARGETS
    states = final_states(events)
    assert states[0].state is WorkerState.FAILED and states[0].error is not None
    assert "fails" in states[0].error.message
    assert states[1].state is WorkerState.DONE and states[2].state is WorkerState.DONE
    assert labels == ["replay/tools"]  # the approval said which worker asked
    # The slow column streamed token by token, inside its own wrapper.
    slow_deltas = [
        e.event.delta
        for e in events
        if isinstance(e, CompareWorkerEvent) and e.index == 2 and isinstance(e.event, TextDelta)
    ]
    assert "".join(slow_deltas) == "".join(SLOW_TEXT)
    # The streams overlapped: one turn, three requests at once.
    assert replay_server.max_concurrent_streams >= 2

    live = engine.sessions.live(session.id)
    assert live is not None and live.conversation.ready_for_input and live.conversation.compare is None
    prompt = next(m for m in live.conversation.tree if m.text == "What is a threadline?")
    # Stored under the prompt, as a restart reads them.
    store = await Store.open(Store.sqlite_url(engine.data_dir / DATABASE_FILENAME))
    try:
        tree = await store.load_tree(session.id)
    finally:
        await store.close()
    replies = {r.metadata.model if r.metadata else "": r for r in tree.children(prompt.id)}
    assert sorted(replies) == ["fails", "slow", "tools"]  # siblings in the order they began
    failed, tools, slow = replies["fails"], replies["tools"], replies["slow"]
    assert failed.status is MessageStatus.FAILED and failed.metadata and failed.metadata.error
    assert tools.kind is MessageKind.TOOL_CALLS
    answer = tree.children(tools.id)[0]
    assert answer.kind is MessageKind.TOOL_RESULTS and "long thread" in answer.tool_results[0].text
    assert tree.children(answer.id)[0].text == "It means a long thread."
    assert slow.status is MessageStatus.COMPLETE and slow.text == "".join(SLOW_TEXT)
    # Nobody picked: the chat shows the first finished reply.
    assert tree.active_leaf == tree.children(answer.id)[0].id
    # The sidebar previews the reply shown, not the column written last.
    assert (await engine.store.get_session(session.id)).preview == "It means a long thread."  # type: ignore[union-attr]

    # Continue with the slow one: the next request carries only that branch.
    await engine.turns.pick_compare(session.id, slow.id)
    assert live.conversation.tree.active_leaf == slow.id
    shown = (await engine.store.get_session(session.id)).preview  # type: ignore[union-attr]
    assert shown == "".join(SLOW_TEXT).strip().splitlines()[0]
    sent_before = len(replay_server.requests)
    await turn(engine, session.id, "And then?")
    request = replay_server.requests[sent_before]
    assert request.body["model"] == "slow"  # picking a model's reply continues with that model
    sent = json.dumps(request.body["messages"])
    assert "".join(SLOW_TEXT).strip() in sent
    assert "long thread" not in sent and "lookup" not in sent
    assert [m["role"] for m in request.body["messages"]][-3:] == ["user", "assistant", "user"]


async def test_picking_during_the_compare_stops_the_others(
    engine: Engine, replay_server: ReplayServer
) -> None:
    def answer(request: RecordedRequest) -> ScriptedResponse:
        model = request.body["model"]
        if model == "quick":
            return sse_response(openai_text_stream(["Quick answer."], model=model))
        return sse_response(openai_text_stream([f"w{i} " for i in range(400)], model=model), chunk_delay=0.05)

    replay_server.responder = answer
    session = await engine.sessions.new_session()
    live = await engine.sessions.open_session(session.id)
    events: list[ConversationEvent] = []
    live.subscribe(events.append)
    engine.turns.send_compare(
        session.id, "Race", (CompareTarget("replay", "quick"), CompareTarget("replay", "slow"))
    )
    quick_done = asyncio.Event()
    slow_started = asyncio.Event()

    def watch(event: ConversationEvent) -> None:
        if isinstance(event, CompareWorkerChanged) and event.index == 0 and event.state is WorkerState.DONE:
            quick_done.set()
        if isinstance(event, CompareWorkerEvent) and event.index == 1 and isinstance(event.event, TextDelta):
            slow_started.set()

    live.subscribe(watch)
    await asyncio.wait_for(asyncio.gather(quick_done.wait(), slow_started.wait()), 30)
    assert live.conversation.state is TurnState.COMPARING  # busy until all ended or one is picked
    compare_ = live.conversation.compare
    assert compare_ is not None
    quick_id = compare_.workers[0].reply_id
    slow_id = compare_.workers[1].reply_id
    assert quick_id is not None and slow_id is not None
    await asyncio.wait_for(engine.turns.pick_compare(session.id, quick_id), 10)
    assert live.conversation.ready_for_input and live.conversation.tree.active_leaf == quick_id
    slow = live.conversation.tree.get(slow_id)
    assert slow.status is MessageStatus.CANCELLED and slow.text.startswith("w0 ")
    assert final_states(events)[1].state is WorkerState.CANCELLED


async def test_stop_stops_every_worker_and_keeps_their_text(
    engine: Engine, replay_server: ReplayServer
) -> None:
    replay_server.responder = lambda request: sse_response(
        openai_text_stream([f"t{i} " for i in range(400)], model=request.body["model"]), chunk_delay=0.05
    )
    session = await engine.sessions.new_session()
    live = await engine.sessions.open_session(session.id)
    streaming: set[int] = set()
    both = asyncio.Event()

    def watch(event: ConversationEvent) -> None:
        if isinstance(event, CompareWorkerEvent) and isinstance(event.event, TextDelta):
            streaming.add(event.index)
            if len(streaming) == 2:
                both.set()

    live.subscribe(watch)
    engine.turns.send_compare(session.id, "Go", (CompareTarget("replay", "a"), CompareTarget("replay", "b")))
    await asyncio.wait_for(both.wait(), 30)
    engine.turns.cancel(session.id)
    await asyncio.wait_for(engine.turns.wait_idle(session.id), 10)
    assert live.conversation.ready_for_input
    prompt = next(m for m in live.conversation.tree if m.text == "Go")
    replies = live.conversation.tree.children(prompt.id)
    assert len(replies) == 2
    assert all(r.status is MessageStatus.CANCELLED and r.text.startswith("t0 ") for r in replies)


async def test_one_workers_stop_leaves_the_other_running(engine: Engine, replay_server: ReplayServer) -> None:
    def answer(request: RecordedRequest) -> ScriptedResponse:
        model = request.body["model"]
        delay = 0.05 if model == "long" else 0.02
        count = 400 if model == "long" else 30
        return sse_response(
            openai_text_stream([f"{model}{i} " for i in range(count)], model=model), chunk_delay=delay
        )

    replay_server.responder = answer
    session = await engine.sessions.new_session()
    live = await engine.sessions.open_session(session.id)
    started = asyncio.Event()
    live.subscribe(
        lambda e: (
            started.set()
            if isinstance(e, CompareWorkerEvent) and e.index == 0 and isinstance(e.event, TextDelta)
            else None
        )
    )
    engine.turns.send_compare(
        session.id, "Two", (CompareTarget("replay", "long"), CompareTarget("replay", "short"))
    )
    await asyncio.wait_for(started.wait(), 30)
    engine.turns.stop_compare_worker(session.id, 0)
    await asyncio.wait_for(engine.turns.wait_idle(session.id), 30)
    prompt = next(m for m in live.conversation.tree if m.text == "Two")
    by_model = {r.metadata.model if r.metadata else "": r for r in live.conversation.tree.children(prompt.id)}
    long, short = by_model["long"], by_model["short"]
    assert long.status is MessageStatus.CANCELLED
    assert short.status is MessageStatus.COMPLETE and short.text.endswith("short29 ")
    assert live.conversation.tree.active_leaf == short.id  # the finished one is shown


async def test_compare_needs_two_to_four_targets(engine: Engine) -> None:
    session = await engine.sessions.new_session()
    live = await engine.sessions.open_session(session.id)
    for targets in [
        (CompareTarget("replay", "a"),),
        tuple(CompareTarget("replay", f"m{i}") for i in range(5)),
    ]:
        try:
            engine.turns.send_compare(session.id, "Hello", targets)
        except ValueError as err:
            assert "2 to 4" in str(err)
        else:
            raise AssertionError("a compare with the wrong number of targets started")
    assert live.conversation.ready_for_input and len(live.conversation.tree) == 0


async def test_stop_while_the_prompt_is_stored_leaves_the_chat_ready(
    engine: Engine, replay_server: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stop pressed while the compare's prompt waits for the database (another connection
    holds SQLite's write lock): the compare settles, the chat is ready, the next send runs."""
    replay_server.responder = lambda request: sse_response(
        openai_text_stream(["Fine."], model=request.body["model"])
    )
    session = await engine.sessions.new_session()
    live = await engine.sessions.open_session(session.id)
    lock = SqliteWriteLock(engine.data_dir / DATABASE_FILENAME)
    real_append = engine.store.append_message

    async def append_behind_a_lock(session_id: str, message: Message) -> None:
        if message.text == "Held" and not lock.started:  # the compare's prompt: lock first
            lock.start()
            await until(lock.locked.is_set)
        await real_append(session_id, message)

    monkeypatch.setattr(engine.store, "append_message", append_behind_a_lock)
    engine.turns.send_compare(
        session.id, "Held", (CompareTarget("replay", "a"), CompareTarget("replay", "b"))
    )
    try:
        await until(lock.locked.is_set)
        engine.turns.cancel(session.id)
    finally:
        await lock.release()
    await asyncio.wait_for(engine.turns.wait_idle(session.id), 30)
    assert live.conversation.ready_for_input and live.conversation.compare is None
    assert not replay_server.requests  # stopped before any worker sent
    prompt = next(m for m in live.conversation.tree if m.text == "Held")
    assert live.conversation.tree.active_leaf == prompt.id
    await turn(engine, session.id, "Next")  # a next send is accepted, not SessionBusyError
    assert live.conversation.tree.get(live.conversation.tree.active_leaf or "").text == "Fine."
    stored = await stored_path(engine.data_dir, session.id)
    assert [m.text for m in stored] == ["Held", "Next", "Fine."]


async def test_a_worker_stopped_before_its_first_token_is_stopped_and_the_finished_reply_shown(
    engine: Engine, replay_server: ReplayServer
) -> None:
    """Column 1 is stopped while its model has not answered yet; column 2 finishes. Column 1
    says "Stopped" (not "Done"), and the chat ends on column 2's reply, not on the prompt."""

    def answer(request: RecordedRequest) -> ScriptedResponse:
        model = request.body["model"]
        if model == "silent":  # nothing at all until the server stops
            return sse_response(openai_text_stream(["late"], model=model), first_byte_delay=120)
        return sse_response(openai_text_stream(["Here ", "it is."], model=model), chunk_delay=0.05)

    replay_server.responder = answer
    session = await engine.sessions.new_session()
    live = await engine.sessions.open_session(session.id)
    events: list[ConversationEvent] = []
    live.subscribe(events.append)
    engine.turns.send_compare(
        session.id, "Who answers?", (CompareTarget("replay", "silent"), CompareTarget("replay", "quick"))
    )
    await until(lambda: any(r.body["model"] == "silent" for r in replay_server.requests))
    engine.turns.stop_compare_worker(session.id, 0)
    await asyncio.wait_for(engine.turns.wait_idle(session.id), 30)

    states = final_states(events)
    assert states[0].state is WorkerState.CANCELLED and states[0].state.label == "Stopped"
    assert states[1].state is WorkerState.DONE
    prompt = next(m for m in live.conversation.tree if m.text == "Who answers?")
    (reply,) = live.conversation.tree.children(prompt.id)
    assert reply.text == "Here it is." and reply.status is MessageStatus.COMPLETE
    assert live.conversation.ready_for_input and live.conversation.tree.active_leaf == reply.id
    assert [m.text for m in await stored_path(engine.data_dir, session.id)] == ["Who answers?", "Here it is."]


async def test_a_compare_turned_away_by_a_reply_elsewhere_gives_the_prompt_back(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    """The chat replies in another instance (a second engine on the same SQLite file): the
    compare is refused before anything is stored or sent, and its prompt comes back (as
    ``TurnFailed.unsent_prompt``, for the composer), the chat ready as before."""
    replay_server.enqueue(sse_response(openai_text_stream([f"p{i} " for i in range(400)]), chunk_delay=0.05))
    session = await engine.sessions.new_session()
    elsewhere = await Engine.open(
        tmp_path / "elsewhere", database_url=Store.sqlite_url(engine.data_dir / DATABASE_FILENAME)
    )
    try:
        await elsewhere.sessions.open_session(session.id)
        elsewhere.turns.send(session.id, "Busy over there")
        await until(lambda: elsewhere.leases.holds(session.id))
        live = await engine.sessions.open_session(session.id)
        events: list[ConversationEvent] = []
        live.subscribe(events.append)
        engine.turns.send_compare(
            session.id, "Compare me", (CompareTarget("replay", "a"), CompareTarget("replay", "b"))
        )
        await asyncio.wait_for(engine.turns.wait_idle(session.id), 30)
        failed = [e for e in events if isinstance(e, TurnFailed)]
        assert len(failed) == 1 and failed[0].error.kind == "busy_elsewhere"
        assert failed[0].unsent_prompt is not None and failed[0].unsent_prompt.text == "Compare me"
        assert live.conversation.ready_for_input and live.conversation.compare is None
        assert all(m.text != "Compare me" for m in live.conversation.tree)
        assert not any(isinstance(e, CompareWorkerChanged) for e in events)  # no column ran
        assert not [r for r in replay_server.requests if r.body and r.body.get("model") in ("a", "b")]
        elsewhere.turns.cancel(session.id)
        await asyncio.wait_for(elsewhere.turns.wait_idle(session.id), 30)
    finally:
        await elsewhere.aclose()
    stored = await stored_path(engine.data_dir, session.id)
    assert "Compare me" not in [m.text for m in stored]


async def test_an_agent_answers_beside_a_model_with_its_own_instructions(
    engine: Engine, replay_server: ReplayServer
) -> None:
    """A column may be an agent (``CompareTarget.agent_id``): its request carries the agent's
    system prompt and model; the model's column carries neither."""
    replay_server.responder = lambda request: sse_response(
        openai_text_stream([f"{request.body['model']} answers."], model=request.body["model"])
    )
    pirate = await engine.agents.create_agent(
        AgentConfig("", "Pirate", system_prompt="Answer as a pirate.", provider="replay", model="sea")
    )
    session = await engine.sessions.new_session()
    targets = (CompareTarget("replay", "plain"), CompareTarget(agent_id=pirate.id, label=pirate.name))
    events = await compare(engine, session.id, "Hello?", targets)
    states = final_states(events)
    assert states[0].state is WorkerState.DONE and states[1].state is WorkerState.DONE
    bodies = {r.body["model"]: r.body for r in replay_server.requests if r.method == "POST"}
    assert sorted(bodies) == ["plain", "sea"]  # the agent answered with its own model
    assert bodies["sea"]["messages"][0] == {"role": "system", "content": "Answer as a pirate."}
    assert "pirate" not in json.dumps(bodies["plain"]["messages"])
    assert bodies["sea"]["messages"][-1]["content"] == "Hello?"
