"""Small helpers shared by the engine tests."""

from __future__ import annotations

import asyncio
from pathlib import Path

from threadline.core.messages import Message
from threadline.engine.engine import DATABASE_FILENAME, Engine
from threadline.engine.events import ConversationEvent, TurnFailed
from threadline.store.repository import Store


async def turn(engine: Engine, session_id: str, text: str, timeout: float = 20) -> list[ConversationEvent]:
    """Send ``text`` and wait for the turn to end; returns the events it produced."""
    live = await engine.open_session(session_id)
    events: list[ConversationEvent] = []
    unsubscribe = live.subscribe(events.append)
    try:
        engine.send(session_id, text)
        await asyncio.wait_for(engine.wait_idle(session_id), timeout)
    finally:
        unsubscribe()
    return events


def failure(events: list[ConversationEvent]) -> TurnFailed | None:
    return next((e for e in events if isinstance(e, TurnFailed)), None)


async def stored_path(data_dir: Path, session_id: str) -> list[Message]:
    """The active path as a fresh store on the same database reads it (what a restart sees)."""
    store = await Store.open(Store.sqlite_url(data_dir / DATABASE_FILENAME))
    try:
        return (await store.load_tree(session_id)).path()
    finally:
        await store.close()
