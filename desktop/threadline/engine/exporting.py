"""Exporting chats: which chats, in which format, written how.

An export is a stream of text chunks, one chat at a time, so exporting everything from
a large database never holds more than one chat's tree in memory; the chats come from
the store page by page. Written to a file, the text goes to a temporary file beside the
target that replaces it only once complete: a failed or cancelled export leaves any
earlier file as it was and no half-written one.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import IO

from threadline.core.project import Project
from threadline.core.session import SessionInfo
from threadline.core.tree import ConversationTree
from threadline.engine.errors import EngineError

PAGE_SIZE = 200
"""Chats read from the store at a time when exporting everything."""


class ExportFormat(StrEnum):
    MARKDOWN = "markdown"
    """The active path of each chat: what the person saw."""
    MARKDOWN_BRANCHES = "markdown-branches"
    """Every branch of each chat (every version of every message)."""
    JSON = "json"
    """Threadline JSON: everything, readable by ``threadline import``."""

    @property
    def suffix(self) -> str:
        return ".json" if self is ExportFormat.JSON else ".md"


class ExportError(EngineError):
    """The export could not be written or a chat to export does not exist."""

    default_message = "The export could not be written."


ExportProgress = Callable[[int, int | None], None]
"""Told ``(chats written, chats in all or None when not known)`` after each chat."""


class ChatSource:
    """Where an export reads chats from: the store, with the engine's view of what exists."""

    def __init__(
        self,
        get_session: Callable[[str], Awaitable[SessionInfo | None]],
        list_sessions: Callable[..., Awaitable[list[SessionInfo]]],
        load_tree: Callable[[str], Awaitable[ConversationTree]],
        hidden: Callable[[], Collection[str]],
    ) -> None:
        self._get_session = get_session
        self._list_sessions = list_sessions
        self._load_tree = load_tree
        self._hidden = hidden
        """Sessions deleted but still undoable: not exported."""

    async def chats(
        self, session_ids: Sequence[str] | None
    ) -> AsyncIterator[tuple[SessionInfo, ConversationTree]]:
        """The chats asked for in that order, or every chat (then the archived ones)."""
        if session_ids is not None:
            for session_id in dict.fromkeys(session_ids):
                info = await self._get_session(session_id)
                if info is None or session_id in self._hidden():
                    raise ExportError(
                        f"There is no chat with the id {session_id[:80]!r}; it may have been deleted."
                    )
                yield await self._with_tree(info)
            return
        for archived in (False, True):
            after: SessionInfo | None = None
            while page := await self._list_sessions(archived=archived, limit=PAGE_SIZE, after=after):
                for info in page:
                    if info.id not in self._hidden():
                        yield await self._with_tree(info)
                after = page[-1]

    async def _with_tree(self, info: SessionInfo) -> tuple[SessionInfo, ConversationTree]:
        tree = await self._load_tree(info.id)
        return replace(info, active_leaf=tree.active_leaf), tree


async def export_chunks(
    chats: AsyncIterator[tuple[SessionInfo, ConversationTree]],
    fmt: ExportFormat,
    progress: ExportProgress | None = None,
    total: int | None = None,
    project_of: Callable[[str | None], Awaitable[Project | None]] | None = None,
    *,
    include_thinking: bool = False,
) -> AsyncIterator[str]:
    """The export's text, one chunk per chat (plus the JSON document's start and end);
    ``project_of`` names each chat's project in the JSON, so an import can put it back.
    Markdown shows replies' reasoning only with ``include_thinking``; JSON always has it."""
    # The formats' writers load with the first export: every start imports this module (for
    # ``ExportFormat``), few export (what that saves, with ``interchange.model``: docs/performance.md).
    from threadline.interchange import export_markdown, threadline_json

    count = 0
    if fmt is ExportFormat.JSON:
        yield threadline_json.document_start()
    async for info, tree in chats:
        if fmt is ExportFormat.JSON:
            project = await project_of(info.project_id) if project_of is not None else None
            text = threadline_json.session_text(info, tree, project)
            separator = threadline_json.SESSION_SEPARATOR
        else:
            text = export_markdown.session_markdown(
                info,
                tree,
                all_branches=fmt is ExportFormat.MARKDOWN_BRANCHES,
                include_thinking=include_thinking,
            )
            separator = export_markdown.SESSION_SEPARATOR
        yield (separator + text) if count else text
        count += 1
        if progress is not None:
            progress(count, total)
    if fmt is ExportFormat.JSON:
        yield threadline_json.DOCUMENT_END


async def write_to_file(path: Path, chunks: AsyncIterator[str]) -> None:
    """Write ``chunks`` to ``path`` through a temporary file that replaces it when complete."""
    partial = path.with_name(f".{path.name}.partial")
    try:
        handle: IO[str] = await asyncio.to_thread(partial.open, "w", encoding="utf-8", newline="\n")
    except OSError as err:
        raise _write_error(path, err) from err
    try:
        try:
            async for chunk in chunks:
                await asyncio.to_thread(handle.write, chunk)
            await asyncio.to_thread(_flush, handle)
        finally:
            await asyncio.to_thread(handle.close)
        await asyncio.to_thread(os.replace, partial, path)
    except OSError as err:
        raise _write_error(path, err) from err
    finally:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)


def _flush(handle: IO[str]) -> None:
    handle.flush()
    os.fsync(handle.fileno())


def _write_error(path: Path, err: OSError) -> ExportError:
    reason = err.strerror or "it could not be written"
    return ExportError(
        f"Could not write {path.name} in {path.parent}: {reason}. Choose another place and try again."
    )
