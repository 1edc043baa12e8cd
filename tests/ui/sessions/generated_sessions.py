"""A database of many chats, written straight into SQLite with ``executemany``.

Creating 100,000 sessions through the store (one transaction each) takes minutes;
one ``executemany`` of prepared rows takes about a second. The schema is made by
opening the real store first (its migrations), so the rows land in the same
tables, indexes and triggers the app uses. Chat ``i`` is ``i`` hours older than
chat 0, so the last one generated is the oldest and the date groups (Today …
months … years) all get members.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from threadline.engine.engine import DATABASE_FILENAME
from threadline.store.repository import Store


@dataclass(frozen=True, slots=True)
class Generated:
    path: Path
    count: int
    newest: datetime

    @staticmethod
    def session_id(i: int) -> str:
        return f"gen{i:07d}"

    @staticmethod
    def title(i: int) -> str:
        return f"Generated chat {i}"


def oldest_title(count: int) -> str:
    """A title only the oldest chat has: what a person types into the filter to find it."""
    return f"Zeppelin voyage notes {count - 1}"


def generate(data_dir: Path, count: int, *, step: timedelta = timedelta(hours=1)) -> Generated:
    """Write ``count`` chats (each with a prompt and a reply) into ``data_dir``'s database."""
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / DATABASE_FILENAME
    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # callers may be inside a running loop
        pool.submit(asyncio.run, _create_schema(path)).result()
    newest = datetime.now(UTC) - timedelta(minutes=1)
    sessions = []
    messages = []
    for i in range(count):
        sid = Generated.session_id(i)
        when = _sql_time(newest - step * i)
        title = oldest_title(count) if i == count - 1 else Generated.title(i)
        prompt_id, reply_id = f"{sid}p", f"{sid}r"
        reply = f"Answer number {i} about the topic."
        sessions.append((sid, title, reply_id, reply, when, when))
        messages.append((prompt_id, sid, None, 0, "user", "prompt", f"Question {i}", when))
        messages.append((reply_id, sid, prompt_id, 1, "assistant", "response", reply, when))
    with sqlite3.connect(path) as connection:
        connection.executemany(
            "INSERT INTO sessions (id, title, title_set_by_user, pinned, archived, folder, agent_id,"
            " provider, model, active_leaf, preview, checkpoints, created_at, updated_at, summary)"
            " VALUES (?, ?, 0, 0, 0, '', 'default', '', '', ?, ?, '{}', ?, ?, '')",
            sessions,
        )
        connection.executemany(
            "INSERT INTO messages (id, session_id, parent_id, ordinal, role, kind, text, content,"
            " status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'complete', ?)",
            [(*m[:7], json.dumps({}), m[7]) for m in messages],
        )
    return Generated(path, count, newest)


async def _create_schema(path: Path) -> None:
    store = await Store.open(Store.sqlite_url(path))
    await store.close()


def _sql_time(when: datetime) -> str:
    """The form SQLAlchemy stores a UTC datetime in on SQLite (naive, microseconds)."""
    return when.astimezone(UTC).replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")
