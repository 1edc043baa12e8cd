"""Spoken announcements: tell a screen reader about something that appeared without focus.

A bar or banner that shows up while the user types in the composer does not take the
focus (it must not: the user may be mid-sentence), so a screen reader would never read
it. ``announce`` sends a ``QAccessibleAnnouncementEvent`` (Qt 6.8+: AT-SPI's
``Announcement`` signal, UIA notifications, NSAccessibility announcements) from the
widget that appeared, polite by default (read after the current speech) or assertive
(interrupts: use it for things that need an answer, such as a tool waiting for
approval).

Qt gives Python no way to watch accessibility updates (``installUpdateHandler`` is not
bound), so every announcement is also emitted by the application's one
:class:`Announcer` (``Announcer.of(app).announced``): tests listen there, and a status
line could show the last announcement too. Widgets call ``announce``, never the
``Announcer`` directly.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QObject, Signal
from PySide6.QtGui import QAccessible, QAccessibleAnnouncementEvent
from PySide6.QtWidgets import QWidget


class Announcer(QObject):
    """The application's record of announcements (one per application, a child of it)."""

    announced = Signal(QObject, str, bool)
    """``(widget, text, assertive)`` — after the accessibility event was sent."""

    OBJECT_NAME = "ThreadlineAnnouncer"

    @classmethod
    def of(cls, app: QCoreApplication | None = None) -> Announcer:
        """The application's announcer, made on first use."""
        app = app if app is not None else QCoreApplication.instance()
        if app is None:
            raise RuntimeError("announcements need a running QApplication")
        found = app.findChild(cls, cls.OBJECT_NAME)
        if isinstance(found, cls):
            return found
        announcer = cls(app)
        announcer.setObjectName(cls.OBJECT_NAME)
        return announcer

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.last: tuple[QObject, str, bool] | None = None
        """The most recent announcement (widget, text, assertive), for a status line or a test."""


def announce(widget: QWidget, text: str, *, assertive: bool = False) -> None:
    """Have assistive technology read ``text`` now, as coming from ``widget``.

    Call it when ``widget`` has appeared or changed in a way the user must hear about
    without moving the focus to it. Empty text announces nothing. Cheap when no screen
    reader is running (Qt drops the event at once).
    """
    text = " ".join(text.split())
    if not text:
        return
    event = QAccessibleAnnouncementEvent(widget, text)
    politeness = QAccessible.AnnouncementPoliteness
    event.setPoliteness(politeness.Assertive if assertive else politeness.Polite)
    QAccessible.updateAccessibility(event)
    announcer = Announcer.of()
    announcer.last = (widget, text, assertive)
    announcer.announced.emit(widget, text, assertive)
