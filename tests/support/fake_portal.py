"""A stand-in for the desktop portal's GlobalShortcuts interface on a private session bus.

Run as a process (``python -m tests.support.fake_portal``) with ``DBUS_SESSION_BUS_ADDRESS``
set: it owns ``org.freedesktop.portal.Desktop``, answers ``CreateSession`` and
``BindShortcuts`` as xdg-desktop-portal does (the method returns the request's path, then
``Response`` is emitted on it), and right after a bind presses the bound shortcut once
(``Activated``). It prints ``READY`` once the name is owned and ``BOUND <id> <trigger>``
for each bind. Used by ``tests/ui/quick_ask/test_quick_ask_portal.py``; the real portal
needs a compositor, which a test machine has not.
"""

from __future__ import annotations

import time

from jeepney import DBusAddress, HeaderFields, MessageType, new_error, new_method_return, new_signal
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import Proxy, open_dbus_connection

DESKTOP = "/org/freedesktop/portal/desktop"
INTERFACE = "org.freedesktop.portal.GlobalShortcuts"


def request_path(sender: str, token: str) -> str:
    return f"{DESKTOP}/request/{sender.lstrip(':').replace('.', '_')}/{token}"


def main() -> None:
    conn = open_dbus_connection(bus="SESSION")
    Proxy(message_bus, conn).RequestName("org.freedesktop.portal.Desktop", 4)  # DO_NOT_QUEUE
    print("READY", flush=True)
    while True:
        msg = conn.receive()
        if msg.header.message_type != MessageType.method_call:
            continue
        fields = msg.header.fields
        member, sender = fields[HeaderFields.member], fields[HeaderFields.sender]
        if fields.get(HeaderFields.interface) != INTERFACE or member not in (
            "CreateSession",
            "BindShortcuts",
        ):
            conn.send(new_error(msg, "org.freedesktop.DBus.Error.UnknownMethod", "s", ("not here",)))
            continue
        options = msg.body[0] if member == "CreateSession" else msg.body[3]
        request = request_path(sender, options["handle_token"][1])
        conn.send(new_method_return(msg, "o", (request,)))
        response = DBusAddress(request, interface="org.freedesktop.portal.Request")
        if member == "CreateSession":
            token = options["session_handle_token"][1]
            session = f"{DESKTOP}/session/{sender.lstrip(':').replace('.', '_')}/{token}"
            conn.send(new_signal(response, "Response", "ua{sv}", (0, {"session_handle": ("s", session)})))
            continue
        session, shortcuts = msg.body[0], msg.body[1]
        shortcut_id, info = shortcuts[0]
        print("BOUND", shortcut_id, info["preferred_trigger"][1], flush=True)
        conn.send(new_signal(response, "Response", "ua{sv}", (0, {"shortcuts": ("a(sa{sv})", shortcuts)})))
        conn.send(
            new_signal(
                DBusAddress(DESKTOP, interface=INTERFACE),
                "Activated",
                "osta{sv}",
                (session, shortcut_id, int(time.time() * 1000), {}),
            )
        )


if __name__ == "__main__":
    main()
