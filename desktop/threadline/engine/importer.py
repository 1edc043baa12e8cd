"""Importing a file: parse it off the event loop, store each conversation on its own, report.

The reader (``interchange.detect``) is a generator over the file; each step runs
on a worker thread, so a 500 MB export never stalls the window, and the next
conversation is parsed while the store writes the previous one. Each
conversation is one store transaction (``store.ops_import``).

Cancelling the task that runs :func:`import_file` stops it cleanly: the step in
progress finishes (a parser cannot be interrupted halfway through a
conversation), the write in flight sees the stop flag before it commits and rolls
back — unless it had already committed, in which case that conversation is
whole and counted — and the report comes back with ``cancelled`` set rather than
the cancellation propagating. Nothing half-imported remains either way.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

from threadline.core.session import SessionInfo
from threadline.engine.errors import EngineError
from threadline.interchange.detect import ImportItem, ImportReader
from threadline.interchange.ids import resolve_session_id
from threadline.interchange.limits import DEFAULT_LIMITS, ImportLimits
from threadline.interchange.model import (
    ImportedConversation,
    ImportedProject,
    ImportProblem,
    ImportProgress,
    ImportReport,
)
from threadline.store.errors import StoreError
from threadline.store.import_outcome import ImportCancelled, ImportOutcome, ImportRefused, StoredImport
from threadline.store.repository import Store

log = logging.getLogger("threadline.engine")

T = TypeVar("T")
ProgressCallback = Callable[[ImportProgress], None]
Announce = Callable[[SessionInfo], Awaitable[None]]
PlaceInProject = Callable[[str, ImportedProject], Awaitable[SessionInfo]]
"""Put a stored chat into the project the file names (found by name, made when missing)."""


class _Stopped(Exception):
    """Internal: the import was cancelled; carries the write that committed meanwhile, if any."""

    def __init__(self, stored: StoredImport | None = None) -> None:
        self.stored = stored


async def import_file(
    store: Store,
    path: Path,
    *,
    progress: ProgressCallback | None = None,
    announce: Announce | None = None,
    limits: ImportLimits = DEFAULT_LIMITS,
    place_in_project: PlaceInProject | None = None,
) -> ImportReport:
    """Import every conversation of ``path``; see the module doc for cancelling."""
    run = _ImportRun(store, path, progress, announce, limits)
    run.place_in_project = place_in_project
    try:
        await run.run()
    except (_Stopped, asyncio.CancelledError):
        run.report.cancelled = True
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()  # the cancellation is answered by the report, not re-raised
    finally:
        await run.finish()
    return run.report


class _ImportRun:
    def __init__(
        self,
        store: Store,
        path: Path,
        progress: ProgressCallback | None,
        announce: Announce | None,
        limits: ImportLimits,
    ) -> None:
        self.store = store
        self.reader = ImportReader(path, limits)
        self.items: Iterator[ImportItem] = iter(self.reader)
        self.progress = progress
        self.announce = announce
        self.report = ImportReport()
        self.stop = threading.Event()
        self.done = 0
        self.place_in_project: PlaceInProject | None = None
        self._parsing: asyncio.Future[ImportItem | None] | None = None

    async def run(self) -> None:
        self._parsing = self._parse_next()
        while True:
            item = await self._settle(self._parsing)
            self._parsing = None
            if item is None:
                return
            self._parsing = self._parse_next()  # the next one is read while this one is stored
            if isinstance(item, ImportProblem):
                self.report.failed.append(item)
            elif not await self._store(item):
                return
            self.done += 1
            self._tell(item.title)

    def _parse_next(self) -> asyncio.Future[ImportItem | None]:
        return asyncio.get_running_loop().run_in_executor(None, next, self.items, None)

    async def _store(self, conversation: ImportedConversation) -> bool:
        """Store one conversation; ``False`` when the database failed and the import must end."""
        session_id = resolve_session_id(conversation)
        write = asyncio.ensure_future(
            self.store.import_conversation(conversation, session_id, stop=self.stop)
        )
        try:
            stored = await self._settle(write)
        except _Stopped as stopped:
            if stopped.stored is not None:  # committed before it saw the stop: it is whole
                await self._count(stopped.stored)
                self.done += 1
            raise
        except ImportCancelled as error:  # only when stopped; reached through _settle's wait
            raise _Stopped() from error
        except ImportRefused as refused:
            self.report.failed.append(ImportProblem(conversation.title, _sentence(refused.reason)))
            return True
        except StoreError as error:
            self.report.failed.append(ImportProblem(conversation.title, error.user_message))
            self.report.failed.append(
                ImportProblem("(the rest of the file)", "Not imported, since the database refused the write.")
            )
            return False
        if conversation.project is not None and self.place_in_project is not None:
            try:
                placed = await self.place_in_project(stored.session.id, conversation.project)
                stored = replace(stored, session=placed)
            except (StoreError, EngineError) as error:  # the chat is stored all the same, in no project
                log.warning("could not put imported chat %s in its project: %s", stored.session.id, error)
        await self._count(stored)
        return True

    async def _count(self, stored: StoredImport) -> None:
        if stored.outcome is ImportOutcome.IMPORTED:
            self.report.imported += 1
        elif stored.outcome is ImportOutcome.UPDATED:
            self.report.updated += 1
        elif stored.outcome is ImportOutcome.KEPT_NEWER:
            self.report.kept_newer += 1
            return
        else:
            self.report.skipped += 1
            return
        if self.announce is not None:
            try:
                await self.announce(stored.session)
            except StoreError as error:  # a listing refresh failed: the chat is stored all the same
                log.warning("could not show imported chat %s: %s", stored.session.id, error)

    async def _settle(self, future: asyncio.Future[T]) -> T:
        """Await ``future``; when cancelled, stop and wait for it to end, then raise ``_Stopped``."""
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            self.stop.set()
        try:
            result = await future
        except ImportCancelled:
            raise _Stopped() from None
        except Exception:
            raise _Stopped() from None
        raise _Stopped(result if isinstance(result, StoredImport) else None)

    def _tell(self, title: str) -> None:
        if self.progress is None:
            return
        try:
            self.progress(ImportProgress(self.done, None, title, self.reader.fraction))
        except Exception:
            log.exception("import progress callback failed")

    async def finish(self) -> None:
        """Let a read in progress end, then close the reader (its zip and file)."""
        self.stop.set()
        if self._parsing is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._parsing)
        closing = getattr(self.items, "close", None)
        if closing is not None:
            await asyncio.get_running_loop().run_in_executor(None, closing)


def _sentence(reason: str) -> str:
    reason = reason.strip() or "it could not be stored"
    reason = reason[0].upper() + reason[1:]
    return reason if reason.endswith(".") else reason + "."
