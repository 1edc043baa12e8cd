"""Small helpers shared by the engine tests."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

from threadline.core.messages import Message
from threadline.engine.engine import DATABASE_FILENAME, Engine
from threadline.engine.events import ConversationEvent, TurnFailed
from threadline.store.repository import Store


async def turn(engine: Engine, session_id: str, text: str, timeout: float = 20) -> list[ConversationEvent]:
    """Send ``text`` and wait for the turn to end; returns the events it produced."""
    live = await engine.sessions.open_session(session_id)
    events: list[ConversationEvent] = []
    unsubscribe = live.subscribe(events.append)
    try:
        engine.turns.send(session_id, text)
        await asyncio.wait_for(engine.turns.wait_idle(session_id), timeout)
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


class SqliteWriteLock:
    """Another program holding a SQLite file's write lock (``BEGIN IMMEDIATE``) on a thread of
    its own, from ``start`` until ``release``: the store's writes wait behind it, as they would
    behind a real second writer."""

    def __init__(self, database: Path) -> None:
        self._database = database
        self.locked = threading.Event()
        """Set once the lock is held."""
        self._release = threading.Event()
        self._thread = threading.Thread(target=self._hold, name="sqlite-write-lock")

    @property
    def started(self) -> bool:
        return self._thread.ident is not None

    def start(self) -> None:
        self._thread.start()

    async def release(self) -> None:
        """Let go of the lock (if it was taken) and wait for the thread to end."""
        self._release.set()
        if self.started:
            await asyncio.to_thread(self._thread.join)

    def _hold(self) -> None:
        connection = sqlite3.connect(self._database, timeout=30, isolation_level=None)
        try:
            connection.execute("BEGIN IMMEDIATE")
            self.locked.set()
            self._release.wait(120)  # until the test has seen what it waits for
            connection.execute("COMMIT")
        finally:
            connection.close()
