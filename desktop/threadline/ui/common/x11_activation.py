"""X11: activate a window that is already mapped with a start-up id another process received.

Qt uses ``DESKTOP_STARTUP_ID`` only for the first window it maps, and PySide6 offers no call
to hand it a later one. These are the few xcb calls the startup-notification and EWMH
specifications ask for, made on Qt's own connection (``xcb.py``):

* ``_NET_STARTUP_ID`` on the window: the window manager ties it to the launch the user asked for;
* the id's time stamp (``…_TIME<n>``) as ``_NET_WM_USER_TIME`` and in the ``_NET_ACTIVE_WINDOW``
  request (source 1, an application): the time of the user's action, so the request is not
  older than what the user did since and focus-stealing prevention lets it through;
* ``remove: ID=…`` as ``_NET_STARTUP_INFO`` messages on the root window: ends the launcher's
  busy feedback, which the second process never mapped a window to end.

The libraries are Qt's own dependencies on X11 and are loaded by their file names
(docs/quick-ask.md, "Start-up cost").
"""

from __future__ import annotations

import ctypes
import re
from collections.abc import Callable

from threadline.ui.common.xcb import Xcb, qt_connection

_TIME = re.compile(r"_TIME(\d+)$")
CLIENT_MESSAGE = 33
PROP_MODE_REPLACE = 0
ATOM_CARDINAL = 6
SUBSTRUCTURE_NOTIFY_REDIRECT = (1 << 19) | (1 << 20)
PROPERTY_CHANGE = 1 << 22


class _ClientMessage(ctypes.Structure):
    """``xcb_client_message_event_t``: 32 bytes, 20 of data."""

    _fields_ = [
        ("response_type", ctypes.c_uint8),
        ("format", ctypes.c_uint8),
        ("sequence", ctypes.c_uint16),
        ("window", ctypes.c_uint32),
        ("type", ctypes.c_uint32),
        ("data", ctypes.c_uint8 * 20),
    ]


def startup_time(startup_id: str) -> int:
    """The time stamp a start-up id carries (``…_TIME<n>``), 0 when it has none."""
    found = _TIME.search(startup_id)
    return int(found.group(1)) & 0xFFFFFFFF if found else 0


def activate_with_startup_id(window: int, startup_id: str) -> None:
    """Ask the window manager to activate ``window`` for the launch ``startup_id`` names."""
    connection = qt_connection()
    if not connection:
        return
    x = Xcb(connection)
    xcb, atom, root = x.lib, x.atom, x.root()
    encoded = startup_id.encode("utf-8")
    xcb.xcb_change_property(
        connection,
        PROP_MODE_REPLACE,
        window,
        atom(b"_NET_STARTUP_ID"),
        atom(b"UTF8_STRING"),
        8,
        len(encoded),
        encoded,
    )
    stamp = startup_time(startup_id)
    if stamp:
        value = ctypes.c_uint32(stamp)
        xcb.xcb_change_property(
            connection,
            PROP_MODE_REPLACE,
            window,
            atom(b"_NET_WM_USER_TIME"),
            ATOM_CARDINAL,
            32,
            1,
            ctypes.byref(value),
        )
        # Without a time stamp Qt's own request (with its last event's time) is all there is.
        request = _ClientMessage(CLIENT_MESSAGE, 32, 0, window, atom(b"_NET_ACTIVE_WINDOW"))
        words = (ctypes.c_uint32 * 5).from_buffer(request.data)
        words[0], words[1], words[2] = 1, stamp, 0  # from an application, at the user's time, none active
        xcb.xcb_send_event(connection, 0, root, SUBSTRUCTURE_NOTIFY_REDIRECT, ctypes.byref(request))
    _end_startup_feedback(xcb, connection, root, atom, startup_id)
    xcb.xcb_flush(connection)


def _end_startup_feedback(
    xcb: ctypes.CDLL, connection: int, root: int, atom: Callable[[bytes], int], startup_id: str
) -> None:
    """``remove: ID=…`` in 20-byte pieces, the first as ``_NET_STARTUP_INFO_BEGIN`` (NUL-terminated)."""
    quoted = startup_id.replace("\\", "\\\\").replace('"', '\\"')
    message = f'remove: ID="{quoted}"'.encode() + b"\0"
    begin, more = atom(b"_NET_STARTUP_INFO_BEGIN"), atom(b"_NET_STARTUP_INFO")
    for start in range(0, len(message), 20):
        piece = message[start : start + 20]
        event = _ClientMessage(CLIENT_MESSAGE, 8, 0, root, begin if start == 0 else more)
        ctypes.memmove(event.data, piece, len(piece))
        xcb.xcb_send_event(connection, 0, root, PROPERTY_CHANGE, ctypes.byref(event))
