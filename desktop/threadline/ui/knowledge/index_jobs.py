"""The window's indexing runs: started, paused and cancelled here, followed by the page and the status bar.

One ``IndexJobs`` per window holds the runs, so Settings → Knowledge can close and open
again while a base is indexed, and the status bar follows the same run. The engine calls
the progress callback on its worker thread; a Qt signal emitted there to this object
(which lives on the GUI thread) is queued, so every widget hears of progress on the GUI
thread only (docs/knowledge.md, "In the window").
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from threadline.ui.common.tasks import Teller, spawn

if TYPE_CHECKING:
    from threadline.engine.capability_apis import KnowledgeApi
    from threadline.knowledge import IndexReport, Progress

PROGRESS_EVERY_S = 0.15
"""At most this often from the worker: a folder of small files would otherwise flood the loop."""

PAUSED = "paused"
CANCELLED = "cancelled"


def clock(seconds: float) -> str:
    """``2:10`` or ``1:02:03``: time left as people read it."""
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02}:{secs:02}" if hours else f"{minutes}:{secs:02}"


def short_line(name: str, progress: Progress) -> str:
    """The status bar's words: ``Indexing handbook: 120/300 files, 2:10 left``, or why it waits."""
    if progress.waiting:
        return f"Indexing {name}: waiting for the embedding server"
    if progress.files_total and progress.files_done >= progress.files_total and progress.embedded:
        return f"Indexing {name}: embedding, {progress.embedded:,} chunks done"
    text = f"Indexing {name}: {progress.files_done:,}/{progress.files_total:,} files"
    left = progress.seconds_left
    return f"{text}, {clock(left)} left" if left is not None else text


def long_line(progress: Progress) -> str:
    """The page's words: files, chunks, speed and time left; or why it waits for the embedding server."""
    if progress.waiting:
        return progress.waiting
    parts = [f"{progress.files_done:,} of {progress.files_total:,} files", f"{progress.chunks:,} chunks"]
    if progress.embedded:
        parts.append(f"{progress.embedded:,} embedded")
    elapsed = time.monotonic() - progress.started
    if progress.files_done and elapsed > 0:
        rate = progress.files_done / elapsed
        parts.append(f"{rate:,.0f} files/s" if rate >= 10 else f"{rate:.1f} files/s")  # no flicker of tenths
    left = progress.seconds_left
    if left is not None:
        parts.append(f"{clock(left)} left")
    text = " · ".join(parts)
    if progress.embed_down:
        text += (
            f"\nNo vectors yet: {progress.embed_down} does not answer. Reading on for keyword "
            "search; the vectors are made when it answers."
        )
    return text


def outcome_line(name: str, report: IndexReport, how: str = "") -> str:
    """What a finished run did, for the status bar and the page."""
    progress = report.progress
    if how == PAUSED:
        text = (
            f"Paused {name} at {progress.files_done:,} of {progress.files_total:,} files; "
            "Resume carries on from there."
        )
        if progress.files_total and progress.files_done >= progress.files_total and progress.embed_down:
            text = f"Paused {name} while waiting for the embedding server; Resume carries on from there."
    elif how == CANCELLED or report.cancelled:
        text = (
            f"Stopped indexing {name} at {progress.files_done:,} of {progress.files_total:,} files; "
            "what was indexed is kept."
        )
    elif progress.files_read or report.removed:
        text = (
            f"Indexed {name}: {progress.files_total:,} files checked, {progress.files_read:,} read, "
            f"{progress.chunks:,} chunks written."
        )
    else:
        text = f"Indexed {name}: {progress.files_total:,} files checked; nothing had changed."
    if report.problems:
        count = len(report.problems)
        text += f" {count:,} file{'s' if count != 1 else ''} could not be read."
    return text


class IndexJobs(QObject):
    started = Signal(str)
    progressed = Signal(str, object)
    """A base's name and a copy of its ``Progress`` (on the GUI thread)."""
    finished = Signal(str, object)
    """A base's name and its ``IndexReport`` (also when paused or cancelled)."""
    failed = Signal(str)
    """The run ended with an error; the bridge told the person why."""
    _carried = Signal(str, object)

    def __init__(self, knowledge: KnowledgeApi, tell: Teller, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.knowledge = knowledge
        self._tell = tell
        self._tasks: dict[str, asyncio.Task[IndexReport]] = {}
        self._progress: dict[str, Progress] = {}
        self._reports: dict[str, IndexReport] = {}
        self._how: dict[str, str] = {}
        self._carried.connect(self._arrived)

    # -- asking ------------------------------------------------------------------------------

    def running(self, name: str) -> bool:
        return name in self._tasks

    def names(self) -> list[str]:
        return list(self._tasks)

    def progress(self, name: str) -> Progress | None:
        return self._progress.get(name)

    def report(self, name: str) -> IndexReport | None:
        """The report of the base's last run in this window, if there was one."""
        return self._reports.get(name)

    def how_stopped(self, name: str) -> str:
        return self._how.get(name, "")

    # -- doing -------------------------------------------------------------------------------

    def start(self, name: str) -> None:
        if name in self._tasks:
            return
        self._how.pop(name, None)
        last = [0.0]
        said = [""]

        def on_progress(progress: Progress) -> None:  # on the engine's worker thread
            if name in self._how:  # Pause or Cancel came before the engine's run had begun
                self._ask_engine(name)
            now = time.monotonic()
            news = progress.waiting != said[0]  # a wait begins, changes or ends: never dropped
            if news or now - last[0] >= PROGRESS_EVERY_S or progress.files_done >= progress.files_total:
                last[0] = now
                said[0] = progress.waiting
                self._carried.emit(name, replace(progress))

        self._tasks[name] = spawn(
            self.knowledge.index(name, on_progress),
            tell=self._tell,
            on_done=lambda report: self._ended(name, report),
            on_failed=lambda _err: self._failed(name),
            context=f"Indexing {name} stopped",
        )
        self.started.emit(name)

    def pause(self, name: str) -> None:
        """Stop after the current file; Index now carries on from there (the engine skips what is done)."""
        self._stop(name, PAUSED)

    def cancel(self, name: str) -> None:
        """Stop after the current file; the files indexed so far stay searchable."""
        self._stop(name, CANCELLED)

    def forget(self, name: str) -> None:
        """The base was removed or renamed: its last report and progress go."""
        self._reports.pop(name, None)
        self._progress.pop(name, None)
        self._how.pop(name, None)

    def _stop(self, name: str, how: str) -> None:
        """Ask the engine to stop; if its run has not begun yet (the click came at once), the
        first progress call asks again, so the run stops after its first file."""
        if name in self._tasks:
            self._how[name] = how
            self._ask_engine(name)

    def _ask_engine(self, name: str) -> None:
        """Pause keeps the engine's wish to finish (the next start carries on); Cancel drops it."""
        if self._how.get(name) == PAUSED:
            self.knowledge.pause(name)
        else:
            self.knowledge.cancel(name)

    # -- hearing -----------------------------------------------------------------------------

    def _arrived(self, name: str, progress: Progress) -> None:
        if name in self._tasks:
            self._progress[name] = progress
            self.progressed.emit(name, progress)

    def _ended(self, name: str, report: IndexReport) -> None:
        self._tasks.pop(name, None)
        self._progress[name] = report.progress
        self._reports[name] = report
        self.finished.emit(name, report)

    def _failed(self, name: str) -> None:
        self._tasks.pop(name, None)
        self.failed.emit(name)
