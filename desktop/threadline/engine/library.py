"""The library facet (``engine.library``): the stored chats taken as a whole.

Searching every chat, exporting chats (Markdown, Threadline JSON) and importing other
tools' exports, and what the replies cost (``usage``, ``price_book``) — the work that
reads or writes many chats at once rather than running one (``LibraryApi`` in
``engine/api.py``). Named for the shelf of stored conversations, not for any one of
them; apart from the engine's core so that core keeps only its parts (docs/design.md,
"The engine: a core and its facets"). Import and export load their formats and writers
with the first use, not with every start (docs/performance.md).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from threadline.core.pricing import UserPrice
from threadline.core.project import is_colour
from threadline.core.session import SearchHit, SessionInfo
from threadline.engine.exporting import (
    ChatSource,
    ExportFormat,
    ExportProgress,
    export_chunks,
    write_to_file,
)
from threadline.engine.usage_report import PriceBook, SessionUsage, session_usage, set_user_price

if TYPE_CHECKING:
    from threadline.engine.engine import Engine
    from threadline.interchange.model import ImportedProject, ImportProgress, ImportReport


class Library:
    """What ``LibraryApi`` offers the window and the command line."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._store = engine.store

    async def search(self, query: str, limit: int = 50, *, project_id: str | None = None) -> list[SearchHit]:
        if not query.strip():
            return []
        hits = await self._store.search(query, limit=limit, project_id=project_id)
        hidden = self._engine.messages.hidden()
        return [
            h
            for h in hits
            if not self._engine.sessions.is_deleted(h.session_id) and h.message_id not in hidden
        ]

    async def set_price(self, price: UserPrice | None, *, provider: str, model: str) -> None:
        """Set (or with ``None``, remove) the user's price for one provider's model."""
        await set_user_price(self._store, price, provider=provider, model=model)

    async def price_book(self) -> PriceBook:
        """The prices replies are costed with (shipped and the user's own), read now."""
        return await PriceBook.load(self._store)

    async def usage(self, session_id: str, prices: PriceBook | None = None) -> SessionUsage:
        """Tokens, speed and cost of every reply of a session, from its stored history.

        ``prices`` saves reading the price table again when many sessions are summed.
        """
        book = prices if prices is not None else await PriceBook.load(self._store)
        return session_usage(session_id, await self._engine.sessions.tree(session_id), book)

    async def export_markdown(self, session_id: str) -> str:
        from threadline.core.transcript import transcript_markdown  # with the first export

        info = await self._store.get_session(session_id)
        tree = await self._engine.sessions.tree(session_id)
        return transcript_markdown(tree.path(), info.display_title if info else "")

    def export_chunks(
        self,
        fmt: ExportFormat,
        session_ids: Sequence[str] | None = None,
        progress: ExportProgress | None = None,
        *,
        include_thinking: bool = False,
    ) -> AsyncIterator[str]:
        """The text of an export, a chat at a time (``None``: every chat, archived ones last);
        Markdown shows replies' reasoning only with ``include_thinking`` (JSON always has it)."""
        source = ChatSource(
            self._store.get_session,
            self._store.list_sessions,
            self._engine.sessions.tree,
            self._engine.sessions.pending_deletes,
        )
        total = None if session_ids is None else len(dict.fromkeys(session_ids))
        return export_chunks(
            source.chats(session_ids),
            fmt,
            progress,
            total,
            project_of=self._engine.projects.get,
            include_thinking=include_thinking,
        )

    async def export(
        self,
        path: Path,
        fmt: ExportFormat,
        session_ids: Sequence[str] | None = None,
        progress: ExportProgress | None = None,
        *,
        include_thinking: bool = False,
    ) -> None:
        """Write an export to ``path``, replacing it only once complete (``ExportError`` on failure)."""
        chunks = self.export_chunks(fmt, session_ids, progress, include_thinking=include_thinking)
        await write_to_file(path, chunks)

    async def import_file(
        self, path: Path, progress: Callable[[ImportProgress], None] | None = None
    ) -> ImportReport:
        """Import a ChatGPT, Claude, Open WebUI or Threadline export (``engine.importer``);
        new and updated chats are announced as ``SessionUpdated``; cancel → ``report.cancelled``."""
        from threadline.engine.importer import import_file

        return await import_file(
            self._store,
            path,
            progress=progress,
            announce=self._engine.sessions.changed_elsewhere,
            place_in_project=self._place_imported,
        )

    async def _place_imported(self, session_id: str, described: ImportedProject) -> SessionInfo:
        """Put an imported chat in the project its file names: the one here with that name,
        or a new one with the file's colour and instructions (never its context files)."""
        project = next(
            (
                p
                for p in await self._engine.projects.list_projects()
                if p.name.lower() == described.name.lower()
            ),
            None,
        )
        if project is None:
            colour = described.colour if is_colour(described.colour) else ""
            project = await self._engine.projects.create_project(
                described.name, colour=colour, instructions=described.instructions
            )
        return await self._store.set_session_project(session_id, project.id)
