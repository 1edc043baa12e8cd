"""Watching folders for changes with ``watchfiles`` (no Qt: the engine and the CLI have none).

``watchfiles`` wraps the Rust ``notify`` crate: inotify on Linux, FSEvents on macOS,
ReadDirectoryChangesW on Windows, each recursive, with changes debounced into batches. The
engine has no Qt event loop of its own, and ``QFileSystemWatcher`` watches one folder at a time
without recursion (a folder of a few thousand subfolders would need a watch added for each), so
``watchfiles`` it is (docs/knowledge.md, "Staying current"). It runs on a worker thread that
checks a stop event every ``STEP_MS``; ``aclose`` sets it and waits for the thread to end.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

log = logging.getLogger("threadline.knowledge")

DEBOUNCE_MS = 300
"""Changes within this long are one batch (an editor's save is often several writes)."""
STEP_MS = 50


class FolderWatch:
    """Calls ``on_batch`` with the paths changed under ``roots`` (files or folders, present or gone)."""

    def __init__(self, roots: Sequence[Path], on_batch: Callable[[set[str]], Awaitable[None]]) -> None:
        self.roots = tuple(roots)
        self._on_batch = on_batch
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        watched = [root for root in self.roots if root.exists()]  # a folder away now is not watched
        if watched and self._task is None:
            self._task = asyncio.create_task(self._run(watched), name="knowledge folder watch")

    async def _run(self, roots: list[Path]) -> None:
        import watchfiles

        try:
            async for changes in watchfiles.awatch(
                *roots,
                stop_event=self._stop,
                debounce=DEBOUNCE_MS,
                step=STEP_MS,
                watch_filter=None,
                recursive=True,
            ):
                try:
                    await self._on_batch({path for _change, path in changes})
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("applying changed files to a knowledge base failed")
        except (OSError, RuntimeError) as err:  # a root removed, the watch limit of the system reached
            log.warning("Folders of knowledge bases are no longer watched: %s", err)

    async def aclose(self) -> None:
        self._stop.set()
        task, self._task = self._task, None
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)
