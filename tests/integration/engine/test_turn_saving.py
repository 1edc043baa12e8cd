"""Idle means saved: a turn ends only once everything it produced is in the database.

Real SQLite files and the replay server throughout. A database that refuses
writes is made with a trigger another connection adds (SQLite itself raises the
error inside the store's own transaction), and a held write lock is another
connection's ``BEGIN IMMEDIATE``, as a second program would hold it.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest
from tests.integration.engine.helpers import stored_path
from tests.support.refusing_db import REFUSAL, accept, refuse
from tests.support.sse_server import ReplayServer, openai_auth_error, openai_text_stream, sse_response
from tests.support.waiting import until

from threadline.core.messages import MessageKind, MessageStatus
from threadline.core.turn import TurnState
from threadline.engine.engine import DATABASE_FILENAME, Engine
from threadline.engine.errors import SessionBusyError
from threadline.engine.events import (
    ActivePathChanged,
    ConversationEvent,
    MessageChanged,
    SaveStateChanged,
    TextDelta,
    TurnFailed,
    TurnStateChanged,
)

"""What the trigger raises: SQLite's own wording for a full disk."""


def database(engine: Engine) -> Path:
    return engine.data_dir / DATABASE_FILENAME


def states(events: list[ConversationEvent]) -> list[TurnStateChanged]:
    """The turn-state events only (listing refreshes may arrive after the final one)."""
    return [e for e in events if isinstance(e, TurnStateChanged)]


@pytest.mark.asyncio
async def test_a_send_from_inside_the_idle_event_is_accepted_and_the_turn_was_stored(
    engine: Engine, replay_server: ReplayServer
) -> None:
    rounds = 6
    for i in range(rounds):
        replay_server.enqueue(sse_response(openai_text_stream([f"answer {i} ", "done"])))
    session_id = (await engine.sessions.new_session()).id
    live = await engine.sessions.open_session(session_id)
    seen_at_idle: list[tuple[bool, str | None]] = []
    refused: list[Exception] = []
    finished = asyncio.Event()

    def on_event(event: ConversationEvent) -> None:
        if not isinstance(event, TurnStateChanged) or event.state is not TurnState.IDLE:
            return
        # The reply is in the database the moment "idle" is said (read with a connection of its own).
        connection = sqlite3.connect(database(engine))
        try:
            row = connection.execute(
                "SELECT status, text FROM messages WHERE kind = 'response' ORDER BY seq DESC LIMIT 1"
            ).fetchone()
        finally:
            connection.close()
        seen_at_idle.append((engine.turns.running(session_id), row and f"{row[0]}:{row[1]}"))
        if len(seen_at_idle) == rounds:
            finished.set()
            return
        try:
            engine.turns.send(session_id, f"question {len(seen_at_idle)}")
        except Exception as err:  # the failure this test exists for: SessionBusyError
            refused.append(err)
            finished.set()

    live.subscribe(on_event)
    engine.turns.send(session_id, "question 0")
    await asyncio.wait_for(finished.wait(), 60)
    await engine.turns.wait_idle(session_id)
    assert refused == []
    assert seen_at_idle == [(False, f"complete:answer {i} done") for i in range(rounds)]
    path = await stored_path(engine.data_dir, session_id)
    assert len(path) == 2 * rounds


@pytest.mark.asyncio
async def test_a_held_write_lock_during_a_turn_only_delays_it(
    engine: Engine, replay_server: ReplayServer
) -> None:
    pieces = [f"w{i:02d} " for i in range(60)]
    replay_server.enqueue(sse_response(openai_text_stream(pieces), chunk_delay=0.02))
    session_id = (await engine.sessions.new_session()).id
    live = await engine.sessions.open_session(session_id)
    events: list[ConversationEvent] = []
    live.subscribe(events.append)
    locked = threading.Event()

    def hold_lock() -> None:
        connection = sqlite3.connect(database(engine), timeout=30, isolation_level=None)
        try:
            connection.execute("BEGIN IMMEDIATE")
            locked.set()
            threading.Event().wait(3.0)  # another program keeps the write lock for 3 s
            connection.execute("COMMIT")
        finally:
            connection.close()

    engine.turns.send(session_id, "count")
    await until(lambda: any(isinstance(e, TextDelta) for e in events))
    holder = threading.Thread(target=hold_lock)
    holder.start()
    try:
        await until(locked.is_set)
        await asyncio.wait_for(engine.turns.wait_idle(session_id), 60)
    finally:
        await asyncio.to_thread(holder.join)
    assert not [e for e in events if isinstance(e, TurnFailed)]
    prompt, reply = await stored_path(engine.data_dir, session_id)
    assert prompt.text == "count"
    assert reply.status is MessageStatus.COMPLETE and reply.text == "".join(pieces)


