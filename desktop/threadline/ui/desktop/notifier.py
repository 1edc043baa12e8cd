"""Desktop notifications: freedesktop Notifications over D-Bus, else the tray's balloon.

``Notify`` is called through a ``QDBusInterface`` and ``QMetaObject.invokeMethod`` with typed
arguments: the method wants ``replaces_id`` as a D-Bus ``uint32``, and PySide6 sends a Python
``int`` as ``int32`` in a plain ``QDBusMessage``, which a strict server (GNOME Shell) refuses.
The interface introspects the service once; both calls take a few milliseconds against a
running server and are bounded by ``DBUS_TIMEOUT_MS`` (docs/desktop.md, "Notifications").

Each notification carries an "Open chat" action; the server's ``ActionInvoked`` signal names
the notification, and ``activated`` says which chat it was about. A chat has one notification
at a time (the next one replaces it). A server that follows the spec's version 1.2 sends an
``ActivationToken`` for the notification just before ``ActionInvoked``: the window that comes up
for the action activates with it (``activation.offered``), so the compositor lets it take the
focus (docs/desktop.md, "Coming to the front").
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import Q_ARG, Q_RETURN_ARG, SLOT, QMetaObject, QObject, Qt, Signal, Slot
from PySide6.QtDBus import QDBusConnection, QDBusInterface

from threadline.ui.common.activation import from_server, offered

log = logging.getLogger("threadline.ui.desktop.notifier")

SERVICE = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"
INTERFACE = "org.freedesktop.Notifications"
OPEN_ACTION = "open"
DBUS_TIMEOUT_MS = 2000
APP_NAME = "Threadline"
ICON = "threadline"


class DesktopNotifier(QObject):
    activated = Signal(str)
    """The user chose "Open chat" (or clicked the notification): the chat's session id."""

    def __init__(
        self,
        fallback: Callable[[str, str], bool],
        bus: QDBusConnection | None = None,
        parent: QObject | None = None,
    ) -> None:
        """``fallback(summary, body)`` shows a notification another way (the tray) and says if it could;
        ``bus``: the session bus unless given (tests pass a private one)."""
        super().__init__(parent)
        self._fallback = fallback
        self._bus = bus
        self._interface: QDBusInterface | None = None
        self._tried = False
        self._by_id: dict[int, str] = {}
        self._tokens: dict[int, str] = {}
        """The server's ``ActivationToken`` per notification, until its action is acted on."""
        self._last_fallback_session: str | None = None
        self.sent: list[tuple[str, str, str]] = []
        """What was shown (session id, summary, body), either way: tests read it."""

    # -- the service ---------------------------------------------------------------------------

    def _service(self) -> QDBusInterface | None:
        if self._tried:
            return self._interface
        self._tried = True
        from PySide6.QtDBus import QDBusConnection, QDBusInterface

        bus = self._bus if self._bus is not None else QDBusConnection.sessionBus()
        if not bus.isConnected():
            log.info("no session bus: notifications go to the tray")
            return None
        interface = QDBusInterface(SERVICE, PATH, INTERFACE, bus, self)
        interface.setTimeout(DBUS_TIMEOUT_MS)
        if not interface.isValid():
            log.info("no notification service on the session bus: notifications go to the tray")
            return None
        for signal, slot in (
            ("ActionInvoked", "_action_invoked(uint,QString)"),
            ("NotificationClosed", "_closed(uint,uint)"),
            ("ActivationToken", "_activation_token(uint,QString)"),
        ):
            # PySide6 takes the SLOT() text here (its stubs say bytes, which it refuses).
            bus.connect(SERVICE, PATH, INTERFACE, signal, self, SLOT(slot))  # type: ignore[call-overload]
        self._interface = interface
        return interface

    # -- showing -----------------------------------------------------------------------------

    def notify(self, session_id: str, summary: str, body: str) -> None:
        self.sent.append((session_id, summary, body))
        interface = self._service()
        if interface is not None and self._notify_dbus(interface, session_id, summary, body):
            return
        self._last_fallback_session = session_id
        if not self._fallback(summary, body):
            log.info("nowhere to show a notification: %s", summary)

    def _notify_dbus(self, interface: QDBusInterface, session_id: str, summary: str, body: str) -> bool:
        replaces = next((nid for nid, sid in self._by_id.items() if sid == session_id), 0)
        try:
            nid = QMetaObject.invokeMethod(
                interface,
                "Notify",
                Qt.ConnectionType.DirectConnection,
                Q_RETURN_ARG("uint"),
                Q_ARG(str, APP_NAME),
                Q_ARG("uint", replaces),
                Q_ARG(str, ICON),
                Q_ARG(str, summary),
                Q_ARG(str, body),
                Q_ARG("QStringList", ["default", "Open chat", OPEN_ACTION, "Open chat"]),
                Q_ARG("QVariantMap", {"desktop-entry": "threadline"}),
                Q_ARG(int, -1),
            )
        except (RuntimeError, TypeError) as err:  # the service went away, or it has no Notify
            log.warning("the notification service refused Notify: %s", err)
            return False
        error = interface.lastError()
        if error.isValid() or not isinstance(nid, int) or nid == 0:
            log.warning("the notification service refused Notify: %s", error.message())
            return False
        self._by_id.pop(replaces, None)
        self._by_id[nid] = session_id
        return True

    def tray_message_clicked(self) -> None:
        """The tray's balloon was clicked: open the chat it was about."""
        if self._last_fallback_session is not None:
            self.activated.emit(self._last_fallback_session)

    # -- the server's signals ---------------------------------------------------------------------

    @Slot("uint", str)
    def _action_invoked(self, nid: int, key: str) -> None:
        token = from_server(self._tokens.pop(nid, ""))
        session_id = self._by_id.get(nid)
        if session_id is not None and key in (OPEN_ACTION, "default"):
            with offered(token):  # ``activated`` brings the window up at once, with it
                self.activated.emit(session_id)

    @Slot("uint", "uint")
    def _closed(self, nid: int, _reason: int) -> None:
        self._by_id.pop(nid, None)
        self._tokens.pop(nid, None)

    @Slot("uint", str)
    def _activation_token(self, nid: int, token: str) -> None:
        """The permission to raise the window for the action that follows (Notifications 1.2)."""
        if nid in self._by_id and token:
            self._tokens[nid] = token
