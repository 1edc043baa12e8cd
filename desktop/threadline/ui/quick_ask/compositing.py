"""Whether translucent windows look translucent here: a compositor is running.

Quick ask paints its shadow on a translucent window. Without a compositor (X11 with none
running: a bare window manager, a remote session, Xvfb) the X server shows the window's
transparent pixels as they are stored, black, so the shadow would be a black band around
the card (docs/quick-ask.md, "Looks"). On X11 a compositing manager owns the selection
``_NET_WM_CM_S<screen>`` (EWMH); that is asked on Qt's own connection. Wayland compositors,
Windows (DWM) and macOS always composite; ``offscreen`` renders translucency into its own
buffer.
"""

from __future__ import annotations

import logging

from PySide6.QtGui import QGuiApplication

log = logging.getLogger("threadline.ui.quick_ask.compositing")


def compositing() -> bool:
    """True where a translucent window's see-through parts show what is behind them."""
    if QGuiApplication.platformName() != "xcb":
        return True
    from threadline.ui.common.xcb import Xcb, qt_connection, screen_number

    connection = qt_connection()
    if not connection:
        return True
    try:
        xcb = Xcb(connection)
    except OSError as err:  # no libxcb by its file name: assume the common case
        log.info("could not ask the X server for a compositor: %s", err)
        return True
    selection = xcb.atom(f"_NET_WM_CM_S{screen_number()}".encode())
    return bool(selection) and xcb.selection_owner(selection) != 0