@pytest.mark.asyncio
@pytest.mark.expected_log_warnings
async def test_refused_writes_keep_the_text_in_memory_and_the_session_busy_until_saved(
    engine: Engine, replay_server: ReplayServer
) -> None:
    pieces = [f"k{i:02d} " for i in range(40)]
    replay_server.enqueue(sse_response(openai_text_stream(pieces), chunk_delay=0.02))
    session_id = (await engine.sessions.new_session()).id
    live = await engine.sessions.open_session(session_id)
    events: list[ConversationEvent] = []
    live.subscribe(events.append)
    engine.turns.send(session_id, "keep this")
    await until(lambda: any(isinstance(e, TextDelta) for e in events))
    refuse(database(engine), "UPDATE")  # the reply exists; its text and final state cannot be written
    try:
        await until(lambda: any(isinstance(e, SaveStateChanged) and e.saving for e in events))
        await until(
            lambda: any(
                isinstance(e, MessageChanged) and e.message.status is MessageStatus.COMPLETE for e in events
            )
        )
        # The reply is complete in memory, but not stored: the session stays busy, and Stop
        # does not throw the unsaved text away.
        assert engine.turns.running(session_id)
        with pytest.raises(SessionBusyError):
            engine.turns.send(session_id, "too early")
        engine.turns.cancel(session_id)
        assert live.conversation.path()[-1].text == "".join(pieces)
        assert not any(isinstance(e, TurnStateChanged) and e.state is TurnState.IDLE for e in events)
    finally:
        accept(database(engine), "UPDATE")
    await asyncio.wait_for(engine.turns.wait_idle(session_id), 60)

    saving = [e for e in events if isinstance(e, SaveStateChanged)]
    assert saving[0].saving and saving[0].error is not None
    assert saving[0].error.kind == "storage" and "kept in memory" in saving[0].error.message
    assert "RAISE" not in saving[0].error.message and REFUSAL not in saving[0].error.message
    assert saving[-1] == SaveStateChanged(session_id, saving=False, error=None)
    final = events.index(saving[-1])
    assert [e for e in events[final:] if isinstance(e, TurnStateChanged)] == [
        TurnStateChanged(session_id, TurnState.IDLE)
    ]
    assert not [e for e in events if isinstance(e, TurnFailed)]
    _, reply = await stored_path(engine.data_dir, session_id)
    assert reply.status is MessageStatus.COMPLETE and reply.text == "".join(pieces)


@pytest.mark.asyncio
@pytest.mark.expected_log_warnings
async def test_a_prompt_the_store_refuses_is_not_sent_and_comes_back(
    engine: Engine, replay_server: ReplayServer
) -> None:
    session_id = (await engine.sessions.new_session()).id
    live = await engine.sessions.open_session(session_id)
    events: list[ConversationEvent] = []
    live.subscribe(events.append)
    refuse(database(engine), "INSERT")
    try:
        engine.turns.send(session_id, "do not lose me")
        await asyncio.wait_for(engine.turns.wait_idle(session_id), 30)
    finally:
        accept(database(engine), "INSERT")

    failed = next(e for e in events if isinstance(e, TurnFailed))
    assert failed.unsent_prompt is not None and failed.unsent_prompt.text == "do not lose me"
    assert failed.error.kind == "storage" and "not sent" in failed.error.message
    assert "saved" not in failed.error.message.replace("could not be saved", "")
    assert any(isinstance(e, ActivePathChanged) for e in events)
    assert states(events)[-1] == TurnStateChanged(session_id, TurnState.FAILED)
    assert replay_server.stream_requests() == []  # nothing went to the model
    assert live.conversation.path() == []  # the prompt left the conversation with the failure

    replay_server.enqueue(sse_response(openai_text_stream(["Now it is kept."])))
    engine.turns.send(session_id, "do not lose me")
    await asyncio.wait_for(engine.turns.wait_idle(session_id), 30)
    assert [m.text for m in await stored_path(engine.data_dir, session_id)] == [
        "do not lose me",
        "Now it is kept.",
    ]


@pytest.mark.asyncio
@pytest.mark.expected_log_warnings
async def test_a_failed_turn_whose_ending_cannot_be_stored_still_says_why(
    engine: Engine, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(openai_auth_error())
    session_id = (await engine.sessions.new_session()).id
    live = await engine.sessions.open_session(session_id)
    events: list[ConversationEvent] = []
    live.subscribe(events.append)
    refuse(database(engine), "INSERT", when="NEW.kind != 'prompt'")  # the failure record is refused
    try:
        engine.turns.send(session_id, "hello")
        await until(lambda: any(isinstance(e, SaveStateChanged) for e in events))
        await until(lambda: any(isinstance(e, TurnFailed) for e in events))
        assert engine.turns.running(session_id)  # still saving: not failed-and-idle yet
    finally:
        accept(database(engine), "INSERT")
    await asyncio.wait_for(engine.turns.wait_idle(session_id), 30)

    failed = next(e for e in events if isinstance(e, TurnFailed))
    assert failed.error.kind != "storage" and failed.unsent_prompt is None  # the provider's own error
    assert states(events)[-1] == TurnStateChanged(session_id, TurnState.FAILED)
    prompt, record = await stored_path(engine.data_dir, session_id)
    assert prompt.text == "hello"
    assert record.kind is MessageKind.RESPONSE and record.status is MessageStatus.FAILED
