"""``threadline list``: the chats, for scripts.

By default the 50 most recent (pinned first, as in the sidebar); ``--all`` every
one, read and printed page by page so 100,000 chats never sit in memory at once;
``--archived`` the archived list instead; ``--query`` only chats whose title
holds every word. ``--json`` prints one JSON array of objects (id, title,
created, updated, provider, model, pinned, archived), written as the pages come,
so a consumer can still parse it as a whole.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, TextIO

from threadline.core.session import SessionInfo

if TYPE_CHECKING:
    from threadline.engine.api import EngineApi

DEFAULT_COUNT = 50
PAGE_SIZE = 500
EVERYTHING = 2**62
"""The title filter's limit with ``--all`` (a SQL LIMIT must be a number)."""


async def run(engine: EngineApi, args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    sessions = _sessions(engine, archived=args.archived, query=args.query, everything=args.all)
    if args.json:
        out.write("[")
        first = True
        async for info in sessions:
            out.write(("\n  " if first else ",\n  ") + json.dumps(as_json(info), ensure_ascii=False))
            first = False
        out.write("\n]\n" if not first else "]\n")
        return 0
    async for info in sessions:
        out.write(as_line(info) + "\n")
    return 0


async def _sessions(
    engine: EngineApi, *, archived: bool, query: str | None, everything: bool
) -> AsyncIterator[SessionInfo]:
    if query is not None:
        limit = EVERYTHING if everything else DEFAULT_COUNT
        for info in await engine.sessions.search_sessions(query, limit=limit, archived=archived):
            yield info
        return
    if not everything:
        for info in await engine.sessions.list_sessions(archived=archived, limit=DEFAULT_COUNT):
            yield info
        return
    after: SessionInfo | None = None
    while page := await engine.sessions.list_sessions(archived=archived, limit=PAGE_SIZE, after=after):
        for info in page:
            yield info
        after = page[-1]


def as_json(info: SessionInfo) -> dict[str, Any]:
    return {
        "id": info.id,
        "title": info.display_title,
        "created": info.created_at.isoformat(),
        "updated": info.updated_at.isoformat(),
        "provider": info.provider,
        "model": info.model,
        "pinned": info.pinned,
        "archived": info.archived,
    }


def as_line(info: SessionInfo) -> str:
    """``id  2026-11-23 14:05  * title`` (a star for pinned), local time."""
    when = info.updated_at.astimezone().strftime("%Y-%m-%d %H:%M")
    mark = "* " if info.pinned else ""
    return f"{info.id}  {when}  {mark}{info.display_title}"
