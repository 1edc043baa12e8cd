"""Keeping knowledge bases current while the app runs: unfinished indexings resumed, folders watched.

Started by the app's engine (``KnowledgeService.start``), not by a command-line run, which
opens the engine for one action. At start, every base whose indexing was asked for and not
finished — paused, or cut short by the app closing or being killed — carries on in the
background (the wish is kept in the index file: ``KnowledgeIndex.want_index``). The folders of
the bases attached to anything (a project, an agent, a chat) are watched: each batch of
changes is applied to the bases it concerns (``knowledge/changes.py``). The watch follows the
definitions: adding, removing or attaching a base starts it again with the new folders
(docs/knowledge.md, "Staying current").
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from threadline.knowledge.changes import apply_changes
from threadline.knowledge.watching import FolderWatch

if TYPE_CHECKING:
    from threadline.core.knowledge import KnowledgeBase
    from threadline.engine.knowledge import KnowledgeService

log = logging.getLogger("threadline.engine")


class KnowledgeUpkeep:
    def __init__(self, service: KnowledgeService) -> None:
        self._service = service
        self._watch: FolderWatch | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._watched: list[KnowledgeBase] = []
        self.started = False
        self.batches = 0
        """Batches of changes applied (for tests and the log)."""

    def start(self) -> None:
        if self.started:
            return
        self.started = True
        self.spawn(self._begin())

    def spawn(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        """Background work of the upkeep; its failure is logged, ``aclose`` cancels what is left."""
        task = asyncio.create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        error = None if task.cancelled() else task.exception()
        if error is not None:
            log.warning("Knowledge upkeep: %s", getattr(error, "user_message", None) or repr(error))

    async def _begin(self) -> None:
        await self.rewatch()
        for name in await self._service.unfinished():
            if not self._service.indexing(name):
                await self._service.index(name)

    def bases_changed(self) -> None:
        """A base was added, removed or attached: watch its folders (or stop)."""
        if self.started:
            self.spawn(self.rewatch())

    async def rewatch(self) -> None:
        bases = [base for base in await self._service.bases() if base.attached]
        roots = sorted({Path(path) for base in bases for path in base.paths})
        if self._watch is not None and list(self._watch.roots) == roots:
            self._watched = bases
            return
        if self._watch is not None:
            await self._watch.aclose()
            self._watch = None
        self._watched = bases
        if roots:
            self._watch = FolderWatch(roots, self._apply)
            self._watch.start()

    async def _apply(self, paths: set[str]) -> None:
        for base in self._watched:
            roots = [Path(p) for p in base.paths]
            mine = {p for p in paths if any(Path(p).is_relative_to(root) for root in roots)}
            if not mine:
                continue
            index = await self._service.opened()
            embedder = await self._service.embedder_of(base)
            applied = await asyncio.to_thread(apply_changes, index, base.id, roots, mine, embedder=embedder)
            if applied:
                log.info(
                    "knowledge base %s: %d read, %d moved, %d removed",
                    base.name,
                    len(applied.read),
                    len(applied.moved),
                    len(applied.removed),
                )
        self.batches += 1

    async def aclose(self) -> None:
        if self._watch is not None:
            await self._watch.aclose()
            self._watch = None
        while self._tasks:
            tasks = list(self._tasks)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
