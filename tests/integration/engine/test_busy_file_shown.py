"""SQLite's counterpart of a lost server connection: a file another program keeps locked.

The store rides it out (busy timeout, then retries on its thread); while it does, the tab is
told the turn's writes wait, and once the lock goes they land in order and the state clears.
A real SQLite file, locked by a second connection's ``BEGIN IMMEDIATE`` as another program
would, and the replay server streaming meanwhile.
"""

from __future__ import annotations

import asyncio

import pytest
from tests.integration.engine.helpers import SqliteWriteLock, stored_path
from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response
from tests.support.waiting import until

from threadline.core.messages import MessageStatus
from threadline.engine.engine import DATABASE_FILENAME, Engine
from threadline.engine.events import ConversationEvent, SaveStateChanged, TextDelta, TurnFailed

pytestmark = pytest.mark.asyncio


async def test_a_file_locked_mid_stream_is_shown_then_everything_lands_and_the_state_clears(
    engine: Engine, replay_server: ReplayServer
) -> None:
    pieces = [f"w{i:02d} " for i in range(80)]
    replay_server.enqueue(sse_response(openai_text_stream(pieces), chunk_delay=0.05))
    session_id = (await engine.sessions.new_session()).id
    live = await engine.sessions.open_session(session_id)
    events: list[ConversationEvent] = []
    live.subscribe(events.append)
    lock = SqliteWriteLock(engine.data_dir / DATABASE_FILENAME)

    def saves() -> list[SaveStateChanged]:
        return [e for e in events if isinstance(e, SaveStateChanged)]

    engine.turns.send(session_id, "count")
    await until(lambda: any(isinstance(e, TextDelta) for e in events))
    lock.start()
    try:
        await until(lock.locked.is_set)
        await until(saves)  # told while the store still retries (its window is 30 s)
        told = saves()[0]
        assert told.saving and told.error is not None
        assert "busy" in told.error.message and "kept in memory" in told.error.message
        assert engine.turns.running(session_id)
    finally:
        await lock.release()
    await asyncio.wait_for(engine.turns.wait_idle(session_id), 60)
    assert saves()[-1] == SaveStateChanged(session_id, saving=False)
    assert not [e for e in events if isinstance(e, TurnFailed)]
    prompt, reply = await stored_path(engine.data_dir, session_id)
    assert prompt.text == "count"
    assert reply.status is MessageStatus.COMPLETE and reply.text == "".join(pieces)
