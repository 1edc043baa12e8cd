"""The status bar's word on indexing: "Indexing handbook: 120/300 files, 2:10 left", then how it ended.

A flat button at the status bar's right, shown only while a base is indexed and for a
while after; pressing it opens Settings → Knowledge. A failure is told by the bridge
(the status bar's own line); this button then goes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QMainWindow, QStatusBar, QToolButton

from threadline.ui.knowledge.index_jobs import IndexJobs, outcome_line, short_line

if TYPE_CHECKING:
    from threadline.engine.capability_apis import KnowledgeApi
    from threadline.knowledge import IndexReport, Progress

OUTCOME_SHOWN_MS = 20_000


class IndexingStatus(QToolButton):
    def __init__(self, bar: QStatusBar, jobs: IndexJobs, open_page: Callable[[], None]) -> None:
        super().__init__(bar)
        self.setObjectName("IndexingStatus")
        self.setAutoRaise(True)
        self.setToolTip("Open Settings → Knowledge")
        self.setAccessibleName("Knowledge indexing")
        self.clicked.connect(open_page)
        self.jobs = jobs
        self._lines: dict[str, str] = {}
        self._hide_timer = QTimer(self)
        self._hide_timer.setSingleShot(True)
        self._hide_timer.setInterval(OUTCOME_SHOWN_MS)
        self._hide_timer.timeout.connect(self._idle)
        jobs.started.connect(self._started)
        jobs.progressed.connect(self._progressed)
        jobs.finished.connect(self._finished)
        jobs.failed.connect(self._failed)
        bar.addPermanentWidget(self)
        self.hide()

    @classmethod
    def for_window(
        cls, window: QMainWindow, knowledge: KnowledgeApi, open_page: Callable[[], None]
    ) -> IndexingStatus:
        """The window's runs (told through the window's bridge) and their word in its status bar."""
        return cls(window.statusBar(), IndexJobs(knowledge, window, window), open_page)

    def _show_line(self, name: str, text: str) -> None:
        self._lines[name] = text
        self._show_running()

    def _show_running(self) -> None:
        self.setText(" · ".join(self._lines[n] for n in self.jobs.names() if n in self._lines))
        self._hide_timer.stop()
        self.show()

    def _started(self, name: str) -> None:
        self._show_line(name, f"Indexing {name}: reading the folders…")

    def _progressed(self, name: str, progress: Progress) -> None:
        self._show_line(name, short_line(name, progress))

    def _finished(self, name: str, report: IndexReport) -> None:
        self._lines.pop(name, None)
        if self._lines:
            self._show_running()
            return
        self.setText(outcome_line(name, report, self.jobs.how_stopped(name)))
        self.show()
        self._hide_timer.start()

    def _failed(self, name: str) -> None:
        self._lines.pop(name, None)
        if self._lines:
            self._show_running()
        else:
            self._idle()

    def _idle(self) -> None:
        self.hide()
        self.setText("")
