"""Noticing a window's first paint: the moment the start-up budget is measured to.

The app uses it to open the engine only after the first frame, and ``--startup-probe``
prints the time from the process's start to that moment. ``bench/bare_window.py`` uses
the same watcher, so a bare PySide6 window and Threadline are measured the same way.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget


class FirstPaintWatcher(QObject):
    """Calls ``then`` once, on the loop turn after ``widget`` received its first paint event.

    The call is queued (not made inside the paint) so the frame is finished and on screen
    before whatever follows starts; the watcher then removes itself.
    """

    def __init__(self, widget: QWidget, then: Callable[[], None]) -> None:
        super().__init__(widget)
        self._widget = widget
        self._then = then
        self.seen = False
        widget.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if not self.seen and event.type() == QEvent.Type.Paint:
            self.seen = True
            QTimer.singleShot(0, self._fire)
        return False

    def _fire(self) -> None:
        self._widget.removeEventFilter(self)
        self._then()


def print_probe(started: float, now: float) -> None:
    """The probe's one line on stdout: milliseconds from the process's start to the first paint."""
    import sys

    print(f"{(now - started) * 1000:.0f}")
    sys.stdout.flush()
