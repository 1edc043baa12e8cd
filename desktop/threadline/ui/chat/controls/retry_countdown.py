"""The banner's countdown while the engine waits to retry a failed request ("Retrying in 5 s…").

The engine schedules the retry (``RetryScheduled``); this only counts the seconds down in
the tab's banner, and hides the note when the turn ends or the time is up.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer

from threadline.engine.events import RetryScheduled
from threadline.ui.common.error_banner import ErrorBanner


class RetryCountdown(QObject):
    """Counts a scheduled retry down in ``banner``, once a second."""

    def __init__(self, banner: ErrorBanner, parent: QObject) -> None:
        super().__init__(parent)
        self._banner = banner
        self._timer = QTimer(self)
        self._timer.setInterval(1000)
        self._timer.timeout.connect(self._tick)
        self._left = 0.0
        self._event: RetryScheduled | None = None

    def scheduled(self, event: RetryScheduled) -> None:
        self._event = event
        self._left = event.delay
        self._tick(initial=True)
        self._timer.start()

    def _tick(self, initial: bool = False) -> None:
        event = self._event
        if event is None:
            return
        if not initial:
            self._left -= 1
        if self._left <= 0:
            self.stop()
            return
        self._banner.show_info(event.describe(self._left))

    def stop(self) -> None:
        self._timer.stop()
        if self._event is not None:
            self._event = None
            if self._banner.error is None:
                self._banner.hide()
